// Benchmark (printed figures, not a test): roomchat against its peers as a
// user's process runs each of them. Every round starts one child process per
// client (roomchat's listUsers({ limit: 50 }), undici.request, fetch), one
// after the other in a rotating order, against one release emulator; each
// child loads only its own client, warms it up (WARM_UP calls), then times ROOMCHAT_BENCH_N
// calls, each reading every username of the page, and reports its µs per call
// and the CPU time its whole process spent per call (process.cpuUsage: the
// event loop's thread, roomchat's pool threads, V8's helpers). No client ever
// shares a process with another, so none pays for another's threads, garbage
// or JIT state. Figures: the median of the rounds, each round's ratio, and the
// median ratio (roomchat's calls/s over undici.request's). One call at a time,
// then 16 in flight; each idle, then loaded (one busy-loop process per core
// beside it, ./cpu-load.mjs).
//
//   node bench/peer.mjs                ROOMCHAT_BENCH_ROUNDS rounds (default 5) of
//                                      ROOMCHAT_BENCH_N calls per client (default 300)
//   ROOMCHAT_BENCH_MODES=1,16          which concurrencies (default both)
//   ROOMCHAT_BENCH_CLIENTS=fetch,...   which clients beside roomchat and undici.request (default all)
//   ROOMCHAT_BENCH_WARM_UP=3000        calls before the timed ones, per child
//   ROOMCHAT_EMULATOR=path/to/roomchat-emulator (default: target/release/roomchat-emulator)
//
// A child: node bench/peer.mjs --child CLIENT BASE_URL CONCURRENCY N (the
// private key in ROOMCHAT_BENCH_KEY): prints one JSON line.
import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'

// Calls each child makes before it times any: a user's server runs its HTTP
// client warm, its code optimized by V8. 100 were too few for undici (its JS
// and its wasm HTTP parser): after 100, undici.request spent 440-860 µs of CPU
// per call on a busy machine, after 3000, 100-130 µs, while roomchat went from
// 170-260 to 140-150 (issue 51, item 12); the earlier figures flattered roomchat.
// ROOMCHAT_BENCH_WARM_UP sets it.
const WARM_UP = Number(process.env.ROOMCHAT_BENCH_WARM_UP || 3000)
// roomchat with its pool configured otherwise (src/pool.rs), so that what a
// setting gives and what it costs in CPU show beside the default:
// roomchat-spin, its pool threads spinning 100 µs for the next call (off by
// default).
const VARIANTS = {
  'roomchat-spin': { ROOMCHAT_NODE_SPIN_US: '100' },
}
// ROOMCHAT_BENCH_CLIENTS=a,b,...: fewer (roomchat and undici.request always run).
const ALL_CLIENTS = ['roomchat', 'roomchat-spin', 'undici.request', 'fetch']
const CLIENTS = process.env.ROOMCHAT_BENCH_CLIENTS
  ? ALL_CLIENTS.filter((name) => ['roomchat', 'undici.request', ...process.env.ROOMCHAT_BENCH_CLIENTS.split(',')].includes(name))
  : ALL_CLIENTS

if (process.argv[2] === '--child') {
  await child(...process.argv.slice(3))
} else {
  await conduct()
}

/** One client in a process of its own: warm up, then time `n` calls, `concurrency` in flight. */
async function child(name, baseUrl, concurrency, n) {
  const key = process.env.ROOMCHAT_BENCH_KEY
  const url = `${baseUrl}/consumer/api/v2/users?auth=${encodeURIComponent(key)}&limit=50`
  let sink = 0
  const read = (page) => {
    if (page.data.length !== 50) throw new Error(`a page of ${page.data.length}`)
    for (const user of page.data) sink += user.username.length
  }
  let call
  let close = async () => {}
  if (name === 'roomchat' || name in VARIANTS) {
    const { Client } = await import('roomchat')
    const client = new Client({ privateKey: key, baseUrl, rateLimit: { requests: 1_000_000_000, windowMs: 1000 } })
    call = () => client.listUsers({ limit: 50 }).then(read)
  } else if (name === 'undici.request') {
    // As a user calls it: the global dispatcher.
    const { request } = await import('undici')
    call = () => request(url).then((r) => r.body.json()).then(read)
    close = async () => (await import('undici')).getGlobalDispatcher().close()
  } else if (name === 'fetch') {
    call = () => fetch(url).then((r) => r.json()).then(read)
  } else {
    throw new Error(`unknown client ${name}`)
  }
  const run = async (count) => {
    let left = count
    const lane = async () => {
      while (left > 0) {
        left -= 1
        await call()
      }
    }
    await Promise.all(Array.from({ length: Math.min(Number(concurrency), count) }, lane))
  }
  await run(WARM_UP)
  const cpu = process.cpuUsage()
  const start = process.hrtime.bigint()
  await run(Number(n))
  const ns = Number(process.hrtime.bigint() - start)
  const used = process.cpuUsage(cpu)
  if (sink === 0) throw new Error('nothing was read')
  console.log(JSON.stringify({ us: ns / 1000 / n, cpuUs: (used.user + used.system) / n }))
  await close()
}

async function conduct() {
  const { loadedLabel, withCpuLoad } = await import('./cpu-load.mjs')
  const here = path.dirname(fileURLToPath(import.meta.url))
  const root = path.resolve(here, '..', '..', '..')
  const target = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
  const binary = process.env.ROOMCHAT_EMULATOR || path.join(target, 'release', 'roomchat-emulator')
  const rounds = Number(process.env.ROOMCHAT_BENCH_ROUNDS || 5)
  const n = Number(process.env.ROOMCHAT_BENCH_N || 300)
  const modes = (process.env.ROOMCHAT_BENCH_MODES || '1,16').split(',').map(Number)

  const emulator = spawn(binary, ['--port', '0', '--seed-users', '200', '--rate-limit', '1000000000/1s'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const info = JSON.parse(await new Promise((resolve) => readline.createInterface({ input: emulator.stdout }).once('line', resolve)))
  emulator.stdout.resume()

  const once = (name, concurrency) =>
    new Promise((resolve, reject) => {
      const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', name, info.base_url, String(concurrency), String(n)], {
        env: {
          ...process.env,
          ROOMCHAT_BENCH_KEY: info.private_key,
          ...(VARIANTS[name] ?? {}),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      let out = ''
      proc.stdout.on('data', (chunk) => (out += chunk))
      proc.once('error', reject)
      proc.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`${name} exited ${code}`))))
    })

  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b)
    const mid = sorted.length >> 1
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  }

  const measure = async (concurrency) => {
    const runs = Object.fromEntries(CLIENTS.map((name) => [name, []]))
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < CLIENTS.length; i++) {
        const name = CLIENTS[(i + round) % CLIENTS.length]
        runs[name].push(await once(name, concurrency))
      }
    }
    return runs
  }

  const summary = []
  const report = (title, label, runs) => {
    const pad = (text, width) => String(text).padStart(width)
    console.log(
      `\n${title}, ${label} (${rounds} rounds of ${n} calls per client, each client in its own process; ` +
        `load average ${os.loadavg()[0].toFixed(1)} on ${os.availableParallelism()} CPUs)`,
    )
    console.log(`${'client'.padEnd(16)}${pad('µs/call', 10)}${pad('calls/s', 10)}${pad('CPU µs/call', 13)}${pad('roomchat ×', 12)}   µs/call per round`)
    const us = (name) => median(runs[name].map((r) => r.us))
    for (const name of CLIENTS) {
      const cpu = median(runs[name].map((r) => r.cpuUs))
      console.log(
        `${name.padEnd(16)}${pad(us(name).toFixed(1), 10)}${pad((1e6 / us(name)).toFixed(0), 10)}${pad(cpu.toFixed(1), 13)}` +
          `${pad((us(name) / us('roomchat')).toFixed(2), 12)}   ${runs[name].map((r) => r.us.toFixed(0)).join(' ')}`,
      )
    }
    const ratios = runs.roomchat.map((r, i) => runs['undici.request'][i].us / r.us)
    const line =
      `peer benchmark, ${title}, ${label}: roomchat ${us('roomchat').toFixed(1)} µs/call (CPU ${median(runs.roomchat.map((r) => r.cpuUs)).toFixed(1)} µs), ` +
      `undici.request ${us('undici.request').toFixed(1)} µs/call (CPU ${median(runs['undici.request'].map((r) => r.cpuUs)).toFixed(1)} µs): ` +
      `${median(ratios).toFixed(2)}× undici's speed (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})`
    summary.push(line)
  }

  try {
    for (const concurrency of modes) {
      const title = concurrency === 1 ? 'one call at a time' : `${concurrency} calls in flight`
      report(title, 'idle', await measure(concurrency))
      report(title, loadedLabel, await withCpuLoad(() => measure(concurrency)))
    }
    console.log()
    for (const line of summary) console.log(line)
  } finally {
    emulator.stdin.end()
  }
}
