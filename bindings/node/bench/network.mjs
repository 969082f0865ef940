// Benchmark across the test network (printed figures, never asserted), run as
//   scripts/testnet.sh run -- node bindings/node/bench/network.mjs
// a namespaced host over TLS 1.3 with ~25 ms round trips. Side by side in one
// run: roomchat, the global fetch and undici.request, each trusting
// ROOMCHAT_NET_CA_FILE and with no proxy:
//
// * cold start: the first call of a new client / agent (TCP, TLS handshake,
//   GET users?limit=1), median of ROOMCHAT_BENCH_N (default 30), the sides
//   taking turns to go first;
// * 16 calls at once from a new client / agent: wall time, and the connections
//   and TLS handshakes the emulator counted.
//
// fetch cannot take a CA per call, so it is given a dispatcher per cold start:
// undici's Agent with `connect: { ca }` (the same CA; NODE_EXTRA_CA_CERTS would
// need a new process per cold start to get a new connection pool).
// Without ROOMCHAT_NET_BASE_URL it prints one line and exits 0.
import fs from 'node:fs'
import https from 'node:https'
import { Agent as UndiciAgent, request as undiciRequest } from 'undici'
import { Client } from 'roomchat'

const env = process.env
if (!env.ROOMCHAT_NET_BASE_URL) {
  console.log('node network: no test network (run through scripts/testnet.sh): skipped')
  process.exit(0)
}
const N = Number(env.ROOMCHAT_BENCH_N || 30)
const IN_FLIGHT = 16
const ca = fs.readFileSync(env.ROOMCHAT_NET_CA_FILE)
const url = `${env.ROOMCHAT_NET_BASE_URL}/consumer/api/v2/users?auth=${encodeURIComponent(env.ROOMCHAT_NET_PRIVATE_KEY)}&limit=1`

function admin(method, path) {
  return new Promise((resolve, reject) => {
    const request = https.request(`${env.ROOMCHAT_NET_ADMIN_URL}${path}`, { method, ca, agent: false }, (response) => {
      let text = ''
      response.on('data', (chunk) => (text += chunk))
      response.on('end', () => resolve(text ? JSON.parse(text) : null))
    })
    request.on('error', reject)
    request.end()
  })
}

function check(page) {
  if (!Array.isArray(page.data)) throw new Error(`not a page of users: ${JSON.stringify(page).slice(0, 200)}`)
}

// Each side: a fresh client / agent, a call on it, and its closing (outside the timing).
const sides = {
  roomchat: {
    fresh: () => new Client({ privateKey: env.ROOMCHAT_NET_PRIVATE_KEY, baseUrl: env.ROOMCHAT_NET_BASE_URL, ca, proxy: null }),
    call: (client) => client.listUsers({ limit: 1 }).then(check),
    close: async () => {},
  },
  fetch: {
    fresh: () => new UndiciAgent({ connect: { ca } }),
    call: async (dispatcher) => {
      const response = await fetch(url, { dispatcher })
      if (response.status !== 200) throw new Error(`fetch: ${response.status}`)
      check(await response.json())
    },
    close: (dispatcher) => dispatcher.close(),
  },
  'undici.request': {
    fresh: () => new UndiciAgent({ connect: { ca } }),
    call: async (dispatcher) => {
      const response = await undiciRequest(url, { dispatcher })
      if (response.statusCode !== 200) throw new Error(`undici.request: ${response.statusCode}`)
      check(await response.body.json())
    },
    close: (dispatcher) => dispatcher.close(),
  },
}
const names = Object.keys(sides)
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

await admin('POST', '/reset')

// Cold starts: the client's construction is inside the timing, as a user pays it.
// One untimed call per side first: modules and code paths loaded.
for (const side of Object.values(sides)) {
  const client = side.fresh()
  await side.call(client)
  await side.close(client)
}
const cold = Object.fromEntries(names.map((name) => [name, []]))
for (let i = 0; i < N; i++) {
  for (let j = 0; j < names.length; j++) {
    const name = names[(i + j) % names.length]
    const side = sides[name]
    const started = performance.now()
    const client = side.fresh()
    await side.call(client)
    cold[name].push(performance.now() - started)
    await side.close(client)
  }
}
const coldMs = Object.fromEntries(names.map((name) => [name, median(cold[name])]))
for (const name of names) {
  const vs = name === 'roomchat' ? '' : ` (roomchat ${((coldMs.roomchat / coldMs[name] - 1) * 100).toFixed(1).replace(/^(?!-)/, '+')}%)`
  console.log(`node network: cold start (new client: TCP + TLS + request), median of ${N}: ${name} ${coldMs[name].toFixed(1)} ms${vs}`)
}

// 16 at once from a fresh client / agent.
for (const name of names) {
  const side = sides[name]
  await sleep(1200) // the emulator closes the earlier sides' idle connections (after 1 s) before counting
  await admin('DELETE', '/connections')
  const client = side.fresh()
  const started = performance.now()
  await Promise.all(Array.from({ length: IN_FLIGHT }, () => side.call(client)))
  const wall = performance.now() - started
  await sleep(200)
  const stats = await admin('GET', '/connections')
  await side.close(client)
  // The counts include this GET's own connection (a new one: agent: false), left out here.
  console.log(
    `node network: ${IN_FLIGHT} calls at once from a new client: ${name} ${wall.toFixed(0)} ms, ` +
      `${stats.accepted - 1} connections accepted, ${stats.tls_handshakes - 1} TLS handshakes`,
  )
}

const ahead = (other) => coldMs.roomchat <= coldMs[other]
const pct = (other) => `${Math.abs((coldMs.roomchat / coldMs[other] - 1) * 100).toFixed(1)}% ${ahead(other) ? 'faster than' : 'slower than'} ${other}`
console.log(
  `node network: verdict: roomchat cold start ${coldMs.roomchat.toFixed(1)} ms is ${pct('fetch')} (${coldMs.fetch.toFixed(1)} ms) and ` +
    `${pct('undici.request')} (${coldMs['undici.request'].toFixed(1)} ms): ` +
    (ahead('fetch') && ahead('undici.request') ? 'ahead of both' : 'not ahead of both'),
)
