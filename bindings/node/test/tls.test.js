'use strict'
// HTTPS against the emulator's own TLS (issue 20): trust given as `ca` in each
// form Node's tls takes, or by SSL_CERT_FILE / NODE_EXTRA_CA_CERTS, or the
// system store over SSL_CERT_FILE; certificate failures (unknown issuer,
// expired, name mismatch) are ROOMCHAT_TLS, say why, show no key, and are
// tried once (the emulator's handshake counts: nothing reaches its journal).
const test = require('node:test')
const assert = require('node:assert/strict')
const util = require('node:util')
const { spawnSync } = require('node:child_process')
const { startEmulator } = require('./helpers.js')
const { Client, RoomchatError } = require('..')

/** Every text a program might print or log of an error. */
function outputs(error) {
  return [
    String(error),
    error.message,
    error.detail,
    error.stack,
    util.inspect(error),
    util.inspect(error, { showHidden: true, depth: null }),
    JSON.stringify(error),
    JSON.stringify(Object.getOwnPropertyNames(error).map((k) => error[k])),
  ]
}

/** Options for `emu` that trust nothing but the default roots. */
function untrusting(emu, extra = {}) {
  return { privateKey: emu.privateKey, baseUrl: emu.baseUrl, ...extra }
}

/** The emulator's connection counts once `tls_failed` has reached `atLeast` (they can lag a moment). */
async function connectionsAfterFailures(emu, atLeast) {
  const deadline = Date.now() + 3000
  for (;;) {
    const stats = await emu.connections()
    if (stats.tls_failed >= atLeast || Date.now() > deadline) return stats
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The rejection of `promise`, checked to be a TLS error whose message matches `reason`. */
async function tlsError(promise, reason, key) {
  let failure
  await assert.rejects(promise, (error) => {
    failure = error
    return true
  })
  assert.ok(failure instanceof RoomchatError, String(failure))
  assert.equal(failure.code, 'ROOMCHAT_TLS', failure.message)
  assert.equal(failure.kind, 'tls')
  assert.equal(failure.status, undefined)
  assert.match(failure.message, reason)
  for (const text of outputs(failure)) {
    assert.ok(!text.includes(key), text)
    assert.ok(!text.includes(encodeURIComponent(key)), text)
  }
  return failure
}

test('a client given the CA gets real answers over https', async (t) => {
  const emu = await startEmulator(['--tls', '--seed-users', '3'])
  t.after(() => emu.stop())
  assert.match(emu.baseUrl, /^https:\/\/127\.0\.0\.1:\d+$/)
  assert.match(emu.chatUrl, /^https:\/\//)
  await emu.admin('DELETE', '/connections')
  const client = new Client(untrusting(emu, { ca: emu.ca, chatUrl: emu.chatUrl }))
  const page = await client.listUsers({ limit: 2 })
  assert.deepEqual([page.total, page.data.length, page.data[0].username], [3, 2, 'seed-user-1'])
  const created = await client.createUser({ username: 'over-tls' })
  assert.match(created.userId, /^[0-9a-f]{24}$/)
  const posted = (await emu.journal()).filter((e) => e.method === 'POST' && e.status === 200)
  assert.deepEqual(posted.map((e) => JSON.parse(e.body).username), ['over-tls'])
  assert.ok(client.signInUrl('r1', 't').startsWith(`${emu.chatUrl}/r1?`))
  const stats = await emu.connections()
  assert.ok(stats.tls_handshakes >= 1, JSON.stringify(stats))
  assert.equal(stats.tls_failed, 0, JSON.stringify(stats))
})

test('without the CA: ROOMCHAT_TLS naming the unknown issuer, no key in any output, one handshake and no retry', async (t) => {
  const emu = await startEmulator(['--tls', '--seed-users', '1'])
  t.after(() => emu.stop())
  const lines = []
  const logger = { debug: (line) => lines.push(line), warn: (line) => lines.push(line) }
  await emu.admin('DELETE', '/connections')
  await emu.admin('DELETE', '/journal')
  // maxRetries left at its default (2): a GET that met a connection error would be tried again.
  const client = new Client(untrusting(emu, { logger }))
  const error = await tlsError(client.listUsers(), /issuer is unknown/, emu.privateKey)
  assert.equal(error.method, 'GET')
  assert.ok(error.path.startsWith('/consumer/api/v2/users'), error.path)
  await connectionsAfterFailures(emu, 1)
  // A retry would have come before the call rejected; give a late count a moment all the same.
  await new Promise((resolve) => setTimeout(resolve, 200))
  const settled = await emu.connections()
  // (tls_last_failure is "tls handshake eof": the client hangs up without an alert.)
  assert.equal(settled.tls_failed, 1, `one failed handshake, not retried: ${JSON.stringify(settled)}`)
  assert.equal((await emu.journal()).length, 0, 'no request got through')
  await new Promise((resolve) => setImmediate(resolve))
  assert.ok(lines.length > 0, 'the logger saw the call')
  for (const line of lines) assert.ok(!line.includes(emu.privateKey) && !line.includes(encodeURIComponent(emu.privateKey)), line)
  assert.ok(!util.inspect(client).includes(emu.privateKey))

  // The same for a POST, which is never retried blindly anyway: it is not sent at all.
  await emu.admin('DELETE', '/connections')
  await tlsError(client.createUser({ username: 'never' }), /issuer is unknown/, emu.privateKey)
  assert.equal((await connectionsAfterFailures(emu, 1)).tls_failed, 1)
  assert.equal((await emu.admin('GET', '/journal')).entries.length, 0)
})

test('an expired certificate: ROOMCHAT_TLS saying it has expired', async (t) => {
  const emu = await startEmulator(['--tls', '--tls-expired'])
  t.after(() => emu.stop())
  const error = await tlsError(new Client(untrusting(emu, { ca: emu.ca })).listUsers(), /expired/, emu.privateKey)
  assert.doesNotMatch(error.message, /issuer is unknown/)
})

test('a certificate for localhost only, reached as 127.0.0.1: ROOMCHAT_TLS saying the name does not match', async (t) => {
  const emu = await startEmulator(['--tls', '--tls-name', 'localhost'])
  t.after(() => emu.stop())
  assert.match(emu.baseUrl, /^https:\/\/127\.0\.0\.1:/)
  const error = await tlsError(new Client(untrusting(emu, { ca: emu.ca })).listUsers(), /name mismatch/, emu.privateKey)
  assert.doesNotMatch(error.message, /issuer is unknown|expired/)
})

test('the CA in each form Node takes: string, Buffer, Uint8Array, arrays of them', async (t) => {
  const emu = await startEmulator(['--tls', '--seed-users', '2'])
  const other = await startEmulator(['--tls'])
  t.after(() => Promise.all([emu.stop(), other.stop()]))
  assert.notEqual(emu.ca, other.ca, 'each emulator makes its own CA')
  const forms = [
    ['string', emu.ca],
    ['Buffer', Buffer.from(emu.ca)],
    ['Uint8Array', new Uint8Array(Buffer.from(emu.ca))],
    ['array of a string', [emu.ca]],
    ['array of another CA and a Buffer of this one', [other.ca, Buffer.from(emu.ca)]],
    ['one string holding two CAs', `${other.ca}\n${emu.ca}`],
  ]
  for (const [label, ca] of forms) {
    const page = await new Client(untrusting(emu, { ca })).listUsers()
    assert.equal(page.total, 2, label)
  }
  // Another CA alone is not this one's.
  await tlsError(new Client(untrusting(emu, { ca: other.ca })).listUsers(), /issuer is unknown/, emu.privateKey)
  await tlsError(new Client(untrusting(emu, { ca: [other.ca] })).listUsers(), /issuer is unknown/, emu.privateKey)
  // Node's `ca` is PEM content, not a path: a path is refused when the client is made.
  assert.throws(() => new Client(untrusting(emu, { ca: emu.caFile })), { code: 'ROOMCHAT_CONFIGURATION' })
})

test('SSL_CERT_FILE, tlsRoots "system" over SSL_CERT_FILE, and NODE_EXTRA_CA_CERTS trust the CA without the option', async (t) => {
  const emu = await startEmulator(['--tls', '--seed-users', '4'])
  t.after(() => emu.stop())
  const script = `
    const { Client } = require(${JSON.stringify(require.resolve('..'))})
    let client
    try {
      client = Client.fromEnv(JSON.parse(process.argv[1]))
    } catch (e) {
      console.log(JSON.stringify({ made: e.code, message: e.message }))
      process.exit(0)
    }
    client.listUsers().then(
      (page) => console.log(JSON.stringify({ total: page.total })),
      (e) => console.log(JSON.stringify({ code: e.code, message: e.message })),
    )
  `
  // A clean environment: none of the trust variables but the ones a case sets.
  const base = { ...process.env, ROOMCHAT_PRIVATE_KEY: emu.privateKey, ROOMCHAT_BASE_URL: emu.baseUrl }
  for (const name of ['SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS']) delete base[name]
  const run = (env, options = {}) => {
    const child = spawnSync(process.execPath, ['-e', script, JSON.stringify(options)], { env: { ...base, ...env }, encoding: 'utf8' })
    assert.equal(child.status, 0, child.stderr)
    assert.ok(!child.stdout.includes(emu.privateKey) && !child.stderr.includes(emu.privateKey))
    return JSON.parse(child.stdout)
  }
  const missing = `${emu.caFile}.missing`
  const cases = [
    ['no trust variable', {}, {}, (r) => r.code === 'ROOMCHAT_TLS' && /issuer is unknown/.test(r.message)],
    ['SSL_CERT_FILE', { SSL_CERT_FILE: emu.caFile }, {}, (r) => r.total === 4],
    ['SSL_CERT_FILE with tlsRoots webpki', { SSL_CERT_FILE: emu.caFile }, { tlsRoots: 'webpki' }, (r) => r.total === 4],
    ['tlsRoots system with SSL_CERT_FILE', { SSL_CERT_FILE: emu.caFile }, { tlsRoots: 'system' }, (r) => r.total === 4],
    ['NODE_EXTRA_CA_CERTS', { NODE_EXTRA_CA_CERTS: emu.caFile }, {}, (r) => r.total === 4],
    ['SSL_CERT_FILE naming no file', { SSL_CERT_FILE: missing }, {}, (r) => r.made === 'ROOMCHAT_CONFIGURATION' && r.message.includes('SSL_CERT_FILE')],
    [
      'NODE_EXTRA_CA_CERTS naming no file',
      { NODE_EXTRA_CA_CERTS: missing },
      {},
      (r) => r.made === 'ROOMCHAT_CONFIGURATION' && r.message.includes('NODE_EXTRA_CA_CERTS'),
    ],
  ]
  for (const [label, env, options, expected] of cases) {
    const result = run(env, options)
    assert.ok(expected(result), `${label}: ${JSON.stringify(result)}`)
  }
  // A plain-http client reads no trust variable (as curl, requests and node
  // itself, which only warns): both naming a missing file stop nothing.
  const plain = await startEmulator(['--seed-users', '3'])
  t.after(() => plain.stop())
  const result = run({
    ROOMCHAT_PRIVATE_KEY: plain.privateKey,
    ROOMCHAT_BASE_URL: plain.baseUrl,
    SSL_CERT_FILE: missing,
    NODE_EXTRA_CA_CERTS: missing,
  })
  assert.deepEqual(result, { total: 3 })
})
