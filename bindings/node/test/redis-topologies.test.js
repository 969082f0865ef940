'use strict'
// The shared rate budget on a Redis Cluster (redis+cluster://) and behind Redis
// Sentinel (redis+sentinel://): real servers started by tests/redis/topology.sh,
// once for this file (a 3-primary cluster without replicas, a primary with a
// replica and 3 sentinels, all with a password), stopped at the end whatever
// happens. A call through each counts in Redis; the password (the data nodes'
// and sentinel_password=) is shown nowhere, not even when the cluster is down;
// a malformed URL is a configuration error.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const util = require('node:util')
const { execFile, execFileSync } = require('node:child_process')
const { Client } = require('..')
const { startEmulator, root } = require('./helpers')

const PASSWORD = 'node-topology-password-31'
const TOPOLOGY = path.join(root, 'tests', 'redis', 'topology.sh')

function installed(binary) {
  try {
    return execFileSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' }).trim() !== ''
  } catch {
    return false
  }
}
// A bare machine skips; the test run (CI set) never does: there a missing server fails.
const skip = !process.env.CI && !(installed('redis-server') && installed('redis-cli')) &&
  'redis-server and redis-cli are not installed'

/** Runs topology.sh (without blocking the loop); resolves to stdout's last line. */
function topology(...args) {
  return new Promise((resolve, reject) => {
    execFile('bash', [TOPOLOGY, ...args], { timeout: 120000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`topology.sh ${args[0]} failed: ${stderr.trim() || error.message}`))
      else resolve(stdout.trim().split('\n').pop())
    })
  })
}

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'roomchat-node-topologies-'))
const clusterDir = path.join(base, 'cluster')
const sentinelDir = path.join(base, 'sentinel')
const urls = {}
let emu

test.before(async () => {
  if (skip) return
  emu = await startEmulator(['--seed-users', '2'])
  urls.cluster = await topology('cluster', clusterDir, '--replicas', '0', '--password', PASSWORD)
  urls.sentinel = await topology('sentinel', sentinelDir, '--password', PASSWORD)
})

test.after(async () => {
  await Promise.allSettled([topology('stop', clusterDir), topology('stop', sentinelDir)])
  fs.rmSync(base, { recursive: true, force: true })
  await emu?.stop()
})

// Generous timeouts: the servers share 2 cores with the rest of the test run.
const rateLimit = (redisUrl, redisKeyPrefix) => ({
  requests: 100, windowMs: 60000, redisUrl, onRedisError: 'fail_closed', redisKeyPrefix,
  redisConnectTimeoutMs: 2000, redisTimeoutMs: 2000,
})

for (const form of ['cluster', 'sentinel']) {
  test(`a call through the ${form} counts in Redis`, { skip }, async () => {
    const client = new Client(emu.options({ maxRetries: 0, rateLimit: rateLimit(urls[form], `node-topology-${form}`) }))
    assert.equal((await client.listUsers({ limit: 1 })).data.length, 1)
    const state = client.rateLimitState()
    assert.deepEqual([state.backend, state.degraded, state.used], ['redis', false, 1])
  })
}

// Runs after the tests that need the cluster: it stops it.
test('the passwords are shown nowhere, even with the cluster down', { skip }, async () => {
  assert.ok(urls.sentinel.includes(`sentinel_password=${PASSWORD}`))
  const texts = {}
  const clients = {}
  for (const form of ['cluster', 'sentinel']) {
    clients[form] = new Client(emu.options({ maxRetries: 0, rateLimit: rateLimit(urls[form], `node-topology-shown-${form}`) }))
    texts[`util.inspect(${form} client)`] = util.inspect(clients[form], { showHidden: true, depth: null })
  }
  await clients.cluster.listUsers({ limit: 1 })
  await topology('stop', clusterDir)
  await assert.rejects(clients.cluster.listUsers({ limit: 1 }), (error) => {
    assert.equal(error.code, 'ROOMCHAT_BUDGET_UNAVAILABLE', error.message)
    Object.assign(texts, {
      'error.message': error.message,
      'error.stack': error.stack,
      'JSON.stringify(error)': JSON.stringify(error),
      'util.inspect(error)': util.inspect(error, { showHidden: true, depth: null }),
    })
    return true
  })
  texts['rateLimitState()'] = JSON.stringify(clients.cluster.rateLimitState())
  const leaks = Object.keys(texts).filter((label) => String(texts[label]).includes(PASSWORD))
  assert.deepEqual(leaks, [], `the password is shown in ${leaks.join(', ')}`)
})

test('a malformed cluster or sentinel URL is a configuration error at construction', () => {
  const forms = {
    'a cluster without seeds': 'redis+cluster://',
    'a cluster with only a password': `redis+cluster://:${PASSWORD}@`,
    'a cluster on a unix socket': `redis+cluster:///tmp/roomchat-cluster.sock?pass=${PASSWORD}`,
    'a cluster with a database other than 0': `redis+cluster://:${PASSWORD}@127.0.0.1:7000/3`,
    'sentinels without a service name': 'redis+sentinel://127.0.0.1:1',
    'sentinels without a service name, with passwords': `redis+sentinel://:${PASSWORD}@127.0.0.1:1/?sentinel_password=${PASSWORD}`,
  }
  for (const [form, redisUrl] of Object.entries(forms)) {
    assert.throws(() => new Client({ privateKey: 'sk_test_topology', baseUrl: 'http://127.0.0.1:1', rateLimit: { requests: 10, windowMs: 1000, redisUrl, onRedisError: 'fail_closed' } }),
      (error) => {
        assert.equal(error.code, 'ROOMCHAT_CONFIGURATION', `${form}: ${error.message}`)
        assert.ok(!`${error.message} ${error.stack} ${JSON.stringify(error)}`.includes(PASSWORD), `${form}: ${error.message}`)
        return true
      }, form)
  }
})
