'use strict'
// The package's OpenTelemetry: each call a span of the context active when it
// is made, each HTTP attempt a CLIENT span under it, the HTTP client metrics,
// and W3C trace context (the global propagator's, or the client's) on every attempt, through
// `@opentelemetry/api` (an optional peer dependency: index.js loads this file
// only when a client is made, and only uses it when the API is installed). The
// same picture as core's cargo feature `opentelemetry` (core/src/send/otel.rs):
// the same names, kinds, attributes, events, statuses, metrics and units.
//
// The timings, outcomes and events come from core (src/telemetry.rs), with the
// call's outcome: the spans are ended with core's times before the promise
// settles. The first attempt's span is made here at dispatch, as the call's
// span is, because its context must be on the wire; an attempt whose span
// cannot be made at dispatch (a retry, an iterator's page, the first attempt
// after a wait for the rate limit) is made when core asks for it, through the
// native hook, before its request is sent.

const api = require('@opentelemetry/api')
// The names of the spans' attributes and events and of the metrics, core's and Python's (api/telemetry.toml).
const N = require('./telemetry-names')
const { version: VERSION } = require('./package.json')

/** Flags the native side takes (src/telemetry.rs): the spans were made at dispatch; make the others through the hook. */
const PREMADE = 1
const HOOK = 2

/** The instrumentation scope of every span and instrument. */
const NAME = 'roomchat'

/** `http.client.request.duration`'s buckets (the HTTP conventions'), also `roomchat.client.call.duration`'s, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
/** `roomchat.rate_limit.wait.duration`'s, in seconds: up to the rate limit's window (60 s by default) or a 429's hold. */
const WAIT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

const { SpanKind, SpanStatusCode, ValueType } = api
const NOOP_METER = api.createNoopMeter()
// The global tracer provider's delegate when none is set.
const NOOP_TRACER_PROVIDER = new api.ProxyTracerProvider().getDelegate()

/** A propagator's headers, flattened as the native side takes them: `[name, value, …]`. */
const FLAT_SETTER = {
  set(carrier, key, value) {
    carrier.push(String(key), String(value))
  },
}

/**
 * What `context` puts on the wire through `propagator` (the client's, or
 * undefined for the global one): `[name, value, …]`, or undefined for nothing.
 * A propagator that throws costs the trace context of this request only.
 */
function inject(context, propagator) {
  const headers = []
  try {
    ;(propagator ?? api.propagation).inject(context, headers, FLAT_SETTER)
  } catch (error) {
    report('the propagator', error)
    return undefined
  }
  return headers.length === 0 ? undefined : headers
}

/** `tracer.startSpan(…)`, or undefined when it throws (a sampler's or span processor's `onStart`): reported. */
function startSpan(what, tracer, name, options, context) {
  try {
    return tracer.startSpan(name, options, context)
  } catch (error) {
    report(what, error)
    return undefined
  }
}

/** Runs one instrument's record: true when it did not throw (a throw is reported). */
function recorded(what, fn) {
  try {
    fn()
    return true
  } catch (error) {
    report(what, error)
    return false
  }
}

// A float64 and its bits, for `double`.
const BITS = new Float64Array(1)
const BITS_AS_INT = new BigInt64Array(BITS.buffer)

/**
 * A duration in seconds (a span or event attribute) as a number OTLP's JS
 * exporters send as a double, as core and Python do: they send a whole
 * number (`Number.isInteger`) as an integer, so a whole number of seconds
 * (0, or a Retry-After of 2) becomes the next double up (5e-324, 2.0000000000000004),
 * a difference far below the clock's nanosecond.
 */
function double(seconds) {
  if (!Number.isInteger(seconds) || seconds < 0) return seconds
  BITS[0] = seconds
  BITS_AS_INT[0] += 1n
  return BITS[0]
}

/** Reports a failure of the telemetry (never the call's) as OpenTelemetry's own code does. */
function report(what, error) {
  // Never throws itself: it runs in the catch of a guard, and anything may be
  // thrown (a null-prototype object or a symbol, which a template cannot turn
  // into text; an object whose `message` getter throws), and a diag logger may
  // throw too. What cannot be shown is named by its type.
  let text
  try {
    text = error && typeof error.message === 'string' && error.message !== '' ? error.message : String(error)
  } catch {
    text = `a thrown ${typeof error} that cannot be shown`
  }
  try {
    api.diag.warn(`roomchat: ${what}: ${text}`)
  } catch {
    // The diag logger's own failure: nowhere left to report it.
  }
}

/**
 * Runs `fn`, reporting what it throws: the application's span processors and
 * instruments run inside, and one that throws costs only its own part.
 */
function guarded(what, fn) {
  try {
    fn()
  } catch (error) {
    report(what, error)
  }
}

/** The instruments of one meter, and the gauge of the budgets of `telemetry`'s clients. */
class Instruments {
  constructor(meter, telemetry) {
    const histogram = (name, description, buckets) =>
      meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: buckets } })
    this.requestDuration = histogram(N.METRIC_HTTP_CLIENT_REQUEST_DURATION, 'Duration of HTTP client requests.', DURATION_BUCKETS)
    this.callDuration = histogram(
      N.METRIC_ROOMCHAT_CLIENT_CALL_DURATION,
      'Duration of roomchat calls, from the call to its result: every attempt, rate-limit wait and backoff.',
      DURATION_BUCKETS,
    )
    this.rateLimitWait = histogram(
      N.METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION,
      "Time a call waited for a slot of the key's rate-limit budget.",
      WAIT_BUCKETS,
    )
    this.retries = meter.createCounter(N.METRIC_ROOMCHAT_CLIENT_RETRIES, {
      unit: '{retry}',
      description: 'Attempts sent again, by reason.',
      valueType: ValueType.INT,
    })
    this.degraded = meter.createCounter(N.METRIC_ROOMCHAT_BUDGET_DEGRADED, {
      unit: '{event}',
      description: 'Times the shared rate-limit budget in Redis failed and the client followed its OnRedisError policy.',
      valueType: ValueType.INT,
    })
    this.activeCalls = meter.createUpDownCounter(N.METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS, {
      unit: '{call}',
      description: 'Calls in flight.',
      valueType: ValueType.INT,
    })
    // Lives as long as the meter's provider: not kept.
    meter
      .createObservableGauge(N.METRIC_ROOMCHAT_RATE_LIMIT_REMAINING, {
        unit: '{request}',
        description: 'Requests the rate-limit budgets of the clients of a server allow now: the fewest among them.',
        valueType: ValueType.INT,
      })
      .addCallback((result) => telemetry.observeBudgets(result))
  }
}

/**
 * The spans and metrics of the clients built with the same providers: the
 * global ones (as they are when each call starts), or those given.
 */
class Telemetry {
  #tracerProvider
  #meterProvider
  /** Tracer by tracer provider (the global one's delegate), or null for a provider that records nothing. */
  #tracers = new WeakMap()
  /** Instruments by meter provider, or null for one that records nothing. */
  #instruments = new WeakMap()
  /** The clients the budget gauge reports: `{ ref, server }`, `server` (`{ address, port }`) once core has named it. */
  #clients = new Set()
  /** The size of #clients at which `register` next drops the clients gone. */
  #pruneAt = 64
  /**
   * The newest client of each server the gauge has reported (by `address port`),
   * held: a series the SDK keeps exporting (every attribute set under cumulative
   * temporality) always has a budget to read, after the application's clients are gone.
   */
  #newest = new Map()

  constructor(tracerProvider, meterProvider) {
    this.#tracerProvider = tracerProvider
    this.#meterProvider = meterProvider
  }

  /** The tracer of a call starting now; null when the provider records nothing (no SDK). */
  tracer() {
    const provider = this.#tracerProvider ?? api.trace.getTracerProvider()
    // The global provider is a proxy: its delegate is the application's, or the no-op one.
    const actual = typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider
    let tracer = this.#tracers.get(actual)
    if (tracer === undefined) {
      try {
        tracer = actual === NOOP_TRACER_PROVIDER ? null : actual.getTracer(NAME, VERSION)
      } catch (error) {
        // No spans for this call; asked again at the next.
        report('the tracer', error)
        return null
      }
      this.#tracers.set(actual, tracer)
    }
    return tracer
  }

  /** The instruments of a call starting now; null when the meter provider records nothing. */
  instruments() {
    const provider = this.#meterProvider ?? api.metrics.getMeterProvider()
    let instruments = this.#instruments.get(provider)
    if (instruments === undefined) {
      try {
        const meter = provider.getMeter(NAME, VERSION)
        instruments = meter === NOOP_METER ? null : new Instruments(meter, this)
      } catch (error) {
        // No metrics for this call; asked again at the next.
        report('the instruments', error)
        return null
      }
      this.#instruments.set(provider, instruments)
    }
    return instruments
  }

  /**
   * Reports `native`'s budget in the gauge while it lives, from when core has
   * named its server (`entry.server`, set by `ClientTelemetry`): returns its entry.
   */
  register(native) {
    const entry = { ref: new WeakRef(native), server: undefined }
    this.#clients.add(entry)
    // The gauge's callback drops the clients gone, but only a metric reader
    // calls it: without one (spans only), each time the list has doubled
    // since the last pass, so that it holds at most twice the clients alive.
    if (this.#clients.size >= this.#pruneAt) {
      for (const client of this.#clients) {
        if (client.ref.deref() === undefined) this.#clients.delete(client)
      }
      this.#pruneAt = Math.max(64, this.#clients.size * 2)
    }
    return entry
  }

  /** `native` (client `entry`) talks to `server` as core names it: its series, from now on. */
  named(entry, native, server) {
    entry.server = server
    this.#newest.set(`${server.address} ${server.port}`, native)
  }

  /** How many clients the gauge holds (for the tests). */
  get registered() {
    return this.#clients.size
  }

  /**
   * One series per server (`server.address`, `server.port`): the fewest
   * requests the budgets of its clients allow now (clients of one key share
   * one budget in a process). Not a series per client: the JS SDK exports every
   * attribute set it has seen, so the series of a client gone would go on with
   * its last value; a server's series goes on with a budget that is still read.
   */
  observeBudgets(result) {
    const fewest = new Map()
    for (const client of this.#clients) {
      const native = client.ref.deref()
      if (native === undefined) {
        this.#clients.delete(client)
        continue
      }
      if (client.server === undefined) continue
      try {
        const { remaining } = JSON.parse(native.rateLimitState())
        const key = `${client.server.address} ${client.server.port}`
        const seen = fewest.get(key)
        if (seen === undefined || remaining < seen.remaining) fewest.set(key, { server: client.server, remaining })
      } catch (error) {
        report('the budget gauge', error)
      }
    }
    for (const { server, remaining } of fewest.values()) {
      guarded('the budget gauge', () => result.observe(remaining, { [N.ATTR_SERVER_ADDRESS]: server.address, [N.ATTR_SERVER_PORT]: server.port }))
    }
  }
}

/** The telemetry of the clients of the global providers. */
let globalTelemetry
/** The telemetry of given providers: tracer provider (or GLOBAL) → meter provider (or GLOBAL) → Telemetry. */
const explicitTelemetry = new WeakMap()
const GLOBAL = {}

function telemetryOf(tracerProvider, meterProvider) {
  if (tracerProvider === undefined && meterProvider === undefined) {
    globalTelemetry ??= new Telemetry(undefined, undefined)
    return globalTelemetry
  }
  let byMeter = explicitTelemetry.get(tracerProvider ?? GLOBAL)
  if (byMeter === undefined) {
    byMeter = new WeakMap()
    explicitTelemetry.set(tracerProvider ?? GLOBAL, byMeter)
  }
  let telemetry = byMeter.get(meterProvider ?? GLOBAL)
  if (telemetry === undefined) {
    telemetry = new Telemetry(tracerProvider, meterProvider)
    byMeter.set(meterProvider ?? GLOBAL, telemetry)
  }
  return telemetry
}

/** A job that only sends headers (the baggage of a context no span records): nothing to finish. */
class HeadersOnly {
  constructor(headers) {
    this.flags = undefined
    this.headers = headers
    /** Nothing to end when the call is aborted. */
    this.records = false
  }
  hop() {
    return null
  }
  finish() {}
}

/** One call's spans (or an iterator step's, whose call is made or not), from dispatch to its outcome. */
class CallTrace {
  constructor(client, parent, tracer, instruments, flags, headers, propagate) {
    this.client = client
    this.parent = parent
    this.tracer = tracer
    this.instruments = instruments
    this.flags = flags
    this.headers = headers
    /** Whether the hook's answers go on the wire (the client sends trace context). */
    this.propagate = propagate
    /** Spans to end or metrics to record: an aborted call settles once they are. */
    this.records = true
    /** Per call of the job (by index): `{ span, context, attempts: Map, premade }`. */
    this.calls = []
    /**
     * The attributes the job was counted in flight with at dispatch
     * (`roomchat.client.active_calls`); null: counting it threw (nothing to take back).
     */
    this.active = undefined
    /** Else, per call of the job (by index): those it was counted with at its first attempt (null: that threw). */
    this.counted = []
  }

  /**
   * The span of call `index` of the job, made now (starting at `start`) if it
   * has none. A span that cannot be made (the sampler or a span processor
   * threw) is left out: `span` undefined, its attempts made in the parent.
   */
  callOf(index, operation, name, start) {
    let call = this.calls[index]
    if (call === undefined) {
      const span = startSpan(
        'the span of a call',
        this.tracer,
        name,
        { kind: SpanKind.INTERNAL, startTime: start, attributes: { [N.ATTR_ROOMCHAT_OPERATION]: operation } },
        this.parent,
      )
      const context = span === undefined ? this.parent : api.trace.setSpan(this.parent, span)
      call = { span, context, attempts: new Map(), premade: undefined }
      this.calls[index] = call
    }
    return call
  }

  /** Counts the job in flight with `attributes`: them, or null when the instrument threw. */
  countIn(attributes) {
    return recorded(N.METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS, () => this.instruments.activeCalls.add(1, attributes)) ? attributes : null
  }

  /**
   * The hook (on the JS thread, the attempt about to be sent): counts an
   * iterator's page in flight, makes the attempt's span; returns the headers
   * to send (none when the client sends no trace context).
   */
  hop(question) {
    const { index, attempt, start, call: info } = JSON.parse(question)
    // An iterator's page is counted in flight from here (its step may have made no call).
    if (this.active === undefined && this.instruments !== null && this.counted[index] === undefined) {
      this.counted[index] = this.countIn(this.client.activeAttributes(info.operation))
    }
    // No span (no SDK): the parent's context, if any, is in the job's headers already.
    if (this.tracer === null) return null
    const call = this.callOf(index, info.operation, info.name, info.start)
    // The span made at dispatch held the wait for the rate limit: it is left unended (never exported).
    if (attempt === 1) call.premade = undefined
    const attributes = { ...info.attributes }
    if (attempt > 1) attributes[N.ATTR_HTTP_REQUEST_RESEND_COUNT] = attempt - 1
    const options = { kind: SpanKind.CLIENT, startTime: start, attributes }
    const span = startSpan('the span of an attempt', this.tracer, info.attemptName, options, call.context)
    if (span !== undefined) call.attempts.set(attempt, span)
    if (!this.propagate) return null
    // Without its span, the request carries its call's context (or the parent's).
    return inject(span === undefined ? call.context : api.trace.setSpan(call.context, span), this.client.propagator) ?? null
  }

  /**
   * The outcome came (`observed`: the JSON of core's record of each call made;
   * null: none was, or the addon refused the call before dispatch): ends the
   * spans, records the metrics. Spans made at dispatch for a call that never
   * started are left unended: nothing happened, nothing is exported.
   */
  finish(observed) {
    try {
      if (observed !== null && observed !== undefined) {
        // A span processor or instrument that throws (the application's)
        // costs its own part only (guarded), never a call's other spans or
        // the in-flight count.
        for (const record of JSON.parse(observed)) this.#finishCall(record)
      }
    } finally {
      // Counted at dispatch whatever happened (a call refused before it started has no record).
      if (this.active) this.#uncount(this.active)
      for (const active of this.counted) {
        if (active) this.#uncount(active)
      }
    }
  }

  #uncount(attributes) {
    guarded(N.METRIC_ROOMCHAT_CLIENT_ACTIVE_CALLS, () => this.instruments.activeCalls.add(-1, attributes))
  }

  #finishCall(record) {
    // Core's address of the server, for the budget gauge and the in-flight count.
    guarded('the budget gauge', () => this.client.named(record.attributes[N.ATTR_SERVER_ADDRESS], record.attributes[N.ATTR_SERVER_PORT]))
    // The metrics first: they count whatever a span processor then does.
    guarded('the metrics of a call', () => this.#recordMetrics(record))
    if (this.tracer !== null) {
      const call = this.callOf(record.index, record.operation, record.name, record.start)
      for (const attempt of record.attemptRecords) {
        guarded('the span of an attempt', () => this.#endAttempt(call, record, attempt))
      }
      const span = call.span
      if (span === undefined) return
      guarded('the span of a call', () => {
        for (const event of record.events) span.addEvent(event.name, eventAttributes(event.attributes), event.at)
        span.setAttributes({
          [N.ATTR_ROOMCHAT_ATTEMPTS]: record.attempts,
          [N.ATTR_ROOMCHAT_RATE_LIMIT_WAIT_DURATION]: double(record.rateLimitWait),
          [N.ATTR_ROOMCHAT_RETRY_WAIT_DURATION]: double(record.retryWait),
        })
        if (record.errorType !== undefined) {
          span.setAttribute(N.ATTR_ERROR_TYPE, record.errorType)
          span.setStatus({ code: SpanStatusCode.ERROR, message: record.statusDescription })
        }
        span.end(record.end)
      })
    }
  }

  /** Ends (makes, when it was not made) the span of one attempt of `call`. */
  #endAttempt(call, record, attempt) {
    const attributes = record.attributes
    let span = attempt.attempt === 1 && call.premade !== undefined ? call.premade : call.attempts.get(attempt.attempt)
    if (span === undefined) {
      // Its context was not sent (trace context is off, or the hook got no answer): made with core's times now.
      const start = { ...attributes }
      if (attempt.attempt > 1) start[N.ATTR_HTTP_REQUEST_RESEND_COUNT] = attempt.attempt - 1
      span = this.tracer.startSpan(record.attemptName, { kind: SpanKind.CLIENT, startTime: attempt.start, attributes: start }, call.context)
    } else if (span === call.premade) {
      // Made at dispatch before core knew the request: named and described now.
      span.updateName(record.attemptName)
      span.setAttributes(attributes)
      if (record.operation !== 'raw') this.client.learnName(record.operation, record.attemptName)
    }
    if (attempt.status !== undefined) span.setAttribute(N.ATTR_HTTP_RESPONSE_STATUS_CODE, attempt.status)
    if (attempt.errorType !== undefined) {
      // The status as text for an answer ("429"), as the HTTP instrumentations set it; roomchat's kind beside it.
      span.setAttribute(N.ATTR_ERROR_TYPE, attempt.errorType)
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    if (attempt.errorKind !== undefined) span.setAttribute(N.ATTR_ROOMCHAT_ERROR_KIND, attempt.errorKind)
    span.end(attempt.end)
  }

  /** The metrics of one call's record: each record guarded on its own. */
  #recordMetrics(record) {
    const attributes = record.attributes
    const instruments = this.instruments
    if (instruments === null) return
    const address = attributes[N.ATTR_SERVER_ADDRESS]
    const port = attributes[N.ATTR_SERVER_PORT]
    for (const attempt of record.attemptRecords) {
      const metric = {
        [N.ATTR_HTTP_REQUEST_METHOD]: attributes[N.ATTR_HTTP_REQUEST_METHOD],
        [N.ATTR_SERVER_ADDRESS]: address,
        [N.ATTR_SERVER_PORT]: port,
        [N.ATTR_NETWORK_PROTOCOL_VERSION]: attributes[N.ATTR_NETWORK_PROTOCOL_VERSION],
      }
      if (attributes[N.ATTR_URL_TEMPLATE] !== undefined) metric[N.ATTR_URL_TEMPLATE] = attributes[N.ATTR_URL_TEMPLATE]
      if (attempt.status !== undefined) metric[N.ATTR_HTTP_RESPONSE_STATUS_CODE] = attempt.status
      if (attempt.errorType !== undefined) metric[N.ATTR_ERROR_TYPE] = attempt.errorType
      recorded(N.METRIC_HTTP_CLIENT_REQUEST_DURATION, () => instruments.requestDuration.record(attempt.duration, metric))
    }
    for (const event of record.events) {
      const metric = { [N.ATTR_ROOMCHAT_OPERATION]: record.operation, [N.ATTR_SERVER_ADDRESS]: address }
      if (event.name === N.EVENT_ROOMCHAT_RATE_LIMIT_WAIT) {
        recorded(N.METRIC_ROOMCHAT_RATE_LIMIT_WAIT_DURATION, () => instruments.rateLimitWait.record(event.attributes[N.ATTR_ROOMCHAT_WAIT_DURATION], metric))
      } else if (event.name === N.EVENT_ROOMCHAT_RETRY) {
        metric[N.ATTR_ROOMCHAT_RETRY_REASON] = event.attributes[N.ATTR_ROOMCHAT_RETRY_REASON]
        recorded(N.METRIC_ROOMCHAT_CLIENT_RETRIES, () => instruments.retries.add(1, metric))
      } else if (event.name === N.EVENT_ROOMCHAT_BUDGET_DEGRADED) {
        recorded(N.METRIC_ROOMCHAT_BUDGET_DEGRADED, () => instruments.degraded.add(1, metric))
      }
    }
    const metric = { [N.ATTR_ROOMCHAT_OPERATION]: record.operation, [N.ATTR_SERVER_ADDRESS]: address, [N.ATTR_SERVER_PORT]: port }
    if (record.errorType !== undefined) metric[N.ATTR_ERROR_TYPE] = record.errorType
    recorded(N.METRIC_ROOMCHAT_CLIENT_CALL_DURATION, () => instruments.callDuration.record(record.duration, metric))
  }
}

/** An event's attributes as a span takes them: a wait as a double (see `double`). */
function eventAttributes(attributes) {
  const wait = attributes[N.ATTR_ROOMCHAT_WAIT_DURATION]
  return wait === undefined ? attributes : { ...attributes, [N.ATTR_ROOMCHAT_WAIT_DURATION]: double(wait) }
}

/**
 * The telemetry of one client (and its views): where its requests go, whether
 * trace context is sent, and the names of its operations' attempt spans.
 */
class ClientTelemetry {
  #telemetry
  #native
  #propagate
  /** The client's entry in the budget gauge. */
  #entry
  /** `server.address` and `server.port` as core names them (what its spans carry), once a call has told. */
  #server
  /** Until then, core's `server.address` and `server.port` of the client (the first call's in-flight count, a sampler's view). */
  #address
  #port
  /** The attempt span's name of each operation (`GET /consumer/api/v2/users`), as core last named it. */
  #names = new Map()

  constructor(telemetry, native, propagate, propagator) {
    this.#telemetry = telemetry
    this.#native = native
    this.#propagate = propagate
    /** The client's propagator, or undefined for the global one. */
    this.propagator = propagator
    // Core's own reading of the base URL (a URL parser's would differ for
    // `127.1` or `[0:0::1]`): the in-flight count agrees with the spans from
    // the first call on.
    this.#address = native.serverAddress
    this.#port = native.serverPort
    this.#entry = telemetry.register(native)
  }

  /** Core named the server `address`, `port` (a call's record): the gauge's series and the in-flight count use them. */
  named(address, port) {
    if (this.#server !== undefined && this.#server.address === address && this.#server.port === port) return
    this.#server = { address, port }
    this.#address = address
    this.#port = port
    this.#telemetry.named(this.#entry, this.#native, this.#server)
  }

  /** The attributes of `roomchat.client.active_calls` for `operation`. */
  activeAttributes(operation) {
    return { [N.ATTR_ROOMCHAT_OPERATION]: operation, [N.ATTR_SERVER_ADDRESS]: this.#address, [N.ATTR_SERVER_PORT]: this.#port }
  }

  learnName(operation, name) {
    if (this.#names.get(operation) !== name) this.#names.set(operation, name)
  }

  /**
   * The name an attempt span of `operation` gets at dispatch: core's, as last
   * seen, else the operation's declared method and path (a raw request's: its
   * method). Core's is set at the attempt's end when it differs (a base URL with
   * a path, a raw request to a declared path).
   */
  #attemptName(operation, method) {
    if (operation === 'raw') return method
    let name = this.#names.get(operation)
    if (name === undefined) {
      name = operationSpanName(operation) ?? operation
      this.#names.set(operation, name)
    }
    return name
  }

  /**
   * A call of `operation` (core's name; `raw` for rawRequest, whose `method`
   * is given) starting now, in the active context: its trace for `submit`, or
   * undefined when nothing is to be recorded or sent.
   */
  startCall(operation, method = undefined) {
    return this.#start(api.context.active(), operation, true, method)
  }

  /**
   * An iterator's step, asked for in `parent` (the context active at `next()`):
   * the call it makes, if any, belongs there. `operation`: the call each step
   * makes (counted in flight from now), or undefined for a step that makes one
   * only now and then (counted from its first attempt, when it has a hook).
   */
  startStep(parent, operation) {
    return this.#start(parent, operation, false, undefined)
  }

  /**
   * The trace of a job in `parent`, counted in flight as `operation` (unless
   * undefined). `dispatch`: the job is one call of `operation`, whose span and
   * first attempt's are made now (their context goes on the wire); else every
   * attempt's span is made through the hook.
   */
  #start(parent, operation, dispatch, method) {
    const telemetry = this.#telemetry
    const tracer = telemetry.tracer()
    const instruments = telemetry.instruments()
    let trace
    if (tracer === null) {
      // No SDK: no span; the parent's context (its baggage) still goes on the wire.
      const headers = this.#propagate ? inject(parent, this.propagator) : undefined
      if (instruments === null) return headers === undefined ? undefined : new HeadersOnly(headers)
      trace = new CallTrace(this, parent, null, instruments, 0, headers, this.#propagate)
    } else {
      trace = new CallTrace(this, parent, tracer, instruments, 0, undefined, this.#propagate)
      if (this.#propagate && (!dispatch || internal.everyAttemptThroughHook)) {
        trace.flags = HOOK
      } else if (this.#propagate) {
        // The call's span and its first attempt's, now: the attempt's context goes on the wire.
        const start = wallClock()
        const call = trace.callOf(0, operation, `roomchat ${operation}`, start)
        const name = this.#attemptName(operation, String(method ?? '').toUpperCase())
        // What the conventions want a sampler to see, as far as it is known before core builds the request
        // (url.full is core's, set at the end): the method (the name's first word) and the server.
        const attributes = { [N.ATTR_SERVER_ADDRESS]: this.#address, [N.ATTR_SERVER_PORT]: this.#port }
        const verb = name.split(' ', 1)[0]
        if (verb !== '') attributes[N.ATTR_HTTP_REQUEST_METHOD] = verb
        const options = { kind: SpanKind.CLIENT, startTime: start, attributes }
        call.premade = startSpan('the span of an attempt', tracer, name, options, call.context)
        // Without its span (its start threw), the request carries its call's context; the span is tried again at the end.
        trace.headers = inject(call.premade === undefined ? call.context : api.trace.setSpan(call.context, call.premade), this.propagator)
        trace.flags = PREMADE | HOOK
      }
    }
    if (instruments !== null && operation !== undefined) {
      trace.active = trace.countIn(this.activeAttributes(operation))
    } else if (instruments !== null && !dispatch) {
      // A step that makes a call now and then (an iterator of records): its
      // page is counted in flight from its first attempt, which the hook tells
      // whether or not trace context is sent.
      trace.flags |= HOOK
    }
    return trace
  }
}

let wallClock
let operationSpanName

/**
 * For the benchmark (bench/opentelemetry.mjs): `everyAttemptThroughHook`
 * makes even the first attempt's span through the hook, the design the
 * dispatch-time spans are measured against. For the tests: `registeredClients`.
 */
const internal = {
  everyAttemptThroughHook: false,
  /** For the tests: how many clients the budget gauge of these providers holds. */
  registeredClients: (tracerProvider, meterProvider) => telemetryOf(tracerProvider, meterProvider).registered,
}

/**
 * Sets up the telemetry module with the addon's clock and names; returns the
 * telemetry of a client of `native`, or throws a
 * message for a bad option.
 */
function clientTelemetry(native, nativeModule, { tracerProvider, meterProvider, propagator, propagate }) {
  wallClock ??= nativeModule.wallClock
  operationSpanName ??= nativeModule.operationSpanName
  return new ClientTelemetry(telemetryOf(tracerProvider, meterProvider), native, propagate, propagator)
}

module.exports = { clientTelemetry, report, api, internal }
