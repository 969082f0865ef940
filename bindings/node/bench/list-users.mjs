// Benchmark (printed figures, not a test): client.listUsers({ limit: 50 }) vs
// fetch vs undici.request vs http.request with a keep-alive agent, against
// one release emulator, interleaved in short blocks, each reading every
// username of the page; one call at a time, then 16 in flight. Prints µs per
// call, calls/s, ratios, the event-loop delay p99 of each, the event loop's
// busy time per call (performance.eventLoopUtilization), and the time per call
// the loop stood still for garbage collections that started in that client's
// blocks. Each mode twice: on the machine as it is (idle), then loaded: one
// busy-loop process per core beside it (../../../scripts/bench/cpu-load.sh),
// as on a production server, every client under the same load. Last, one line
// per round: one call at a time, roomchat's µs per call beside undici.request's
// (the figure a regression of the call path shows in first).
//
// The µs per call are timed with nothing else on the event loop, as a user's
// process runs its calls; the loop's delay is measured in a second block of the
// same calls with monitorEventLoopDelay on, whose time is printed apart
// ("µs/call monitored"). Its 1 ms timer wakes the loop every millisecond, and
// that made roomchat faster than a user's process sees it (a result coming back
// from a pool thread found the loop's thread awake) while undici's calls hardly
// moved: this benchmark said 1.15x undici.request's calls/s idle and 1.22x
// loaded with the monitor on, where an independent peer benchmark without one
// measured 0.88-1.03x (issue 44, item 24); timed apart, 1.03x and 1.07x (with
// the monitor, in the same run, 1.08x and 1.22x). The second block is not faster
// for being second: without the monitor it took what the first did (roomchat
// 459 against 480 µs idle, 962 against 960 loaded).
//
//   node bench/list-users.mjs            (ROOMCHAT_BENCH_N calls per side and mode, default 2000;
//                                         ROOMCHAT_BENCH_N_LOADED in the loaded round, default the same up to 1000)
//   ROOMCHAT_NODE_THREAD_POLICY=...      (the pool's thread policy, see src/pool.rs; printed)
//   ROOMCHAT_EMULATOR=path/to/roomchat-emulator (default: target/release/roomchat-emulator)
import { spawn } from 'node:child_process'
import http from 'node:http'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { createHistogram, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks'
import { request as undiciRequest, Agent as UndiciAgent } from 'undici'
import { Client } from 'roomchat'
import { loadedLabel, withCpuLoad } from './cpu-load.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..', '..')
const target = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
const binary = process.env.ROOMCHAT_EMULATOR || path.join(target, 'release', 'roomchat-emulator')
const N = Number(process.env.ROOMCHAT_BENCH_N || 2000)
const N_LOADED = Number(process.env.ROOMCHAT_BENCH_N_LOADED || Math.min(N, 1000))
const POLICY = process.env.ROOMCHAT_NODE_THREAD_POLICY || 'default (normal)'
const BLOCK = 25
const IN_FLIGHT = 16

const emulator = spawn(binary, ['--port', '0', '--seed-users', '200', '--rate-limit', '1000000000/1s'], {
  stdio: ['pipe', 'pipe', 'inherit'],
})
const info = JSON.parse(await new Promise((resolve) => readline.createInterface({ input: emulator.stdout }).once('line', resolve)))
emulator.stdout.resume()

const url = `${info.base_url}/consumer/api/v2/users?auth=${encodeURIComponent(info.private_key)}&limit=50`
const client = new Client({
  privateKey: info.private_key,
  baseUrl: info.base_url,
  rateLimit: { requests: 1_000_000_000, windowMs: 1000 },
})
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 })
const undiciDispatcher = new UndiciAgent({ connections: 64 })

let sink = 0
function read(page) {
  if (page.data.length !== 50) throw new Error(`a page of ${page.data.length}`)
  for (const user of page.data) sink += user.username.length
}

const sides = {
  roomchat: () => client.listUsers({ limit: 50 }).then(read),
  fetch: () => fetch(url).then((r) => r.json()).then(read),
  'undici.request': () => undiciRequest(url, { dispatcher: undiciDispatcher }).then((r) => r.body.json()).then(read),
  'http.request': () =>
    new Promise((resolve, reject) => {
      http
        .get(url, { agent: keepAlive }, (res) => {
          const chunks = []
          res.on('data', (c) => chunks.push(c))
          res.on('end', () => {
            try {
              read(JSON.parse(Buffer.concat(chunks).toString('utf8')))
              resolve()
            } catch (e) {
              reject(e)
            }
          })
          res.on('error', reject)
        })
        .on('error', reject)
    }),
}
const names = Object.keys(sides)

/**
 * Adds the samples of one block's event-loop-delay monitor to a side's
 * histogram (a monitor cannot be paused and resumed without counting the pause
 * as one long delay, and cannot be merged directly): its `count` samples,
 * spread over its percentile distribution.
 */
function merge(into, loop) {
  const count = loop.count
  if (!count) return
  const points = [...loop.percentiles].sort((a, b) => a[0] - b[0])
  let j = 0
  for (let i = 0; i < count; i++) {
    const q = ((i + 0.5) / count) * 100
    while (j < points.length - 1 && points[j][0] < q) j++
    into.record(Math.max(1, points[j][1]))
  }
}

// Garbage collections (each one stops the event loop), charged to the side
// whose block was running when they started.
const collections = []
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collections.push(entry)
}).observe({ entryTypes: ['gc'] })
const gcWait = () => new Promise((resolve) => setImmediate(resolve))

async function block(call, count, concurrency) {
  let left = count
  const lane = async () => {
    while (left > 0) {
      left -= 1
      await call()
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane))
}

async function measure(concurrency, N) {
  const stats = Object.fromEntries(
    names.map((name) => [name, { ns: 0n, calls: 0, busyMs: 0, loop: createHistogram(), blocks: [], monitoredNs: 0n }]),
  )
  // warm up: connections open, code paths hot
  for (const name of names) await block(sides[name], 200, concurrency)
  let round = 0
  while (stats[names[0]].calls < N) {
    const count = Math.min(BLOCK * (concurrency > 1 ? 4 : 1), N - stats[names[0]].calls)
    // rotate who goes first, so no side always follows the same one
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]
      const s = stats[name]
      // Timed as a user's process runs the calls: nothing else on the event loop.
      const elu = performance.eventLoopUtilization()
      const start = process.hrtime.bigint()
      const from = performance.now()
      await block(sides[name], count, concurrency)
      s.ns += process.hrtime.bigint() - start
      s.blocks.push([from, performance.now()])
      s.busyMs += performance.eventLoopUtilization(elu).active
      s.calls += count
      // The loop's delay, in a block of its own: the monitor's 1 ms timer wakes the
      // loop every millisecond, which a user's process does not, and which makes
      // roomchat's calls faster than a user sees them (see the header). A fresh
      // monitor per block (one re-enabled would count the pause as a delay), merged per side.
      const loop = monitorEventLoopDelay({ resolution: 1 })
      loop.enable()
      const monitored = process.hrtime.bigint()
      await block(sides[name], count, concurrency)
      s.monitoredNs += process.hrtime.bigint() - monitored
      loop.disable()
      merge(s.loop, loop)
    }
    round += 1
  }
  await gcWait() // the observer's last entries
  return Object.fromEntries(
    names.map((name) => {
      const s = stats[name]
      const us = Number(s.ns) / 1000 / s.calls
      const gcMs = collections
        .filter((gc) => s.blocks.some(([from, to]) => gc.startTime >= from && gc.startTime < to))
        .reduce((sum, gc) => sum + gc.duration, 0)
      return [
        name,
        {
          us,
          perSecond: 1e6 / us,
          monitoredUs: Number(s.monitoredNs) / 1000 / s.calls,
          p99: s.loop.percentile(99) / 1e6,
          busyUs: (s.busyMs * 1000) / s.calls,
          gcUs: (gcMs * 1000) / s.calls,
        },
      ]
    }),
  )
}

function table(title, round, N, results) {
  const pad = (text, n) => String(text).padStart(n)
  console.log(`\n${title}, ${round} (${N} calls per client, interleaved in blocks; thread policy ${POLICY})`)
  console.log(
    `${'client'.padEnd(16)}${pad('µs/call', 10)}${pad('calls/s', 10)}${pad('loop p99 ms', 13)}${pad('loop µs/call', 14)}${pad('GC µs/call', 12)}${pad('roomchat ×', 12)}` +
      `${pad('µs/call monitored', 19)}`,
  )
  for (const name of names) {
    const r = results[name]
    const ratio = results.roomchat.perSecond / r.perSecond
    console.log(
      `${name.padEnd(16)}${pad(r.us.toFixed(1), 10)}${pad(r.perSecond.toFixed(0), 10)}${pad(r.p99.toFixed(2), 13)}` +
        `${pad(r.busyUs.toFixed(1), 14)}${pad(r.gcUs.toFixed(1), 12)}${pad(ratio.toFixed(2), 12)}${pad(r.monitoredUs.toFixed(1), 19)}`,
    )
  }
  const vs = (other) => (results.roomchat.perSecond / results[other].perSecond).toFixed(2)
  console.log(
    `${round}: roomchat calls/s: ${vs('fetch')}× fetch, ${vs('undici.request')}× undici.request, ${vs('http.request')}× http.request; ` +
      `loop p99 ${results.roomchat.p99.toFixed(2)} ms vs ${Math.min(...names.slice(1).map((n) => results[n].p99)).toFixed(2)} ms (best other)`,
  )
}

/**
 * The figure a regression of the one-at-a-time path shows in: roomchat's µs per
 * call beside undici.request's, idle and loaded, on one line each.
 */
function oneAtATime(round, results) {
  const ours = results.roomchat.us
  const theirs = results['undici.request'].us
  const ratio = theirs / ours
  const monitored = results['undici.request'].monitoredUs / results.roomchat.monitoredUs
  console.log(
    `one call at a time, ${round}: roomchat ${ours.toFixed(1)} µs/call, undici.request ${theirs.toFixed(1)} µs/call: ` +
      `${ratio.toFixed(2)}× undici's speed${ratio < 1 ? ' (BEHIND undici: a regression of the one-at-a-time path?)' : ''}` +
      ` (with a 1 ms event-loop monitor running: ${monitored.toFixed(2)}×)`,
  )
}

try {
  const summary = []
  for (const [title, concurrency] of [
    ['one call at a time', 1],
    [`${IN_FLIGHT} calls in flight`, IN_FLIGHT],
  ]) {
    const idle = await measure(concurrency, N)
    table(title, 'idle', N, idle)
    const loaded = await withCpuLoad(() => measure(concurrency, N_LOADED))
    table(title, loadedLabel, N_LOADED, loaded)
    if (concurrency === 1) summary.push(['idle', idle], [loadedLabel, loaded])
  }
  console.log()
  for (const [round, results] of summary) oneAtATime(round, results)
  if (sink === 0) throw new Error('nothing was read')
} finally {
  keepAlive.destroy()
  await undiciDispatcher.close()
  emulator.stdin.end()
}
