'use strict'
// End to end through a real OpenTelemetry Collector (scripts/otel-collector.sh,
// built from the pinned Go modules): roomchat's spans and metrics exported by
// the official OTLP exporters (@opentelemetry/exporter-trace-otlp-http and
// exporter-metrics-otlp-http, OTLP/HTTP with JSON bodies) behind a batch span
// processor and a periodic metric reader, as an application sets them up; what
// the collector wrote (OTLP JSON) is asserted: the application's span → the
// call → its attempts (one trace, parent ids), the HTTP client conventions'
// attributes, a 429 resent once, the metrics' points, and no key, token, proxy
// or Redis password anywhere in the file. The same test as Rust's
// (tests/otel/rust/tests/collector.rs).
//
// Not a *.test.js: `node --test test/*.test.js` needs no collector. It needs
// one built (`bash scripts/otel-collector.sh build`; the test command builds it
// in the background) and fails without it:
//   node --test bindings/node/test/otel-collector.e2e.js
const test = require('node:test')
const assert = require('node:assert/strict')
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { context, trace } = require('@opentelemetry/api')
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks')
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base')
const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics')
const { resourceFromAttributes } = require('@opentelemetry/resources')
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http')
const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-http')
const { startEmulator, root } = require('./helpers.js')
const { Client } = require('..')

// The secrets, with the characters URLs and JSON treat apart (as the redaction tests use).
const PRIVATE_KEY = 'sk_live_C0ll?ct#9/x@y+&=%'
const PUBLIC_KEY = 'pk_live_C0ll?ct#p/k@y+&=%'
const PROXY_PASSWORD = 'Pr0xy?#/p@ss&'
const REDIS_PASSWORD = 'R3d?s#9/c@ll&'
const USERS = '/consumer/api/v2/users'
const SERVICE = 'roomchat-collector-e2e-node'
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
const SPAN_KIND_INTERNAL = 1
const SPAN_KIND_CLIENT = 3
const STATUS_ERROR = 2

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())

const script = path.join(root, 'scripts', 'otel-collector.sh')
/** Starts a collector of the test's own; its endpoints and output file. */
function startCollector(dir) {
  const out = execFileSync('bash', [script, 'start', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  return Object.fromEntries(out.trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2)))
}
/** Stops it: what it accepted is then in the file. */
function stopCollector(dir) {
  execFileSync('bash', [script, 'stop', dir], { stdio: 'inherit' })
}

/** An attribute list of OTLP JSON as an object (64-bit ints are strings there: made numbers). */
function attrs(list = []) {
  const out = {}
  for (const { key, value } of list) {
    const [kind, v] = Object.entries(value)[0]
    out[key] = kind === 'intValue' ? Number(v) : v
  }
  return out
}

test('spans and metrics reach a real collector over OTLP, with no secret', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'roomchat-otelcol-node-'))
  const collector = startCollector(dir)
  let stopped = false
  t.after(() => {
    if (!stopped) stopCollector(dir)
    fs.rmSync(dir, { recursive: true, force: true })
  })
  const endpoint = collector.ROOMCHAT_OTELCOL_HTTP_ENDPOINT
  const resource = resourceFromAttributes({ 'service.name': SERVICE })
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }))],
  })
  const meterProvider = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` }), exportIntervalMillis: 3_600_000 })],
  })

  const emu = await startEmulator(['--private-key', PRIVATE_KEY, '--public-key', PUBLIC_KEY])
  t.after(() => emu.stop())
  // A proxy and a shared Redis budget, each with its password: loopback is not
  // proxied, and no Redis listens on port 1 (the client falls back and says so).
  const client = new Client(
    emu.options({
      privateKey: PRIVATE_KEY,
      publicKey: PUBLIC_KEY,
      tracerProvider,
      meterProvider,
      baseBackoffMs: 1,
      proxy: `https://me:${encodeURIComponent(PROXY_PASSWORD)}@127.0.0.1:9`,
      rateLimit: {
        requests: 100,
        windowMs: 60_000,
        redisUrl: `redis://:${encodeURIComponent(REDIS_PASSWORD)}@127.0.0.1:1/0`,
        onRedisError: 'local_fallback',
        redisConnectTimeoutMs: 200,
        redisTimeoutMs: 200,
      },
    }),
  )
  const tracer = tracerProvider.getTracer('app')
  const [token, appSpanId] = await tracer.startActiveSpan('handle request', async (span) => {
    try {
      const jon = await client.createUser({ username: 'jon' })
      await client.validateAccessToken(jon.accessToken)
      // The token in its query too: url.full must show it REDACTED.
      await client.rawRequest({ method: 'POST', path: '/consumer/api/v1/user/accessToken/validate', query: { accessToken: jon.accessToken }, body: { accessToken: jon.accessToken }, auth: 'public' })
      // A 429 then a 200: two attempts, the second resent once.
      await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 429, headers: { 'Retry-After': '0' }, body: '{"message":"slow down"}' } })
      await client.listUsers({ limit: 5 })
      // A failed call whose answer quotes the keys and the token.
      const quoted = JSON.stringify({ message: `bad key ${PRIVATE_KEY} / ${PUBLIC_KEY} / ${jon.accessToken}` })
      await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 400, body: quoted } })
      await assert.rejects(client.listUsers({ limit: 1 }))
      return [jon.accessToken, span.spanContext().spanId]
    } finally {
      span.end()
    }
  })
  // Everything exported before the collector stops.
  await tracerProvider.shutdown()
  await meterProvider.shutdown()
  stopCollector(dir)
  stopped = true
  const received = fs.readFileSync(collector.ROOMCHAT_OTELCOL_OUTPUT, 'utf8')
  const batches = received.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
  const resources = (field) => {
    const all = batches.flatMap((b) => b[field] ?? [])
    for (const r of all) assert.equal(attrs(r.resource.attributes)['service.name'], SERVICE)
    return all
  }

  // Spans: the application's → each call's → its attempts', one trace.
  const spans = resources('resourceSpans')
    .flatMap((r) => r.scopeSpans)
    .flatMap((scope) => scope.spans.map((s) => ({ ...s, scope: scope.scope?.name })))
    .map((s) => ({ ...s, attrs: attrs(s.attributes), events: (s.events ?? []).map((e) => e.name), parentSpanId: s.parentSpanId ?? '' }))
  const app = spans.find((s) => s.name === 'handle request')
  assert.equal(app.spanId, appSpanId)
  assert.ok(spans.every((s) => s.scope === (s === app ? 'app' : 'roomchat')), 'the scopes')
  assert.ok(spans.every((s) => s.traceId === app.traceId), 'one trace')
  const calls = spans.filter((s) => s.name === 'roomchat list_users')
  assert.equal(calls.length, 2)
  for (const call of calls) {
    assert.equal(call.parentSpanId, app.spanId)
    assert.equal(call.kind, SPAN_KIND_INTERNAL)
    assert.equal(call.attrs['roomchat.operation'], 'list_users')
  }
  const [retried, failed] = calls.sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)))
  const attemptsOf = (call) =>
    spans.filter((s) => s.parentSpanId === call.spanId).sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)))
  const attempts = attemptsOf(retried)
  assert.equal(attempts.length, 2)
  const url = new URL(emu.baseUrl)
  for (const [attempt, status] of [[attempts[0], 429], [attempts[1], 200]]) {
    assert.equal(attempt.name, `GET ${USERS}`)
    assert.equal(attempt.kind, SPAN_KIND_CLIENT)
    assert.equal(attempt.attrs['http.request.method'], 'GET')
    assert.equal(attempt.attrs['url.template'], USERS)
    assert.equal(attempt.attrs['server.address'], url.hostname)
    assert.equal(attempt.attrs['server.port'], Number(url.port))
    assert.equal(attempt.attrs['network.protocol.version'], '1.1')
    assert.equal(attempt.attrs['http.response.status_code'], status)
  }
  assert.equal(attempts[0].attrs['error.type'], '429')
  assert.equal(attempts[0].attrs['roomchat.error.kind'], 'rate_limited')
  assert.equal(attempts[0].status?.code, STATUS_ERROR)
  assert.equal(attempts[0].attrs['http.request.resend_count'], undefined)
  assert.equal(attempts[1].attrs['http.request.resend_count'], 1)
  assert.notEqual(attempts[1].status?.code, STATUS_ERROR)
  assert.equal(retried.attrs['roomchat.attempts'], 2)
  assert.ok(retried.events.includes('roomchat.retry'))
  assert.equal(failed.status?.code, STATUS_ERROR)
  assert.equal(failed.attrs['error.type'], 'invalid_request')
  const raw = spans.find((s) => s.name === 'roomchat raw')
  assert.match(attemptsOf(raw)[0].attrs['url.full'], /\?publicKey=REDACTED&accessToken=REDACTED$/)
  assert.ok(spans.some((s) => s.events.includes('roomchat.budget.degraded')), "the Redis budget's failure is an event")

  // Metrics (cumulative: the last batch's): a duration per attempt, in the conventions' buckets; the retry by reason.
  const metrics = new Map()
  for (const r of resources('resourceMetrics')) for (const s of r.scopeMetrics) for (const m of s.metrics) metrics.set(m.name, m)
  const points = (name) => {
    const m = metrics.get(name)
    assert.ok(m, `the collector received no metric ${name}`)
    return (m.histogram ?? m.sum ?? m.gauge).dataPoints.map((p) => ({ ...p, attrs: attrs(p.attributes) }))
  }
  assert.equal(metrics.get('http.client.request.duration').unit, 's')
  const durations = points('http.client.request.duration')
  const count = (status) =>
    durations
      .filter((p) => p.attrs['url.template'] === USERS && p.attrs['http.request.method'] === 'GET' && p.attrs['http.response.status_code'] === status)
      .reduce((n, p) => n + Number(p.count), 0)
  assert.deepEqual([count(429), count(200), count(400)], [1, 1, 1])
  for (const p of durations) {
    assert.deepEqual(p.explicitBounds, HTTP_BUCKETS)
    assert.equal(p.attrs['url.full'], undefined, 'low cardinality')
  }
  const attemptSpans = spans.filter((s) => s.kind === SPAN_KIND_CLIENT).length
  assert.equal(durations.reduce((n, p) => n + Number(p.count), 0), attemptSpans, 'a duration per attempt span')
  assert.ok(points('roomchat.client.retries').some((p) => p.attrs['roomchat.retry.reason'] === '429' && Number(p.asInt) === 1))
  assert.equal(points('roomchat.client.call.duration').reduce((n, p) => n + Number(p.count), 0), 5)
  const remaining = points('roomchat.rate_limit.remaining')
  assert.equal(remaining.length, 1, 'one series per server')
  assert.deepEqual(remaining[0].attrs, { 'server.address': url.hostname, 'server.port': Number(url.port) })

  // No secret in any form, in the file as written or in its strings as decoded (a JSON writer may escape a character: the check does not depend on how).
  const decoded = batches.map((b) => JSON.stringify(b)).join('\n')
  for (const secret of [PRIVATE_KEY, PUBLIC_KEY, PROXY_PASSWORD, REDIS_PASSWORD, token]) {
    for (const form of [secret, encodeURIComponent(secret)]) {
      assert.ok(!received.includes(form), `${form} reached the collector`)
      assert.ok(!decoded.includes(form), `${form} reached the collector`)
    }
  }
  const pointCount = [...metrics.keys()].reduce((n, name) => n + points(name).length, 0)
  const names = [...new Set(spans.map((s) => s.name))].sort()
  console.log(
    `otel e2e node: the collector received ${spans.length} spans (${names.join(', ')}) and ${pointCount} metric points ` +
      `(${metrics.size} metrics) over OTLP/HTTP; no key, token, proxy or Redis password in its ${received.length} bytes`,
  )
})
