// A test that your code's trace reaches the service, read from the journal's request headers.
// Install: npm install roomchat @opentelemetry/api @opentelemetry/sdk-trace-node && npm install -D roomchat-emulator.
// Run: node --test
import { after, before, beforeEach, test } from 'node:test'
import assert from 'node:assert/strict'
import { trace } from '@opentelemetry/api'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { startEmulator } from 'roomchat/testing'

new NodeTracerProvider().register() // the global tracer, context and W3C trace context

let emu
before(async () => {
  emu = await startEmulator()
})
after(() => emu.stop())
beforeEach(() => emu.reset())

test('the trace context reaches the service', async () => {
  const traceId = await trace.getTracer('app').startActiveSpan('sign-up', async (span) => {
    await emu.client().listUsers()
    span.end()
    return span.spanContext().traceId
  })

  const [entry] = await emu.journal()
  assert.equal(entry.headers.traceparent.split('-')[1], traceId) // names in lower case
  assert.match(entry.headers['user-agent'], /^roomchat/)
})

test('credentials in headers show redacted', async () => {
  // Your own HTTP code, sending a token to the service's URL (401: no key in the query).
  await fetch(`${emu.baseUrl}/consumer/api/v2/users`, {
    headers: { Authorization: 'Bearer tok_123', 'X-Api-Key': 'key_456' },
  })

  const [entry] = await emu.journal()
  assert.equal(entry.headers.authorization, 'REDACTED')
  assert.equal(entry.headers['x-api-key'], 'REDACTED')
  assert.ok(!JSON.stringify(entry).includes('tok_123') && !JSON.stringify(entry).includes('key_456'))
})
