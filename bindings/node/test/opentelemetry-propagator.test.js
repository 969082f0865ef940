'use strict'
// A client given its own providers and propagator, with nothing registered
// with @opentelemetry/api globally (issue 51, item 6b): its requests carry
// trace context through its propagator, as the emulator's journal shows.
// Nothing global here: this file runs in a process of its own.
const test = require('node:test')
const assert = require('node:assert/strict')
const api = require('@opentelemetry/api')
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base')
const { W3CTraceContextPropagator } = require('@opentelemetry/core')
const { startEmulator } = require('./helpers.js')
const { Client } = require('..')

const header = (entry, name) => entry.headers.find(([n]) => n === name)?.[1]

test('with its own providers and nothing global, a client sends trace context through the propagator it is given, and none without', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  // Nothing registered globally: the global propagator is the API's no-op one.
  assert.equal(globalThis[Symbol.for('opentelemetry.js.api.1')]?.propagation, undefined)
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const withPropagator = new Client(emu.options({ tracerProvider, propagator: new W3CTraceContextPropagator() }))
  const without = new Client(emu.options({ tracerProvider }))
  await withPropagator.listChatRooms()
  await without.listChatRooms()
  // A retry's attempt (made through the hook) carries its own context too.
  await emu.fault({ method: 'GET', path: '/consumer/api/v1/chatrooms', times: 1, action: { kind: 'respond', status: 503, body: '{}', headers: { 'Retry-After': '0' } } })
  await withPropagator.listChatRooms()
  const attempts = exporter.getFinishedSpans().filter((s) => s.kind === api.SpanKind.CLIENT)
  assert.equal(attempts.length, 4, 'spans are made either way')
  const traceparent = (span) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`
  const journal = await emu.journal()
  assert.deepEqual(
    journal.map((entry) => header(entry, 'traceparent')),
    [traceparent(attempts[0]), undefined, traceparent(attempts[2]), traceparent(attempts[3])],
  )
  assert.throws(() => new Client(emu.options({ propagator: {} })), /propagator must be an OpenTelemetry TextMapPropagator/)
  assert.throws(() => new Client(emu.options({ openTelemetry: false, propagator: new W3CTraceContextPropagator() })), { code: 'ROOMCHAT_VALIDATION' })
})
