package dev.roomchat;

import static dev.roomchat.TelemetryNames.*;

import com.sun.jna.Pointer;
import dev.roomchat.internal.Native;
import dev.roomchat.internal.Strings;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongUpDownCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongGauge;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The package's OpenTelemetry: each call a span (INTERNAL) under the context
 * current where it was asked for, each HTTP attempt a CLIENT span under it,
 * the HTTP client and roomchat metrics, and trace context from the propagator
 * on every attempt, made from core's reports (the C observer, called on the
 * thread making the call). The same picture as core's feature
 * {@code opentelemetry}, the Go package's telemetry.go (its closest
 * relative: the same C reports), Node's and Python's: the names of
 * {@code api/telemetry.toml} ({@link TelemetryNames}), kinds, attributes,
 * events, statuses, metrics, units and buckets. The Java agent cannot see
 * HTTP made in native code, hence these.
 *
 * <p>The OpenTelemetry is the one given to the builder, else
 * {@link GlobalOpenTelemetry} once it is set (the Java agent sets it before
 * {@code main}); it is never read with {@code get()} before, which would fix
 * the global to a no-op for good. A call while the global is unset is not
 * observed (nothing would record it).
 *
 * <p>Each part is guarded on its own: a span processor, an instrument or a
 * propagator that throws costs only its own part (its span, its point, its
 * headers), never the call nor the other parts; the failure is logged once
 * per part (logger {@code dev.roomchat.telemetry}).
 *
 * <p>Loaded only when opentelemetry-api is on the classpath ({@link Telemetry#create}).
 */
final class OtelTelemetry extends Telemetry {
  private static final String SCOPE = "roomchat";
  private static final Logger LOG = LoggerFactory.getLogger("dev.roomchat.telemetry");

  /** http.client.request.duration's buckets (the HTTP conventions'), also the call's, in seconds. */
  private static final List<Double> DURATION_BUCKETS = List.of(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0);
  /** roomchat.rate_limit.wait.duration's, in seconds: up to the window (60 s by default) or a 429's hold. */
  private static final List<Double> WAIT_BUCKETS = List.of(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0);

  private static final AttributeKey<String> OPERATION = AttributeKey.stringKey(ATTR_ROOMCHAT_OPERATION);
  private static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey(ATTR_SERVER_ADDRESS);
  private static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey(ATTR_SERVER_PORT);
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey(ATTR_HTTP_REQUEST_METHOD);
  private static final AttributeKey<String> URL_FULL = AttributeKey.stringKey(ATTR_URL_FULL);
  private static final AttributeKey<String> URL_TEMPLATE = AttributeKey.stringKey(ATTR_URL_TEMPLATE);
  private static final AttributeKey<String> PROTOCOL = AttributeKey.stringKey(ATTR_NETWORK_PROTOCOL_VERSION);
  private static final AttributeKey<Long> RESEND_COUNT = AttributeKey.longKey(ATTR_HTTP_REQUEST_RESEND_COUNT);
  private static final AttributeKey<Long> STATUS_CODE = AttributeKey.longKey(ATTR_HTTP_RESPONSE_STATUS_CODE);
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey(ATTR_ERROR_TYPE);
  private static final AttributeKey<String> ERROR_MESSAGE = AttributeKey.stringKey(ATTR_ERROR_MESSAGE);
  private static final AttributeKey<String> ERROR_KIND = AttributeKey.stringKey(ATTR_ROOMCHAT_ERROR_KIND);
  private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey(ATTR_ROOMCHAT_ATTEMPT);
  private static final AttributeKey<Long> ATTEMPTS = AttributeKey.longKey(ATTR_ROOMCHAT_ATTEMPTS);
  private static final AttributeKey<Double> RATE_LIMIT_WAIT = AttributeKey.doubleKey(ATTR_ROOMCHAT_RATE_LIMIT_WAIT_DURATION);
  private static final AttributeKey<Double> RETRY_WAIT = AttributeKey.doubleKey(ATTR_ROOMCHAT_RETRY_WAIT_DURATION);
  private static final AttributeKey<Double> WAIT = AttributeKey.doubleKey(ATTR_ROOMCHAT_WAIT_DURATION);
  private static final AttributeKey<String> RETRY_REASON = AttributeKey.stringKey(ATTR_ROOMCHAT_RETRY_REASON);
  private static final AttributeKey<Long> CLIENT_ID = AttributeKey.longKey(ATTR_ROOMCHAT_CLIENT_ID);

  /** The methods the HTTP conventions name; any other is {@code _OTHER}. */
  private static final Set<String> KNOWN_METHODS = Set.of("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT");

  // ---- the observer: one callback for every client (never collected while
  // the library may call it); each client by its id, forgotten when the
  // library lets go of it.

  private static final Map<Long, OtelTelemetry> CLIENTS = new ConcurrentHashMap<>();
  private static final AtomicLong IDS = new AtomicLong();
  /** The call the pool thread is making now (the library reports on the thread making the call). */
  private static final ThreadLocal<Call> CURRENT = new ThreadLocal<>();

  private static final Native.ObserverCallback OBSERVE = (userData, observation, headers) -> {
    try {
      Call call = CURRENT.get();
      if (call == null || call.owner.id != userData || observation == null) {
        return;
      }
      call.owner.observe(call, observation, headers);
    } catch (Throwable ignored) {
      // Nothing may unwind into the library.
    } finally {
      // A span processor or exporter may have done interruptible I/O (a FileChannel).
      RoomchatClient.InterruptHook.resume();
    }
  };

  private static final Native.DestroyCallback RELEASE = userData -> CLIENTS.remove(userData);

  private static final TextMapSetter<Pointer> HEADERS = (headers, name, value) -> {
    if (headers == null || name == null || value == null) {
      return;
    }
    try {
      // A header the library refuses (a reserved name, a bad value) is left
      // out rather than failing the call, as core does.
      Native.roomchat_attempt_headers_set(headers, Strings.c(name), Strings.c(value));
    } catch (IllegalArgumentException ignored) {
      // A NUL in a propagator's value: left out.
    }
  };

  private final long id = IDS.incrementAndGet();
  private final OpenTelemetry given;
  private volatile Bound bound;
  private final Set<String> reported = ConcurrentHashMap.newKeySet();

  // The server as core names it (roomchat_client_server at the client's start, then each report).
  private volatile String address;
  private volatile long port;
  private volatile Attributes gaugeAttributes; // roomchat.client.id, server.address: set by the first report

  private Remaining remaining; // under this
  private ObservableLongGauge gauge; // under this
  private boolean closed; // under this

  OtelTelemetry(Object openTelemetry) {
    this.given = (OpenTelemetry) openTelemetry;
    if (given != null) {
      bind(given);
    }
  }

  @Override
  void server(String address, long port) {
    this.address = address;
    this.port = port;
  }

  /** One meter's and tracer's: what a client records with. */
  private final class Bound {
    final Tracer tracer;
    final TextMapPropagator propagator;
    final Meter meter;
    DoubleHistogram requestDuration;
    DoubleHistogram callDuration;
    DoubleHistogram rateLimitWait;
    LongCounter retries;
    LongCounter degraded;
    LongUpDownCounter activeCalls;

    Bound(OpenTelemetry otel) {
      String version = Strings.borrowed(Native.roomchat_version());
      Tracer t = OpenTelemetry.noop().getTracer(SCOPE);
      try {
        t = otel.getTracerProvider().tracerBuilder(SCOPE).setInstrumentationVersion(version).build();
      } catch (Throwable e) {
        report("the tracer", e);
      }
      tracer = t;
      Meter m = OpenTelemetry.noop().getMeter(SCOPE);
      try {
        m = otel.getMeterProvider().meterBuilder(SCOPE).setInstrumentationVersion(version).build();
      } catch (Throwable e) {
        report("the instruments", e);
      }
      meter = m;
      Meter mine = m;
      TextMapPropagator p = TextMapPropagator.noop();
      try {
        p = otel.getPropagators().getTextMapPropagator();
      } catch (Throwable e) {
        report("the propagator", e);
      }
      propagator = p;
      Meter noop = OpenTelemetry.noop().getMeter(SCOPE);
      // Each instrument on its own: one the SDK refuses is a no-op one.
      requestDuration = instrument("the instruments", () -> histogram(mine, METRIC_HTTP_CLIENT_REQUEST_DURATION, "Duration of HTTP client requests.", DURATION_BUCKETS),
          () -> histogram(noop, METRIC_HTTP_CLIENT_REQUEST_DURATION, "", DURATION_BUCKETS));
      callDuration = instrument("the instruments", () -> histogram(mine, METRIC_ROOMCHAT_CLIENT_CALL_DURATION,
          "Duration of roomchat calls, from the call to its result: every attempt, rate-limit wait and backoff.", DURATION_BUCKETS),
          () -> histogram(noop, METRIC_ROOMCHAT_CLIENT_CALL_DURATION, "", DURATION_BUCKETS));
      rateLimitWait = instrument("the instruments", () -> histogram(mine, METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION,
          "Time a call waited for a slot of the key's rate-limit budget.", WAIT_BUCKETS),
          () -> histogram(noop, METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION, "", WAIT_BUCKETS));
      retries = instrument("the instruments", () -> mine.counterBuilder(METRIC_ROOMCHAT_CLIENT_RETRIES).setUnit("{retry}").setDescription("Attempts sent again, by reason.").build(),
          () -> noop.counterBuilder(METRIC_ROOMCHAT_CLIENT_RETRIES).build());
      degraded = instrument("the instruments", () -> mine.counterBuilder(METRIC_ROOMCHAT_BUDGET_DEGRADED).setUnit("{event}")
          .setDescription("Times the shared rate-limit budget in Redis failed and the client followed its Redis policy.").build(),
          () -> noop.counterBuilder(METRIC_ROOMCHAT_BUDGET_DEGRADED).build());
      activeCalls = instrument("the instruments", () -> mine.upDownCounterBuilder(METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS).setUnit("{call}").setDescription("Calls in flight.").build(),
          () -> noop.upDownCounterBuilder(METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS).build());
    }
  }

  private static DoubleHistogram histogram(Meter meter, String name, String description, List<Double> buckets) {
    return meter.histogramBuilder(name).setUnit("s").setDescription(description).setExplicitBucketBoundariesAdvice(buckets).build();
  }

  private interface Make<T> {
    T make();
  }

  private <T> T instrument(String what, Make<T> make, Make<T> fallback) {
    try {
      return make.make();
    } catch (Throwable e) {
      report(what, e);
      return fallback.make();
    }
  }

  private synchronized void bind(OpenTelemetry otel) {
    if (bound != null) {
      return;
    }
    bound = new Bound(otel);
    registerGauge();
  }

  /** The OpenTelemetry to record with: the one given, else the global one once set; null: none yet. */
  private Bound bound() {
    Bound b = bound;
    if (b == null && GlobalOpenTelemetry.isSet()) {
      bind(GlobalOpenTelemetry.get());
      b = bound;
    }
    return b;
  }

  // ---- the client

  @Override
  void attach(long options) {
    CLIENTS.put(id, this);
    int code = Native.roomchat_client_options_set_observer_with_destroy(options, OBSERVE, id, RELEASE);
    if (code != Bridge.OK) {
      CLIENTS.remove(id);
      Bridge.check(code, null);
    }
  }

  @Override
  synchronized void clientStarted(Remaining remaining) {
    this.remaining = remaining;
    registerGauge();
  }

  /** The budget gauge's callback for this client, once both the client and the meter are there. */
  private synchronized void registerGauge() {
    if (remaining == null || bound == null || gauge != null || closed) {
      return;
    }
    Remaining reader = remaining;
    Meter meter = bound.meter;
    try {
      gauge = meter.gaugeBuilder(METRIC_ROOMCHAT_RATE_LIMIT_REMAINING).ofLongs().setUnit("{request}")
          .setDescription("Requests the key's rate-limit budget allows now, per client.")
          .buildWithCallback(measurement -> {
            Attributes attributes = gaugeAttributes;
            if (attributes == null) {
              return; // one series per client from its first call on: core names it then
            }
            long free = reader.remaining();
            if (free >= 0) {
              measurement.record(free, attributes);
            }
          });
    } catch (Throwable e) {
      report("the budget gauge", e);
    }
  }

  @Override
  void clientClosed() {
    ObservableLongGauge g;
    synchronized (this) {
      closed = true;
      g = gauge;
      gauge = null;
    }
    // Closed out of this lock and before the client's pointer is freed: a
    // collection holds the SDK's lock while it reads the budget.
    if (g != null) {
      try {
        g.close();
      } catch (Throwable e) {
        report("the budget gauge", e);
      }
    }
  }

  // ---- a call

  /** One call's spans between its reports. */
  private static final class Call {
    final OtelTelemetry owner;
    final Bound bound;
    final Context parent;
    final String operation;
    Attributes active; // the in-flight count's attributes; null: not counted
    boolean started;
    long callId;
    Span span; // the call's span: null when nothing traces it
    Context context; // the parent with the call's span: its attempts' parent
    Span attempt;
    Attributes attemptAttributes;
    Attributes requestAttributes; // http.client.request.duration's, without the outcome
    Attributes eventAttributes; // roomchat.operation, server.address
    Attributes callAttributes; // roomchat.operation, server.address, server.port
    Call outer; // the call this one was made in, from a callback on its thread; its again after this one
    boolean pending; // a failed call's span waits for its exception
    long pendingEnd;

    Call(OtelTelemetry owner, Bound bound, Context parent, String operation) {
      this.owner = owner;
      this.bound = bound;
      this.parent = parent;
      this.context = parent;
      this.operation = operation;
    }
  }

  @Override
  Object dispatch(String operation) {
    Bound b;
    Context parent;
    try {
      b = bound();
      if (b == null) {
        return null;
      }
      parent = Context.current();
    } catch (Throwable e) {
      report("the context", e);
      return null;
    }
    Call call = new Call(this, b, parent, operation);
    Attributes attributes = Attributes.of(OPERATION, operation, SERVER_ADDRESS, address, SERVER_PORT, port);
    guard(METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS, () -> {
      b.activeCalls.add(1, attributes, parent);
      call.active = attributes;
    });
    return call;
  }

  @Override
  void enter(Object call) {
    if (call != null) {
      // A call made from a callback of another on this thread (a logger's) nests in it.
      ((Call) call).outer = CURRENT.get();
      CURRENT.set((Call) call);
    }
  }

  @Override
  void exit(Object object, Throwable error) {
    if (object == null) {
      return;
    }
    Call call = (Call) object;
    if (CURRENT.get() == call) {
      if (call.outer == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(call.outer);
      }
    }
    Attributes active = call.active;
    if (active != null) {
      call.active = null;
      guard(METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS, () -> call.bound.activeCalls.add(-1, active, call.parent));
    }
    // An attempt no report ended (the library failed between two): ended now.
    Span attempt = call.attempt;
    if (attempt != null) {
      call.attempt = null;
      guard("the span of an attempt", attempt::end);
    }
    endPending(call, error);
  }

  /** Ends a failed call's span, its status described by {@code error} (null: its kind only, already set). */
  private void endPending(Call call, Throwable error) {
    if (!call.pending || call.span == null) {
      return;
    }
    Span span = call.span;
    long end = call.pendingEnd;
    call.pending = false;
    call.span = null;
    guard("the span of a call", () -> {
      // The client's own message, or for an answer of the service its kind
      // and status only: the service's text may quote what the request carried.
      if (error instanceof RoomchatException) {
        RoomchatException e = (RoomchatException) error;
        if (e.status() != 0) {
          span.setStatus(StatusCode.ERROR, e.kind().wireName() + " (HTTP " + e.status() + ")");
        } else {
          span.setStatus(StatusCode.ERROR, String.valueOf(e.getMessage()));
        }
      }
      span.end(end, TimeUnit.NANOSECONDS);
    });
  }

  // ---- core's reports (roomchat_observation, include/roomchat.h; offsets of LP64)

  private static final int OBSERVATION_SIZE = 192;
  private static final int EVENT_SIZE = 72;

  private static String text(Pointer p, long offset) {
    Pointer s = p.getPointer(offset);
    return s == null ? null : s.getString(0, "UTF-8");
  }

  private void observe(Call call, Pointer o, Pointer headers) {
    if (o.getLong(0) < OBSERVATION_SIZE) {
      return; // a library older than this package: not ours to read
    }
    int kind = o.getInt(8);
    long callId = o.getLong(16);
    if (!call.started || call.callId != callId) {
      endPending(call, null);
      startCall(call, o, callId);
    }
    switch (kind) {
      case 0: // attempt start
        events(call, o);
        attemptStart(call, o, headers);
        break;
      case 1: // attempt end
        attemptEnd(call, o);
        events(call, o);
        break;
      case 2: // call end
        events(call, o);
        callEnd(call, o);
        break;
      default:
        break;
    }
  }

  /** Makes the call's span (from the call's start, under the context it was asked for in). */
  private void startCall(Call call, Pointer o, long callId) {
    call.started = true;
    call.callId = callId;
    call.span = null;
    call.context = call.parent;
    String serverAddress = nonNull(text(o, 72));
    long serverPort = o.getShort(88) & 0xffff;
    if (gaugeAttributes == null) {
      address = serverAddress;
      port = serverPort;
      gaugeAttributes = Attributes.of(CLIENT_ID, o.getLong(24), SERVER_ADDRESS, serverAddress);
    }
    long callStart = o.getLong(96);
    guard("the span of a call", () -> {
      Span span = call.bound.tracer.spanBuilder("roomchat " + call.operation)
          .setParent(call.parent)
          .setSpanKind(SpanKind.INTERNAL)
          .setStartTimestamp(callStart, TimeUnit.NANOSECONDS)
          .setAttribute(OPERATION, call.operation)
          .startSpan();
      // A span that records nothing and has no context to pass on (no SDK,
      // no parent): the attempts need none either, only the parent's
      // context (its baggage) on the wire.
      if (span.isRecording() || span.getSpanContext().isValid()) {
        call.span = span;
        call.context = call.parent.with(span);
      }
    });
    String method = nonNull(text(o, 40));
    if (!KNOWN_METHODS.contains(method)) {
      method = "_OTHER";
    }
    String template = text(o, 48);
    String protocol = nonNull(text(o, 80));
    AttributesBuilder request = Attributes.builder().put(METHOD, method).put(SERVER_ADDRESS, serverAddress).put(SERVER_PORT, serverPort).put(PROTOCOL, protocol);
    if (template != null) {
      request.put(URL_TEMPLATE, template);
    }
    call.requestAttributes = request.build();
    call.attemptAttributes = call.requestAttributes.toBuilder().put(URL_FULL, nonNull(text(o, 56))).build();
    call.eventAttributes = Attributes.of(OPERATION, call.operation, SERVER_ADDRESS, serverAddress);
    call.callAttributes = Attributes.of(OPERATION, call.operation, SERVER_ADDRESS, serverAddress, SERVER_PORT, serverPort);
  }

  /** Makes the attempt's span and puts its context on the wire. */
  private void attemptStart(Call call, Pointer o, Pointer headers) {
    call.attempt = null;
    Context[] context = {call.context};
    if (call.span != null) {
      long resend = o.getInt(92) & 0xffffffffL;
      String method = o.getPointer(40) == null ? "" : text(o, 40);
      String template = text(o, 48);
      String name = template == null ? method : method + " " + template;
      long start = o.getLong(104);
      guard("the span of an attempt", () -> {
        io.opentelemetry.api.trace.SpanBuilder builder = call.bound.tracer.spanBuilder(name)
            .setParent(call.context)
            .setSpanKind(SpanKind.CLIENT)
            .setStartTimestamp(start, TimeUnit.NANOSECONDS)
            .setAllAttributes(call.attemptAttributes);
        if (resend > 0) {
          builder.setAttribute(RESEND_COUNT, resend);
        }
        Span span = builder.startSpan();
        call.attempt = span;
        context[0] = call.context.with(span);
      });
    }
    boolean propagate = o.getByte(168) != 0;
    if (!propagate || headers == null) {
      return;
    }
    guard("the propagator", () -> call.bound.propagator.inject(context[0], headers, HEADERS));
  }

  /** An attempt's error.type: the status as text for an answer ("429"), else the kind's name. */
  private static String attemptError(int status, String errorType) {
    if (errorType == null) {
      return null;
    }
    return status != 0 ? Integer.toString(status) : errorType;
  }

  /** Ends the attempt's span with core's time and records its duration. */
  private void attemptEnd(Call call, Pointer o) {
    int status = o.getShort(90) & 0xffff;
    String kindName = text(o, 152);
    String errorType = attemptError(status, kindName);
    long end = o.getLong(112);
    double seconds = o.getLong(120) / 1e9;
    Span span = call.attempt;
    if (span != null) {
      call.attempt = null;
      guard("the span of an attempt", () -> {
        if (status != 0) {
          span.setAttribute(STATUS_CODE, (long) status);
        }
        if (errorType != null) {
          span.setAttribute(ERROR_TYPE, errorType);
          span.setStatus(StatusCode.ERROR);
          span.setAttribute(ERROR_KIND, kindName);
        }
        span.end(end, TimeUnit.NANOSECONDS);
      });
    }
    guard(METRIC_HTTP_CLIENT_REQUEST_DURATION, () -> {
      AttributesBuilder attributes = call.requestAttributes.toBuilder();
      if (status != 0) {
        attributes.put(STATUS_CODE, (long) status);
      }
      if (errorType != null) {
        attributes.put(ERROR_TYPE, errorType);
      }
      call.bound.requestDuration.record(seconds, attributes.build(), call.context);
    });
  }

  /** Puts each of core's events on the call's span, at its time, and in its metric. */
  private void events(Call call, Pointer o) {
    long count = o.getLong(184);
    Pointer events = o.getPointer(176);
    if (events == null) {
      return;
    }
    for (long i = 0; i < count; i++) {
      Pointer e = events.getPointer(i * com.sun.jna.Native.POINTER_SIZE);
      if (e == null || e.getLong(0) < EVENT_SIZE) {
        continue;
      }
      int kind = e.getInt(8);
      long attempt = e.getInt(12) & 0xffffffffL;
      long at = e.getLong(24);
      double wait = e.getLong(32) / 1e9;
      AttributesBuilder attributes = Attributes.builder().put(ATTEMPT, attempt);
      String name;
      switch (kind) {
        case 0: // a rate-limit wait
          name = EVENT_ROOMCHAT_RATE_LIMIT_WAIT;
          attributes.put(WAIT, wait);
          guard(METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION, () -> call.bound.rateLimitWait.record(wait, call.eventAttributes, call.context));
          break;
        case 1: { // the budget in Redis failed
          name = EVENT_ROOMCHAT_BUDGET_DEGRADED;
          String errorType = text(e, 56);
          if (errorType != null) {
            attributes.put(ERROR_TYPE, errorType).put(ERROR_MESSAGE, nonNull(text(e, 64)));
          }
          guard(METRIC_ROOMCHAT_BUDGET_DEGRADED, () -> call.bound.degraded.add(1, call.eventAttributes, call.context));
          break;
        }
        case 2: { // a retry
          name = EVENT_ROOMCHAT_RETRY;
          String reason = text(e, 40);
          String why = reason == null || reason.isEmpty() ? "other" : reason;
          attributes.put(RETRY_REASON, why).put(WAIT, wait);
          int status = e.getShort(48) & 0xffff;
          if (status != 0) {
            attributes.put(STATUS_CODE, (long) status);
          }
          guard(METRIC_ROOMCHAT_CLIENT_RETRIES, () -> call.bound.retries.add(1, call.eventAttributes.toBuilder().put(RETRY_REASON, why).build(), call.context));
          break;
        }
        default:
          name = text(e, 16);
      }
      Span span = call.span;
      if (span != null && name != null) {
        Attributes made = attributes.build();
        guard("the span of a call", () -> span.addEvent(name, made, at, TimeUnit.NANOSECONDS));
      }
    }
  }

  /** Fills the call's span and records the call's metric. A call that succeeded ends its span now; a failed one when its exception is known. */
  private void callEnd(Call call, Pointer o) {
    String errorType = text(o, 152);
    long end = o.getLong(112);
    Span span = call.span;
    if (span != null) {
      long attempts = o.getInt(12) & 0xffffffffL;
      double rateLimitWait = o.getLong(128) / 1e9;
      double retryWait = o.getLong(136) / 1e9;
      boolean[] ended = {false};
      guard("the span of a call", () -> {
        span.setAttribute(ATTEMPTS, attempts);
        span.setAttribute(RATE_LIMIT_WAIT, rateLimitWait);
        span.setAttribute(RETRY_WAIT, retryWait);
        if (errorType != null) {
          span.setAttribute(ERROR_TYPE, errorType);
          span.setStatus(StatusCode.ERROR, errorType);
          call.pending = true;
          call.pendingEnd = end;
          return;
        }
        ended[0] = true;
        span.end(end, TimeUnit.NANOSECONDS);
      });
      if (!call.pending) {
        call.span = null;
        if (!ended[0]) {
          // Setting its attributes threw: it still ends.
          guard("the span of a call", () -> span.end(end, TimeUnit.NANOSECONDS));
        }
      }
    }
    double seconds = o.getLong(120) / 1e9;
    guard(METRIC_ROOMCHAT_CLIENT_CALL_DURATION, () -> {
      Attributes attributes = errorType == null ? call.callAttributes : call.callAttributes.toBuilder().put(ERROR_TYPE, errorType).build();
      call.bound.callDuration.record(seconds, attributes, call.context);
    });
  }

  private static String nonNull(String s) {
    return s == null ? "" : s;
  }

  /** Runs one part of the telemetry: a throw in it (the application's SDK) is reported and costs that part only. */
  private void guard(String what, Runnable part) {
    try {
      part.run();
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable e) {
      report(what, e);
    }
  }

  /** Logs a failure of the telemetry (never the call's), once per part and client. */
  private void report(String what, Throwable e) {
    try {
      if (reported.add(what)) {
        LOG.warn("roomchat telemetry: {} failed (it is left out; the call goes on): {}", what, String.valueOf(e));
      }
    } catch (Throwable ignored) {
      // A logger that throws: nothing more to do.
    }
  }
}
