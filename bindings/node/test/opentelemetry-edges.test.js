'use strict'
// OpenTelemetry at its edges (issue 51): a sampler, span processor, instrument
// or propagator that throws costs exactly its own part; an aborted call's
// spans are ended when its promise rejects; the budget gauge after clients
// are gone; wait durations as doubles in OTLP; error.type on attempts; the
// server's address as core names it. Against the emulator and the SDK's
// in-memory exporter and reader, as test/opentelemetry.test.js.
const test = require('node:test')
const assert = require('node:assert/strict')
const api = require('@opentelemetry/api')
const { context, propagation, trace, SpanKind, SpanStatusCode } = api
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base')
const { MeterProvider, InMemoryMetricExporter, PeriodicExportingMetricReader, AggregationTemporality } = require('@opentelemetry/sdk-metrics')
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks')
const { W3CTraceContextPropagator } = require('@opentelemetry/core')
const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer')
const { startEmulator } = require('./helpers.js')
const { Client } = require('..')

const USERS = '/consumer/api/v2/users'
const CHATROOMS = '/consumer/api/v1/chatrooms'

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
propagation.setGlobalPropagator(new W3CTraceContextPropagator())

const spanId = (span) => span.spanContext().spanId
const parentId = (span) => span.parentSpanContext?.spanId
const traceparent = (span) => `00-${span.spanContext().traceId}-${spanId(span)}-0${span.spanContext().traceFlags}`
const header = (entry, name) => entry.headers.find(([n]) => n === name)?.[1]
const named = (spans, name) => spans.filter((s) => s.name === name)

/**
 * An SDK of the test's own. `throwOnStart(span)`: whether a span processor
 * throws in `onStart` for that span; `brokenInstrument`: the name of the one
 * instrument whose records throw; `processors`: more span processors.
 */
function sdk({ throwOnStart = () => false, brokenInstrument = undefined } = {}) {
  const spans = new InMemorySpanExporter()
  const throwing = {
    onStart(span) {
      if (throwOnStart(span)) throw new Error('a span processor bug')
    },
    onEnd() {},
    forceFlush: async () => {},
    shutdown: async () => {},
  }
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans), throwing] })
  const exported = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  const real = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: exported, exportIntervalMillis: 3_600_000 })] })
  // The application's meter, one of whose instruments throws on every record.
  const broken = (instrument) =>
    new Proxy(instrument, {
      get(target, property) {
        if (property === 'record' || property === 'add') {
          return () => {
            throw new Error('an instrument bug')
          }
        }
        const value = target[property]
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  const meterProvider = {
    getMeter(...args) {
      const meter = real.getMeter(...args)
      return new Proxy(meter, {
        get(target, property) {
          const value = target[property]
          if (typeof value !== 'function') return value
          if (String(property).startsWith('create')) {
            return (name, options) => {
              const instrument = value.call(target, name, options)
              return name === brokenInstrument ? broken(instrument) : instrument
            }
          }
          return value.bind(target)
        },
      })
    },
  }
  const tracer = tracerProvider.getTracer('app')
  return {
    tracerProvider,
    meterProvider,
    spans: () => spans.getFinishedSpans(),
    async metrics() {
      await real.forceFlush()
      const all = exported.getMetrics()
      const byName = new Map()
      for (const scope of all[all.length - 1].scopeMetrics) for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric)
      return byName
    },
    async inSpan(name, fn) {
      return tracer.startActiveSpan(name, async (span) => {
        try {
          return [await fn(), span]
        } finally {
          span.end()
        }
      })
    },
  }
}

/** Data points of `name` (none when it was never recorded). */
const points = (all, name) => all.get(name)?.dataPoints ?? []
const count = (all, name) => points(all, name).reduce((n, p) => n + (typeof p.value === 'number' ? p.value : p.value.count), 0)

/** A call that waits for the rate limit, is answered 429, waits again, then is answered 200: every span, event and instrument is used. */
async function busyCall(emu, otel, extra = {}) {
  const client = new Client(
    emu.options({
      tracerProvider: otel.tracerProvider,
      meterProvider: otel.meterProvider,
      baseBackoffMs: 1,
      rateLimit: { requests: 1, windowMs: 200 },
      ...extra,
    }),
  )
  await client.listChatRooms()
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 429, body: '{}', headers: { 'Retry-After': '0' } } })
  const [page, app] = await otel.inSpan('handle request', () => client.listUsers({ limit: 1 }))
  assert.equal(page.total, 0)
  return { client, app }
}

test('a sampler or span processor that throws at the call span\'s start costs that span only: its attempts, metrics and trace context stay', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const otel = sdk({ throwOnStart: (span) => span.name === 'roomchat list_users' })
  const { app } = await busyCall(emu, otel)
  const spans = otel.spans()
  assert.equal(named(spans, 'roomchat list_users').length, 0, 'the call span could not be made')
  const attempts = named(spans, 'GET /consumer/api/v2/users')
  assert.equal(attempts.length, 2, spans.map((s) => s.name).join(', '))
  // In the application's span, which the call span would have been in.
  for (const attempt of attempts) assert.equal(parentId(attempt), spanId(app))
  assert.deepEqual(
    attempts.map((a) => a.attributes['error.type']),
    ['429', undefined],
  )
  const sent = (await emu.journal()).filter((e) => e.path === USERS).map((e) => header(e, 'traceparent'))
  assert.deepEqual(sent, attempts.map(traceparent))
  const all = await otel.metrics()
  assert.equal(count(all, 'http.client.request.duration'), 3)
  assert.equal(count(all, 'roomchat.client.call.duration'), 2)
  assert.equal(count(all, 'roomchat.client.retries'), 1)
  // Each call waited at least once (how often is the machine's timing).
  assert.ok(count(all, 'roomchat.rate_limit.wait.duration') >= 1)
  assert.ok(points(all, 'roomchat.client.active_calls').every((p) => p.value === 0))
})

test('a span processor that throws at an attempt span\'s start costs that span only: the call span ends, the request carries its context', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const otel = sdk({ throwOnStart: (span) => span.kind === SpanKind.CLIENT })
  // The first attempt's span made at dispatch (no wait), and a retry's through the hook.
  const client = new Client(emu.options({ tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }))
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 429, body: '{}', headers: { 'Retry-After': '0' } } })
  const [, app] = await otel.inSpan('handle request', () => client.listUsers({ limit: 1 }))
  const spans = otel.spans()
  assert.equal(spans.filter((s) => s.kind === SpanKind.CLIENT).length, 0)
  const [call] = named(spans, 'roomchat list_users')
  assert.ok(call, spans.map((s) => s.name).join(', '))
  assert.equal(parentId(call), spanId(app))
  assert.equal(call.attributes['roomchat.attempts'], 2)
  assert.equal(call.events.filter((e) => e.name === 'roomchat.retry').length, 1)
  const sent = (await emu.journal()).map((e) => header(e, 'traceparent'))
  assert.deepEqual(sent, [traceparent(call), traceparent(call)])
  const all = await otel.metrics()
  assert.equal(count(all, 'http.client.request.duration'), 2)
  assert.equal(count(all, 'roomchat.client.call.duration'), 1)
  assert.ok(points(all, 'roomchat.client.active_calls').every((p) => p.value === 0))
})

test('an instrument that throws costs its own records only', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const instruments = [
    'http.client.request.duration',
    'roomchat.client.call.duration',
    'roomchat.rate_limit.wait.duration',
    'roomchat.client.retries',
    'roomchat.client.active_calls',
  ]
  for (const brokenInstrument of instruments) {
    const otel = sdk({ brokenInstrument })
    await busyCall(emu, otel)
    const spans = otel.spans()
    const waits = spans.flatMap((s) => s.events).filter((e) => e.name === 'roomchat.rate_limit.wait').length
    assert.ok(waits >= 1)
    const expected = { 'http.client.request.duration': 3, 'roomchat.client.call.duration': 2, 'roomchat.rate_limit.wait.duration': waits, 'roomchat.client.retries': 1 }
    assert.equal(named(spans, 'roomchat list_users').length, 1, brokenInstrument)
    assert.equal(named(spans, 'GET /consumer/api/v2/users').length, 2, brokenInstrument)
    const all = await otel.metrics()
    for (const [name, n] of Object.entries(expected)) {
      assert.equal(count(all, name), name === brokenInstrument ? 0 : n, `${name} with ${brokenInstrument} broken`)
    }
    assert.ok(points(all, 'roomchat.client.active_calls').every((p) => p.value === 0), brokenInstrument)
    assert.equal(points(all, 'roomchat.rate_limit.remaining').length, 1, brokenInstrument)
  }
})

test('a propagator that throws costs the trace context only: the spans, the metrics and the call stay', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const otel = sdk()
  const propagator = {
    inject() {
      throw new Error('a propagator bug')
    },
    extract: (cx) => cx,
    fields: () => [],
  }
  await busyCall(emu, otel, { propagator })
  const spans = otel.spans()
  assert.equal(named(spans, 'roomchat list_users').length, 1)
  assert.equal(named(spans, 'GET /consumer/api/v2/users').length, 2)
  for (const entry of await emu.journal()) assert.equal(header(entry, 'traceparent'), undefined)
  const all = await otel.metrics()
  assert.equal(count(all, 'roomchat.client.call.duration'), 2)
  assert.ok(points(all, 'roomchat.client.active_calls').every((p) => p.value === 0))
})

test('an aborted call rejects once its spans are ended: before the application\'s span, ready for the SDK\'s shutdown', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const otel = sdk()
  const client = new Client(emu.options({ tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }))
  for (const [what, start] of [
    ['a call', (signal) => client.listChatRooms({ signal })],
    ['an iterator page', (signal) => client.iterRoomMessages('r1', { pageSize: 2 }, { signal }).next()],
  ]) {
    const path = what === 'a call' ? CHATROOMS : '/consumer/api/v1/chatRoom/r1/messages'
    await emu.fault({ method: 'GET', path, times: 1, action: { kind: 'delay', ms: 60_000 } })
    const before = otel.spans().length
    const controller = new AbortController()
    let atRejection
    const [, app] = await otel.inSpan('handle request', async () => {
      const call = start(controller.signal)
      // Held by the emulator: the request has arrived.
      while (!(await emu.journal()).some((e) => e.path === path)) await new Promise((resolve) => setImmediate(resolve))
      controller.abort()
      await assert.rejects(call, (error) => {
        atRejection = otel.spans().slice(before)
        return error.name === 'AbortError'
      })
    })
    // At the moment the promise rejected, the call's span and its attempt's were ended (exported).
    assert.deepEqual(
      atRejection.map((s) => [s.kind, s.attributes['error.type']]),
      [
        [SpanKind.CLIENT, 'cancelled'],
        [SpanKind.INTERNAL, 'cancelled'],
      ],
      what,
    )
    assert.equal(atRejection[1].status.code, SpanStatusCode.ERROR)
    assert.equal(parentId(atRejection[1]), spanId(app))
    // And so before the application's span.
    const order = otel.spans().slice(before)
    assert.equal(order.at(-1), app, what)
  }
})

test('the budget gauge: one series per server, whose value stays true after the clients are gone', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const v8 = require('node:v8')
  v8.setFlagsFromString('--expose-gc')
  const gc = require('node:vm').runInNewContext('gc')
  const collect = async () => {
    // WeakRefs are cleared after the turn that last read them.
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve))
      gc()
    }
  }
  const otel = sdk()
  const options = emu.options({ tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider, rateLimit: { requests: 100, windowMs: 600_000 } })
  let kept = new Client(options)
  await kept.listChatRooms()
  // 20 short-lived clients (one per request), all alive at one collection.
  const shortLived = Array.from({ length: 20 }, () => new Client(options))
  for (const client of shortLived) await client.listChatRooms()
  const server = { 'server.address': new URL(emu.baseUrl).hostname, 'server.port': Number(new URL(emu.baseUrl).port) }
  const series = async () => points(await otel.metrics(), 'roomchat.rate_limit.remaining').map((p) => [p.attributes, p.value])
  // Clients of one key share one budget in a process: one series, its value.
  assert.deepEqual(await series(), [[server, kept.rateLimitState().remaining]])
  shortLived.length = 0
  await collect()
  assert.deepEqual(await series(), [[server, kept.rateLimitState().remaining]], 'after 20 clients are gone')
  await kept.listChatRooms()
  const remaining = kept.rateLimitState().remaining
  assert.equal(remaining, kept.rateLimitState().limit - 22)
  // Every client gone: the series the SDK keeps exporting still reads the key's budget.
  kept = null
  await collect()
  assert.deepEqual(await series(), [[server, remaining]], 'after every client is gone')
  assert.equal(new Client(options).rateLimitState().remaining, remaining)
})

test('error.type of an answered attempt is its status as text, on its span and its duration; roomchat.error.kind the kind', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const otel = sdk()
  const client = new Client(emu.options({ tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider, maxRetries: 0 }))
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 500, body: '{}' } })
  await assert.rejects(client.listUsers({ limit: 1 }), { code: 'ROOMCHAT_SERVER_ERROR' })
  const [attempt] = named(otel.spans(), 'GET /consumer/api/v2/users')
  assert.equal(attempt.attributes['error.type'], '500')
  assert.equal(attempt.attributes['roomchat.error.kind'], 'server_error')
  const [call] = named(otel.spans(), 'roomchat list_users')
  assert.equal(call.attributes['error.type'], 'server_error')
  assert.equal(call.attributes['roomchat.error.kind'], undefined)
  const all = await otel.metrics()
  assert.deepEqual(
    points(all, 'http.client.request.duration').map((p) => [p.attributes['http.response.status_code'], p.attributes['error.type']]),
    [[500, '500']],
  )
  assert.equal(points(all, 'roomchat.client.call.duration')[0].attributes['error.type'], 'server_error')
})

test('wait durations are doubles in OTLP, whole numbers of seconds (0, a Retry-After of 1) included', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const otel = sdk()
  const client = new Client(emu.options({ tracerProvider: otel.tracerProvider }))
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 429, body: '{}', headers: { 'Retry-After': '1' } } })
  await client.listUsers({ limit: 1 })
  // What OTLP's JS exporters send (the JSON and protobuf exporters share this transform).
  const request = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(otel.spans())).toString('utf8'))
  const sent = request.resourceSpans[0].scopeSpans.flatMap((scope) => scope.spans)
  const call = sent.find((s) => s.name === 'roomchat list_users')
  const value = (attributes, key) => attributes.find((a) => a.key === key)?.value
  assert.deepEqual(Object.keys(value(call.attributes, 'roomchat.rate_limit.wait.duration')), ['doubleValue'])
  assert.ok(value(call.attributes, 'roomchat.rate_limit.wait.duration').doubleValue < 1e-9)
  const retryWait = value(call.attributes, 'roomchat.retry.wait.duration')
  assert.deepEqual(Object.keys(retryWait), ['doubleValue'])
  const [retry] = call.events.filter((e) => e.name === 'roomchat.retry')
  const wait = value(retry.attributes, 'roomchat.wait.duration')
  assert.deepEqual(Object.keys(wait), ['doubleValue'])
  assert.ok(Math.abs(wait.doubleValue - retryWait.doubleValue) < 1e-9 && wait.doubleValue >= 1 && wait.doubleValue < 1.5, JSON.stringify(wait))
  // Integers stay integers.
  assert.deepEqual(value(call.attributes, 'roomchat.attempts'), { intValue: 2 })
})

test('server.address as core names it on the spans, the request durations and the budget gauge: an upper-case host', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const otel = sdk()
  const baseUrl = emu.baseUrl.replace('127.0.0.1', 'LocalHost')
  assert.notEqual(baseUrl, emu.baseUrl)
  const client = new Client(emu.options({ baseUrl, tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }))
  await client.listChatRooms()
  await client.listChatRooms()
  const [attempt] = named(otel.spans(), 'GET /consumer/api/v1/chatrooms')
  const address = attempt.attributes['server.address']
  assert.equal(address.toLowerCase(), 'localhost')
  const all = await otel.metrics()
  assert.deepEqual(
    points(all, 'roomchat.rate_limit.remaining').map((p) => p.attributes['server.address']),
    [address],
  )
  assert.deepEqual([...new Set(points(all, 'http.client.request.duration').map((p) => p.attributes['server.address']))], [address])
})

test('telemetry that throws what is not an Error (a null-prototype object, a value whose message getter throws, a symbol), with a diag logger that throws, costs its own part only', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  // Each a value `String(value)` or `value.message` throws on.
  const bare = Object.create(null)
  const trap = Object.defineProperty({}, 'message', {
    get() {
      throw new Error('a getter bug')
    },
  })
  // And the application's diag logger throws too.
  const failing = () => {
    throw new Error('a diag logger bug')
  }
  api.diag.setLogger({ error: failing, warn: failing, info: failing, debug: failing, verbose: failing }, api.DiagLogLevel.WARN)
  t.after(() => api.diag.disable())
  for (const thrown of [bare, trap, Symbol('bug')]) {
    const spans = new InMemorySpanExporter()
    const throwing = {
      onStart(span) {
        if (span.kind === SpanKind.CLIENT) throw thrown
      },
      onEnd() {},
      forceFlush: async () => {},
      shutdown: async () => {},
    }
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans), throwing] })
    const propagator = {
      inject() {
        throw thrown
      },
      extract: (cx) => cx,
      fields: () => [],
    }
    const client = new Client(emu.options({ tracerProvider, propagator }))
    const page = await client.listUsers({ limit: 1 })
    assert.equal(page.total, 0)
    assert.deepEqual(
      spans.getFinishedSpans().map((s) => s.name),
      ['roomchat list_users'],
      String(typeof thrown),
    )
  }
})
