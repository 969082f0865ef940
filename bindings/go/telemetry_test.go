package roomchat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const usersPath = "/consumer/api/v2/users"

// otelKit is an application's SDK: spans into memory, metrics read by hand.
type otelKit struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newOtelKit(t *testing.T, processors ...sdktrace.SpanProcessor) *otelKit {
	k := &otelKit{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	opts := []sdktrace.TracerProviderOption{}
	for _, p := range processors {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	opts = append(opts, sdktrace.WithSyncer(k.spans))
	k.tp = sdktrace.NewTracerProvider(opts...)
	k.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(k.reader))
	if t == nil {
		return k
	}
	t.Cleanup(func() {
		_ = k.tp.Shutdown(context.Background())
		_ = k.mp.Shutdown(context.Background())
	})
	return k
}

// options give the client the kit's providers and the W3C propagator.
func (k *otelKit) options(emu *otelEmulator, more ...Option) []Option {
	return append([]Option{
		WithBaseURL(emu.BaseURL),
		WithTracerProvider(k.tp),
		WithMeterProvider(k.mp),
		WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
	}, more...)
}

func (k *otelKit) client(t *testing.T, emu *otelEmulator, more ...Option) *Client {
	t.Helper()
	c, err := NewClient(emu.PrivateKey, k.options(emu, more...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (k *otelKit) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range k.spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func (k *otelKit) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != instrumentationName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func attrs(kvs []attribute.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

func setAttrs(s attribute.Set) map[string]any { return attrs(s.ToSlice()) }

func one(t *testing.T, spans []tracetest.SpanStub, what string) tracetest.SpanStub {
	t.Helper()
	if len(spans) != 1 {
		t.Fatalf("%s: %d spans, want 1", what, len(spans))
	}
	return spans[0]
}

func wantAttrs(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %#v, want %#v (all: %v)", what, k, got[k], v, got)
		}
	}
}

// ownKey is a key no other client of the process has: clients of one key
// share their budget in a process.
func ownKey(what string) string {
	return fmt.Sprintf("sk_test_otel_%s_%d", what, time.Now().UnixNano())
}

func listUsers(c *Client, ctx context.Context, limit int) error {
	_, err := c.ListUsers(ctx, &ListUsersParams{Limit: Int(int64(limit))})
	return err
}

func TestTelemetryOfASuccessfulCall(t *testing.T) {
	emu := startOtelEmulator(t, "--seed-users", "3")
	k := newOtelKit(t)
	c := k.client(t, emu)
	ctx, app := k.tp.Tracer("app").Start(context.Background(), "handle request")
	if err := listUsers(c, ctx, 5); err != nil {
		t.Fatal(err)
	}
	app.End()

	call := one(t, k.named("roomchat list_users"), "the call")
	attempt := one(t, k.named("GET "+usersPath), "the attempt")
	if call.SpanKind != trace.SpanKindInternal || attempt.SpanKind != trace.SpanKindClient {
		t.Errorf("kinds: call %v, attempt %v", call.SpanKind, attempt.SpanKind)
	}
	if call.Parent.SpanID() != app.SpanContext().SpanID() || call.SpanContext.TraceID() != app.SpanContext().TraceID() {
		t.Errorf("the call's parent is %v, want the application's span %v", call.Parent.SpanID(), app.SpanContext().SpanID())
	}
	if attempt.Parent.SpanID() != call.SpanContext.SpanID() {
		t.Errorf("the attempt's parent is %v, want the call %v", attempt.Parent.SpanID(), call.SpanContext.SpanID())
	}
	if call.InstrumentationScope.Name != "roomchat" || call.InstrumentationScope.Version == "" {
		t.Errorf("scope %+v", call.InstrumentationScope)
	}
	u, _ := url.Parse(emu.BaseURL)
	wantAttrs(t, "the call", attrs(call.Attributes), map[string]any{
		AttrRoomchatOperation: "list_users", AttrRoomchatAttempts: int64(1),
		AttrRoomchatRetryWaitDuration: 0.0,
	})
	if _, ok := attrs(call.Attributes)[AttrRoomchatRateLimitWaitDuration].(float64); !ok {
		t.Errorf("the call has no %s", AttrRoomchatRateLimitWaitDuration)
	}
	got := attrs(attempt.Attributes)
	wantAttrs(t, "the attempt", got, map[string]any{
		AttrHTTPRequestMethod: "GET", AttrURLTemplate: usersPath, AttrServerAddress: "127.0.0.1",
		AttrServerPort: int64(mustPort(t, u)), AttrNetworkProtocolVersion: "1.1",
		AttrHTTPResponseStatusCode: int64(200), AttrURLFull: emu.BaseURL + usersPath + "?auth=REDACTED&limit=5",
	})
	for _, absent := range []string{AttrHTTPRequestResendCount, AttrErrorType, AttrRoomchatErrorKind} {
		if _, ok := got[absent]; ok {
			t.Errorf("the attempt has %s", absent)
		}
	}
	if call.Status.Code != codes.Unset || attempt.Status.Code != codes.Unset {
		t.Errorf("statuses %v %v", call.Status, attempt.Status)
	}
	if !attempt.StartTime.Before(attempt.EndTime) || call.StartTime.After(attempt.StartTime) || call.EndTime.Before(attempt.EndTime) {
		t.Errorf("times: call %v..%v, attempt %v..%v", call.StartTime, call.EndTime, attempt.StartTime, attempt.EndTime)
	}
	// The attempt's context went on the wire.
	journal := emu.journal(t)
	sent, ok := journal[len(journal)-1].header("traceparent")
	want := fmt.Sprintf("00-%s-%s-01", attempt.SpanContext.TraceID(), attempt.SpanContext.SpanID())
	if !ok || sent != want {
		t.Errorf("traceparent %q (sent: %v), want %q", sent, ok, want)
	}

	m := k.metrics(t)
	request := m[MetricHTTPClientRequestDuration]
	if request.Unit != "s" {
		t.Errorf("%s unit %q", request.Name, request.Unit)
	}
	h := request.Data.(metricdata.Histogram[float64])
	if len(h.DataPoints) != 1 || h.DataPoints[0].Count != 1 {
		t.Fatalf("%s: %+v", request.Name, h.DataPoints)
	}
	if fmt.Sprint(h.DataPoints[0].Bounds) != fmt.Sprint(durationBuckets) {
		t.Errorf("buckets %v", h.DataPoints[0].Bounds)
	}
	point := setAttrs(h.DataPoints[0].Attributes)
	wantAttrs(t, request.Name, point, map[string]any{
		AttrHTTPRequestMethod: "GET", AttrURLTemplate: usersPath, AttrHTTPResponseStatusCode: int64(200),
		AttrServerAddress: "127.0.0.1", AttrNetworkProtocolVersion: "1.1",
	})
	if _, ok := point[AttrURLFull]; ok {
		t.Errorf("%s carries url.full", request.Name)
	}
	calls := m[MetricRoomchatClientCallDuration].Data.(metricdata.Histogram[float64])
	if len(calls.DataPoints) != 1 || calls.DataPoints[0].Count != 1 {
		t.Fatalf("call duration: %+v", calls.DataPoints)
	}
	wantAttrs(t, "call duration", setAttrs(calls.DataPoints[0].Attributes), map[string]any{AttrRoomchatOperation: "list_users"})
	active := m[MetricRoomchatClientActiveCalls].Data.(metricdata.Sum[int64])
	if active.IsMonotonic || len(active.DataPoints) != 1 || active.DataPoints[0].Value != 0 {
		t.Errorf("calls in flight after the call: %+v", active)
	}
}

func mustPort(t *testing.T, u *url.URL) int {
	var port int
	if _, err := fmt.Sscan(u.Port(), &port); err != nil {
		t.Fatal(err)
	}
	return port
}

func TestTelemetryOfARetryAfterA503(t *testing.T) {
	emu := startOtelEmulator(t)
	k := newOtelKit(t)
	c := k.client(t, emu)
	emu.fault(t, "GET", usersPath, 1, map[string]any{"kind": "respond", "status": 503, "headers": map[string]string{"Retry-After": "0"}, "body": `{"message":"busy"}`})
	if err := listUsers(c, context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	call := one(t, k.named("roomchat list_users"), "the call")
	attempts := k.named("GET " + usersPath)
	if len(attempts) != 2 {
		t.Fatalf("%d attempts", len(attempts))
	}
	first, second := attrs(attempts[0].Attributes), attrs(attempts[1].Attributes)
	if attempts[0].StartTime.After(attempts[1].StartTime) {
		first, second = second, first
		attempts[0], attempts[1] = attempts[1], attempts[0]
	}
	wantAttrs(t, "the first attempt", first, map[string]any{
		AttrHTTPResponseStatusCode: int64(503), AttrErrorType: "503", AttrRoomchatErrorKind: "server_error",
	})
	if _, ok := first[AttrHTTPRequestResendCount]; ok {
		t.Error("the first attempt has a resend count")
	}
	if attempts[0].Status.Code != codes.Error {
		t.Errorf("the first attempt's status %v", attempts[0].Status)
	}
	wantAttrs(t, "the second attempt", second, map[string]any{AttrHTTPResponseStatusCode: int64(200), AttrHTTPRequestResendCount: int64(1)})
	if attempts[1].Status.Code == codes.Error {
		t.Error("the second attempt failed")
	}
	wantAttrs(t, "the call", attrs(call.Attributes), map[string]any{AttrRoomchatAttempts: int64(2)})
	if call.Status.Code == codes.Error {
		t.Error("the call failed")
	}
	if len(call.Events) != 1 || call.Events[0].Name != EventRoomchatRetry {
		t.Fatalf("events %+v", call.Events)
	}
	retry := attrs(call.Events[0].Attributes)
	wantAttrs(t, "the retry", retry, map[string]any{
		AttrRoomchatAttempt: int64(1), AttrRoomchatRetryReason: "5xx", AttrHTTPResponseStatusCode: int64(503),
	})
	if _, ok := retry[AttrRoomchatWaitDuration].(float64); !ok {
		t.Errorf("the retry has no wait: %v", retry)
	}

	m := k.metrics(t)
	retries := m[MetricRoomchatClientRetries].Data.(metricdata.Sum[int64])
	if len(retries.DataPoints) != 1 || retries.DataPoints[0].Value != 1 || m[MetricRoomchatClientRetries].Unit != "{retry}" {
		t.Fatalf("retries %+v", retries)
	}
	wantAttrs(t, "retries", setAttrs(retries.DataPoints[0].Attributes), map[string]any{
		AttrRoomchatRetryReason: "5xx", AttrRoomchatOperation: "list_users", AttrServerAddress: "127.0.0.1",
	})
	byStatus := map[any]uint64{}
	for _, p := range m[MetricHTTPClientRequestDuration].Data.(metricdata.Histogram[float64]).DataPoints {
		a := setAttrs(p.Attributes)
		byStatus[a[AttrHTTPResponseStatusCode]] += p.Count
		if a[AttrHTTPResponseStatusCode] == int64(503) && a[AttrErrorType] != "503" {
			t.Errorf("the 503's point: %v", a)
		}
	}
	if byStatus[int64(503)] != 1 || byStatus[int64(200)] != 1 {
		t.Errorf("attempts by status %v", byStatus)
	}
	calls := m[MetricRoomchatClientCallDuration].Data.(metricdata.Histogram[float64])
	if len(calls.DataPoints) != 1 || calls.DataPoints[0].Count != 1 {
		t.Errorf("calls %+v", calls.DataPoints)
	}
}

func TestTelemetryOfARateLimitWait(t *testing.T) {
	// A key of its own: clients of one key share their budget in a process.
	emu := startOtelEmulator(t, "--private-key", ownKey("rate_limit_wait"))
	k := newOtelKit(t)
	c := k.client(t, emu, WithRateLimit(1, 300*time.Millisecond))
	for i := 0; i < 2; i++ {
		if err := listUsers(c, context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}
	calls := k.named("roomchat list_users")
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	// One slot per 300 ms: the second call waits for it (and the first may).
	waits := 0
	for _, call := range calls {
		if len(call.Events) == 0 {
			continue
		}
		waits++
		if len(call.Events) != 1 || call.Events[0].Name != EventRoomchatRateLimitWait {
			t.Fatalf("a call's events %+v", call.Events)
		}
		event := attrs(call.Events[0].Attributes)
		wait, _ := event[AttrRoomchatWaitDuration].(float64)
		if event[AttrRoomchatAttempt] != int64(1) || wait <= 0 {
			t.Errorf("the wait's event %v", event)
		}
		if total, _ := attrs(call.Attributes)[AttrRoomchatRateLimitWaitDuration].(float64); total < wait {
			t.Errorf("the call waited %v, its event %v", total, wait)
		}
		if call.Events[0].Time.Before(call.StartTime) {
			t.Errorf("the wait's event at %v, before its call %v", call.Events[0].Time, call.StartTime)
		}
	}
	if waits == 0 {
		t.Fatal("no call waited for the budget")
	}
	m := k.metrics(t)
	histogram := m[MetricRoomchatRateLimitWaitDuration].Data.(metricdata.Histogram[float64])
	if len(histogram.DataPoints) != 1 || histogram.DataPoints[0].Count != uint64(waits) {
		t.Fatalf("waits %+v, want %d", histogram.DataPoints, waits)
	}
	if fmt.Sprint(histogram.DataPoints[0].Bounds) != fmt.Sprint(waitBuckets) {
		t.Errorf("wait buckets %v", histogram.DataPoints[0].Bounds)
	}
	wantAttrs(t, "waits", setAttrs(histogram.DataPoints[0].Attributes), map[string]any{AttrRoomchatOperation: "list_users", AttrServerAddress: "127.0.0.1"})
}

func TestTelemetryOfFailures(t *testing.T) {
	emu := startOtelEmulator(t)
	k := newOtelKit(t)
	c := k.client(t, emu, WithMaxRetries(0))

	// An answer: the attempt's error.type is its status, the call's its kind.
	emu.fault(t, "GET", usersPath, 1, map[string]any{"kind": "respond", "status": 400, "body": `{"message":"no"}`})
	if err := listUsers(c, context.Background(), 5); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("got %v", err)
	}
	call := one(t, k.named("roomchat list_users"), "the call")
	attempt := one(t, k.named("GET "+usersPath), "the attempt")
	wantAttrs(t, "the attempt", attrs(attempt.Attributes), map[string]any{
		AttrErrorType: "400", AttrRoomchatErrorKind: "invalid_request", AttrHTTPResponseStatusCode: int64(400),
	})
	wantAttrs(t, "the call", attrs(call.Attributes), map[string]any{AttrErrorType: "invalid_request", AttrRoomchatAttempts: int64(1)})
	if call.Status.Code != codes.Error || call.Status.Description != "invalid_request (HTTP 400)" {
		t.Errorf("the call's status %+v", call.Status)
	}
	if attempt.Status.Code != codes.Error {
		t.Errorf("the attempt's status %+v", attempt.Status)
	}

	// No answer: the kind on both, and the call's status is the client's message.
	k.spans.Reset()
	emu.fault(t, "GET", usersPath, 1, map[string]any{"kind": "close"})
	err := listUsers(c, context.Background(), 5)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindConnection {
		t.Fatalf("got %v", err)
	}
	call = one(t, k.named("roomchat list_users"), "the call")
	attempt = one(t, k.named("GET "+usersPath), "the attempt")
	wantAttrs(t, "the attempt", attrs(attempt.Attributes), map[string]any{AttrErrorType: "connection", AttrRoomchatErrorKind: "connection"})
	if _, ok := attrs(attempt.Attributes)[AttrHTTPResponseStatusCode]; ok {
		t.Error("an attempt with no answer has a status code")
	}
	if call.Status.Code != codes.Error || call.Status.Description != e.Message {
		t.Errorf("the call's status %+v, want the error's message %q", call.Status, e.Message)
	}

	m := k.metrics(t)
	found := map[string]bool{}
	for _, p := range m[MetricRoomchatClientCallDuration].Data.(metricdata.Histogram[float64]).DataPoints {
		if v, ok := p.Attributes.Value(AttrErrorType); ok {
			found[v.AsString()] = true
		}
	}
	if !found["invalid_request"] || !found["connection"] {
		t.Errorf("call duration's error types %v", found)
	}
}

func TestTelemetryWithoutTracePropagation(t *testing.T) {
	emu := startOtelEmulator(t)
	k := newOtelKit(t)
	c := k.client(t, emu, WithoutTracePropagation())
	ctx, app := k.tp.Tracer("app").Start(context.Background(), "handle request")
	if err := listUsers(c, ctx, 1); err != nil {
		t.Fatal(err)
	}
	app.End()
	one(t, k.named("GET "+usersPath), "the attempt")
	for _, entry := range emu.journal(t) {
		for _, name := range []string{"traceparent", "tracestate", "baggage"} {
			if v, ok := entry.header(name); ok {
				t.Errorf("%s %s sent %s: %s", entry.Method, entry.Path, name, v)
			}
		}
	}
}

func TestTelemetryBudgetGauge(t *testing.T) {
	// A key of its own: clients of one key share their budget in a process.
	emu := startOtelEmulator(t, "--private-key", ownKey("budget_gauge"))
	k := newOtelKit(t)
	c := k.client(t, emu, WithRateLimit(5, time.Minute))
	if err := listUsers(c, context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	gauge := k.metrics(t)[MetricRoomchatRateLimitRemaining]
	points := gauge.Data.(metricdata.Gauge[int64]).DataPoints
	if len(points) != 1 || gauge.Unit != "{request}" {
		t.Fatalf("the gauge %+v", gauge)
	}
	a := setAttrs(points[0].Attributes)
	if id, _ := a[AttrRoomchatClientID].(int64); id < 1 || a[AttrServerAddress] != "127.0.0.1" {
		t.Errorf("the gauge's attributes %v", a)
	}
	if points[0].Value != 4 {
		t.Errorf("remaining %d after one of 5", points[0].Value)
	}
	// A closed client leaves the gauge.
	_ = c.Close()
	if gauge, ok := k.metrics(t)[MetricRoomchatRateLimitRemaining]; ok && len(gauge.Data.(metricdata.Gauge[int64]).DataPoints) != 0 {
		t.Errorf("a closed client is in the gauge: %+v", gauge)
	}
}

// lockedBuffer is a log destination the calling goroutines share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestTelemetryAndLogsHoldNoSecret(t *testing.T) {
	const privateKey = "sk_live_C0ll?ct#9/x@y+&=%"
	const publicKey = "pk_live_C0ll?ct#p/k@y+&=%"
	emu := startOtelEmulator(t, "--private-key", privateKey, "--public-key", publicKey)
	k := newOtelKit(t)
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := k.client(t, emu, WithPublicKey(publicKey), WithLogger(logger), WithMaxRetries(1))
	var errs []string
	ctx, app := k.tp.Tracer("app").Start(context.Background(), "handle request")
	user, err := c.CreateUser(ctx, "jon", nil)
	if err != nil {
		t.Fatal(err)
	}
	token := user.AccessToken
	if token == "" {
		t.Fatalf("no token in %+v", user)
	}
	if _, err := c.ValidateAccessToken(ctx, token); err != nil {
		t.Fatal(err)
	}
	// Answers that quote the secrets: a retried 500, then a 400.
	quoted := fmt.Sprintf(`{"message":"bad key %s / %s / %s"}`, privateKey, publicKey, token)
	emu.fault(t, "GET", usersPath, 1, map[string]any{"kind": "respond", "status": 500, "body": quoted})
	emu.fault(t, "GET", usersPath, 1, map[string]any{"kind": "respond", "status": 400, "body": quoted})
	err = listUsers(c, ctx, 1)
	if err == nil {
		t.Fatal("the 400 was not an error")
	}
	// The service's own text in an error (its "message") is scrubbed of the
	// client's keys by core, but not of a token the service chose to quote
	// (core knows the keys, not every token): those errors are checked for
	// the keys; the telemetry and the logs, which never carry the service's
	// text, for the token too.
	keyErrs := []string{err.Error(), fmt.Sprintf("%+v", err)}
	emu.fault(t, "POST", "/consumer/api/v1/user/accessToken/validate", 1, map[string]any{"kind": "respond", "status": 400, "body": quoted})
	_, err = c.ValidateAccessToken(ctx, token)
	if err == nil {
		t.Fatal("the 400 was not an error")
	}
	keyErrs = append(keyErrs, err.Error(), fmt.Sprintf("%+v", err))
	// A call that fails in the client (a closed port), whose message names the URL.
	bad, berr := NewClient(privateKey, k.options(&otelEmulator{BaseURL: "http://127.0.0.1:9"}, WithPublicKey(publicKey), WithLogger(logger), WithMaxRetries(0))...)
	if berr != nil {
		t.Fatal(berr)
	}
	defer bad.Close()
	_, err = bad.ValidateAccessToken(ctx, token)
	if err == nil {
		t.Fatal("a closed port answered")
	}
	errs = append(errs, err.Error(), fmt.Sprintf("%+v", err))
	app.End()

	var texts []string
	spans := k.spans.GetSpans()
	if len(spans) < 6 {
		t.Fatalf("only %d spans", len(spans))
	}
	for _, s := range spans {
		texts = append(texts, s.Name, s.Status.Description)
		for _, kv := range s.Attributes {
			texts = append(texts, kv.Value.Emit())
		}
		for _, e := range s.Events {
			texts = append(texts, e.Name)
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.Emit())
			}
		}
	}
	for _, m := range k.metrics(t) {
		texts = append(texts, fmt.Sprintf("%+v", m.Data))
	}
	if !strings.Contains(logs.String(), "consumer/api") {
		t.Errorf("no log line names a request: %q", logs.String())
	}
	texts = append(texts, logs.String())
	texts = append(texts, errs...)
	all := strings.Join(texts, "\n")
	check := func(text string, secrets ...string) {
		for _, secret := range secrets {
			for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
				if i := strings.Index(text, form); i >= 0 {
					t.Errorf("a secret (%d characters) appears in the spans, metrics, logs or errors, after %q", len(secret), text[max(0, i-200):i])
				}
			}
		}
	}
	check(all, privateKey, publicKey, token)
	check(strings.Join(keyErrs, "\n"), privateKey, publicKey)
	// The redaction is there to be seen.
	if !strings.Contains(all, "publicKey=REDACTED") {
		t.Error("no url.full shows the public key REDACTED")
	}
}

// panickingPropagator panics in Inject, as a broken propagator might.
type panickingPropagator struct{ propagation.TraceContext }

func (panickingPropagator) Inject(context.Context, propagation.TextMapCarrier) { panic("inject") }

// panickingProcessor panics when an attempt's span ends.
type panickingProcessor struct{ sdktrace.SpanProcessor }

func (panickingProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (panickingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanKind() == trace.SpanKindClient {
		panic("on end")
	}
}
func (panickingProcessor) Shutdown(context.Context) error   { return nil }
func (panickingProcessor) ForceFlush(context.Context) error { return nil }

func TestTelemetryPanicsCostTheirPartOnly(t *testing.T) {
	emu := startOtelEmulator(t)
	k := newOtelKit(t, panickingProcessor{})
	c := k.client(t, emu, WithPropagator(panickingPropagator{}))
	if err := listUsers(c, context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	// The call's span still ends; the attempt's never reached the exporter.
	one(t, k.named("roomchat list_users"), "the call")
	if n := len(k.named("GET " + usersPath)); n != 0 {
		t.Errorf("%d attempt spans exported past the panicking processor", n)
	}
	if _, ok := emu.journal(t)[0].header("traceparent"); ok {
		t.Error("a traceparent was sent by a propagator that panicked")
	}
	calls := k.metrics(t)[MetricRoomchatClientCallDuration].Data.(metricdata.Histogram[float64])
	if len(calls.DataPoints) != 1 {
		t.Errorf("the call's metric: %+v", calls.DataPoints)
	}
}

// Without an SDK (otel's globals unset, no provider given) a call is not
// observed: nothing is sent, and a parent's context given by a propagator
// still is.
func TestTelemetryWithoutAnSDK(t *testing.T) {
	if globalKit.k != nil {
		t.Skip("otel's globals were set by an earlier run in this process")
	}
	emu := startOtelEmulator(t)
	c, err := NewClient(emu.PrivateKey, WithBaseURL(emu.BaseURL))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := listUsers(c, context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if v, ok := emu.journal(t)[0].header("traceparent"); ok {
		t.Errorf("a traceparent without an SDK: %s", v)
	}
	// A parent span of another provider and the W3C propagator given: its context goes on.
	k := newOtelKit(t)
	ctx, app := k.tp.Tracer("app").Start(context.Background(), "handle request")
	defer app.End()
	withParent, err := NewClient(emu.PrivateKey, WithBaseURL(emu.BaseURL), WithPropagator(propagation.TraceContext{}))
	if err != nil {
		t.Fatal(err)
	}
	defer withParent.Close()
	if err := listUsers(withParent, ctx, 1); err != nil {
		t.Fatal(err)
	}
	journal := emu.journal(t)
	sent, _ := journal[len(journal)-1].header("traceparent")
	if want := fmt.Sprintf("00-%s-%s-01", app.SpanContext().TraceID(), app.SpanContext().SpanID()); sent != want {
		t.Errorf("traceparent %q, want the parent's %q", sent, want)
	}
}

// globalKit is the SDK set as otel's globals, once per process: a global
// provider delegates to the first one set only.
var globalKit struct {
	once sync.Once
	k    *otelKit
}

// The only test that sets otel's globals: a client made before the
// application sets them records through them (the first run in a process;
// a run again finds them set).
func TestTelemetryThroughGlobalProvidersSetLater(t *testing.T) {
	emu := startOtelEmulator(t)
	c, err := NewClient(emu.PrivateKey, WithBaseURL(emu.BaseURL))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	globalKit.once.Do(func() {
		globalKit.k = newOtelKit(nil)
		otel.SetTracerProvider(globalKit.k.tp)
		otel.SetMeterProvider(globalKit.k.mp)
		otel.SetTextMapPropagator(propagation.TraceContext{})
	})
	k := globalKit.k
	k.spans.Reset()
	if err := listUsers(c, context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	attempt := one(t, k.named("GET "+usersPath), "the attempt")
	sent, _ := emu.journal(t)[0].header("traceparent")
	if want := fmt.Sprintf("00-%s-%s-01", attempt.SpanContext.TraceID(), attempt.SpanContext.SpanID()); sent != want {
		t.Errorf("traceparent %q, want %q", sent, want)
	}
	if _, ok := k.metrics(t)[MetricRoomchatClientCallDuration]; !ok {
		t.Error("no call metric through the global meter provider")
	}
}

func activeCalls(t *testing.T, k *otelKit) map[string]int64 {
	out := map[string]int64{}
	if m, ok := k.metrics(t)[MetricRoomchatClientActiveCalls]; ok {
		for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
			v, _ := p.Attributes.Value(AttrRoomchatOperation)
			out[v.AsString()] += p.Value
		}
	}
	return out
}

func TestTelemetryCountsCallsInFlight(t *testing.T) {
	emu := startOtelEmulator(t)
	k := newOtelKit(t)
	c := k.client(t, emu)
	emu.fault(t, "GET", usersPath, 1, map[string]any{"kind": "hold"})
	done := make(chan error, 1)
	go func() { done <- listUsers(c, context.Background(), 1) }()
	// The answer is held: the call is in flight.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var held struct{ Held int }
		emu.admin(t, "GET", "/held", nil, &held)
		if held.Held == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request was never held")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := activeCalls(t, k); got["list_users"] != 1 {
		t.Errorf("calls in flight while one is held: %v", got)
	}
	emu.admin(t, "DELETE", "/held", nil, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := activeCalls(t, k); got["list_users"] != 0 {
		t.Errorf("calls in flight after it: %v", got)
	}
}

func TestTelemetryOfADegradedBudget(t *testing.T) {
	const password = "R3d?s#9/c@ll&"
	emu := startOtelEmulator(t, "--private-key", ownKey("degraded_budget"))
	k := newOtelKit(t)
	// No Redis listens on port 1: the client falls back and says so.
	c := k.client(t, emu,
		WithRedisBudget("redis://:"+url.QueryEscape(password)+"@127.0.0.1:1/0"),
		WithRedisPolicy(RedisLocalFallback, 1),
		WithRedisTimeouts(200*time.Millisecond, 200*time.Millisecond, 0))
	if err := listUsers(c, context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	call := one(t, k.named("roomchat list_users"), "the call")
	var degraded []map[string]any
	for _, e := range call.Events {
		if e.Name == EventRoomchatBudgetDegraded {
			degraded = append(degraded, attrs(e.Attributes))
		}
	}
	if len(degraded) == 0 {
		t.Fatalf("no %s event: %+v", EventRoomchatBudgetDegraded, call.Events)
	}
	e := degraded[0]
	message, _ := e[AttrErrorMessage].(string)
	if e[AttrRoomchatAttempt] != int64(1) || e[AttrErrorType] == nil || message == "" {
		t.Errorf("the event %v", e)
	}
	if strings.Contains(message, password) || strings.Contains(message, url.QueryEscape(password)) {
		t.Error("the Redis password is in the event's message")
	}
	m := k.metrics(t)[MetricRoomchatBudgetDegraded]
	sum := m.Data.(metricdata.Sum[int64])
	if m.Unit != "{event}" || len(sum.DataPoints) != 1 || sum.DataPoints[0].Value != int64(len(degraded)) {
		t.Errorf("%s %+v, want %d", MetricRoomchatBudgetDegraded, m, len(degraded))
	}
}

// The meter provider keeps the gauge's callback, which must not keep a
// client the program forgot: its finalizer takes it out of the gauge.
func TestTelemetryForgottenClientLeavesTheGauge(t *testing.T) {
	emu := startOtelEmulator(t, "--private-key", ownKey("forgotten"))
	k := newOtelKit(t)
	func() {
		c, err := NewClient(emu.PrivateKey, k.options(emu)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := listUsers(c, context.Background(), 1); err != nil {
			t.Fatal(err)
		}
	}()
	gaugePoints := func() int {
		m, ok := k.metrics(t)[MetricRoomchatRateLimitRemaining]
		if !ok {
			return 0
		}
		return len(m.Data.(metricdata.Gauge[int64]).DataPoints)
	}
	if n := gaugePoints(); n != 1 {
		t.Fatalf("%d gauge points for the client alive", n)
	}
	for i := 0; gaugePoints() != 0; i++ {
		if i == 200 {
			t.Fatal("the forgotten client was never collected: something holds it")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// An iterator's pages are each a call, under the span of the ctx it was given.
func TestTelemetryOfAnIteratorsPages(t *testing.T) {
	emu := startOtelEmulator(t, "--seed-users", "5")
	k := newOtelKit(t)
	c := k.client(t, emu)
	ctx, app := k.tp.Tracer("app").Start(context.Background(), "export users")
	pages := 0
	for page, err := range c.ListUsersPages(ctx, &ListUsersParams{Limit: Int(2)}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) == 0 {
			break
		}
		pages++
	}
	app.End()
	calls := k.named("roomchat list_users")
	if pages != 3 || len(calls) < pages {
		t.Fatalf("%d pages, %d call spans", pages, len(calls))
	}
	for _, call := range calls {
		if call.Parent.SpanID() != app.SpanContext().SpanID() {
			t.Errorf("a page's call under %v, want the iterator's ctx's span", call.Parent.SpanID())
		}
		if attrs(call.Attributes)[AttrRoomchatAttempts] != int64(1) {
			t.Errorf("a page's call %v", attrs(call.Attributes))
		}
	}
	if n := len(k.named("GET " + usersPath)); n != len(calls) {
		t.Errorf("%d attempt spans for %d calls", n, len(calls))
	}
	if got := activeCalls(t, k); got["list_users"] != 0 {
		t.Errorf("calls in flight after the iterator: %v", got)
	}
}
