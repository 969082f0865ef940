'use strict'
// `roomchat/testing` (issue 22): every method of the handle against a real
// emulator process, several emulators at once (in one process, and in files run
// by `node --test` with concurrency), the life cycle (nothing left behind:
// process, port, CA file, even when the test forgets to stop it), and the
// README's example as a user's test run. The emulator is $ROOMCHAT_EMULATOR
// (run-tests.sh sets it; otherwise the workspace's debug build).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { emulatorBinary } = require('./helpers.js')

process.env.ROOMCHAT_EMULATOR = emulatorBinary
const { startEmulator, findEmulator, Emulator, EmulatorError, EmulatorNotFoundError, JournalEntry } = require('roomchat/testing')
const { Client, RoomchatError } = require('..')

const here = path.resolve(__dirname, '..')
const example = path.join(here, 'examples', 'user-signup.test.mjs')
const headersExample = path.join(here, 'examples', 'journal-headers.test.mjs')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether process `pid` exists and is not a zombie. */
function alive(pid) {
  let stat
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return false
  }
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
}

async function waitGone(pid, withinMs = 10_000) {
  const started = Date.now()
  while (alive(pid)) {
    if (Date.now() - started > withinMs) assert.fail(`emulator ${pid} still running after ${withinMs} ms`)
    await sleep(10)
  }
  return Date.now() - started
}

function refused(baseUrl) {
  const { hostname, port } = new URL(baseUrl)
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) })
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(true))
  })
}

function caFiles() {
  return new Set(fs.readdirSync(os.tmpdir()).filter((name) => /^roomchat-emulator-ca-.*\.pem$/.test(name)))
}

/** A folder outside the repository whose node_modules has this package as `roomchat`. */
function project() {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'roomchat-testing-'))
  fs.mkdirSync(path.join(folder, 'node_modules'))
  fs.symlinkSync(here, path.join(folder, 'node_modules', 'roomchat'), 'dir')
  return folder
}

/** Runs `node args` in `cwd`; resolves to its exit code and output. */
function node(args, cwd, env = process.env) {
  // Without the runner's marker, a child `node --test` runs its files as a user's would.
  const { NODE_TEST_CONTEXT: _, ...own } = env
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, env: own, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('close', (code) => resolve({ code, output }))
  })
}

test.describe('every method against the emulator', () => {
  let emu
  test.before(async () => {
    emu = await startEmulator()
  })
  test.after(() => emu.stop())
  test.beforeEach(() => emu.reset())

  test('its addresses, keys of its own, and a client of it', async () => {
    assert.ok(emu instanceof Emulator)
    assert.match(emu.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.equal(emu.chatUrl, `${emu.baseUrl}/chat`)
    assert.equal(emu.adminUrl, `${emu.baseUrl}/_emulator`)
    assert.match(emu.privateKey, /^sk_test_emulator_[0-9a-f]{16}$/)
    assert.match(emu.publicKey, /^pk_test_emulator_[0-9a-f]{16}$/)
    assert.equal(emu.caFile, undefined)
    assert.ok(emu.running && alive(emu.pid))
    const client = emu.client()
    assert.ok(client instanceof Client)
    assert.equal((await client.listUsers()).total, 0)
  })

  test('seedUsers and users', async () => {
    assert.equal(await emu.seedUsers(3), 3)
    assert.equal(await emu.seedUsers(2), 5)
    const client = emu.client()
    const ann = await client.createUser({ username: 'ann', isModerator: true, chatRoom: 'support', uniqueUserIdentifier: 'crm-1' })
    await client.deactivateUser({ userId: ann.userId })
    const users = await emu.users()
    assert.deepEqual(
      users.map((u) => u.username),
      ['seed-user-1', 'seed-user-2', 'seed-user-3', 'seed-user-4', 'seed-user-5', 'ann'],
    )
    const last = users.at(-1)
    assert.deepEqual(
      [last.userId, last.active, last.isModerator, last.chatRoom, last.uniqueUserIdentifier],
      [ann.userId, false, true, 'support', 'crm-1'],
    )
    assert.ok(users[0].active && users[0].created.endsWith('Z'))
    await assert.rejects(emu.seedUsers(-1), RangeError)
  })

  test('createRoom and addConversation', async () => {
    const room = await emu.createRoom({ roomId: 'support', name: 'Support', enableChannels: true })
    assert.equal(room.roomId, 'support')
    assert.equal(room.enableChannels, true)
    const madeUp = await emu.createRoom()
    assert.equal(madeUp.name, 'General')
    const conversation = await emu.addConversation('support', [
      ['ann', 'hello'],
      { messages: 'hi ann', user: { username: 'bob' } },
    ])
    assert.equal(await emu.addConversation('support', [['ann', 'still there?']], { conversationId: conversation }), conversation)
    const client = emu.client()
    const messages = await client.conversationMessages({ roomId: 'support', conversationId: conversation })
    assert.deepEqual(
      messages.map((m) => [m.text, m.user.username]),
      [
        ['hello', 'ann'],
        ['hi ann', 'bob'],
        ['still there?', 'ann'],
      ],
    )
    await assert.rejects(emu.addConversation('nowhere', [['ann', 'hi']]), (error) => error instanceof EmulatorError && /no room nowhere/.test(error.message))
  })

  test('createBot, then a generated operation on it', async () => {
    const bot = await emu.createBot({ name: 'kit-helper', webhookURL: 'https://hooks.example/kit' })
    assert.match(bot._id, /^[0-9a-f]{24}$/)
    assert.equal(bot.trigger, 'mention')
    const answer = await emu.client().updateBot(bot._id, { enabled: false })
    assert.equal(answer.bot.id, bot._id)
    assert.equal(answer.bot.enabled, false)
    await assert.rejects(emu.createBot({ name: 'no-webhook' }), (error) => error instanceof EmulatorError && /webhookURL/.test(error.message))
  })

  test('failNext answers instead, and the journal shows it', async () => {
    await emu.failNext({ path: '/consumer/api/v1/user', status: 429, retryAfter: 1 })
    const started = Date.now()
    const user = await emu.client().createUser({ username: 'ann' })
    assert.ok(Date.now() - started >= 1000, 'the client waited out Retry-After')
    const entries = await emu.journal()
    assert.ok(entries.every((e) => e instanceof JournalEntry))
    assert.deepEqual(
      entries.map((e) => [e.method, e.path, e.status]),
      [
        ['POST', '/consumer/api/v1/user', 429],
        ['POST', '/consumer/api/v1/user', 200],
      ],
    )
    assert.equal(entries[1].json().username, 'ann')
    assert.ok(entries[1].receivedAt - entries[0].receivedAt >= 1000)
    assert.equal(entries[0].params.auth, 'REDACTED')
    assert.ok(entries[0].userAgent.startsWith('roomchat'))
    assert.ok(!JSON.stringify(entries).includes(emu.privateKey), 'the key is nowhere in the journal')
    assert.deepEqual((await emu.users()).map((u) => u.userId), [user.userId])

    await emu.reset()
    await emu.failNext({ path: '/consumer/api/v2/*', method: 'GET', status: 503, times: 2, body: { message: 'down', eventId: 'ev9' } })
    await emu.failNext({ status: 500 })
    const client = emu.client({ maxRetries: 0 })
    for (let i = 0; i < 2; i++) {
      await assert.rejects(client.listUsers(), (error) => error instanceof RoomchatError && error.status === 503 && error.eventId === 'ev9')
    }
    await assert.rejects(client.listChatRooms(), (error) => error.status === 500 && /Internal Server Error/.test(error.message))
    assert.equal((await client.listUsers()).total, 0)
    assert.deepEqual((await emu.journal()).map((e) => e.status), [503, 503, 500, 200])
    await assert.rejects(emu.failNext({ status: 99 }), RangeError)
    await assert.rejects(emu.failNext({ status: 429, retryAfter: 1.5 }), RangeError)
  })

  test('delayNext holds the answer back after the effect', async () => {
    await emu.delayNext({ path: '/consumer/api/v1/user', ms: 1500 })
    const client = emu.client({ timeoutMs: 300, maxRetries: 0 })
    await assert.rejects(client.createUser({ username: 'slow' }), (error) => error.code === 'ROOMCHAT_TIMEOUT')
    assert.deepEqual((await emu.users()).map((u) => u.username), ['slow'], 'created once, not sent again')
    assert.equal((await client.listUsers()).total, 1)
  })

  test('dropConnectionNext closes without an answer', async () => {
    await emu.dropConnectionNext({ path: '/consumer/api/v1/user' })
    const client = emu.client()
    await assert.rejects(client.createUser({ username: 'dropped' }), (error) => error.code === 'ROOMCHAT_CONNECTION')
    assert.deepEqual(await emu.users(), [])
    await emu.dropConnectionNext({ path: '/consumer/api/v2/users', method: 'GET' })
    assert.equal((await client.listUsers()).total, 0, 'a GET is retried')
    assert.deepEqual((await emu.journal()).map((e) => [e.method, e.status]), [['POST', 0], ['GET', 0], ['GET', 200]])
  })

  test('setRateLimit answers 429 past it; reset restores it with new keys', async () => {
    await emu.setRateLimit(2, 60_000)
    const client = emu.client({ maxRetries: 0 })
    await client.listUsers()
    await client.listUsers()
    await assert.rejects(client.listUsers(), (error) => error.code === 'ROOMCHAT_RATE_LIMITED' && error.status === 429)
    const oldKey = emu.privateKey
    await emu.reset()
    assert.notEqual(emu.privateKey, oldKey)
    const fresh = emu.client({ maxRetries: 0 })
    for (let i = 0; i < 5; i++) await fresh.listUsers()
    await assert.rejects(client.listUsers(), (error) => error.code === 'ROOMCHAT_INVALID_AUTH', 'the old key is gone')
    await assert.rejects(emu.setRateLimit(0), RangeError)
  })

  test('admin calls never count against the rate limit nor show in the journal', async () => {
    await emu.setRateLimit(3, 60_000)
    // Twenty admin calls after the limit is set: none of them may use it up.
    for (let i = 0; i < 5; i++) {
      await emu.seedUsers(1)
      await emu.users()
      await emu.journal()
      await emu.createRoom({ name: 'R' })
    }
    const client = emu.client({ maxRetries: 0 })
    for (let i = 0; i < 3; i++) await client.listUsers({ limit: 1 })
    await assert.rejects(client.listUsers({ limit: 1 }), (error) => error.code === 'ROOMCHAT_RATE_LIMITED')
    assert.equal((await emu.users()).length, 5, 'still answered at the limit')
    assert.deepEqual((await emu.journal()).map((e) => e.status), [200, 200, 200, 429], "only the client's calls")
  })

  test('gate takes an endpoint out of the plan', async () => {
    await emu.gate('GET /consumer/api/v1/chatrooms')
    const client = emu.client()
    await assert.rejects(client.listChatRooms(), (error) => error.code === 'ROOMCHAT_PLAN_UPGRADE_REQUIRED')
    await client.listUsers()
    await emu.gate('/consumer/api/v2/*')
    await assert.rejects(client.listUsers(), (error) => error.code === 'ROOMCHAT_PLAN_UPGRADE_REQUIRED')
    await assert.rejects(emu.gate('chatrooms'), TypeError)
  })

  test('the admin API is not part of the Client', () => {
    const names = Object.getOwnPropertyNames(Client.prototype).filter((n) => /emulator|admin|fault|journal|seed|gate|reset/i.test(n))
    assert.deepEqual(names, [])
  })
})

test('seedUsers at start and at each reset; TLS the client trusts; Symbol.asyncDispose', async () => {
  const before = caFiles()
  const emu = await startEmulator({ seedUsers: 2, tls: true })
  assert.match(emu.baseUrl, /^https:\/\//)
  assert.ok(fs.existsSync(emu.caFile) && emu.ca.startsWith('-----BEGIN CERTIFICATE-----'))
  assert.equal((await emu.client().listUsers()).total, 2)
  await emu.seedUsers(3)
  await emu.reset()
  assert.deepEqual((await emu.users()).map((u) => u.username), ['seed-user-1', 'seed-user-2'])
  await emu[Symbol.asyncDispose]()
  assert.ok(!alive(emu.pid) && (await refused(emu.baseUrl)))
  assert.ok(!fs.existsSync(emu.caFile))
  assert.deepEqual(caFiles(), before)
  await emu.stop() // twice is fine
})

test('several emulators at once, each its own', async () => {
  const emulators = await Promise.all(Array.from({ length: 6 }, () => startEmulator()))
  assert.equal(new Set(emulators.map((e) => e.baseUrl)).size, 6)
  assert.equal(new Set(emulators.map((e) => e.pid)).size, 6)
  await Promise.all(emulators.map((emu, n) => emu.seedUsers(n + 1)))
  const totals = await Promise.all(emulators.map((emu) => emu.client().listUsers()))
  assert.deepEqual(totals.map((page) => page.total), [1, 2, 3, 4, 5, 6])
  await Promise.all(emulators.map((emu) => emu.stop()))
  for (const emu of emulators) {
    assert.ok(!alive(emu.pid))
    assert.ok(await refused(emu.baseUrl))
  }
})

test('50 emulators started and stopped in a row leave no process, port or file', async () => {
  const before = caFiles()
  let total = 0
  for (let cycle = 0; cycle < 50; cycle++) {
    const started = process.hrtime.bigint()
    const emu = await startEmulator({ tls: cycle % 2 === 1 })
    assert.deepEqual(await emu.users(), [])
    total += Number(process.hrtime.bigint() - started) / 1e6
    await emu.stop()
    assert.ok(!alive(emu.pid), `cycle ${cycle}: the process is still there`)
    assert.ok(await refused(emu.baseUrl), `cycle ${cycle}: its port still accepts`)
  }
  assert.deepEqual(caFiles(), before)
  console.log(`roomchat/testing: startup to first answer, mean of 50 (debug emulator, half over TLS): ${(total / 50).toFixed(1)} ms (goal: under 100 ms)`)
})

test('a test that forgets to stop its emulator does not keep it running', async () => {
  const script = `
    const { startEmulator } = require('roomchat/testing')
    startEmulator({ tls: true }).then((emu) => {
      console.log(JSON.stringify({ pid: emu.pid, baseUrl: emu.baseUrl, caFile: emu.caFile }))
      if (process.argv[1] === 'exit') process.exit(0)
      if (process.argv[1] === 'hang') setInterval(() => {}, 1000)
      // 'idle': nothing else to do, so the process ends by itself.
    })`
  const folder = project()
  for (const how of ['idle', 'exit', 'hang']) {
    const child = spawn(process.execPath, ['-e', script, how], { cwd: folder, stdio: ['ignore', 'pipe', 'inherit'] })
    const line = await new Promise((resolve) => child.stdout.once('data', (chunk) => resolve(String(chunk))))
    const { pid, baseUrl, caFile } = JSON.parse(line)
    if (how === 'hang') child.kill('SIGKILL')
    const code = await new Promise((resolve) => child.on('exit', resolve))
    const took = await waitGone(pid)
    console.log(`roomchat/testing: a test process that ${how === 'idle' ? 'ends' : how === 'exit' ? 'calls process.exit' : 'is killed'} (exit ${code}): its emulator stopped ${took} ms after`)
    assert.ok(await refused(baseUrl))
    assert.ok(!fs.existsSync(caFile))
  }
  fs.rmSync(folder, { recursive: true, force: true })
})

test('node --test with concurrency: each file its own emulator', async () => {
  const folder = project()
  for (let n = 1; n <= 4; n++) {
    fs.writeFileSync(
      path.join(folder, `parallel-${n}.test.mjs`),
      `import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { startEmulator } from 'roomchat/testing'

test('file ${n}', async () => {
  const emu = await startEmulator()
  try {
    fs.writeFileSync('seen-${n}.json', JSON.stringify([process.pid, emu.pid, emu.baseUrl]))
    await emu.seedUsers(${n})
    await new Promise((resolve) => setTimeout(resolve, 300)) // overlap with the other files
    assert.equal((await emu.client().listUsers()).total, ${n})
    assert.equal((await emu.journal()).length, 1)
  } finally {
    await emu.stop()
  }
})
`,
    )
  }
  const files = [1, 2, 3, 4].map((n) => `parallel-${n}.test.mjs`)
  const { code, output } = await node(['--test', '--test-concurrency=4', ...files], folder)
  assert.equal(code, 0, output)
  assert.match(output, /# pass 4/)
  const seen = [1, 2, 3, 4].map((n) => JSON.parse(fs.readFileSync(path.join(folder, `seen-${n}.json`), 'utf8')))
  assert.equal(new Set(seen.map(([testPid]) => testPid)).size, 4, 'one process per file')
  assert.equal(new Set(seen.map(([, , url]) => url)).size, 4, 'one emulator per file')
  for (const [, pid, url] of seen) {
    await waitGone(pid)
    assert.ok(await refused(url))
  }
  fs.rmSync(folder, { recursive: true, force: true })
})

test('finding the executable, and the error when there is none', async () => {
  assert.equal(findEmulator(), emulatorBinary)
  assert.throws(() => findEmulator('/nowhere/roomchat-emulator'), (error) => error instanceof EmulatorNotFoundError && /nowhere/.test(error.message))
  const folder = project()
  const env = { ...process.env }
  delete env.ROOMCHAT_EMULATOR
  const script = `
    const { startEmulator, EmulatorNotFoundError } = require('roomchat/testing')
    startEmulator().then(async (emu) => { console.log('started', (await emu.users()).length); await emu.stop() },
      (error) => console.log(error instanceof EmulatorNotFoundError, error.code, error.message))`
  const missing = await node(['-e', script], folder, env)
  assert.match(missing.output, /^true ROOMCHAT_EMULATOR_NOT_FOUND .*npm install -D roomchat-emulator/m, missing.output)
  // The roomchat-emulator package, found from the current folder.
  const pkg = path.join(folder, 'node_modules', 'roomchat-emulator')
  fs.mkdirSync(pkg)
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'roomchat-emulator', version: '0.1.0', main: 'index.js' }))
  fs.writeFileSync(path.join(pkg, 'index.js'), `exports.binaryPath = () => ${JSON.stringify(emulatorBinary)}`)
  const found = await node(['-e', script], folder, env)
  assert.equal(found.output.trim(), 'started 0', found.output)
  fs.writeFileSync(path.join(pkg, 'index.js'), `exports.binaryPath = () => { throw new Error('no executable for plan9-x64') }`)
  const platform = await node(['-e', script], folder, env)
  assert.match(platform.output, /^true ROOMCHAT_EMULATOR_NOT_FOUND no executable for plan9-x64/m, platform.output)
  fs.rmSync(folder, { recursive: true, force: true })
})

test('an emulator that cannot start says why', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'roomchat-testing-'))
  const failing = path.join(folder, 'failing')
  fs.writeFileSync(failing, "#!/bin/sh\necho 'roomchat-emulator: cannot start: address in use' >&2\nexit 1\n", { mode: 0o755 })
  await assert.rejects(startEmulator({ binary: failing }), (error) => error instanceof EmulatorError && /exited with code 1 before it was ready: .*address in use/.test(error.message))
  const silent = path.join(folder, 'silent')
  fs.writeFileSync(silent, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 })
  await assert.rejects(startEmulator({ binary: silent, startupTimeoutMs: 300 }), /no ready line within 300 ms/)
  fs.rmSync(folder, { recursive: true, force: true })
})

test("the README's example passes as a user's test, and fails on broken code", async () => {
  const folder = project()
  fs.copyFileSync(example, path.join(folder, 'user-signup.test.mjs'))
  const passed = await node(['--test', 'user-signup.test.mjs'], folder)
  assert.equal(passed.code, 0, passed.output)
  assert.match(passed.output, /# pass 2/)
  // The service keeps answering 429; the code forgets to check for a taken name.
  const source = fs.readFileSync(example, 'utf8')
  const broken = source
    .replace('status: 429, retryAfter: 1 })', 'status: 429, retryAfter: 1, times: 3 })')
    .replace('if (user.username === username)', 'if (false && user.username === username)')
  assert.equal(broken.split('times: 3').length + broken.split('false &&').length, 4)
  fs.writeFileSync(path.join(folder, 'user-signup.test.mjs'), broken)
  const failed = await node(['--test', 'user-signup.test.mjs'], folder)
  assert.equal(failed.code, 1, failed.output)
  assert.match(failed.output, /# fail 2/)
  fs.rmSync(folder, { recursive: true, force: true })
})

test('the README holds the example verbatim', () => {
  const readme = fs.readFileSync(path.join(here, 'README.md'), 'utf8')
  assert.ok(readme.includes(fs.readFileSync(example, 'utf8').trim()), 'bindings/node/README.md must hold examples/user-signup.test.mjs verbatim')
})

test("the README's headers example passes as a user's test: the traceparent arrived, credentials show REDACTED", async () => {
  const readme = fs.readFileSync(path.join(here, 'README.md'), 'utf8')
  assert.ok(readme.includes(fs.readFileSync(headersExample, 'utf8').trim()), 'bindings/node/README.md must hold examples/journal-headers.test.mjs verbatim')
  const folder = project()
  // The user's own OpenTelemetry packages (the ones this package is tested with).
  fs.symlinkSync(path.join(here, 'node_modules', '@opentelemetry'), path.join(folder, 'node_modules', '@opentelemetry'), 'dir')
  fs.copyFileSync(headersExample, path.join(folder, 'journal-headers.test.mjs'))
  const passed = await node(['--test', 'journal-headers.test.mjs'], folder)
  assert.equal(passed.code, 0, passed.output)
  assert.match(passed.output, /# pass 2/)
  fs.rmSync(folder, { recursive: true, force: true })
})

test('journal: a private key that percent-encodes shows REDACTED in its encoded form too (headers, path, query, body), and in params however the query spelled it', async () => {
  const privateKey = "sk_test/plus+eq=!*'() x"
  const emu = await startEmulator({ privateKey })
  try {
    const encoded = encodeURIComponent(privateKey).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    const lowerHex = encoded.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())
    const answer = await fetch(`${emu.baseUrl}/consumer/api/v2/users/${encoded}?auth=${encoded}&echo=${encoded}&form=${encoded.replace(/%20/g, '+')}`, {
      method: 'POST',
      headers: [['X-Echo', encoded], ['X-Lower', lowerHex]],
      body: `k=${encoded}`,
    })
    await answer.arrayBuffer()
    const [entry] = await emu.journal()
    const shown = JSON.stringify(entry)
    for (const form of [privateKey, encoded, lowerHex]) assert.ok(!shown.includes(form), shown)
    assert.equal(entry.headers['x-echo'], 'REDACTED')
  } finally {
    await emu.stop()
  }
})

test('journal headers: lower-case names, repeated ones joined, credentials and the key REDACTED, frozen', async () => {
  const emu = await startEmulator()
  try {
    const answer = await fetch(`${emu.baseUrl}/consumer/api/v2/users?auth=${emu.privateKey}`, {
      headers: [['X-Trace', 'a'], ['x-trace', 'b'], ['Cookie', 'session=s3cret'], ['Proxy-Authorization', 'Basic cHc='], ['X-Echo', `k=${emu.privateKey}`], ['X-Private-Key', 's3cret-private-key']],
    })
    assert.equal(answer.status, 200)
    await answer.arrayBuffer()
    const [entry] = await emu.journal()
    assert.ok(entry instanceof JournalEntry)
    const { headers } = entry
    assert.equal(headers['x-trace'], 'a, b')
    assert.equal(headers['X-Trace'], undefined, 'names in lower case, as Node has them')
    assert.equal(headers.cookie, 'REDACTED')
    assert.equal(headers['proxy-authorization'], 'REDACTED')
    assert.equal(headers['x-private-key'], 'REDACTED', 'a name ending in key')
    assert.equal(headers['x-echo'], 'k=REDACTED', 'the private key shows nowhere')
    assert.ok(Object.keys(headers).every((name) => name === name.toLowerCase()))
    assert.ok(Object.isFrozen(headers))
    const shown = JSON.stringify(entry)
    assert.ok(!shown.includes('s3cret') && !shown.includes(emu.privateKey), shown)
  } finally {
    await emu.stop()
  }
})
