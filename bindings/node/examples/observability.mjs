import { trace } from '@opentelemetry/api'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { Client } from 'roomchat'

// The application's SDK, set up once at start: spans printed on standard output.
// register() also sets the AsyncLocalStorage context manager and the W3C trace
// context and baggage propagators.
const provider = new NodeTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())],
})
provider.register()

const client = new Client({
  privateKey: process.env.ROOMCHAT_PRIVATE_KEY,
  baseUrl: process.env.ROOMCHAT_BASE_URL,
})

await trace.getTracer('my-backend').startActiveSpan('nightly user report', async (span) => {
  const page = await client.listUsers({ limit: 50 })
  span.setAttribute('report.users', page.total)
  span.end()
})
await provider.shutdown()
// Printed: `GET /consumer/api/v2/users` (kind 2: CLIENT) in `roomchat list_users`
// (kind 0: INTERNAL) in `nightly user report`; the request carried the first's traceparent.
