// Benchmark (printed figures, not a test): client.listUsers({ limit: 50 }) vs
// fetch vs undici.request vs http.request with a keep-alive agent, against
// one release emulator, interleaved in short blocks, each reading every
// username of the page; one call at a time, then 16 in flight. Prints µs per
// call, calls/s, ratios, the event-loop delay p99 of each, the event loop's
// busy time per call (performance.eventLoopUtilization), the time per call
// the loop stood still for garbage collections that started in that client's
// blocks, and the CPU time its process spent per call (process.cpuUsage: the
// loop's thread, roomchat's pool threads, V8's helpers). Each mode twice: on
// the machine as it is (idle), then loaded: one busy-loop process per core
// beside it (../../../scripts/bench/cpu-load.sh), as on a production server,
// every client under the same load. Last, one line per round: one call at a
// time, roomchat's µs per call beside undici.request's (the figure a
// regression of the call path shows in first).
//
// Each client runs in a process of its own (`--side NAME`), which loads only
// that client and times its own blocks; this process only conducts them over
// IPC, one block at a time, and is idle while a block runs. Until issue 51
// (item 12) every client shared this process: undici.request then measured
// 198 µs per call where an independent peer benchmark, undici alone in its
// process, measured 96-114 µs (roomchat's figure agreed in both, 128 against
// 131-137 µs). Sharing a process gives a client the others' garbage to
// collect, their JIT state (the shared `read` and the block's call site see
// every client's page shapes) and roomchat's pool threads beside its event
// loop (which of them cost undici was not isolated: the machine of that
// session was too busy to tell 20% apart); one process per client removes
// all of them at once, as a user's process runs its one HTTP client.
// bench/peer.mjs measures the same way with a fresh process per client and
// round.
//
// The µs per call are timed with nothing else on the event loop, as a user's
// process runs its calls; the loop's delay is measured in a second block of the
// same calls with monitorEventLoopDelay on, whose time is printed apart
// ("µs/call monitored"). Its 1 ms timer wakes the loop every millisecond, and
// that made roomchat faster than a user's process sees it (a result coming back
// from a pool thread found the loop's thread awake) while undici's calls hardly
// moved (issue 44, item 24).
//
//   node bench/list-users.mjs            (ROOMCHAT_BENCH_N calls per side and mode, default 2000;
//                                         ROOMCHAT_BENCH_N_LOADED in the loaded round, default the same up to 1000)
//   ROOMCHAT_BENCH_WARM_UP=3000          (calls each client makes before the first timed ones)
//   ROOMCHAT_NODE_THREAD_POLICY=...      (the pool's thread policy, see src/pool.rs; printed)
//   ROOMCHAT_NODE_SPIN_US=...            (the pool threads' spin, see src/pool.rs)
//   ROOMCHAT_EMULATOR=path/to/roomchat-emulator (default: target/release/roomchat-emulator)
import { spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'

const BLOCK = 25
const WARM_UP = Number(process.env.ROOMCHAT_BENCH_WARM_UP || 3000)
const IN_FLIGHT = 16
const NAMES = ['roomchat', 'fetch', 'undici.request', 'http.request']

if (process.argv[2] === '--side') await side(process.argv[3])
else await conduct()

/**
 * One client in a process of its own (`--side NAME`; the emulator's base URL and
 * key in ROOMCHAT_BENCH_BASE_URL and ROOMCHAT_BENCH_KEY), run block by block as
 * the conductor asks over IPC: it loads only its own client, and times itself.
 */
async function side(name) {
  const { createHistogram, monitorEventLoopDelay, performance, PerformanceObserver } = await import('node:perf_hooks')
  const baseUrl = process.env.ROOMCHAT_BENCH_BASE_URL
  const key = process.env.ROOMCHAT_BENCH_KEY
  const url = `${baseUrl}/consumer/api/v2/users?auth=${encodeURIComponent(key)}&limit=50`
  let sink = 0
  const read = (page) => {
    if (page.data.length !== 50) throw new Error(`a page of ${page.data.length}`)
    for (const user of page.data) sink += user.username.length
  }
  let call
  let close = async () => {}
  if (name === 'roomchat') {
    const { Client } = await import('roomchat')
    const client = new Client({ privateKey: key, baseUrl, rateLimit: { requests: 1_000_000_000, windowMs: 1000 } })
    call = () => client.listUsers({ limit: 50 }).then(read)
  } else if (name === 'fetch') {
    call = () => fetch(url).then((r) => r.json()).then(read)
  } else if (name === 'undici.request') {
    const { request, Agent } = await import('undici')
    const dispatcher = new Agent({ connections: 64 })
    call = () => request(url, { dispatcher }).then((r) => r.body.json()).then(read)
    close = () => dispatcher.close()
  } else if (name === 'http.request') {
    const http = await import('node:http')
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
    call = () =>
      new Promise((resolve, reject) => {
        http
          .get(url, { agent }, (res) => {
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
      })
    close = async () => agent.destroy()
  } else {
    throw new Error(`unknown client ${name}`)
  }

  const run = async (count, concurrency) => {
    let left = count
    const lane = async () => {
      while (left > 0) {
        left -= 1
        await call()
      }
    }
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane))
  }

  // Garbage collections (each one stops the event loop) that started in a timed block.
  const collections = []
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push(entry)
  }).observe({ entryTypes: ['gc'] })

  /**
   * Adds the samples of one block's event-loop-delay monitor to the histogram
   * (a monitor cannot be paused and resumed without counting the pause as one
   * long delay, and cannot be merged directly): its `count` samples, spread
   * over its percentile distribution.
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

  let s
  const reset = () => {
    s = { ns: 0n, calls: 0, busyMs: 0, cpuUs: 0, blocks: [], loop: createHistogram(), monitoredNs: 0n }
  }
  reset()
  const answers = {
    async warm({ count, concurrency }) {
      await run(count, concurrency)
    },
    async block({ count, concurrency }) {
      // Timed as a user's process runs the calls: nothing else on the event loop.
      const elu = performance.eventLoopUtilization()
      const cpu = process.cpuUsage()
      const from = performance.now()
      const start = process.hrtime.bigint()
      await run(count, concurrency)
      s.ns += process.hrtime.bigint() - start
      const used = process.cpuUsage(cpu)
      s.blocks.push([from, performance.now()])
      s.cpuUs += used.user + used.system
      s.busyMs += performance.eventLoopUtilization(elu).active
      s.calls += count
      // The loop's delay, in a block of its own: the monitor's 1 ms timer wakes the
      // loop every millisecond, which a user's process does not, and which makes
      // roomchat's calls faster than a user sees them (see the header). A fresh
      // monitor per block (one re-enabled would count the pause as a delay).
      const loop = monitorEventLoopDelay({ resolution: 1 })
      loop.enable()
      const monitored = process.hrtime.bigint()
      await run(count, concurrency)
      s.monitoredNs += process.hrtime.bigint() - monitored
      loop.disable()
      merge(s.loop, loop)
    },
    async results() {
      await new Promise((resolve) => setImmediate(resolve)) // the observer's last entries
      const gcMs = collections
        .filter((gc) => s.blocks.some(([from, to]) => gc.startTime >= from && gc.startTime < to))
        .reduce((sum, gc) => sum + gc.duration, 0)
      collections.length = 0
      const us = Number(s.ns) / 1000 / s.calls
      const out = {
        us,
        perSecond: 1e6 / us,
        cpuUs: s.cpuUs / s.calls,
        monitoredUs: Number(s.monitoredNs) / 1000 / s.calls,
        p99: s.loop.percentile(99) / 1e6,
        busyUs: (s.busyMs * 1000) / s.calls,
        gcUs: (gcMs * 1000) / s.calls,
      }
      reset()
      return out
    },
    async end() {
      if (sink === 0) throw new Error('nothing was read')
      await close()
    },
  }
  process.on('message', async ({ op, ...args }) => {
    try {
      process.send({ ok: (await answers[op](args)) ?? null })
    } catch (error) {
      process.send({ error: String(error?.stack ?? error) })
    }
    if (op === 'end') process.disconnect()
  })
}

async function conduct() {
  const { loadedLabel, withCpuLoad } = await import('./cpu-load.mjs')
  const here = path.dirname(fileURLToPath(import.meta.url))
  const root = path.resolve(here, '..', '..', '..')
  const target = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
  const binary = process.env.ROOMCHAT_EMULATOR || path.join(target, 'release', 'roomchat-emulator')
  const N = Number(process.env.ROOMCHAT_BENCH_N || 2000)
  const N_LOADED = Number(process.env.ROOMCHAT_BENCH_N_LOADED || Math.min(N, 1000))
  const POLICY = process.env.ROOMCHAT_NODE_THREAD_POLICY || 'default (normal)'

  const emulator = spawn(binary, ['--port', '0', '--seed-users', '200', '--rate-limit', '1000000000/1s'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const info = JSON.parse(await new Promise((resolve) => readline.createInterface({ input: emulator.stdout }).once('line', resolve)))
  emulator.stdout.resume()

  // One process per client, asked one request at a time over IPC.
  const sides = {}
  for (const name of NAMES) {
    const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--side', name], {
      env: { ...process.env, ROOMCHAT_BENCH_BASE_URL: info.base_url, ROOMCHAT_BENCH_KEY: info.private_key },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    sides[name] = {
      proc,
      exited,
      ask: (op, args = {}) =>
        new Promise((resolve, reject) => {
          const onExit = (code) => reject(new Error(`${name}'s process exited (${code})`))
          proc.once('exit', onExit)
          proc.once('message', (answer) => {
            proc.off('exit', onExit)
            if (answer.error !== undefined) reject(new Error(`${name}: ${answer.error}`))
            else resolve(answer.ok)
          })
          proc.send({ op, ...args })
        }),
    }
  }

  let warmed = false
  async function measure(concurrency, N) {
    // Warm up: connections open, code paths hot. A user's server runs its client
    // warm, its code optimized by V8: the first time, WARM_UP calls (after 200,
    // undici.request still spent 2-4x the CPU per call it spends warm, issue 51
    // item 12); then each process is warm already.
    for (const name of NAMES) await sides[name].ask('warm', { count: warmed ? 200 : WARM_UP, concurrency })
    warmed = true
    let round = 0
    let done = 0
    while (done < N) {
      const count = Math.min(BLOCK * (concurrency > 1 ? 4 : 1), N - done)
      // rotate who goes first, so no side always follows the same one
      for (let i = 0; i < NAMES.length; i++) {
        await sides[NAMES[(i + round) % NAMES.length]].ask('block', { count, concurrency })
      }
      done += count
      round += 1
    }
    const results = {}
    for (const name of NAMES) results[name] = await sides[name].ask('results')
    return results
  }

  function table(title, round, N, results) {
    const pad = (text, n) => String(text).padStart(n)
    console.log(`\n${title}, ${round} (${N} calls per client, each in its own process, interleaved in blocks; thread policy ${POLICY})`)
    console.log(
      `${'client'.padEnd(16)}${pad('µs/call', 10)}${pad('calls/s', 10)}${pad('loop p99 ms', 13)}${pad('loop µs/call', 14)}${pad('GC µs/call', 12)}${pad('roomchat ×', 12)}` +
        `${pad('µs/call monitored', 19)}${pad('CPU µs/call', 13)}`,
    )
    for (const name of NAMES) {
      const r = results[name]
      const ratio = results.roomchat.perSecond / r.perSecond
      console.log(
        `${name.padEnd(16)}${pad(r.us.toFixed(1), 10)}${pad(r.perSecond.toFixed(0), 10)}${pad(r.p99.toFixed(2), 13)}` +
          `${pad(r.busyUs.toFixed(1), 14)}${pad(r.gcUs.toFixed(1), 12)}${pad(ratio.toFixed(2), 12)}${pad(r.monitoredUs.toFixed(1), 19)}` +
          `${pad(r.cpuUs.toFixed(1), 13)}`,
      )
    }
    const vs = (other) => (results.roomchat.perSecond / results[other].perSecond).toFixed(2)
    console.log(
      `${round}: roomchat calls/s: ${vs('fetch')}× fetch, ${vs('undici.request')}× undici.request, ${vs('http.request')}× http.request; ` +
        `loop p99 ${results.roomchat.p99.toFixed(2)} ms vs ${Math.min(...NAMES.slice(1).map((n) => results[n].p99)).toFixed(2)} ms (best other)`,
    )
  }

  /**
   * The figure a regression of the one-at-a-time path shows in: roomchat's µs per
   * call beside undici.request's, idle and loaded, on one line each, with the CPU
   * time each process spent per call.
   */
  function oneAtATime(round, results) {
    const ours = results.roomchat
    const theirs = results['undici.request']
    const ratio = theirs.us / ours.us
    const monitored = theirs.monitoredUs / ours.monitoredUs
    console.log(
      `one call at a time, ${round}: roomchat ${ours.us.toFixed(1)} µs/call (CPU ${ours.cpuUs.toFixed(1)} µs), ` +
        `undici.request ${theirs.us.toFixed(1)} µs/call (CPU ${theirs.cpuUs.toFixed(1)} µs): ` +
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
    for (const name of NAMES) await sides[name].ask('end')
  } finally {
    for (const { proc } of Object.values(sides)) if (proc.connected) proc.disconnect()
    await Promise.all(Object.values(sides).map(({ exited }) => exited))
    emulator.stdin.end()
  }
}
