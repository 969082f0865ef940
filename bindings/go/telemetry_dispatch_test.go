package roomchat

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// inFlight is roomchat.client.active_calls's value for op (0 when it has no point).
func (k *otelKit) inFlight(t *testing.T, op string) (int64, map[string]any) {
	t.Helper()
	m, ok := k.metrics(t)[MetricRoomchatClientActiveCalls]
	if !ok {
		return 0, nil
	}
	for _, point := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if a := setAttrs(point.Attributes); a[AttrRoomchatOperation] == op {
			return point.Value, a
		}
	}
	return 0, nil
}

// A call counts in roomchat.client.active_calls from its dispatch to its end,
// as in the other languages: while it waits for the rate budget before its
// first attempt (no report of core's says it exists yet), it is in flight.
func TestTelemetryCountsACallInFlightFromItsDispatch(t *testing.T) {
	emu := startOtelEmulator(t, "--private-key", ownKey("dispatch"))
	k := newOtelKit(t)
	c := k.client(t, emu, WithRateLimit(1, time.Hour))
	if err := listUsers(c, context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	// The budget is spent for an hour: the next call waits for a slot until cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan error, 1)
	go func() { returned <- listUsers(c, ctx, 1) }()
	var value int64
	var point map[string]any
	for deadline := time.Now().Add(30 * time.Second); value != 1; {
		select {
		case err := <-returned:
			t.Fatalf("the call returned (%v) before it was seen in flight", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("a call held in the rate budget's wait is not counted in flight (%d)", value)
		}
		time.Sleep(time.Millisecond) // polling the metric, not standing in for a state
		value, point = k.inFlight(t, "list_users")
	}
	base, _ := url.Parse(emu.BaseURL)
	// The server as core names it on the spans (and the first call's points).
	wantAttrs(t, "the call in flight", point, map[string]any{
		AttrServerAddress: "127.0.0.1", AttrServerPort: int64(mustPort(t, base)),
	})
	cancel()
	err := <-returned
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call: %v", err)
	}
	if value, _ := k.inFlight(t, "list_users"); value != 0 {
		t.Fatalf("%d calls in flight once it returned", value)
	}
	// It never left the budget's wait: one request was sent, the first call's.
	if n := len(k.named("GET " + usersPath)); n != 1 {
		t.Fatalf("%d attempts, want the first call's only", n)
	}
}
