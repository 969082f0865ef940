// Benchmark (printed figures, not a test): what OpenTelemetry costs a call,
// side by side in one run, idle and loaded (one busy-loop process per core,
// ../../../scripts/bench/cpu-load.sh), one call at a time and 16 in flight:
// client.listUsers({ limit: 50 }) without @opentelemetry/api, with the API and
// no SDK (goal: within 1 %), with the SDK and a BatchSpanProcessor, and with
// the SDK with every attempt span made through the hook (the design measured
// against); beside undici.request alone and with
// @opentelemetry/instrumentation-undici and the same SDK (goal: roomchat with
// the SDK ahead of it). Each side is a process of its own (its own global
// OpenTelemetry), see opentelemetry-side.cjs; the sides run in turn, in short
// interleaved blocks against one release emulator, in rotating order. Prints
// µs per call (mean and median of the blocks), calls/s, the event loop's busy
// time and the process's CPU time per call of each, and the ratios the goals
// name. First, what requiring the package and making the first client take
// with @opentelemetry/api installed and without it (fresh processes, medians).
//
//   node bench/opentelemetry.mjs     (ROOMCHAT_BENCH_N calls per side and mode, 4x that in flight, default 2000;
//                                     ROOMCHAT_BENCH_N_LOADED in the loaded round, default the same up to 1000)
//   ROOMCHAT_EMULATOR=path/to/roomchat-emulator (default: target/release/roomchat-emulator)
import { execFileSync, fork, spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { loadedLabel, withCpuLoad } from './cpu-load.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..', '..')
const target = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
const binary = process.env.ROOMCHAT_EMULATOR || path.join(target, 'release', 'roomchat-emulator')
const N = Number(process.env.ROOMCHAT_BENCH_N || 2000)
const N_LOADED = Number(process.env.ROOMCHAT_BENCH_N_LOADED || Math.min(N, 1000))
const BLOCK = 25
/** A block's calls: 4 blocks' worth with calls in flight (each block ramps up and drains). */
const blockOf = (concurrency) => BLOCK * (concurrency > 1 ? 4 : 1)
const IN_FLIGHT = 16
const SIDES = ['roomchat', 'roomchat+api', 'roomchat+sdk', 'roomchat+sdk, hook', 'undici', 'undici+sdk']

const emulator = spawn(binary, ['--port', '0', '--seed-users', '200', '--rate-limit', '1000000000/1s'], {
  stdio: ['pipe', 'pipe', 'inherit'],
})
const info = JSON.parse(await new Promise((resolve) => readline.createInterface({ input: emulator.stdout }).once('line', resolve)))
emulator.stdout.resume()

/** A side's process, ready for blocks. */
async function start(side) {
  const child = fork(path.join(here, 'opentelemetry-side.cjs'), [side], {
    cwd: path.join(here, '..'),
    env: { ...process.env, ROOMCHAT_BENCH_EMULATOR: JSON.stringify({ baseUrl: info.base_url, privateKey: info.private_key }) },
  })
  await new Promise((resolve, reject) => {
    child.once('message', resolve)
    child.once('exit', (code) => reject(new Error(`${side} exited (${code})`)))
  })
  return {
    child,
    block: (count, concurrency) =>
      new Promise((resolve) => {
        child.once('message', resolve)
        child.send({ count, concurrency })
      }),
  }
}

async function measure(sides, concurrency, n) {
  const stats = Object.fromEntries(SIDES.map((name) => [name, { ns: 0, calls: 0, busyMs: 0, cpuUs: 0, blocks: [], last: undefined }]))
  for (const name of SIDES) await sides[name].block(200, concurrency) // warm up
  let round = 0
  while (stats[SIDES[0]].calls < n) {
    const count = Math.min(blockOf(concurrency), n - stats[SIDES[0]].calls)
    for (let i = 0; i < SIDES.length; i++) {
      const name = SIDES[(i + round) % SIDES.length]
      const answer = await sides[name].block(count, concurrency)
      const s = stats[name]
      s.ns += answer.ns
      s.busyMs += answer.busyMs
      s.cpuUs += answer.cpuUs
      s.calls += count
      s.blocks.push(answer.ns / 1000 / count)
      s.last = answer
    }
    round += 1
  }
  return Object.fromEntries(
    SIDES.map((name) => {
      const s = stats[name]
      const us = s.ns / 1000 / s.calls
      const sorted = s.blocks.sort((a, b) => a - b)
      const median = sorted[Math.floor(sorted.length / 2)]
      const cpuUs = s.cpuUs / s.calls
      return [name, { us, median, perSecond: 1e6 / us, loopUs: (s.busyMs * 1000) / s.calls, cpuUs, exported: s.last.exported }]
    }),
  )
}

function table(title, round, n, results) {
  const pad = (text, width) => String(text).padStart(width)
  console.log(`\n${title}, ${round} (${n} calls per side, interleaved in blocks)`)
  console.log(
    `${'side'.padEnd(22)}${pad('µs/call', 10)}${pad('median', 10)}${pad('calls/s', 10)}${pad('loop µs/call', 14)}${pad('CPU µs/call', 13)}${pad('spans out', 11)}`,
  )
  for (const name of SIDES) {
    const r = results[name]
    console.log(
      `${name.padEnd(22)}${pad(r.us.toFixed(1), 10)}${pad(r.median.toFixed(1), 10)}${pad(r.perSecond.toFixed(0), 10)}` +
        `${pad(r.loopUs.toFixed(1), 14)}${pad(r.cpuUs.toFixed(1), 13)}${pad(r.exported.spans, 11)}`,
    )
  }
  // On the medians of the blocks' µs per call: a block that met a garbage collection or a busy neighbour weighs one block.
  const over = (a, b) => ((results[a].median / results[b].median - 1) * 100).toFixed(1)
  // The process's CPU time (event loop, pool threads, GC) per call: what the instrumentation costs, whatever the scheduling.
  const cpu = (a, b) => ((results[a].cpuUs / results[b].cpuUs - 1) * 100).toFixed(1)
  const speed = (a, b) => (results[b].median / results[a].median).toFixed(2)
  console.log(
    `${title}, ${round}: API without SDK ${over('roomchat+api', 'roomchat')} % time, ${cpu('roomchat+api', 'roomchat')} % CPU per call ` +
      `over no OpenTelemetry (goal ≤ 1 %); SDK ${over('roomchat+sdk', 'roomchat')} % time, ${cpu('roomchat+sdk', 'roomchat')} % CPU ` +
      `(every attempt through the hook: ${over('roomchat+sdk, hook', 'roomchat')} % time, ${cpu('roomchat+sdk, hook', 'roomchat')} % CPU); ` +
      `roomchat with the SDK ${speed('roomchat+sdk', 'undici+sdk')}× undici with its instrumentation's speed (goal > 1); ` +
      `undici's instrumentation costs it ${over('undici+sdk', 'undici')} % time, ${cpu('undici+sdk', 'undici')} % CPU`,
  )
}

/**
 * Milliseconds to require the package, and to make the first client, in a
 * fresh process, with @opentelemetry/api installed (`present`) or hidden as if
 * it were not (`absent`): [require, first client].
 */
function requireTime(mode) {
  const script = `
    const Module = require('node:module')
    if (process.argv[1] === 'absent') {
      const resolve = Module._resolveFilename
      Module._resolveFilename = function (request, ...rest) {
        if (request.startsWith('@opentelemetry/')) throw Object.assign(new Error('Cannot find module ' + request), { code: 'MODULE_NOT_FOUND' })
        return resolve.call(this, request, ...rest)
      }
    }
    const start = process.hrtime.bigint()
    const { Client } = require('roomchat')
    const required = process.hrtime.bigint()
    new Client({ privateKey: 'sk_test_require_time', baseUrl: 'http://127.0.0.1:1' })
    console.log(Number(required - start) / 1e6, Number(process.hrtime.bigint() - required) / 1e6)`
  return execFileSync(process.execPath, ['-e', script, mode], { cwd: path.join(here, '..'), encoding: 'utf8' }).trim().split(' ').map(Number)
}

function requireTimes(runs = 20) {
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const times = { absent: [[], []], present: [[], []] }
  for (let i = 0; i < runs; i++) {
    for (const mode of ['absent', 'present']) {
      const [required, client] = requireTime(mode)
      times[mode][0].push(required)
      times[mode][1].push(client)
    }
  }
  console.log(`require('roomchat') and the first new Client, fresh processes, medians of ${runs}:`)
  for (const [mode, label] of [['absent', 'without @opentelemetry/api'], ['present', 'with @opentelemetry/api (nothing registered)']]) {
    console.log(`  ${label.padEnd(46)} require ${median(times[mode][0]).toFixed(2)} ms, first client ${median(times[mode][1]).toFixed(2)} ms`)
  }
}

const sides = {}
try {
  requireTimes()
  for (const name of SIDES) sides[name] = await start(name)
  for (const [title, concurrency] of [
    ['one call at a time', 1],
    [`${IN_FLIGHT} calls in flight`, IN_FLIGHT],
  ]) {
    // As many blocks in flight as one at a time (the ratios are of the blocks' medians: a
    // short run's 300 calls in flight made 3 blocks, and one slow block moved the median).
    const n = (calls) => (calls * blockOf(concurrency)) / BLOCK
    table(title, 'idle', n(N), await measure(sides, concurrency, n(N)))
    table(title, loadedLabel, n(N_LOADED), await withCpuLoad(() => measure(sides, concurrency, n(N_LOADED))))
  }
} finally {
  for (const side of Object.values(sides)) side.child.disconnect()
  emulator.stdin.end()
}
