'use strict'
// Across the test network (scripts/testnet.sh): a namespaced host over TLS with
// ~25 ms round trips, and a real CONNECT proxy (tinyproxy with basic auth).
// The proxy option and HTTPS_PROXY go through it, NO_PROXY by address and range
// bypasses it, a wrong proxy password shows nowhere, a POST whose answer is lost
// is sent once. Without the network it skips (CI runs it through testnet.sh).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const https = require('node:https')
const util = require('node:util')

const { Client } = require('..')

const env = process.env
const skip = env.ROOMCHAT_NET_BASE_URL ? false : 'no test network (run through scripts/testnet.sh)'
const PROXY_VARS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy']

function admin(method, path, body) {
  const ca = fs.readFileSync(env.ROOMCHAT_NET_CA_FILE)
  return new Promise((resolve, reject) => {
    const request = https.request(`${env.ROOMCHAT_NET_ADMIN_URL}${path}`, { method, ca, headers: { 'content-type': 'application/json' } }, (response) => {
      let text = ''
      response.on('data', (chunk) => (text += chunk))
      response.on('end', () => resolve(text ? JSON.parse(text) : null))
    })
    request.on('error', reject)
    request.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

const tunnels = () =>
  fs.readFileSync(env.ROOMCHAT_NET_PROXY_LOG, 'utf8').split('\n').filter((l) => l.includes('CONNECT') && l.includes('10.77.0.2')).length

test('across the test network: through tinyproxy, NO_PROXY, a lost POST answer', { skip }, async (t) => {
  const saved = Object.fromEntries(PROXY_VARS.map((n) => [n, env[n]]))
  t.after(() => {
    for (const n of PROXY_VARS) {
      if (saved[n] === undefined) delete env[n]
      else env[n] = saved[n]
    }
  })
  for (const n of PROXY_VARS) delete env[n]
  await admin('POST', '/reset')
  await admin('POST', '/users/seed', { count: 4 })
  const ca = fs.readFileSync(env.ROOMCHAT_NET_CA_FILE)
  const options = (extra) => ({ privateKey: env.ROOMCHAT_NET_PRIVATE_KEY, baseUrl: env.ROOMCHAT_NET_BASE_URL, ca, ...extra })

  assert.equal((await new Client(options({ proxy: null })).listUsers()).total, 4)

  let before = tunnels()
  const proxied = new Client(options({ proxy: env.ROOMCHAT_NET_PROXY }))
  assert.equal((await proxied.listUsers()).total, 4)
  assert.ok(tunnels() > before, 'the call did not go through the proxy')
  assert.ok(!util.inspect(proxied).includes(env.ROOMCHAT_NET_PROXY_PASSWORD))

  const wrong = env.ROOMCHAT_NET_PROXY.replace(env.ROOMCHAT_NET_PROXY_PASSWORD, 'node-wrong-pw-5')
  await assert.rejects(new Client(options({ proxy: wrong, maxRetries: 0 })).listUsers(), (error) => {
    for (const text of [error.message, error.stack, util.inspect(error), JSON.stringify(error)]) {
      assert.ok(!text.includes('node-wrong-pw-5') && !text.includes(env.ROOMCHAT_NET_PRIVATE_KEY), text)
    }
    return true
  })

  env.HTTPS_PROXY = env.ROOMCHAT_NET_PROXY
  before = tunnels()
  await new Client(options()).listUsers()
  assert.ok(tunnels() > before, 'HTTPS_PROXY was not used')
  for (const noProxy of ['10.77.0.2', '10.77.0.0/16']) {
    env.NO_PROXY = noProxy
    before = tunnels()
    await new Client(options()).listUsers()
    assert.equal(tunnels(), before, `NO_PROXY=${noProxy} was not honoured`)
  }
  for (const n of PROXY_VARS) delete env[n]

  await admin('POST', '/faults', { method: 'POST', path: '/consumer/api/v1/user', times: 1, action: { kind: 'delay', ms: 1500 } })
  await assert.rejects(new Client(options({ proxy: null, timeoutMs: 800 })).createUser({ username: 'node-lost-answer' }), { code: 'ROOMCHAT_TIMEOUT' })
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const posts = (await admin('GET', '/journal')).entries.filter((e) => e.method === 'POST' && e.path === '/consumer/api/v1/user')
  assert.equal(posts.length, 1, 'a POST whose answer was lost was sent again')
})
