'use strict'
// Shared by the tests: the emulator binary (spawned, its first stdout line
// read, stopped by closing its stdin) and its admin API.
//
// ROOMCHAT_TEST_TLS=1 starts every emulator with `--tls` (unless the test asks
// for a TLS flag of its own): its URLs become https://, `options()` carries its
// CA as `ca`, `env` names it in NODE_EXTRA_CA_CERTS for a child process, and the
// admin calls go over https trusting that CA (fetch would not).
//
// ROOMCHAT_TEST_NET=1, inside `scripts/testnet.sh run -- …`: every emulator is
// the test network's (over TLS on a namespaced host behind the ~25 ms relay),
// reset and given the test's key at each start, so the same tests cross a
// network. Run those files one at a time (node --test --test-concurrency=1).
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const https = require('node:https')
const path = require('node:path')
const readline = require('node:readline')

const root = path.resolve(__dirname, '..', '..', '..')
const target = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
const emulatorBinary = process.env.ROOMCHAT_EMULATOR || path.join(target, 'debug', 'roomchat-emulator')

/** Whether this run crosses the test network (its one emulator, reset for each test). */
const overNet = process.env.ROOMCHAT_TEST_NET === '1'
/** Whether this run is the pass over TLS (every emulator serves HTTPS). */
const overTls = process.env.ROOMCHAT_TEST_TLS === '1' || overNet

let started = 0

/** One admin request: `body` as JSON; the answer's status and text. `ca` is trusted for https://. */
function request(url, method, body, ca) {
  const target = new URL(url)
  const transport = target.protocol === 'https:' ? https : http
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const options = {
    method,
    headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    ...(ca === undefined ? {} : { ca }),
    // A connection per admin call: Node's default agent keeps sockets alive, and
    // one the emulator (or the test network's relay) has closed meanwhile fails
    // the next call with "socket hang up".
    agent: false,
  }
  return new Promise((resolve, reject) => {
    const req = transport.request(target, options, (response) => {
      const chunks = []
      response.on('data', (chunk) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString('utf8') }))
      response.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/**
 * The test network's emulator standing in for one started with `args` (the
 * flags it can take through its admin API: --seed-users, --public-key): its
 * ready line's fields, set up for `key`.
 */
async function networkEmulator(key, args) {
  const env = process.env
  if (!env.ROOMCHAT_NET_BASE_URL) throw new Error('ROOMCHAT_TEST_NET=1 outside the test network: run through scripts/testnet.sh')
  const ca = fs.readFileSync(env.ROOMCHAT_NET_CA_FILE, 'utf8')
  const admin = async (method, route, body) => {
    const { status, text } = await request(`${env.ROOMCHAT_NET_ADMIN_URL}${route}`, method, body, ca)
    if (status < 200 || status > 299) throw new Error(`admin ${method} ${route}: ${status} ${text}`)
    return text ? JSON.parse(text) : null
  }
  const flags = new Map()
  for (let i = 0; i < args.length; i += 2) flags.set(args[i], args[i + 1])
  for (const flag of flags.keys()) {
    if (flag !== '--seed-users' && flag !== '--public-key') throw new Error(`${flag}: not available across the test network`)
  }
  const publicKey = flags.get('--public-key') ?? 'pk_test_node_network'
  await admin('POST', '/reset')
  await admin('PUT', '/config', { private_key: key, public_key: publicKey, rate_limit: { requests: 600, window_ms: 60_000 } })
  if (flags.has('--seed-users')) await admin('POST', '/users/seed', { count: Number(flags.get('--seed-users')) })
  const base = env.ROOMCHAT_NET_BASE_URL
  return {
    base_url: base,
    chat_url: `${base}/chat`,
    admin_url: env.ROOMCHAT_NET_ADMIN_URL,
    private_key: key,
    public_key: publicKey,
    ca_file: env.ROOMCHAT_NET_CA_FILE,
  }
}

/** Starts an emulator; `args` are its flags. */
async function startEmulator(args = []) {
  // A key of its own: every client of one key in a process shares one rate budget.
  const key = `sk_test_node_${process.pid}_${++started}_${Math.random().toString(36).slice(2, 10)}`
  if (overNet) return handle(await networkEmulator(key, args), null, Promise.resolve())
  const tlsFlags = overTls && !args.some((arg) => arg.startsWith('--tls')) ? ['--tls'] : []
  const child = spawn(emulatorBinary, ['--port', '0', '--private-key', key, ...tlsFlags, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = readline.createInterface({ input: child.stdout })
  const first = await new Promise((resolve, reject) => {
    lines.once('line', resolve)
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the emulator exited (${code}) before it was ready`)))
  })
  lines.close()
  child.stdout.resume()
  const info = JSON.parse(first)
  if (tlsFlags.length > 0 && !(info.base_url.startsWith('https://') && info.ca_file)) {
    throw new Error(`ROOMCHAT_TEST_TLS=1 but the emulator does not serve HTTPS: ${first}`)
  }
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return handle(info, child, exited)
}

/** The handle a test holds: `info` (the ready line), the process (null across the test network). */
function handle(info, child, exited) {
  // The CA that signed the served certificate (PEM text), when it serves HTTPS.
  const ca = info.ca_file ? fs.readFileSync(info.ca_file, 'utf8') : undefined

  async function admin(method, route, body = undefined) {
    const { status, text } = await request(`${info.admin_url}${route}`, method, body, ca)
    if (status < 200 || status > 299) throw new Error(`admin ${method} ${route}: ${status} ${text}`)
    return text ? JSON.parse(text) : null
  }

  return {
    info,
    baseUrl: info.base_url,
    chatUrl: info.chat_url,
    privateKey: info.private_key,
    publicKey: info.public_key,
    /** The CA's PEM over HTTPS, else undefined. */
    ca,
    caFile: info.ca_file ?? undefined,
    /** Environment variables a child process needs to trust this emulator (none over plain HTTP). */
    env: info.ca_file ? { NODE_EXTRA_CA_CERTS: info.ca_file } : {},
    admin,
    /** Client options for this emulator (trusting its CA over HTTPS). */
    options(extra = {}) {
      const trust = ca === undefined ? {} : { ca }
      return { privateKey: info.private_key, baseUrl: info.base_url, chatUrl: info.chat_url, publicKey: info.public_key, ...trust, ...extra }
    },
    /** `GET /_emulator/connections`: connections accepted, TLS handshakes completed, resumed and failed. */
    connections() {
      return admin('GET', '/connections')
    },
    async journal() {
      return (await admin('GET', '/journal')).entries
    },
    /** Requests that arrived with `method` at `route` (journal). */
    async arrivals(method, route) {
      return (await this.journal()).filter((e) => e.method === method && e.path === route).length
    },
    fault(spec) {
      return admin('POST', '/faults', spec)
    },
    /** `POST /_emulator/bots`: a bot (`name` and `webhookURL` required); resolves to it, with its `_id`. */
    addBot(bot) {
      return admin('POST', '/bots', bot)
    },
    async stop() {
      child?.stdin.end()
      await exited
    },
  }
}

/** Milliseconds since `start` (a `process.hrtime.bigint()` value). */
function msSince(start) {
  return Number(process.hrtime.bigint() - start) / 1e6
}

module.exports = { startEmulator, emulatorBinary, root, msSince, overTls, overNet }
