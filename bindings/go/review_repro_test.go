//go:build roomchat_repro

package roomchat_test

// Reproducers of review findings not fixed on this branch (goreview): each
// fails today. Run them with: go test -race -tags roomchat_repro -run TestRepro .

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// countingTracer counts the spans started through it.
type countingTracer struct {
	noop.TracerProvider
	started *atomic.Int64
}

func (p countingTracer) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return countingTracerT{Tracer: p.TracerProvider.Tracer(name), started: p.started}
}

type countingTracerT struct {
	trace.Tracer
	started *atomic.Int64
}

func (t countingTracerT) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t.started.Add(1)
	return t.Tracer.Start(ctx, name, opts...)
}

// countingPropagator counts Inject calls.
type countingPropagator struct{ injected *atomic.Int64 }

func (p countingPropagator) Inject(context.Context, propagation.TextMapCarrier) { p.injected.Add(1) }
func (p countingPropagator) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}
func (p countingPropagator) Fields() []string { return []string{"traceparent"} }

// README, Observability: "an INTERNAL span per call, a CLIENT span per
// attempt ... trace context is injected into each attempt's headers by the
// propagator". A call through a client given a tracer provider and a
// propagator must start spans and inject.
func TestReproTelemetryAsTheReadmeSays(t *testing.T) {
	emu := roomchattest.Start(t)
	var started, injected atomic.Int64
	client := emu.Client(t, roomchat.WithTracerProvider(countingTracer{started: &started}),
		roomchat.WithPropagator(countingPropagator{injected: &injected}))
	if _, err := client.ListChatRooms(context.Background()); err != nil {
		t.Fatal(err)
	}
	if started.Load() < 2 || injected.Load() < 1 {
		t.Fatalf("one call: %d spans started (want a call's and an attempt's), %d injections (want 1)", started.Load(), injected.Load())
	}
}

// closingHandler closes the client from inside a log line of one of its calls.
type closingHandler struct{ close func() }

func (h closingHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (h closingHandler) Handle(context.Context, slog.Record) error { h.close(); return nil }
func (h closingHandler) WithAttrs([]slog.Attr) slog.Handler        { return h }
func (h closingHandler) WithGroup(string) slog.Handler             { return h }

// Close called from a log handler during one of the client's calls waits for
// that call, which waits for the handler: the call never returns.
func TestReproCloseFromLogHandler(t *testing.T) {
	emu := roomchattest.Start(t)
	var client *roomchat.Client
	once := sync.Once{}
	// Not emu.Client: its cleanup's Close would wait for the stuck one.
	client, err := roomchat.NewClient(emu.PrivateKey(), roomchat.WithBaseURL(emu.BaseURL()),
		roomchat.WithLogger(slog.New(closingHandler{close: func() { once.Do(func() { client.Close() }) }})))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := client.ListChatRooms(context.Background()); done <- err }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a call whose log handler closed the client never returned (deadlock)")
	}
}
