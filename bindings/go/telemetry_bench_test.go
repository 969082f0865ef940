package roomchat

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// benchCall feeds t the three reports of a one-attempt call, as core sends them.
func benchCall(b *testing.B, t *telemetry) {
	now := time.Now()
	o := observation{Operation: "list_users", Method: "GET", URLTemplate: "/consumer/api/v2/users",
		URLFull: "http://127.0.0.1:1/consumer/api/v2/users?auth=REDACTED&limit=50", URLScheme: "http",
		ServerAddress: "127.0.0.1", ServerPort: 1, ProtocolVersion: "1.1", CallStart: now, Start: now, Propagate: true}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cs := &callState{ctx: ctx}
		o.CallID = uint64(i + 1)
		o.Kind, o.Attempt, o.End, o.Status = attemptStart, 1, time.Time{}, 0
		t.observe(cs, &o, attemptHeaders{})
		o.Kind, o.End, o.Duration, o.Status = attemptEnd, now, time.Millisecond, 200
		t.observe(cs, &o, attemptHeaders{})
		o.Kind = callEnd
		t.observe(cs, &o, attemptHeaders{})
		t.callReturned(cs, nil)
	}
}

// The mapping's cost per call with otel's globals unset (no SDK), and with
// an SDK recording spans (in memory) and metrics.
func BenchmarkTelemetryPerCallNoSDK(b *testing.B) {
	benchCall(b, newTelemetry(defaultSettings()))
}

func BenchmarkTelemetryPerCallSDK(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	s := defaultSettings()
	s.tracerProvider, s.meterProvider, s.propagator = tp, mp, propagation.TraceContext{}
	benchCall(b, newTelemetry(s))
}
