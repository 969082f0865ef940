'use strict'
// `roomchat/testing`: the roomchat emulator in your own tests. `startEmulator()`
// runs the emulator executable (from `$ROOMCHAT_EMULATOR`, else the
// `roomchat-emulator` package) on a free loopback port and gives a handle with
// its admin API as methods. Types and docs: testing.d.ts; the guide: the
// README's "Testing your code".
//
// The admin API (`/_emulator/`) is the emulator's own surface: its requests are
// never journaled, never rate-limited and never faulted, and no Client method
// reaches it.

const { spawn } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const http = require('node:http')
const https = require('node:https')
const path = require('node:path')
const { Client } = require('./index.js')

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')
const STDERR_TAIL = 8192
const INSTALL_HINT = 'npm install -D roomchat-emulator'

/** The emulator could not start, exited, or refused an admin request. */
class EmulatorError extends Error {
  constructor(message) {
    super(message)
    this.code = 'ROOMCHAT_EMULATOR_ERROR'
  }
}
Object.defineProperty(EmulatorError.prototype, 'name', { value: 'EmulatorError', writable: true, configurable: true })

/** No emulator executable: `npm install -D roomchat-emulator`, or set ROOMCHAT_EMULATOR. */
class EmulatorNotFoundError extends EmulatorError {
  constructor(message) {
    super(message)
    this.code = 'ROOMCHAT_EMULATOR_NOT_FOUND'
  }
}
Object.defineProperty(EmulatorNotFoundError.prototype, 'name', {
  value: 'EmulatorNotFoundError',
  writable: true,
  configurable: true,
})

function executable(file) {
  try {
    return fs.statSync(file).isFile() && (fs.accessSync(file, fs.constants.X_OK), true)
  } catch {
    return false
  }
}

/**
 * The emulator executable to run: `binary` if given, else `$ROOMCHAT_EMULATOR`,
 * else the one of the `roomchat-emulator` package (found from the current
 * folder, then from this package). Throws EmulatorNotFoundError when there is none.
 */
function findEmulator(binary = undefined) {
  for (const [what, explicit] of [
    ['binary', binary],
    ['ROOMCHAT_EMULATOR', process.env.ROOMCHAT_EMULATOR || undefined],
  ]) {
    if (explicit === undefined || explicit === null) continue
    if (!executable(String(explicit))) {
      throw new EmulatorNotFoundError(`${what} names ${JSON.stringify(String(explicit))}, which is not an executable file`)
    }
    return String(explicit)
  }
  let entry
  try {
    entry = require.resolve('roomchat-emulator', { paths: [process.cwd(), __dirname] })
  } catch {
    throw new EmulatorNotFoundError(
      `the roomchat-emulator package is not installed: ${INSTALL_HINT} (or set ROOMCHAT_EMULATOR to the executable's path)`,
    )
  }
  try {
    return require(entry).binaryPath()
  } catch (error) {
    throw new EmulatorNotFoundError(`${error.message} (or set ROOMCHAT_EMULATOR to the executable's path)`)
  }
}

function testKeys() {
  const token = crypto.randomBytes(8).toString('hex')
  return [`sk_test_emulator_${token}`, `pk_test_emulator_${token}`]
}

/** `fields` without those that are undefined (the admin API reads a given null as given). */
function defined(fields) {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
}

function wholeNumber(value, name, least = 0) {
  if (!Number.isSafeInteger(value) || value < least) {
    throw new RangeError(`${name} must be a whole number of at least ${least}, not ${String(value)}`)
  }
  return value
}

// Every emulator still running, stopped at this process's exit (they would stop
// anyway as their stdin closes; this is quicker and certain).
const running = new Set()
process.once('exit', () => {
  for (const child of running) child.kill('SIGTERM')
})

/** One request the emulator received (REST API and sign-in pages; never the admin API). */
class JournalEntry {
  constructor(raw, privateKey) {
    // The emulator shows `auth` and `publicKey` as REDACTED; the key is also
    // taken out of any other field it might have been put in.
    // The key as sent and percent-encoded (as a client puts it in a URL), in either hex case.
    const encoded = privateKey ? encodeURIComponent(privateKey).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`) : ''
    const forms = privateKey ? [...new Set([privateKey, encoded, encoded.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())])] : []
    const scrub = (text) => forms.reduce((shown, form) => shown.split(form).join('REDACTED'), text)
    this.seq = raw.seq
    this.method = raw.method
    this.path = scrub(raw.path)
    this.query = scrub(raw.query)
    // Decoded, a query may spell the key in a form not scrubbed above (`+` for a blank).
    this.params = Object.fromEntries([...new URLSearchParams(this.query)].map(([name, value]) => [scrub(name), scrub(value)]))
    this.body = scrub(raw.body)
    this.status = raw.status
    this.receivedAt = new Date(raw.received_at_ms)
    this.userAgent = raw.user_agent === null ? null : scrub(raw.user_agent)
    this.truncated = raw.truncated
    // As Node's `IncomingMessage.headers`: lower-case names, a repeated name's values
    // joined by ', '. Each an own property (a name such as `__proto__` included).
    const headers = {}
    for (const [name, value] of raw.headers) {
      const key = name.toLowerCase()
      const shown = scrub(value)
      const before = Object.prototype.hasOwnProperty.call(headers, key) ? headers[key] : undefined
      Object.defineProperty(headers, key, {
        value: before === undefined ? shown : `${before}, ${shown}`,
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    this.headers = Object.freeze(headers)
  }

  /** The body parsed as JSON (null for an empty body). */
  json() {
    return this.body === '' ? null : JSON.parse(this.body)
  }
}

/** A running emulator and its admin API. Made by `startEmulator`. */
class Emulator {
  constructor(child, info, settings) {
    this.baseUrl = info.base_url
    this.chatUrl = info.chat_url
    this.adminUrl = info.admin_url
    this.privateKey = settings.config.private_key
    this.publicKey = settings.config.public_key
    this.caFile = info.ca_file ?? undefined
    this.ca = this.caFile === undefined ? undefined : fs.readFileSync(this.caFile, 'utf8')
    this.pid = child.pid
    Object.defineProperty(this, '_child', { value: child })
    Object.defineProperty(this, '_settings', { value: settings })
    Object.defineProperty(this, '_exited', {
      value: new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve()
        else child.once('exit', () => resolve())
      }),
    })
  }

  /** Whether the emulator process is still running. */
  get running() {
    return this._child.exitCode === null && this._child.signalCode === null
  }

  /** Stops the emulator and frees its port (and its CA file); safe to call twice. */
  async stop() {
    const child = this._child
    child.ref() // the caller awaits its exit: keep the event loop alive until then
    child.stdin.destroy() // the end of its stdin: a clean stop
    for (const escalate of [null, 'SIGTERM', 'SIGKILL']) {
      if (escalate !== null && this.running) child.kill(escalate)
      const stopped = await Promise.race([this._exited.then(() => true), delay(5000).then(() => false)])
      if (stopped) break
    }
    running.delete(child)
    child.stdout.destroy()
    // A clean stop removed it; a killed emulator could not.
    if (this.caFile !== undefined) fs.rmSync(this.caFile, { force: true })
  }

  [asyncDispose]() {
    return this.stop()
  }

  async _call(method, route, body = undefined) {
    const target = new URL(this.adminUrl + route)
    const transport = target.protocol === 'https:' ? https : http
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const options = {
      method,
      agent: false,
      headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      ...(this.ca === undefined ? {} : { ca: this.ca }),
    }
    let answer
    try {
      answer = await new Promise((resolve, reject) => {
        const request = transport.request(target, options, (response) => {
          const chunks = []
          response.on('data', (chunk) => chunks.push(chunk))
          response.on('end', () => resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString('utf8') }))
          response.on('error', reject)
        })
        request.on('error', reject)
        request.end(payload)
      })
    } catch (error) {
      if (!this.running) throw new EmulatorError(`the emulator is not running (exit code ${this._child.exitCode})${this._why()}`)
      throw new EmulatorError(`${method} /_emulator${route}: ${error.message}`)
    }
    if (answer.status < 200 || answer.status > 299) {
      let detail = answer.text
      try {
        detail = JSON.parse(answer.text).message ?? detail
      } catch {}
      throw new EmulatorError(`${method} /_emulator${route}: ${answer.status} ${detail}`)
    }
    return answer.text ? JSON.parse(answer.text) : null
  }

  _why() {
    const text = this._settings.stderr().trim()
    return text ? `: ${text}` : ''
  }

  /**
   * Back to how it started: users (the `seedUsers` made again), rooms,
   * conversations, faults, journal, plan gates and rate-limit counters
   * cleared, the rate limit restored, and new keys unless given to
   * startEmulator (a client's rate-limit budget is per key and process-wide:
   * a new key keeps one test's 429 holds out of the next).
   */
  async reset() {
    const settings = this._settings
    await this._call('POST', '/reset')
    const [privateKey, publicKey] = testKeys()
    if (settings.renewPrivateKey) this.privateKey = settings.config.private_key = privateKey
    if (settings.renewPublicKey) this.publicKey = settings.config.public_key = publicKey
    await this._call('PUT', '/config', settings.config)
    if (settings.seedUsers > 0) await this.seedUsers(settings.seedUsers)
  }

  /** Adds `n` users named `seed-user-<k>`; resolves to the number of active users. */
  async seedUsers(n) {
    return (await this._call('POST', '/users/seed', { count: wholeNumber(n, 'n') })).total
  }

  /** Creates a room (`name` defaults to "General", `roomId` is made up when absent); resolves to it. */
  async createRoom(room = {}) {
    return this._call('POST', '/rooms', { name: 'General', ...room })
  }

  /** Creates a bot (`name` and `webhookURL` required, the others as the service defaults them); resolves to it, with its `_id`. */
  async createBot(bot) {
    return this._call('POST', '/bots', bot)
  }

  /**
   * Adds messages (`[username, text]` or the emulator's objects) to a one-to-one
   * conversation of `roomId` (a new one unless `conversationId`); resolves to its id.
   * `memberOne` and `memberTwo` (a user by `userId` or `uniqueUserIdentifier`, or
   * `{ username, ... }`) are its two members, else the messages' first two authors.
   */
  async addConversation(roomId, messages, { conversationId, memberOne, memberTwo } = {}) {
    const items = messages.map((message) =>
      Array.isArray(message) ? { messages: message[1], user: { username: message[0] } } : { ...message },
    )
    const spec = { roomId, messages: items, ...defined({ conversationId, memberOne, memberTwo }) }
    return (await this._call('POST', '/conversations', spec)).conversationId
  }

  /**
   * Posts messages into a room, or into one of its channels (`channelId`), after
   * those it holds: each a text (posted by a throw-away user) or `{ message,
   * created?, file?, actionButtons? }` with its author (`system: true`, `userId`,
   * `uniqueUserIdentifier`, `botId` or `user: { username }`). Resolves to their ids.
   */
  async addMessages(roomId, messages, { channelId } = {}) {
    if (!Array.isArray(messages)) throw new TypeError('messages must be an array')
    const items = messages.map((message) => (typeof message === 'string' ? { message } : { ...message }))
    const spec = { roomId, messages: items, ...defined({ channelId }) }
    return (await this._call('POST', '/messages', spec)).ids
  }

  /**
   * Posts `count` messages at once into a room or one of its channels (`channelId`):
   * `"<text> <n>"` (`text` default `"message"`, `n` their position), every
   * `attachmentEvery`-th with a file, all by one author (`system`, `userId`,
   * `uniqueUserIdentifier`, `botId`, `user`; a throw-away user by default).
   * Resolves to how many messages the room (or channel) holds.
   */
  async seedMessages(roomId, count, { channelId, text, attachmentEvery, ...author } = {}) {
    const spec = { roomId, count: wholeNumber(count, 'count'), ...defined({ channelId, text, attachmentEvery, ...author }) }
    return (await this._call('POST', '/messages', spec)).total
  }

  /** Creates a channel in `roomId` (`channelName` required, as create channel takes it); resolves to it, with its `_id`. */
  async addChannel(roomId, channel) {
    return this._call('POST', '/channels', { ...channel, roomId })
  }

  /**
   * Makes a user (by `userId` or `uniqueUserIdentifier`) a member of `roomId`
   * with `roleName` (default `user`); resolves to the member record.
   */
  async addMember(roomId, member) {
    return this._call('POST', '/members', { ...member, roomId })
  }

  async _fault(path, method, times, action) {
    const rule = { path, times: wholeNumber(times, 'times'), action, ...(method === undefined ? {} : { method }) }
    await this._call('POST', '/faults', rule)
  }

  /** The next `times` requests to `path` are answered `status` instead, without taking effect. */
  async failNext({ path = '*', status = 500, body, retryAfter, times = 1, method, headers, contentType } = {}) {
    if (!Number.isInteger(status) || status < 100 || status > 999) {
      throw new RangeError(`status must be an HTTP status (100 to 999), not ${String(status)}`)
    }
    let text
    if (body === undefined || body === null) {
      text = JSON.stringify({ message: status === 429 ? 'Too many requests' : http.STATUS_CODES[status] ?? `HTTP ${status}` })
    } else {
      text = typeof body === 'string' ? body : JSON.stringify(body)
    }
    const sent = { ...headers }
    if (retryAfter !== undefined) {
      if (typeof retryAfter === 'number') wholeNumber(retryAfter, 'retryAfter')
      else if (typeof retryAfter !== 'string') throw new TypeError('retryAfter must be whole seconds (a number) or an HTTP date (a string)')
      sent['Retry-After'] = String(retryAfter)
    }
    const action = { kind: 'respond', status, body: text, headers: sent, ...(contentType === undefined ? {} : { content_type: contentType }) }
    return this._fault(path, method, times, action)
  }

  /** The next `times` matching requests take effect, and their answers come `ms` late. */
  async delayNext({ path = '*', ms, times = 1, method } = {}) {
    return this._fault(path, method, times, { kind: 'delay', ms: wholeNumber(ms, 'ms') })
  }

  /** The next `times` matching requests get no answer: the connection is closed (no effect). */
  async dropConnectionNext({ path = '*', times = 1, method } = {}) {
    return this._fault(path, method, times, { kind: 'close' })
  }

  /** The account's rate limit until the next reset; `headers` turns the rate-limit headers on or off. */
  async setRateLimit(requests, windowMs = 60_000, { headers } = {}) {
    const change = { rate_limit: { requests: wholeNumber(requests, 'requests', 1), window_ms: wholeNumber(windowMs, 'windowMs', 1) } }
    if (headers !== undefined) change.rate_limit_headers = Boolean(headers)
    await this._call('PUT', '/config', change)
  }

  /** Takes `"GET /consumer/api/v1/chatrooms"` (or a path, for every method) out of the plan. */
  async gate(endpoint) {
    const text = String(endpoint).trim()
    const space = text.lastIndexOf(' ')
    const method = space < 0 ? '*' : text.slice(0, space).trim().toUpperCase()
    const route = text.slice(space + 1)
    if (!route.startsWith('/')) throw new TypeError(`endpoint must be a path, or a method and a path: ${JSON.stringify(endpoint)}`)
    await this._call('POST', '/gate', { method: method || '*', path: route })
  }

  /** The requests received since the last reset, oldest first. */
  async journal() {
    const { entries } = await this._call('GET', '/journal')
    return entries.map((raw) => new JournalEntry(raw, this.privateKey))
  }

  /** Every user the emulator holds, deactivated ones too, in creation order. */
  async users() {
    const { users } = await this._call('GET', '/users')
    return users.map((u) => ({
      userId: u.userId,
      username: u.username,
      isModerator: u.isModerator,
      active: u.active,
      created: u.created,
      chatRoom: u.chatRoom,
      uniqueUserIdentifier: u.uniqueUserIdentifier,
      email: u.email,
      profilePic: u.profilePic,
      externalUserId: u.externalUserId,
      meta: u.meta,
    }))
  }

  /**
   * A Client of this emulator: its URLs and keys (and CA), no client-side
   * throttling (the emulator's limit answers 429 as the service would; a 429
   * without Retry-After holds the key for one second, not a minute); any
   * ClientOptions override these.
   */
  client(options = {}) {
    return new Client({
      privateKey: this.privateKey,
      baseUrl: this.baseUrl,
      chatUrl: this.chatUrl,
      publicKey: this.publicKey,
      rateLimit: { requests: 1_000_000, windowMs: 1000 },
      ...(this.ca === undefined ? {} : { ca: this.ca }),
      ...options,
    })
  }
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

/**
 * Starts an emulator on a free loopback port; resolves to its handle once it
 * answers. Stop it with `await emu.stop()` or `await using`.
 */
async function startEmulator(options = {}) {
  const {
    binary,
    privateKey,
    publicKey,
    rateLimit = { requests: 600, windowMs: 60_000 },
    rateLimitHeaders = false,
    seedUsers = 0,
    tls = false,
    startupTimeoutMs = 10_000,
  } = options
  const file = findEmulator(binary)
  const [madePrivate, madePublic] = testKeys()
  const config = {
    private_key: privateKey ?? madePrivate,
    public_key: publicKey ?? madePublic,
    rate_limit: { requests: wholeNumber(rateLimit.requests, 'rateLimit.requests', 1), window_ms: wholeNumber(rateLimit.windowMs, 'rateLimit.windowMs', 1) },
    rate_limit_headers: Boolean(rateLimitHeaders),
  }
  const args = [
    '--port', '0',
    '--private-key', config.private_key,
    '--public-key', config.public_key,
    '--rate-limit', `${config.rate_limit.requests}/${config.rate_limit.window_ms}ms`,
    '--seed-users', String(wholeNumber(seedUsers, 'seedUsers')),
    ...(rateLimitHeaders ? ['--rate-limit-headers'] : []),
    ...(tls ? ['--tls'] : []),
  ]
  const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  running.add(child)
  let stderr = ''
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (text) => {
    stderr = (stderr + text).slice(-STDERR_TAIL)
  })
  const settings = {
    config,
    seedUsers,
    renewPrivateKey: privateKey === undefined,
    renewPublicKey: publicKey === undefined,
    stderr: () => stderr,
  }
  let info
  try {
    info = await readyLine(child, startupTimeoutMs, () => stderr)
  } catch (error) {
    running.delete(child)
    child.kill('SIGKILL')
    child.stdin.destroy()
    child.stdout.destroy()
    throw error
  }
  // A test that forgets to stop it must not be kept alive by it: its end closes
  // the emulator's stdin, and the emulator stops.
  child.unref()
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream.unref?.()
  child.once('exit', () => running.delete(child))
  return new Emulator(child, info, settings)
}

function readyLine(child, timeoutMs, stderr) {
  return new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => finish(new EmulatorError(`the emulator printed no ready line within ${timeoutMs} ms${tail()}`)), timeoutMs)
    const tail = () => (stderr().trim() ? `: ${stderr().trim()}` : '')
    const onData = (chunk) => {
      text += chunk
      const end = text.indexOf('\n')
      if (end >= 0) finish(null, JSON.parse(text.slice(0, end)))
    }
    // 'close' rather than 'exit': stderr's last bytes have arrived by then.
    const onExit = (code) => finish(new EmulatorError(`the emulator exited with code ${code} before it was ready${tail()}`))
    const onError = (error) => finish(new EmulatorError(`cannot run the emulator: ${error.message}`))
    function finish(error, info) {
      clearTimeout(timer)
      child.stdout.off('data', onData)
      child.off('close', onExit)
      child.off('error', onError)
      if (error) reject(error)
      else resolve(info)
    }
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', onData)
    child.once('close', onExit)
    child.once('error', onError)
  })
}

module.exports = { startEmulator, findEmulator, Emulator, EmulatorError, EmulatorNotFoundError, JournalEntry }
