'use strict'
// Off the event loop and off libuv's pool; 64 calls at once sharing the rate
// budget; AbortSignal; worker threads; a process exits when idle.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')
const { getEventListeners } = require('node:events')
const { monitorEventLoopDelay } = require('node:perf_hooks')
const { spawn } = require('node:child_process')
const { Worker } = require('node:worker_threads')
const { startEmulator, msSince } = require('./helpers.js')
const { Client, AbortError, inFlightCalls, threadPoolStats } = require('..')

const USERS = '/consumer/api/v2/users'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// Core's CANCEL_CHECK_INTERVAL: a cancelled call lets its pool thread go within
// it; the slack is the outcome's way back to the event loop on a busy machine.
const CANCEL_CHECK_INTERVAL_MS = 50
const CANCEL_SLACK_MS = 150

async function until(what, check, timeoutMs = 2000) {
  const start = process.hrtime.bigint()
  while (!check()) {
    if (msSince(start) > timeoutMs) assert.fail(`${what}: not within ${timeoutMs} ms`)
    await sleep(5)
  }
  return msSince(start)
}

/**
 * An emulator with `seedUsers` users and a client in the steady state of a
 * server that has been up a while: the pool's threads started and 64
 * keep-alive connections open.
 */
async function warmClient(t, seedUsers) {
  const emu = await startEmulator(['--seed-users', String(seedUsers)])
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  await Promise.all(Array.from({ length: 64 }, () => client.listUsers({ limit: 1 })))
  return { emu, client }
}

test('64 calls held 100 ms by the service block neither the event loop nor libuv’s pool', async (t) => {
  const { emu, client } = await warmClient(t, 10)

  // Were the calls on libuv's pool (4 threads), every read would wait >= 100 ms
  // for them, and were they on the loop, every round would show it: a round
  // under the limits proves neither; up to 3 rounds absorb a machine busy with
  // other work.
  const rounds = []
  for (let round = 1; round <= 3; round++) {
    await emu.admin('DELETE', '/faults')
    await emu.fault({ method: 'GET', path: USERS, times: 64, action: { kind: 'delay', ms: 100 } })
    const histogram = monitorEventLoopDelay({ resolution: 1 })
    histogram.enable()
    const started = process.hrtime.bigint()
    const calls = Array.from({ length: 64 }, (_, i) => client.listUsers({ limit: 1, skip: i % 10 }))
    const readStart = process.hrtime.bigint()
    const text = await fs.promises.readFile(__filename, 'utf8')
    const readMs = msSince(readStart)
    const pages = await Promise.all(calls)
    const totalMs = msSince(started)
    histogram.disable()
    const p99 = histogram.percentile(99) / 1e6
    console.log(
      `round ${round}: fs.readFile under 64 in-flight calls: ${readMs.toFixed(2)} ms; event-loop delay p99 ${p99.toFixed(2)} ms, ` +
        `max ${(histogram.max / 1e6).toFixed(2)} ms; all 64 in ${totalMs.toFixed(0)} ms`,
    )
    assert.ok(text.includes('libuv'))
    assert.ok(totalMs >= 100)
    pages.forEach((page, i) => assert.equal(page.data[0].username, `seed-user-${(i % 10) + 1}`))
    rounds.push({ readMs, p99 })
    if (readMs < 20 && p99 < 25) break
  }
  // A loop that waited on a call would be late by ~100 ms; 25 ms leaves room for a busy
  // 2-core machine's scheduling (p99 6-8 ms measured with nothing else running).
  const best = rounds.find((r) => r.readMs < 20 && r.p99 < 25)
  assert.ok(best, `fs.promises.readFile / event-loop delay p99 in each round: ${JSON.stringify(rounds)}`)
  assert.ok(threadPoolStats().threads >= 32, JSON.stringify(threadPoolStats()))
})

test('64 concurrent calls from two clients of one key all complete, sharing the process-wide rate budget', async (t) => {
  const emu = await startEmulator(['--seed-users', '64', '--rate-limit', '40/2s'])
  t.after(() => emu.stop())
  const rateLimit = { requests: 40, windowMs: 2000 }
  const a = new Client(emu.options({ rateLimit }))
  const b = new Client(emu.options({ rateLimit }))
  const calls = Array.from({ length: 64 }, (_, i) => (i % 2 ? a : b).listUsers({ limit: 1, skip: i }))
  const pages = await Promise.all(calls)
  pages.forEach((page, i) => {
    assert.equal(page.data.length, 1)
    assert.equal(page.data[0].username, `seed-user-${i + 1}`)
  })
  const journal = await emu.journal()
  assert.equal(journal.length, 64, 'each call arrived once')
  assert.ok(journal.every((e) => e.status === 200), 'the service never had to refuse one (no 429)')
  const state = a.rateLimitState()
  assert.deepEqual(b.rateLimitState().limit, state.limit)
  assert.ok(state.used <= state.limit && state.used > 0, JSON.stringify(state))
  const first = journal[0].received_at_ms
  const last = journal[63].received_at_ms
  assert.ok(last - first >= 1900, `64 calls over a 39-per-window budget took ${last - first} ms: the budget was shared`)
})

test('outcomes that arrive together are settled over several turns of the event loop', async (t) => {
  const { client } = await warmClient(t, 64)

  const settled = []
  let seenByNextTurn
  const calls = Array.from({ length: 64 }, (_, i) =>
    client.listUsers({ limit: 50, skip: i % 15 }).then((page) => {
      if (settled.length === 0) setImmediate(() => (seenByNextTurn = settled.length))
      settled.push(i)
      return page
    }),
  )
  // Hold the loop while the 64 answers arrive (about 10 ms of work), so that
  // all of them wait in the outcome queue at once: Node hands a queue over in
  // a single callback.
  const until = Date.now() + 500
  while (Date.now() < until) {}
  const pages = await Promise.all(calls)
  await new Promise((resolve) => setImmediate(resolve))
  pages.forEach((page, i) => assert.equal(page.data[0].username, `seed-user-${(i % 15) + 1}`))
  assert.equal(settled.length, 64)
  assert.ok(
    seenByNextTurn > 0 && seenByNextTurn < 64,
    `the turn after the first settled call saw ${seenByNextTurn} of 64 settled: one turn settled them all`,
  )
})

test('AbortSignal: rejects at once, gives up the request and the rate-limit wait, leaks nothing', async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  await client.listUsers()

  await t.test('a request on the wire', async () => {
    await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'delay', ms: 3000 } })
    const controller = new AbortController()
    const call = client.listUsers({}, { signal: controller.signal })
    await sleep(50)
    assert.equal(inFlightCalls(), 1)
    const abortedAt = process.hrtime.bigint()
    controller.abort(new Error('user went away'))
    await assert.rejects(call, (error) => {
      assert.ok(error instanceof AbortError)
      assert.equal(error.name, 'AbortError')
      assert.equal(error.code, 'ABORT_ERR')
      assert.equal(error.cause.message, 'user went away')
      return true
    })
    const rejectMs = msSince(abortedAt)
    const freedMs = await until('the native call ends', () => inFlightCalls() === 0, 5000)
    console.log(`abort mid-request: rejected after ${rejectMs.toFixed(2)} ms, core let go after ${freedMs.toFixed(0)} ms`)
    assert.ok(rejectMs < 20, `rejected after ${rejectMs} ms`)
    assert.ok(freedMs < CANCEL_CHECK_INTERVAL_MS + CANCEL_SLACK_MS, `the pool thread was freed after ${freedMs.toFixed(0)} ms`)
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
    // the connection was discarded, the client still works
    assert.equal((await client.listUsers()).total, 3)
  })

  await t.test('a rate-limit wait', async () => {
    const emu2 = await startEmulator()
    t.after(() => emu2.stop())
    const limited = new Client(emu2.options({ rateLimit: { requests: 2, windowMs: 60000, whenLimited: 'wait', maxWaitMs: 120000 } }))
    await limited.listUsers() // spends the two slots (no reserve below 10 requests)
    await limited.listUsers()
    assert.equal(limited.rateLimitState().remaining, 0)
    const controller = new AbortController()
    const waiting = limited.listUsers({}, { signal: controller.signal })
    await sleep(100)
    const abortedAt = process.hrtime.bigint()
    controller.abort()
    await assert.rejects(waiting, AbortError)
    assert.ok(msSince(abortedAt) < 20)
    const freedMs = await until('the rate-limit wait ends', () => inFlightCalls() === 0, 5000)
    console.log(`abort in a rate-limit wait: core let go after ${freedMs.toFixed(0)} ms`)
    assert.ok(freedMs < CANCEL_CHECK_INTERVAL_MS + CANCEL_SLACK_MS, `the pool thread was freed after ${freedMs.toFixed(0)} ms`)
    assert.equal((await emu2.journal()).length, 2, 'the waiting call was never sent')
  })

  await t.test('already aborted: nothing is sent', async () => {
    await emu.admin('DELETE', '/journal')
    const calls = [
      client.listUsers({}, { signal: AbortSignal.abort() }),
      client.createUser({ username: 'x' }, { signal: AbortSignal.abort() }),
      client.users({}, { signal: AbortSignal.abort() }).next(),
    ]
    for (const call of calls) await assert.rejects(call, AbortError)
    assert.equal((await emu.journal()).length, 0)
  })

  await t.test('a signal that never aborts keeps no listener after its calls', async () => {
    const controller = new AbortController()
    await Promise.all(Array.from({ length: 200 }, () => client.listUsers({ limit: 1 }, { signal: controller.signal })))
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
    assert.equal(inFlightCalls(), 0)
  })

  await t.test('an async iteration', async () => {
    const controller = new AbortController()
    await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'delay', ms: 3000 } })
    const iterate = (async () => {
      const names = []
      for await (const user of client.users({ pageSize: 1 }, { signal: controller.signal })) names.push(user.username)
      return names
    })()
    await sleep(50)
    controller.abort()
    await assert.rejects(iterate, AbortError)
    await until('the native call ends', () => inFlightCalls() === 0, 1000)
  })
})

/**
 * A loopback port whose connects hang: a listening socket (backlog 0) that
 * never accepts, its one queue slot taken, so that the kernel drops every
 * further SYN (as a far host that does not answer would). Node accepts every
 * connection it listens for, hence the Python listener.
 */
async function hangingPort(t) {
  const listener = spawn('python3', ['-c', `
import socket, sys
s = socket.socket()
s.bind(('127.0.0.1', 0))
s.listen(0)
print(s.getsockname()[1], flush=True)
sys.stdin.read()
`], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => listener.once('exit', resolve))
  t.after(() => {
    listener.stdin.end()
    return exited
  })
  const port = Number(await new Promise((resolve, reject) => {
    listener.stdout.once('data', (d) => resolve(String(d).trim()))
    listener.once('error', reject)
  }))
  const filler = net.connect(port, '127.0.0.1')
  t.after(() => filler.destroy())
  await new Promise((resolve, reject) => {
    filler.once('connect', resolve)
    filler.once('error', reject)
  })
  // The queue is full: a probe's connect must not complete.
  const probe = net.connect(port, '127.0.0.1')
  const connected = await new Promise((resolve) => {
    probe.once('connect', () => resolve(true))
    probe.once('error', () => resolve(true))
    setTimeout(() => resolve(false), 300)
  })
  probe.destroy()
  assert.equal(connected, false, 'a connect to the full listener completed')
  return port
}

test('AbortSignal during a connect that hangs frees the pool thread within the cancel check interval', async (t) => {
  const port = await hangingPort(t)
  const client = new Client({ privateKey: 'sk_test_hanging_connect', baseUrl: `http://127.0.0.1:${port}`, connectTimeoutMs: 3000, maxRetries: 0 })
  const controller = new AbortController()
  const call = client.listUsers({}, { signal: controller.signal })
  await sleep(200)
  assert.equal(inFlightCalls(), 1, 'the call ended before the abort: the connect did not hang')
  const abortedAt = process.hrtime.bigint()
  controller.abort()
  await assert.rejects(call, AbortError)
  assert.ok(msSince(abortedAt) < 20)
  const freedMs = await until('the connecting call ends', () => inFlightCalls() === 0, 6000)
  console.log(`abort during a hanging connect: core let go after ${freedMs.toFixed(0)} ms (connect timeout 3000 ms)`)
  assert.ok(freedMs < CANCEL_CHECK_INTERVAL_MS + CANCEL_SLACK_MS, `the pool thread was freed after ${freedMs.toFixed(0)} ms`)
})

test('AbortSignal while a body trickles in frees the pool thread within the cancel check interval', async (t) => {
  // Headers at once, then a byte every 100 ms: the call is reading the answer.
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.write('{"items": [')
    const timer = setInterval(() => response.write(' '), 100)
    response.on('close', () => clearInterval(timer))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    return new Promise((resolve) => server.close(resolve))
  })
  const client = new Client({ privateKey: 'sk_test_trickle', baseUrl: `http://127.0.0.1:${server.address().port}`, timeoutMs: 10000, maxRetries: 0 })
  const controller = new AbortController()
  const call = client.rawRequest({ method: 'GET', path: '/trickle', auth: 'none' }, { signal: controller.signal })
  await sleep(300)
  assert.equal(inFlightCalls(), 1)
  const abortedAt = process.hrtime.bigint()
  const cpuBefore = process.cpuUsage()
  controller.abort()
  await assert.rejects(call, AbortError)
  const freedMs = await until('the reading call ends', () => inFlightCalls() === 0, 10000)
  const cpu = process.cpuUsage(cpuBefore)
  console.log(
    `abort while a body trickles in: core let go after ${freedMs.toFixed(0)} ms (timeout 10000 ms); ` +
      `process CPU meanwhile ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`,
  )
  assert.ok(freedMs < CANCEL_CHECK_INTERVAL_MS + CANCEL_SLACK_MS, `the pool thread was freed after ${freedMs.toFixed(0)} ms`)
})

test('worker threads each load the addon and make calls', async (t) => {
  const emu = await startEmulator(['--seed-users', '5'])
  t.after(() => emu.stop())
  const source = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { Client } = require(${JSON.stringify(path.resolve(__dirname, '..'))})
    const client = new Client(workerData.options)
    ;(async () => {
      const created = await client.createUser({ username: 'worker-' + workerData.n })
      const page = await client.listUsers({ limit: 200 })
      const names = []
      for await (const user of client.users({ pageSize: 2 })) names.push(user.username)
      parentPort.postMessage({ id: created.userId, total: page.total, names: names.length })
    })().catch((e) => parentPort.postMessage({ error: String(e) }))
  `
  const run = (n) =>
    new Promise((resolve, reject) => {
      const worker = new Worker(source, { eval: true, workerData: { options: emu.options(), n } })
      worker.once('message', resolve)
      worker.once('error', reject)
    })
  const results = await Promise.all([run(1), run(2), run(3), new Client(emu.options()).listUsers()])
  for (const r of results.slice(0, 3)) {
    assert.equal(r.error, undefined, r.error)
    assert.match(r.id, /^[0-9a-f]{24}$/)
    assert.ok(r.total >= 6 && r.names >= 6)
  }
  assert.equal((await new Client(emu.options()).listUsers()).total, 8)

  // A worker ended while its call is in flight: the process carries on.
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'delay', ms: 300 } })
  const doomed = new Worker(
    `const { Client } = require(${JSON.stringify(path.resolve(__dirname, '..'))});
     const { workerData, parentPort } = require('node:worker_threads');
     new Client(workerData).listUsers(); parentPort.postMessage('sent')`,
    { eval: true, workerData: emu.options() },
  )
  await new Promise((resolve) => doomed.once('message', resolve))
  await doomed.terminate()
  await sleep(400)
  assert.equal((await new Client(emu.options()).listUsers()).total, 8)
})

function runNode(script, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const started = process.hrtime.bigint()
    const killer = setTimeout(() => child.kill('SIGKILL'), 10000)
    child.on('exit', (code, signal) => {
      clearTimeout(killer)
      resolve({ code, signal, stdout, stderr, ms: msSince(started) })
    })
  })
}

test('a process exits by itself when no call is in flight, and stays up while one is', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const pkg = JSON.stringify(path.resolve(__dirname, '..'))
  const options = JSON.stringify(emu.options())
  const idle = await runNode(`const { Client } = require(${pkg}); new Client(${options}); console.log('made')`)
  assert.equal(idle.signal, null, 'killed: something kept the idle process alive')
  assert.equal(idle.code, 0, idle.stderr)
  assert.equal(idle.stdout.trim(), 'made')

  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'delay', ms: 500 } })
  const busy = await runNode(
    `const { Client } = require(${pkg}); const c = new Client(${options});
     c.listUsers().then((p) => { console.log('total', p.total); return c.listUsers() }).then(() => console.log('done'))`,
  )
  assert.equal(busy.signal, null, 'killed: the process did not exit after its calls')
  assert.equal(busy.code, 0, busy.stderr)
  assert.deepEqual(busy.stdout.trim().split('\n'), ['total 0', 'done'], 'the pending call kept the process up until it settled')
  assert.ok(busy.ms >= 500)
})

// The scheduling policy of this process's pool threads (named "roomchat"), from /proc.
const POLICY_SCRIPT = `
const fs = require('node:fs')
const policies = fs.readdirSync('/proc/self/task').flatMap((tid) => {
  if (fs.readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim() !== 'roomchat') return []
  const stat = fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8')
  return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38])] // field 41: policy
})
`

test('on Linux the pool threads run under SCHED_OTHER (normal), SCHED_BATCH only with ROOMCHAT_NODE_THREAD_POLICY=batch', { skip: process.platform !== 'linux' }, async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const pkg = JSON.stringify(path.resolve(__dirname, '..'))
  const options = JSON.stringify(emu.options())
  const script = `const { Client } = require(${pkg}); const c = new Client(${options});
    Promise.all([c.listUsers(), c.listUsers(), c.listUsers()]).then(() => { ${POLICY_SCRIPT}; console.log(JSON.stringify(policies)) })`
  const SCHED_OTHER = 0
  const SCHED_BATCH = 3
  // '' stands for unset (runNode adds to this process's environment).
  for (const [policy, expected] of [['', SCHED_OTHER], ['normal', SCHED_OTHER], ['batch', SCHED_BATCH]]) {
    const run = await runNode(script, { ROOMCHAT_NODE_THREAD_POLICY: policy })
    assert.equal(run.code, 0, run.stderr)
    const policies = JSON.parse(run.stdout.trim())
    assert.ok(policies.length >= 1, 'no pool thread found')
    assert.deepEqual(new Set(policies), new Set([expected]), `ROOMCHAT_NODE_THREAD_POLICY=${policy}`)
  }
})

// README ("Where calls run"): a thread that finished a call sleeps at once;
// ROOMCHAT_NODE_SPIN_US=n makes it spin up to n µs (1 to 1000) for the next one
// first. Either way a process whose calls are done spends no CPU on its pool.
test('a pool thread spins at most ROOMCHAT_NODE_SPIN_US for the next call: an idle process after 50 calls uses no CPU (unset, 0, 100, 1000)', async (t) => {
  const emu = await startEmulator(['--seed-users', '5'])
  t.after(() => emu.stop())
  const pkg = JSON.stringify(path.resolve(__dirname, '..'))
  const options = JSON.stringify(emu.options())
  const script = `const { Client } = require(${pkg}); const c = new Client(${options});
    (async () => {
      for (let i = 0; i < 50; i++) if ((await c.listUsers({ limit: 5 })).data.length !== 5) throw new Error('a short page')
      const cpu = process.cpuUsage()
      const wall = process.hrtime.bigint()
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const used = process.cpuUsage(cpu)
      console.log(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, wallMs: Number(process.hrtime.bigint() - wall) / 1e6 }))
    })()`
  // '' stands for unset (runNode adds to this process's environment).
  for (const spin of ['', '0', '100', '1000']) {
    const run = await runNode(script, { ROOMCHAT_NODE_SPIN_US: spin })
    assert.equal(run.code, 0, run.stderr)
    const { cpuMs, wallMs } = JSON.parse(run.stdout.trim())
    console.log(`ROOMCHAT_NODE_SPIN_US=${spin || '(unset)'}: 50 calls, then ${cpuMs.toFixed(1)} ms of CPU in ${wallMs.toFixed(0)} ms idle`)
    assert.ok(cpuMs < 50, `ROOMCHAT_NODE_SPIN_US=${spin}: ${cpuMs} ms of CPU while idle for ${wallMs} ms`)
  }
})
