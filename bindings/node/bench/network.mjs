// Benchmark across the test network (printed figures, never asserted), run as
//   scripts/testnet.sh run -- node bindings/node/bench/network.mjs
// a namespaced host over TLS 1.3 with ~25 ms round trips. Side by side in one
// run: roomchat, the global fetch and undici.request, each trusting
// ROOMCHAT_NET_CA_FILE and with no proxy:
//
// * cold start: the first call of a new client / agent (TCP, TLS handshake,
//   GET users?limit=1), median of ROOMCHAT_BENCH_N (default 30), the sides
//   taking turns to go first; then again (half as many) loaded: one busy-loop
//   process per core beside it (scripts/bench/cpu-load.sh);
// * 16 calls at once from a new client / agent: wall time, and the connections
//   and TLS handshakes the emulator counted; idle, then loaded;
// * the call after the server closed the idle connection (the emulator closes
//   them after 1 s): its time, and whether the TLS session was resumed;
// * a 200-user page and a 100,000-message conversation, gzip asked or not: bytes
//   on the wire (counted by the test network's relay) and the process's CPU per
//   call (process.cpuUsage: every thread, roomchat's decoding included).
//
// fetch cannot take a CA per call, so it is given a dispatcher per cold start:
// undici's Agent with `connect: { ca }` (the same CA; NODE_EXTRA_CA_CERTS would
// need a new process per cold start to get a new connection pool).
// Without ROOMCHAT_NET_BASE_URL it prints one line and exits 0.
import fs from 'node:fs'
import https from 'node:https'
import net from 'node:net'
import { Agent as UndiciAgent, request as undiciRequest } from 'undici'
import { Client } from 'roomchat'
import { loadedLabel, withCpuLoad } from './cpu-load.mjs'

const env = process.env
if (!env.ROOMCHAT_NET_BASE_URL) {
  console.log('node network: no test network (run through scripts/testnet.sh): skipped')
  process.exit(0)
}
const N = Number(env.ROOMCHAT_BENCH_N || 30)
const N_LOADED = Math.max(Math.ceil(N / 2), 3)
const IN_FLIGHT = 16
const ca = fs.readFileSync(env.ROOMCHAT_NET_CA_FILE)
const url = `${env.ROOMCHAT_NET_BASE_URL}/consumer/api/v2/users?auth=${encodeURIComponent(env.ROOMCHAT_NET_PRIVATE_KEY)}&limit=1`

function admin(method, path, body) {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json' }
    const request = https.request(`${env.ROOMCHAT_NET_ADMIN_URL}${path}`, { method, ca, agent: false, headers }, (response) => {
      let text = ''
      response.on('data', (chunk) => (text += chunk))
      response.on('end', () => resolve(text ? JSON.parse(text) : null))
    })
    request.on('error', reject)
    request.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

// Bytes the test network's relay has carried from the emulator to clients so far.
function relayBytes() {
  const [host, port] = [env.ROOMCHAT_NET_RELAY_STATS.replace(/:\d+$/, ''), Number(env.ROOMCHAT_NET_RELAY_STATS.split(':').pop())]
  return new Promise((resolve, reject) => {
    let text = ''
    net
      .connect(port, host)
      .on('data', (chunk) => (text += chunk))
      .on('end', () => resolve(Number(text.trim())))
      .on('error', reject)
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
// Median cold start of each side over `n` rounds, the sides taking turns to go first.
async function coldStarts(n) {
  const cold = Object.fromEntries(names.map((name) => [name, []]))
  for (let i = 0; i < n; i++) {
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
  return Object.fromEntries(names.map((name) => [name, median(cold[name])]))
}
function printCold(round, n, ms) {
  for (const name of names) {
    const vs = name === 'roomchat' ? '' : ` (roomchat ${((ms.roomchat / ms[name] - 1) * 100).toFixed(1).replace(/^(?!-)/, '+')}%)`
    console.log(`node network: cold start (new client: TCP + TLS + request), ${round}, median of ${n}: ${name} ${ms[name].toFixed(1)} ms${vs}`)
  }
}
const coldMs = await coldStarts(N)
printCold('idle', N, coldMs)
const coldLoadedMs = await withCpuLoad(() => coldStarts(N_LOADED))
printCold(loadedLabel, N_LOADED, coldLoadedMs)

// 16 at once from a fresh client / agent.
async function atOnce(round) {
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
      `node network: ${IN_FLIGHT} calls at once from a new client, ${round}: ${name} ${wall.toFixed(0)} ms, ` +
        `${stats.accepted - 1} connections accepted, ${stats.tls_handshakes - 1} TLS handshakes`,
    )
  }
}
await atOnce('idle')
await withCpuLoad(() => atOnce(loadedLabel))

// After the server closed the idle connection: the next call, and TLS resumption.
for (const name of names) {
  const side = sides[name]
  const client = side.fresh()
  await side.call(client)
  await sleep(1500) // the emulator closes connections idle for 1 s
  await admin('DELETE', '/connections')
  const started = performance.now()
  await side.call(client)
  const took = performance.now() - started
  await sleep(200)
  const stats = await admin('GET', '/connections')
  await side.close(client)
  console.log(
    `node network: the call after the server closed the idle connection: ${name} ${took.toFixed(1)} ms, ` +
      `${stats.tls_handshakes - 1} handshake(s), ${stats.tls_resumed} resumed`,
  )
}

// gzip or not: bytes on the wire and CPU per call, a page and a long conversation.
await admin('POST', '/reset')
await admin('POST', '/users/seed', { count: 200 })
await admin('POST', '/rooms', { roomId: 'bench', name: 'Bench' })
const { conversationId } = await admin('POST', '/conversations', {
  roomId: 'bench',
  messages: Array.from({ length: 100_000 }, (_, i) => ({
    messages: `message number ${i} of the bench conversation`,
    user: { username: `user-${i % 50}` },
  })),
})
const key = encodeURIComponent(env.ROOMCHAT_NET_PRIVATE_KEY)
const raw = {
  page: `${env.ROOMCHAT_NET_BASE_URL}/consumer/api/v2/users?auth=${key}&limit=200`,
  conversation: `${env.ROOMCHAT_NET_BASE_URL}/consumer/api/v2/room/bench/conversation/${conversationId}/messages?auth=${key}`,
}
const items = (what, decoded) => (what === 'page' ? decoded.data.length : decoded.length)
const gzipSides = (what) => {
  const ours = (gzip) => ({
    // The conversation is over the default cap of 16 MiB.
    fresh: () => new Client({ privateKey: env.ROOMCHAT_NET_PRIVATE_KEY, baseUrl: env.ROOMCHAT_NET_BASE_URL, ca, proxy: null, gzip, maxResponseBytes: 2 ** 30 }),
    call: async (client) =>
      what === 'page'
        ? (await client.listUsers({ limit: 200 })).data.length
        : (await client.conversationMessages({ roomId: 'bench', conversationId })).length,
    close: async () => {},
  })
  return {
    'roomchat gzip': ours(true),
    'roomchat identity': ours(false),
    'fetch (gzip asked)': {
      fresh: sides.fetch.fresh,
      call: async (dispatcher) => items(what, await (await fetch(raw[what], { dispatcher })).json()),
      close: sides.fetch.close,
    },
    'undici.request (identity)': {
      fresh: sides['undici.request'].fresh,
      call: async (dispatcher) => items(what, await (await undiciRequest(raw[what], { dispatcher })).body.json()),
      close: sides['undici.request'].close,
    },
  }
}
for (const [what, label, expected, calls] of [
  ['page', '200-user page', 200, Math.max(Math.floor(N / 3), 3)],
  ['conversation', '100,000-message conversation', 100_000, Math.max(Math.floor(N / 10), 3)],
]) {
  const figures = []
  for (const [name, side] of Object.entries(gzipSides(what))) {
    const client = side.fresh()
    const got = await side.call(client) // a warm connection, and a check of what is decoded
    if (got !== expected) throw new Error(`${name}: ${got} items, not ${expected}`)
    const bytesBefore = await relayBytes()
    const cpuBefore = process.cpuUsage()
    for (let i = 0; i < calls; i++) await side.call(client)
    const cpu = process.cpuUsage(cpuBefore)
    const wire = ((await relayBytes()) - bytesBefore) / calls / 1024
    await side.close(client)
    figures.push(`${name} ${wire.toFixed(1)} KiB, ${((cpu.user + cpu.system) / 1000 / calls).toFixed(2)} ms CPU`)
  }
  console.log(`node network: gzip, ${label}, per call (mean of ${calls}): ${figures.join('; ')}`)
}

const ahead = (other) => coldMs.roomchat <= coldMs[other]
const pct = (other) => `${Math.abs((coldMs.roomchat / coldMs[other] - 1) * 100).toFixed(1)}% ${ahead(other) ? 'faster than' : 'slower than'} ${other}`
console.log(
  `node network: verdict: roomchat cold start ${coldMs.roomchat.toFixed(1)} ms is ${pct('fetch')} (${coldMs.fetch.toFixed(1)} ms) and ` +
    `${pct('undici.request')} (${coldMs['undici.request'].toFixed(1)} ms): ` +
    (ahead('fetch') && ahead('undici.request') ? 'ahead of both' : 'not ahead of both') +
    `; ${loadedLabel}: roomchat ${coldLoadedMs.roomchat.toFixed(1)} ms, fetch ${coldLoadedMs.fetch.toFixed(1)} ms, ` +
    `undici.request ${coldLoadedMs['undici.request'].toFixed(1)} ms`,
)
