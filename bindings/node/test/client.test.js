'use strict'
// Every endpoint and helper, over real HTTP against the emulator.
const test = require('node:test')
const assert = require('node:assert/strict')
const util = require('node:util')
const { spawnSync } = require('node:child_process')
const { startEmulator, overNet } = require('./helpers.js')
const roomchat = require('..')
const { Client, RoomchatError, RoomchatValidationError, errorCodes } = roomchat

const USERS = '/consumer/api/v2/users'

test('endpoints', async (t) => {
  const emu = await startEmulator(['--seed-users', '5'])
  t.after(() => emu.stop())
  const client = new Client(emu.options())

  await t.test('listUsers: camelCase fields, absent ones undefined, unknown ones under extra', async () => {
    const page = await client.listUsers({ limit: 2, skip: 1 })
    assert.deepEqual([page.total, page.limit, page.skip, page.data.length], [5, 2, 1, 2])
    const user = page.data[0]
    assert.equal(user.username, 'seed-user-2')
    assert.equal(user.id, user.userId)
    assert.match(user.id, /^[0-9a-f]{24}$/)
    assert.equal(user.isModerator, false)
    assert.equal(user.email, undefined)
    assert.equal('email' in user, false)
    assert.equal(typeof user.extra.created, 'string', 'the emulator sends `created`, which is not a known field')
    assert.deepEqual(page.extra, {})
    const defaults = await client.listUsers()
    assert.equal(defaults.data.length, 5)
  })

  await t.test('createUser: regular, moderator, room moderator, extra fields; token hidden from inspect', async () => {
    const jon = await client.createUser({ username: 'jon' })
    assert.equal(jon.isModerator, false)
    assert.equal(jon.chatRoom, undefined)
    const ann = await client.createUser({ username: 'ann', isModerator: true })
    assert.equal(ann.isModerator, true)
    const bob = await client.createUser({
      username: 'bob',
      isModerator: true,
      chatRoom: 'bbNiVFoXm',
      uniqueUserIdentifier: 'crm-7',
      email: 'bob@example.com',
      profilePic: 'https://p.example/b.png',
      externalUserId: 'ext-7',
      meta: { plan: 'gold' },
      extra: { locale: 'fr' },
    })
    assert.equal(bob.chatRoom, 'bbNiVFoXm')
    assert.match(bob.userId, /^[0-9a-f]{24}$/)
    assert.ok(bob.accessToken.length > 20)
    const sent = (await emu.journal()).filter((e) => e.method === 'POST').map((e) => JSON.parse(e.body))
    assert.deepEqual(sent.at(-1), {
      username: 'bob',
      isModerator: true,
      chatRoom: 'bbNiVFoXm',
      uniqueUserIdentifier: 'crm-7',
      email: 'bob@example.com',
      profilePic: 'https://p.example/b.png',
      externalUserId: 'ext-7',
      meta: { plan: 'gold' },
      locale: 'fr',
    })
    for (const shown of [util.inspect(bob), util.inspect(bob, { depth: 0 }), util.format('%o', bob), util.format('%O', [bob])]) {
      assert.ok(!shown.includes(bob.accessToken), shown)
      assert.match(shown, /hidden/)
    }
    assert.equal(JSON.parse(JSON.stringify(bob)).accessToken, bob.accessToken, 'still a plain data object')
    const listed = await client.listUsers({ limit: 200 })
    const found = listed.data.find((u) => u.username === 'bob')
    assert.equal(found.uniqueUserIdentifier, 'crm-7')
    assert.equal(found.chatRoom, 'bbNiVFoXm')
    assert.deepEqual(found.extra.meta, { plan: 'gold' })
  })

  await t.test('text beyond ASCII and text that JSON escapes come back as sent', async () => {
    // é and ß are Latin-1 characters: taken as Latin-1 bytes, UTF-8 text would come back as Ã©.
    const names = ['Zoë Brünhilde-Straße', '李小龍', 'crab 🦀 \u00ff\u0100', 'say "hi" \\ back\\slash', '</script>\u2028']
    for (const username of names) {
      const created = await client.createUser({ username, meta: { note: `${username}!` } })
      assert.equal(created.username, username)
      const listed = await client.listUsers({ limit: 200 })
      const found = listed.data.find((u) => u.userId === created.userId)
      assert.equal(found.username, username)
      assert.deepEqual(found.extra.meta, { note: `${username}!` })
    }
  })

  await t.test('deactivateUser by either id; a second time is ROOMCHAT_USER_NOT_FOUND', async () => {
    const u = await client.createUser({ username: 'cat', uniqueUserIdentifier: 'crm-9' })
    const done = await client.deactivateUser({ userId: u.userId })
    assert.deepEqual(done, { success: true, message: 'user deactivated', extra: {} })
    await assert.rejects(client.deactivateUser({ userId: u.userId }), (e) => {
      assert.ok(e instanceof RoomchatError)
      assert.equal(e.code, 'ROOMCHAT_USER_NOT_FOUND')
      assert.equal(e.kind, 'user_not_found')
      assert.equal(e.status, 400)
      assert.equal(e.method, 'DELETE')
      assert.equal(e.path, '/consumer/api/v2/user/deactivate?auth=REDACTED')
      return true
    })
    await client.createUser({ username: 'dan', uniqueUserIdentifier: 'crm-10' })
    assert.equal((await client.deactivateUser({ uniqueUserIdentifier: 'crm-10' })).success, true)
  })

  await t.test('deactivateUser with both or neither id: a TypeError, before anything is sent', async () => {
    await emu.admin('DELETE', '/journal')
    for (const params of [{}, { userId: 'a', uniqueUserIdentifier: 'b' }, undefined]) {
      await assert.rejects(client.deactivateUser(params), (e) => {
        assert.ok(e instanceof TypeError)
        assert.ok(e instanceof RoomchatError)
        assert.ok(e instanceof RoomchatValidationError)
        assert.equal(e.code, 'ROOMCHAT_VALIDATION')
        assert.match(e.message, /exactly one of userId and uniqueUserIdentifier/)
        return true
      })
    }
    assert.equal((await emu.journal()).length, 0)
  })

  await t.test('conversationMessages by both path forms', async () => {
    await emu.admin('POST', '/rooms', { roomId: 'bbNiVFoXm', name: 'General' })
    const conv = await emu.admin('POST', '/conversations', {
      roomId: 'bbNiVFoXm',
      messages: [
        { messages: 'hi', user: { _id: 'u1', username: 'jon', email: 'jon@example.com' } },
        { messages: 'hello', user: { username: 'ann' } },
      ],
    })
    for (const pathForm of [undefined, 'room', 'chatroom']) {
      const messages = await client.conversationMessages({ roomId: 'bbNiVFoXm', conversationId: conv.conversationId, pathForm })
      assert.deepEqual(messages.map((m) => m.text), ['hi', 'hello'])
      assert.equal(messages[0].user.username, 'jon')
      assert.equal(messages[0].user.id, 'u1')
      assert.equal(messages[0].conversation, conv.conversationId)
      assert.equal(typeof messages[0].created, 'string')
      assert.equal(messages[1].user.email, undefined)
    }
    const chatroom = (await emu.journal()).filter((e) => e.path.startsWith('/consumer/api/v2/chatroom/'))
    assert.equal(chatroom.length, 1)
    await assert.rejects(client.conversationMessages({ roomId: 'nope', conversationId: 'c' }), {
      code: 'ROOMCHAT_NOT_FOUND',
      kind: 'not_found',
    })
  })

  await t.test('listChatRooms and rawRequest (public key, query, body)', async () => {
    const rooms = await client.listChatRooms()
    assert.equal(rooms[0].roomId, 'bbNiVFoXm')
    const jon = await client.createUser({ username: 'eve' })
    const raw = await client.rawRequest({
      method: 'GET',
      path: '/consumer/api/v1/validate',
      query: { accessToken: jon.accessToken },
      auth: 'public',
    })
    assert.equal(raw.status, 200)
    assert.equal(raw.body.username, 'eve')
    assert.ok(raw.headers.some(([name]) => name === 'content-type'))
    const pairs = await client.rawRequest({ method: 'GET', path: USERS, query: [['limit', '1']] })
    assert.equal(pairs.body.data.length, 1)
    const posted = await client.rawRequest({ method: 'POST', path: '/consumer/api/v1/user', body: { username: 'raw' } })
    assert.equal(posted.body.username, 'raw')
    await assert.rejects(client.rawRequest({ method: 'DELETE', path: '/consumer/api/v1/chatrooms' }), {
      code: 'ROOMCHAT_UNEXPECTED_STATUS',
      status: 405,
    })
  })

  await t.test('sync helpers: signInUrl, iframeHtml, rateLimitState, baseUrl', async () => {
    const url = client.signInUrl('bbNiVFoXm', 'tok&en')
    assert.equal(url, `${emu.chatUrl}/bbNiVFoXm?accessToken=tok%26en`)
    const html = client.iframeHtml('bbNiVFoXm', 'tok', 640, '100%')
    assert.match(html, /^<iframe /)
    assert.match(html, /width="640"/)
    assert.match(html, /height="100%"/)
    const state = client.rateLimitState()
    assert.equal(state.used + state.remaining, state.limit)
    assert.ok(state.used > 0)
    assert.equal(state.windowMs, 61000)
    assert.equal(client.baseUrl, emu.baseUrl)
    assert.throws(() => new Client({ ...emu.options(), chatUrl: undefined }).signInUrl('r', 't'), {
      code: 'ROOMCHAT_CONFIGURATION',
    })
    assert.throws(() => client.signInUrl('', 't'), { code: 'ROOMCHAT_VALIDATION' })
    assert.throws(() => client.signInUrl('r'), { code: 'ROOMCHAT_VALIDATION' })
  })
})

test('users() and userPages() fetch a page only when needed', async (t) => {
  const emu = await startEmulator(['--seed-users', '450'])
  t.after(() => emu.stop())
  const client = new Client(emu.options())

  const names = []
  for await (const user of client.users()) names.push(user.username)
  assert.equal(names.length, 450)
  assert.equal(new Set(names).size, 450)
  assert.equal(names[449], 'seed-user-450')

  await emu.admin('DELETE', '/journal')
  const iterator = client.users({ pageSize: 100 })
  assert.equal(await emu.arrivals('GET', USERS), 0, 'nothing is fetched before the first next()')
  let seen = 0
  for await (const user of iterator) {
    assert.ok(user.username)
    seen += 1
    if (seen === 100) assert.equal(await emu.arrivals('GET', USERS), 1)
    if (seen === 101) assert.equal(await emu.arrivals('GET', USERS), 2)
    if (seen === 150) break
  }
  assert.equal(await emu.arrivals('GET', USERS), 2, 'break stops fetching')
  assert.deepEqual(await iterator.next(), { done: true, value: undefined })

  const sizes = []
  for await (const page of client.userPages({ pageSize: 200 })) sizes.push(page.data.length)
  assert.deepEqual(sizes, [200, 200, 50])

  // next() called again before the last one settled still yields in order
  const it = client.users({ pageSize: 3 })
  const firstFive = await Promise.all([it.next(), it.next(), it.next(), it.next(), it.next()])
  assert.deepEqual(
    firstFive.map((r) => r.value.username),
    ['seed-user-1', 'seed-user-2', 'seed-user-3', 'seed-user-4', 'seed-user-5'],
  )

  await assert.rejects(client.users({ pageSize: 0 }).next(), { code: 'ROOMCHAT_VALIDATION' })
  await assert.rejects(client.userPages({ size: 5 }).next(), { code: 'ROOMCHAT_VALIDATION' })

  // An error ends no iteration: the next step fetches the page that failed.
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'not_json' } })
  const failing = client.users({ pageSize: 200 })
  await assert.rejects(failing.next(), { code: 'ROOMCHAT_DECODE' })
  assert.equal((await failing.next()).value.username, 'seed-user-1')
  failing.resume() // does nothing now
  assert.equal((await failing.next()).value.username, 'seed-user-2')
})

test('users() and userPages(): a step that times out ends nothing, the next step fetches that page', async (t) => {
  const emu = await startEmulator(['--seed-users', '10'])
  t.after(() => emu.stop())
  const client = new Client(emu.options())
  const settings = { timeoutMs: 300, maxRetries: 0 }

  await emu.admin('DELETE', '/journal')
  const users = client.users({ pageSize: 5 }, settings)
  const names = []
  for (let i = 0; i < 5; i++) names.push((await users.next()).value.username)
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'delay', ms: 2000 } })
  await assert.rejects(users.next(), { code: 'ROOMCHAT_TIMEOUT' })
  for await (const user of users) names.push(user.username)
  assert.deepEqual(names, Array.from({ length: 10 }, (_, i) => `seed-user-${i + 1}`))
  assert.equal(await emu.arrivals('GET', USERS), 3, 'page 2 twice: timed out, then answered')
  assert.deepEqual(await users.next(), { done: true, value: undefined })

  const pages = client.userPages({ pageSize: 4 }, settings)
  const skips = [(await pages.next()).value.skip]
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'delay', ms: 2000 } })
  await assert.rejects(pages.next(), { code: 'ROOMCHAT_TIMEOUT' })
  for await (const page of pages) skips.push(page.skip)
  assert.deepEqual(skips, [0, 4, 8])

  // Errors of every step, not once: a 503 and a broken answer, then the page.
  const failing = client.users({ pageSize: 200 }, settings)
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'respond', status: 503, body: '{}' } })
  await assert.rejects(failing.next(), { status: 503 })
  await emu.fault({ method: 'GET', path: USERS, times: 1, action: { kind: 'not_json' } })
  await assert.rejects(failing.next(), { code: 'ROOMCHAT_DECODE' })
  assert.equal((await failing.next()).value.username, 'seed-user-1')

  // An iteration whose signal aborted rejects every later step too: it never reports done.
  const aborted = client.users({}, { signal: AbortSignal.abort() })
  await assert.rejects(aborted.next(), { name: 'AbortError' })
  await assert.rejects(aborted.next(), { name: 'AbortError' })
  // Bad arguments likewise.
  const bad = client.users({ pageSize: 0 })
  await assert.rejects(bad.next(), { code: 'ROOMCHAT_VALIDATION' })
  await assert.rejects(bad.next(), { code: 'ROOMCHAT_VALIDATION' })
})

test('Client.fromEnv and option checks', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const script = `
    const { Client } = require(${JSON.stringify(require.resolve('..'))})
    const client = Client.fromEnv({ maxRetries: 1 })
    client.listUsers().then((page) => console.log(JSON.stringify({ total: page.total, base: client.baseUrl })))
  `
  const env = { ...process.env, ...emu.env, ROOMCHAT_PRIVATE_KEY: emu.privateKey, ROOMCHAT_BASE_URL: emu.baseUrl }
  const run = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assert.deepEqual(JSON.parse(run.stdout), { total: 0, base: emu.baseUrl })

  const missing = spawnSync(
    process.execPath,
    ['-e', `const { Client } = require(${JSON.stringify(require.resolve('..'))}); try { Client.fromEnv() } catch (e) { console.log(e.code, e.message) }`],
    { env: { PATH: process.env.PATH }, encoding: 'utf8' },
  )
  assert.match(missing.stdout, /^ROOMCHAT_CONFIGURATION .*ROOMCHAT_PRIVATE_KEY/)

  const good = emu.options()
  assert.throws(() => new Client(), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client('sk'), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ ...good, privateKey: '' }), { code: 'ROOMCHAT_CONFIGURATION' })
  assert.throws(() => new Client({ ...good, privateKey: ` ${good.privateKey}` }), { code: 'ROOMCHAT_CONFIGURATION' })
  assert.throws(() => new Client({ ...good, baseUrl: 'http://example.com' }), { code: 'ROOMCHAT_CONFIGURATION' })
  assert.throws(() => new Client({ ...good, baseURL: good.baseUrl }), (e) => e.code === 'ROOMCHAT_VALIDATION' && /baseURL/.test(e.message))
  assert.throws(() => new Client({ ...good, timeoutMs: -1 }), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ ...good, timeoutMs: '5' }), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ ...good, maxRetries: 1.5 }), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ ...good, rateLimit: { requests: 10 } }), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ ...good, rateLimit: { requests: 10, windowMs: 1000, whenLimited: 'later' } }), {
    code: 'ROOMCHAT_VALIDATION',
  })
  assert.throws(() => new Client({ ...good, logger: {} }), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ ...good, appName: 'a\nb' }), { code: 'ROOMCHAT_CONFIGURATION' })
  const http = new Client({ ...good, baseUrl: 'http://example.com', allowInsecureHttp: true })
  assert.equal(http.baseUrl, 'http://example.com')
  assert.equal(Object.keys(errorCodes).length, 18)
  assert.equal(errorCodes.not_found, 'ROOMCHAT_NOT_FOUND')
  assert.equal(errorCodes.tls, 'ROOMCHAT_TLS')
  assert.equal(errorCodes.budget_unavailable, 'ROOMCHAT_BUDGET_UNAVAILABLE')
  assert.equal(errorCodes.rate_limited, 'ROOMCHAT_RATE_LIMITED')
  assert.equal(errorCodes.cancelled, 'ROOMCHAT_CANCELLED')
  assert.ok(!util.inspect(new Client(good)).includes(good.privateKey))
})

test('appName reaches the User-Agent, after the package, the core, Node and the platform', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  await new Client(emu.options({ appName: 'my-backend/1.4' })).listUsers()
  const [entry] = await emu.journal()
  const { version } = require('../package.json')
  const arch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch] ?? process.arch
  const node = process.versions.node.replaceAll('.', '\\.')
  assert.match(
    entry.user_agent,
    new RegExp(`^roomchat-node/${version.replaceAll('.', '\\.')} \\(core \\d+\\.\\d+\\.\\d+[^;]*; Node ${node}; linux ${arch}\\) my-backend/1\\.4$`),
  )
})

// The emulator closes a keep-alive connection idle for its read timeout. A client whose
// thread is busy as that close arrives (a large answer parsed on a loaded CPU) sent its
// next request on the closed connection: Node's http.Agent got "socket hang up", undici
// "other side closed" (issue 44, item 23). The emulator now says how long it keeps an
// idle connection (Keep-Alive: timeout=N), which both read.
test("the emulator's Keep-Alive hint: Node's keep-alive agent never sends on a connection it closed", { skip: overNet && 'the test network has one emulator, with its own read timeout' }, async (t) => {
  const emu = await startEmulator(['--read-timeout', '500ms'])
  t.after(() => emu.stop())
  const url = new URL(`${emu.baseUrl}${USERS}?auth=${encodeURIComponent(emu.privateKey)}&limit=1`)
  const transport = url.protocol === 'https:' ? require('node:https') : require('node:http')
  const agent = new transport.Agent({ keepAlive: true, ...(emu.ca === undefined ? {} : { ca: emu.ca }) })
  t.after(() => agent.destroy())
  const get = () =>
    new Promise((resolve, reject) => {
      transport
        .get(url, { agent }, (response) => {
          response.resume()
          response.on('end', () => resolve(response))
          response.on('error', reject)
        })
        .on('error', reject)
    })
  const first = await get()
  assert.equal(first.statusCode, 200)
  assert.equal(first.headers['keep-alive'], 'timeout=0')
  // The agent takes the socket back, then the thread is busy past the read timeout:
  // the emulator's close arrives meanwhile, unseen.
  await new Promise((resolve) => setImmediate(resolve))
  const busyUntil = performance.now() + 1500
  while (performance.now() < busyUntil);
  const second = await get()
  assert.equal(second.statusCode, 200)
})

test("plain http to a remote host is refused naming Node's option, allowInsecureHttp, and no other language's", () => {
  let refused
  try {
    new Client({ privateKey: 'sk_1', baseUrl: 'http://api.example.com' })
  } catch (e) {
    refused = e
  }
  assert.ok(refused instanceof RoomchatError, String(refused))
  assert.equal(refused.code, 'ROOMCHAT_CONFIGURATION')
  for (const shown of [refused.message, refused.detail]) {
    assert.ok(shown.endsWith('use https://, or allowInsecureHttp: true if you really mean it'), shown)
    assert.ok(shown.includes('plain http://') && shown.includes('"api.example.com"'), shown)
    for (const other of ['allow_insecure_http', 'roomchat_client_options_set', '::']) {
      assert.ok(!shown.includes(other), `${other} in ${shown}`)
    }
  }
})
