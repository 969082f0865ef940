'use strict'
// One side of bench/opentelemetry.mjs, in a process of its own (each side has
// its own global OpenTelemetry setup): `node opentelemetry-side.cjs SIDE`.
// Runs the blocks of calls its parent asks for over IPC, one at a time, and
// answers with their time and the event loop's busy time.
//
// Sides:
//   roomchat               no @opentelemetry/api (hidden from require): the package as it was
//   roomchat+api           @opentelemetry/api installed, no SDK registered
//   roomchat+sdk           the SDK: NodeTracerProvider (AsyncLocalStorage context,
//                          W3C propagators) with a BatchSpanProcessor, a MeterProvider
//                          with a periodic reader; exporters that count and drop
//   roomchat+sdk, hook     the same, every attempt's span made through the hook (the
//                          design measured against: see src/telemetry.rs)
//   undici                 undici.request, no OpenTelemetry
//   undici+sdk             undici.request with @opentelemetry/instrumentation-undici and
//                          the same SDK
const Module = require('node:module')
const { performance } = require('node:perf_hooks')

const side = process.argv[2]
const { baseUrl, privateKey } = JSON.parse(process.env.ROOMCHAT_BENCH_EMULATOR)

if (side === 'roomchat') {
  // As on a machine where the optional peer is not installed.
  const resolve = Module._resolveFilename
  Module._resolveFilename = function (request, ...rest) {
    if (request === '@opentelemetry/api' || request.startsWith('@opentelemetry/')) {
      throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' })
    }
    return resolve.call(this, request, ...rest)
  }
}

/** Exported spans and metric batches, counted and dropped (what a remote exporter costs is not measured). */
const exported = { spans: 0, metrics: 0 }

function setUpSdk() {
  const { metrics } = require('@opentelemetry/api')
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node')
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base')
  const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics')
  const spanExporter = {
    export(spans, done) {
      exported.spans += spans.length
      done({ code: 0 })
    },
    shutdown: () => Promise.resolve(),
    forceFlush: () => Promise.resolve(),
  }
  const metricExporter = {
    export(batch, done) {
      exported.metrics += 1
      done({ code: 0 })
    },
    shutdown: () => Promise.resolve(),
    forceFlush: () => Promise.resolve(),
  }
  new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(spanExporter)] }).register()
  metrics.setGlobalMeterProvider(
    new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 1000 })] }),
  )
}

let sink = 0
function read(page) {
  if (page.data.length !== 50) throw new Error(`a page of ${page.data.length}`)
  for (const user of page.data) sink += user.username.length
}

function makeCall() {
  if (side.startsWith('undici')) {
    if (side === 'undici+sdk') {
      setUpSdk()
      const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici')
      new UndiciInstrumentation()
    }
    const { request, Agent } = require('undici')
    const dispatcher = new Agent({ connections: 64 })
    const url = `${baseUrl}/consumer/api/v2/users?auth=${encodeURIComponent(privateKey)}&limit=50`
    return () =>
      request(url, { dispatcher })
        .then((r) => r.body.json())
        .then(read)
  }
  if (side.startsWith('roomchat+sdk')) setUpSdk()
  const roomchat = require('roomchat')
  if (side === 'roomchat+sdk, hook') roomchat[Symbol.for('roomchat.internal.everyAttemptThroughHook')](true)
  const client = new roomchat.Client({ privateKey, baseUrl, rateLimit: { requests: 1_000_000_000, windowMs: 1000 } })
  return () => client.listUsers({ limit: 50 }).then(read)
}

const call = makeCall()

async function block(count, concurrency) {
  let left = count
  const lane = async () => {
    while (left > 0) {
      left -= 1
      await call()
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane))
}

process.on('message', async ({ count, concurrency }) => {
  const elu = performance.eventLoopUtilization()
  const cpu = process.cpuUsage()
  const start = process.hrtime.bigint()
  await block(count, concurrency)
  const ns = Number(process.hrtime.bigint() - start)
  const used = process.cpuUsage(cpu)
  process.send({ ns, busyMs: performance.eventLoopUtilization(elu).active, cpuUs: used.user + used.system, exported, sink })
})
process.on('disconnect', () => process.exit(0))
process.send({ ready: true })
