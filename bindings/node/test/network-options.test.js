'use strict'
// Trust and proxy options (issue 20): bad values refused when the client is
// made, with the right code, no proxy password in any output; `proxy: null`
// ignores the environment; loopback is never proxied.
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const util = require('node:util')

const { Client } = require('..')
const { startEmulator } = require('./helpers')

const remote = { privateKey: 'sk_live_node_network_options', baseUrl: 'https://api.example.com' }

test('trust options: PEM without a certificate and unknown roots are refused', () => {
  for (const ca of ['not a certificate', Buffer.from('nor this'), ['-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n']]) {
    assert.throws(() => new Client({ ...remote, ca }), (error) => {
      assert.equal(error.code, 'ROOMCHAT_CONFIGURATION', error.message)
      return true
    })
  }
  assert.throws(() => new Client({ ...remote, ca: 42 }), { code: 'ROOMCHAT_VALIDATION' })
  assert.throws(() => new Client({ ...remote, tlsRoots: 'native' }), { code: 'ROOMCHAT_VALIDATION' })
  new Client({ ...remote, tlsRoots: 'system' })
  new Client({ ...remote, tlsRoots: 'webpki' })
})

test('proxy option: SOCKS refused without its password; null ignores the environment', (t) => {
  const secret = 'node-proxy-pw-33'
  assert.throws(() => new Client({ ...remote, proxy: `socks5://me:${secret}@127.0.0.1:1080` }), (error) => {
    assert.equal(error.code, 'ROOMCHAT_CONFIGURATION')
    assert.match(error.message, /SOCKS/)
    for (const text of [error.message, error.stack, util.inspect(error), JSON.stringify(error)]) {
      assert.ok(!text.includes(secret), text)
    }
    return true
  })
  assert.throws(() => new Client({ ...remote, proxy: 42 }), { code: 'ROOMCHAT_VALIDATION' })
  const saved = process.env.ALL_PROXY
  t.after(() => {
    if (saved === undefined) delete process.env.ALL_PROXY
    else process.env.ALL_PROXY = saved
  })
  process.env.ALL_PROXY = `socks5://me:${secret}@127.0.0.1:1080`
  assert.throws(() => new Client(remote), (error) => {
    assert.equal(error.code, 'ROOMCHAT_CONFIGURATION')
    assert.match(error.message, /ALL_PROXY/)
    assert.ok(!error.message.includes(secret), error.message)
    return true
  })
  new Client({ ...remote, proxy: null })
  const explicit = new Client({ ...remote, proxy: `http://me:${secret}@127.0.0.1:3128` })
  assert.ok(!util.inspect(explicit).includes(secret))
})

test('loopback is never proxied, whatever the environment says', async (t) => {
  let connections = 0
  const fakeProxy = net.createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise((resolve) => fakeProxy.listen(0, '127.0.0.1', resolve))
  t.after(() => fakeProxy.close())
  const emu = await startEmulator(['--seed-users', '2'])
  t.after(() => emu.stop())
  const url = `http://user:pw@127.0.0.1:${fakeProxy.address().port}`
  const names = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy']
  const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]))
  t.after(() => {
    for (const n of names) {
      if (saved[n] === undefined) delete process.env[n]
      else process.env[n] = saved[n]
    }
  })
  for (const n of names) process.env[n] = url
  const page = await new Client(emu.options({ maxRetries: 0 })).listUsers()
  assert.equal(page.total, 2)
  assert.equal(connections, 0, 'a loopback call went to the proxy')
})

test('gzip is an option', async (t) => {
  const emu = await startEmulator(['--seed-users', '3', '--gzip-min-bytes', '256'])
  t.after(() => emu.stop())
  for (const gzip of [true, false]) {
    const page = await new Client(emu.options({ gzip })).listUsers()
    assert.equal(page.total, 3)
  }
  assert.throws(() => new Client(emu.options({ gzip: 'yes' })), { code: 'ROOMCHAT_VALIDATION' })
})
