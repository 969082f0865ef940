package roomchat

// The package's OpenTelemetry: each call a span (INTERNAL) of the span in the
// call's ctx, each HTTP attempt a CLIENT span under it, the HTTP client
// metrics, and trace context from the propagator on every attempt, made from
// core's reports (the C observer, on the calling goroutine: observe.go). The
// same picture as core's cargo feature `opentelemetry` (core/src/send/otel.rs),
// the Node package's telemetry.js and the Python package's _telemetry.py: the
// same names (api/telemetry.toml), kinds, attributes, events, statuses,
// metrics, units and buckets.
//
// The providers and the propagator are read once, when the client is made
// (as otelhttp and the other instrumentation libraries of otel-go do): the
// ones given (WithTracerProvider, WithMeterProvider, WithPropagator), else
// otel's global ones, which delegate to the providers the application sets
// later, so a client made before otel.SetTracerProvider records too.
//
// A panic of the application's SDK (a span processor, an exporter, an
// instrument, a propagator) costs only the part it happened in: it is
// recovered and handed to otel.Handle, as otel-go reports its own failures.

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// instrumentationName is the scope of every span and instrument, as in the
// other languages; its version is the library's (roomchat_version).
const instrumentationName = "roomchat"

var instrumentationVersion = sync.OnceValue(func() string { return goString(C.roomchat_version()) })

// durationBuckets are http.client.request.duration's (the HTTP conventions'),
// also roomchat.client.call.duration's, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// waitBuckets are roomchat.rate_limit.wait.duration's, in seconds: up to the
// rate limit's window (60 s by default) or a 429's hold.
var waitBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// telemetry is one client's: its tracer, instruments and propagator, and its
// entry in the budget gauge.
type telemetry struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator // nil: no trace context sent
	// globalMeter: the instruments are the global meter provider's.
	globalMeter bool
	// globalTracer: the tracer is the global tracer provider's; noTracer: it
	// is one that never records (the noop provider given).
	globalTracer, noTracer bool
	inst        instruments

	// The gauge's view of the client. It holds the library's pointer, never
	// the *client: the meter provider keeps the gauge's callback, and a
	// client the program forgot must stay collectable (its finalizer
	// unregisters the callback).
	// The server as core names it (roomchat_client_server), for the calls
	// counted in flight from their dispatch, before any report names it.
	server []attribute.KeyValue

	mu           sync.RWMutex
	ptr          *C.struct_roomchat_client // nil before clientStarted and once closed
	registration metric.Registration
	naming       sync.Once
	named        atomic.Bool   // gaugeAttrs is set
	gaugeAttrs   attribute.Set // roomchat.client.id and server.address, as core names them (its first report)
}

// instruments are the metrics of one meter.
type instruments struct {
	requestDuration metric.Float64Histogram
	callDuration    metric.Float64Histogram
	rateLimitWait   metric.Float64Histogram
	retries         metric.Int64Counter
	degraded        metric.Int64Counter
	activeCalls     metric.Int64UpDownCounter
	remaining       metric.Int64ObservableGauge
	meter           metric.Meter
}

func newTelemetry(s *settings) *telemetry {
	t := &telemetry{tracer: tracenoop.NewTracerProvider().Tracer(instrumentationName)}
	t.inst.noop()
	guard("the tracer", func() {
		provider := s.tracerProvider
		if provider == nil {
			provider = otel.GetTracerProvider()
			t.globalTracer = true
		}
		_, t.noTracer = provider.(tracenoop.TracerProvider)
		t.tracer = provider.Tracer(instrumentationName, trace.WithInstrumentationVersion(instrumentationVersion()))
	})
	guard("the instruments", func() {
		provider := s.meterProvider
		if provider == nil {
			provider = otel.GetMeterProvider()
			t.globalMeter = true
		}
		meter := provider.Meter(instrumentationName, metric.WithInstrumentationVersion(instrumentationVersion()))
		var made instruments
		made.make(meter)
		t.inst = made
	})
	if !s.noPropagation {
		t.propagator = s.propagator
		if t.propagator == nil {
			t.propagator = otel.GetTextMapPropagator()
		}
	}
	return t
}

// noop makes every instrument one that records nothing.
func (in *instruments) noop() {
	in.make(metricnoop.NewMeterProvider().Meter(instrumentationName))
}

// make makes the instruments of meter: an instrument the SDK refuses is
// reported, and the SDK hands back one that records nothing.
func (in *instruments) make(meter metric.Meter) {
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	in.meter = meter
	in.requestDuration, err = meter.Float64Histogram(MetricHTTPClientRequestDuration,
		metric.WithUnit("s"), metric.WithDescription("Duration of HTTP client requests."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	note(err)
	in.callDuration, err = meter.Float64Histogram(MetricRoomchatClientCallDuration,
		metric.WithUnit("s"),
		metric.WithDescription("Duration of roomchat calls, from the call to its result: every attempt, rate-limit wait and backoff."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	note(err)
	in.rateLimitWait, err = meter.Float64Histogram(MetricRoomchatRateLimitWaitDuration,
		metric.WithUnit("s"), metric.WithDescription("Time a call waited for a slot of the key's rate-limit budget."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	note(err)
	in.retries, err = meter.Int64Counter(MetricRoomchatClientRetries,
		metric.WithUnit("{retry}"), metric.WithDescription("Attempts sent again, by reason."))
	note(err)
	in.degraded, err = meter.Int64Counter(MetricRoomchatBudgetDegraded,
		metric.WithUnit("{event}"),
		metric.WithDescription("Times the shared rate-limit budget in Redis failed and the client followed its OnRedisError policy."))
	note(err)
	in.activeCalls, err = meter.Int64UpDownCounter(MetricRoomchatClientActiveCalls,
		metric.WithUnit("{call}"), metric.WithDescription("Calls in flight."))
	note(err)
	in.remaining, err = meter.Int64ObservableGauge(MetricRoomchatRateLimitRemaining,
		metric.WithUnit("{request}"), metric.WithDescription("Requests the key's rate-limit budget allows now, per client."))
	note(err)
	for _, err := range errs {
		report("the instruments", err)
	}
}

// clientStarted puts the client in the budget gauge (one series per client
// alive, from its first call on: core names it then).
func (t *telemetry) clientStarted(c *client) {
	var address *C.char
	var port C.uint16_t
	if C.roomchat_client_server(c.ptr, &address, &port) == C.ROOMCHAT_RESULT_OK {
		t.server = []attribute.KeyValue{
			attribute.String(AttrServerAddress, takeString(address)),
			attribute.Int(AttrServerPort, int(port)),
		}
	}
	t.mu.Lock()
	t.ptr = c.ptr
	t.mu.Unlock()
	guard("the budget gauge", func() {
		registration, err := t.inst.meter.RegisterCallback(t.observeBudget, t.inst.remaining)
		if err != nil {
			report("the budget gauge", err)
			return
		}
		t.mu.Lock()
		t.registration = registration
		t.mu.Unlock()
	})
}

// clientClosed takes the client out of the gauge, before its pointer is freed
// (free calls it under the client's lock).
func (t *telemetry) clientClosed(c *client) {
	t.mu.Lock()
	t.ptr = nil
	registration := t.registration
	t.registration = nil
	t.mu.Unlock()
	// Unregistered out of t.mu: a collection holds the SDK's lock while it
	// runs observeBudget, which takes t.mu.
	if registration != nil {
		guard("the budget gauge", func() {
			if err := registration.Unregister(); err != nil {
				report("the budget gauge", err)
			}
		})
	}
}

// observeBudget is the gauge's callback: the client's free budget slots now.
func (t *telemetry) observeBudget(_ context.Context, o metric.Observer) error {
	if !t.named.Load() {
		return nil
	}
	remaining, ok := t.remaining()
	if ok {
		o.ObserveInt64(t.inst.remaining, remaining, metric.WithAttributeSet(t.gaugeAttrs))
	}
	return nil
}

// remaining reads the client's budget (roomchat_client_rate_limit_state);
// false once the client is closed.
func (t *telemetry) remaining() (int64, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.ptr == nil {
		return 0, false
	}
	var state C.struct_roomchat_rate_limit_state
	if C.roomchat_client_rate_limit_state(t.ptr, &state) != C.ROOMCHAT_RESULT_OK {
		return 0, false
	}
	return int64(state.remaining), true
}

// callTelemetry is one call's spans between its reports (a callState may see
// several calls one after the other: each is told by its call id).
type callTelemetry struct {
	callID  uint64
	started bool
	// span is the call's span (nil when nothing traces it); ctx is the
	// call's ctx with it, the parent of its attempts.
	span    trace.Span
	ctx     context.Context
	attempt trace.Span
	// What every span and metric of the call carries.
	operation string
	method    string // http.request.method: the conventions' nine, else _OTHER
	attempts  []attribute.KeyValue
	request   []attribute.KeyValue // http.client.request.duration's, without the outcome
	event     []attribute.KeyValue // roomchat.operation, server.address
	call      []attribute.KeyValue // roomchat.operation, server.address, server.port
	counted   bool                 // counted in roomchat.client.active_calls
	ignored   bool                 // nothing records it nor sends its context
	// A failed call's span waits for the call's *Error (callReturned): its
	// status description is the error's.
	pending    bool
	pendingEnd time.Time
}

// observe turns one of core's reports into spans, events and metrics.
func (t *telemetry) observe(cs *callState, o *observation, headers attemptHeaders) {
	ct := &cs.telemetry
	if !ct.started || ct.callID != o.CallID {
		// Another call of the same Go call (a page after a page): what the
		// last one left is closed first.
		t.uncount(ct)
		t.endPending(ct, nil)
		t.startCall(cs, ct, o)
	}
	if ct.ignored {
		return
	}
	switch o.Kind {
	case attemptStart:
		t.events(ct, o.Events)
		t.attemptStart(ct, o, headers)
	case attemptEnd:
		t.attemptEnd(ct, o)
		t.events(ct, o.Events)
	case callEnd:
		t.events(ct, o.Events)
		t.callEnd(ct, o)
	}
}

// unsetMeterProvider is the type of otel's global meter provider until the
// program sets one (the API's delegating provider, which records nothing).
var unsetMeterProvider = func() reflect.Type {
	provider := reflect.TypeOf(otel.GetMeterProvider())
	if provider != nil && provider.Kind() == reflect.Pointer && provider.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" {
		return provider
	}
	return nil
}()

// unsetTracerProvider is the type of otel's global tracer provider until the
// program sets one (the API's delegating provider, whose spans record nothing).
var unsetTracerProvider = func() reflect.Type {
	provider := reflect.TypeOf(otel.GetTracerProvider())
	if provider != nil && provider.Kind() == reflect.Pointer && provider.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" {
		return provider
	}
	return nil
}()

// traces says whether the tracer may make spans that record: one given
// (but the noop provider), or otel's global one once the program set it.
func (t *telemetry) traces() bool {
	if t.noTracer {
		return false
	}
	return !t.globalTracer || unsetTracerProvider == nil || reflect.TypeOf(otel.GetTracerProvider()) != unsetTracerProvider
}

// listens says whether a call in ctx has anything to report to: spans to make
// (a tracer that records, or a span in ctx whose context its attempts carry),
// metrics to record, or a propagator that sends fields; or the client's first
// call, which names its budget gauge. When nothing does (the default of a
// program without an SDK), the call's reports stay in C (capi.c): each would
// be a cgo callback, which needs one of the runtime's Ps, for nothing.
func (t *telemetry) listens(ctx context.Context) bool {
	return !t.named.Load() || t.traces() || trace.SpanContextFromContext(ctx).IsValid() ||
		t.recordsMetrics() || t.propagates()
}

// recordsMetrics says whether a call's metrics would be recorded: always with
// a meter provider given; through otel's global one, once the program set it.
func (t *telemetry) recordsMetrics() bool {
	return !t.globalMeter || unsetMeterProvider == nil || reflect.TypeOf(otel.GetMeterProvider()) != unsetMeterProvider
}

// propagates says whether the propagator would put anything on the wire
// (otel's global one names no field until the program sets one).
func (t *telemetry) propagates() (fields bool) {
	if t.propagator == nil {
		return false
	}
	fields = true
	guard("the propagator", func() { fields = len(t.propagator.Fields()) > 0 })
	return fields
}

// knownMethods are the methods the HTTP conventions name; any other is _OTHER.
var knownMethods = map[string]bool{
	"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true,
	"HEAD": true, "OPTIONS": true, "TRACE": true, "CONNECT": true,
}

// startCall makes the call's span (from the call's start, under the span of
// the call's ctx) and counts it in flight.
func (t *telemetry) startCall(cs *callState, ct *callTelemetry, o *observation) {
	*ct = callTelemetry{callID: o.CallID, started: true, ctx: cs.ctx, operation: o.Operation}
	if ct.ctx == nil {
		ct.ctx = context.Background()
	}
	if !t.named.Load() {
		t.naming.Do(func() {
			t.gaugeAttrs = attribute.NewSet(
				attribute.Int64(AttrRoomchatClientID, int64(o.ClientID)),
				attribute.String(AttrServerAddress, o.ServerAddress))
			t.named.Store(true)
		})
	}
	operation := attribute.String(AttrRoomchatOperation, o.Operation)
	guard("the span of a call", func() {
		ctx, span := t.tracer.Start(ct.ctx, "roomchat "+o.Operation,
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithTimestamp(o.CallStart),
			trace.WithAttributes(operation))
		// A span that records nothing and has no context to pass on (no SDK,
		// no parent): the attempts need none either, only the parent's
		// context (its baggage) on the wire.
		if span.IsRecording() || span.SpanContext().IsValid() {
			ct.span, ct.ctx = span, ctx
		}
	})
	// Nothing to record and nothing a propagator would send (otel's globals
	// unset, the default of a program without an SDK): the call's other
	// reports are not looked at, as core does not observe such a call.
	if ct.span == nil && !t.recordsMetrics() && !t.propagates() {
		ct.ignored = true
		return
	}
	ct.method = o.Method
	if !knownMethods[ct.method] {
		ct.method = "_OTHER"
	}
	address := attribute.String(AttrServerAddress, o.ServerAddress)
	port := attribute.Int(AttrServerPort, o.ServerPort)
	method := attribute.String(AttrHTTPRequestMethod, ct.method)
	protocol := attribute.String(AttrNetworkProtocolVersion, o.ProtocolVersion)
	ct.attempts = []attribute.KeyValue{method, address, port, attribute.String(AttrURLFull, o.URLFull), protocol}
	ct.request = []attribute.KeyValue{method, address, port, protocol}
	if o.URLTemplate != "" {
		template := attribute.String(AttrURLTemplate, o.URLTemplate)
		ct.attempts = append(ct.attempts, template)
		ct.request = append(ct.request, template)
	}
	ct.event = []attribute.KeyValue{operation, address}
	ct.call = []attribute.KeyValue{operation, address, port}
	if cs.dispatched {
		return // counted from its dispatch, by callAs
	}
	guard(MetricRoomchatClientActiveCalls, func() {
		t.inst.activeCalls.Add(ct.ctx, 1, metric.WithAttributes(ct.call...))
		ct.counted = true
	})
}

// dispatch counts a call of op in roomchat.client.active_calls from now (its
// dispatch: before its turn and its wait for the rate budget, which send no
// report), when metrics are recorded; what it returns takes it out (nil:
// not counted).
func (t *telemetry) dispatch(ctx context.Context, op string) (done func()) {
	if t.server == nil || !t.recordsMetrics() {
		return nil
	}
	attributes := metric.WithAttributes(append([]attribute.KeyValue{attribute.String(AttrRoomchatOperation, op)}, t.server...)...)
	guard(MetricRoomchatClientActiveCalls, func() {
		t.inst.activeCalls.Add(ctx, 1, attributes)
		done = func() {
			guard(MetricRoomchatClientActiveCalls, func() { t.inst.activeCalls.Add(ctx, -1, attributes) })
		}
	})
	return done
}

// attemptStart makes the attempt's span and puts its context on the wire.
func (t *telemetry) attemptStart(ct *callTelemetry, o *observation, headers attemptHeaders) {
	ctx := ct.ctx
	ct.attempt = nil
	if ct.span != nil {
		guard("the span of an attempt", func() {
			attributes := ct.attempts
			if o.ResendCount > 0 {
				attributes = append(attributes[:len(attributes):len(attributes)], attribute.Int(AttrHTTPRequestResendCount, o.ResendCount))
			}
			name := o.Method
			if o.URLTemplate != "" {
				name += " " + o.URLTemplate
			}
			attemptCtx, span := t.tracer.Start(ct.ctx, name,
				trace.WithSpanKind(trace.SpanKindClient),
				trace.WithTimestamp(o.Start),
				trace.WithAttributes(attributes...))
			ct.attempt, ctx = span, attemptCtx
		})
	}
	if t.propagator == nil || !o.Propagate {
		return
	}
	guard("the propagator", func() {
		carrier := propagation.MapCarrier{}
		t.propagator.Inject(ctx, carrier)
		for name, value := range carrier {
			// A header the client refuses (a reserved name, a bad value) is
			// left out rather than failing the call, as core does.
			_ = headers.Set(name, value)
		}
	})
}

// attemptError is an attempt's error.type: the status as text for an answer
// ("429", as the HTTP instrumentations put it), else the kind's name.
func attemptError(o *observation) string {
	if o.ErrorType == "" {
		return ""
	}
	if o.Status != 0 {
		return strconv.Itoa(o.Status)
	}
	return o.ErrorType
}

// attemptEnd ends the attempt's span with core's time and records its duration.
func (t *telemetry) attemptEnd(ct *callTelemetry, o *observation) {
	errorType := attemptError(o)
	if span := ct.attempt; span != nil {
		ct.attempt = nil
		guard("the span of an attempt", func() {
			if o.Status != 0 {
				span.SetAttributes(attribute.Int(AttrHTTPResponseStatusCode, o.Status))
			}
			if errorType != "" {
				span.SetAttributes(attribute.String(AttrErrorType, errorType))
				span.SetStatus(codes.Error, "")
				span.SetAttributes(attribute.String(AttrRoomchatErrorKind, o.ErrorType))
			}
			span.End(trace.WithTimestamp(o.End))
		})
	}
	guard(MetricHTTPClientRequestDuration, func() {
		attributes := ct.request[:len(ct.request):len(ct.request)]
		if o.Status != 0 {
			attributes = append(attributes, attribute.Int(AttrHTTPResponseStatusCode, o.Status))
		}
		if errorType != "" {
			attributes = append(attributes, attribute.String(AttrErrorType, errorType))
		}
		t.inst.requestDuration.Record(ct.ctx, o.Duration.Seconds(), metric.WithAttributes(attributes...))
	})
}

// events puts each of core's events on the call's span, at its time, and in
// its metric.
func (t *telemetry) events(ct *callTelemetry, events []callEvent) {
	for i := range events {
		e := &events[i]
		attributes := []attribute.KeyValue{attribute.Int(AttrRoomchatAttempt, e.Attempt)}
		name := e.Name
		switch e.Kind {
		case eventRateLimitWait:
			name = EventRoomchatRateLimitWait
			attributes = append(attributes, attribute.Float64(AttrRoomchatWaitDuration, e.Wait.Seconds()))
			guard(MetricRoomchatRateLimitWaitDuration, func() {
				t.inst.rateLimitWait.Record(ct.ctx, e.Wait.Seconds(), metric.WithAttributes(ct.event...))
			})
		case eventRetry:
			name = EventRoomchatRetry
			reason := e.RetryReason
			if reason == "" {
				reason = "other"
			}
			attributes = append(attributes,
				attribute.String(AttrRoomchatRetryReason, reason),
				attribute.Float64(AttrRoomchatWaitDuration, e.Wait.Seconds()))
			if e.Status != 0 {
				attributes = append(attributes, attribute.Int(AttrHTTPResponseStatusCode, e.Status))
			}
			guard(MetricRoomchatClientRetries, func() {
				t.inst.retries.Add(ct.ctx, 1, metric.WithAttributes(append(ct.event[:len(ct.event):len(ct.event)],
					attribute.String(AttrRoomchatRetryReason, reason))...))
			})
		case eventBudgetDegraded:
			name = EventRoomchatBudgetDegraded
			if e.ErrorType != "" {
				attributes = append(attributes,
					attribute.String(AttrErrorType, e.ErrorType),
					attribute.String(AttrErrorMessage, e.ErrorMessage))
			}
			guard(MetricRoomchatBudgetDegraded, func() {
				t.inst.degraded.Add(ct.ctx, 1, metric.WithAttributes(ct.event...))
			})
		}
		if span := ct.span; span != nil && name != "" {
			guard("the span of a call", func() {
				span.AddEvent(name, trace.WithTimestamp(e.At), trace.WithAttributes(attributes...))
			})
		}
	}
}

// callEnd fills the call's span and records the call's metrics. A call that
// succeeded ends its span now; a failed one when its error is known.
func (t *telemetry) callEnd(ct *callTelemetry, o *observation) {
	if span := ct.span; span != nil {
		guard("the span of a call", func() {
			span.SetAttributes(
				attribute.Int(AttrRoomchatAttempts, o.Attempt),
				attribute.Float64(AttrRoomchatRateLimitWaitDuration, o.RateLimitWait.Seconds()),
				attribute.Float64(AttrRoomchatRetryWaitDuration, o.RetryWait.Seconds()))
			if o.ErrorType != "" {
				span.SetAttributes(attribute.String(AttrErrorType, o.ErrorType))
				span.SetStatus(codes.Error, o.ErrorType)
				ct.pending, ct.pendingEnd = true, o.End
				return
			}
			span.End(trace.WithTimestamp(o.End))
		})
	}
	guard(MetricRoomchatClientCallDuration, func() {
		attributes := ct.call[:len(ct.call):len(ct.call)]
		if o.ErrorType != "" {
			attributes = append(attributes, attribute.String(AttrErrorType, o.ErrorType))
		}
		t.inst.callDuration.Record(ct.ctx, o.Duration.Seconds(), metric.WithAttributes(attributes...))
	})
	t.uncount(ct)
	if !ct.pending {
		ct.span = nil
	}
}

// callReturned is told the call's error once the library has returned (the
// runtime calls it after every call): a failed call's span gets its status
// description, as every language shows it (the client's own message, or for
// an answer of the service its kind and status only: the service's text may
// quote what the request carried), and ends at core's time.
func (t *telemetry) callReturned(cs *callState, err error) {
	defer func() {
		if r := recover(); r != nil {
			report("the span of a call", fmt.Errorf("panic: %v", r))
		}
	}()
	ct := &cs.telemetry
	// A call no report ended (the library failed before its end) is taken
	// out of the calls in flight all the same.
	t.uncount(ct)
	t.endPending(ct, err)
}

// uncount takes the call out of roomchat.client.active_calls, if it is in.
func (t *telemetry) uncount(ct *callTelemetry) {
	if !ct.counted {
		return
	}
	ct.counted = false
	guard(MetricRoomchatClientActiveCalls, func() {
		t.inst.activeCalls.Add(ct.ctx, -1, metric.WithAttributes(ct.call...))
	})
}

// endPending ends a failed call's span, its status described by err (nil:
// its kind only, already set).
func (t *telemetry) endPending(ct *callTelemetry, err error) {
	if !ct.pending || ct.span == nil {
		return
	}
	span, end := ct.span, ct.pendingEnd
	ct.pending, ct.span = false, nil
	guard("the span of a call", func() {
		if e, ok := err.(*Error); ok && e != nil {
			if e.Status != 0 {
				span.SetStatus(codes.Error, fmt.Sprintf("%s (HTTP %d)", e.Kind, e.Status))
			} else {
				span.SetStatus(codes.Error, e.Message)
			}
		}
		span.End(trace.WithTimestamp(end))
	})
}

// guard runs one part of the telemetry: a panic in it (the application's
// SDK) is reported and costs that part only.
func guard(what string, part func()) {
	defer func() {
		if r := recover(); r != nil {
			report(what, fmt.Errorf("panic: %v", r))
		}
	}()
	part()
}

// report hands a failure of the telemetry (never the call's) to otel.Handle,
// as otel-go reports its own; an error handler that panics is ignored.
func report(what string, err error) {
	defer func() { _ = recover() }()
	otel.Handle(fmt.Errorf("roomchat: %s: %w", what, err))
}
