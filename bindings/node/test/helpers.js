'use strict'
// Shared by the tests: the emulator binary (spawned, its first stdout line
// read, stopped by closing its stdin) and its admin API.
const { spawn } = require('node:child_process')
const path = require('node:path')
const readline = require('node:readline')

const root = path.resolve(__dirname, '..', '..', '..')
const target = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
const emulatorBinary = process.env.ROOMCHAT_EMULATOR || path.join(target, 'debug', 'roomchat-emulator')

let started = 0

/** Starts an emulator; `args` are its flags. */
async function startEmulator(args = []) {
  // A key of its own: every client of one key in a process shares one rate budget.
  const key = `sk_test_node_${process.pid}_${++started}_${Math.random().toString(36).slice(2, 10)}`
  const child = spawn(emulatorBinary, ['--port', '0', '--private-key', key, ...args], {
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
  const exited = new Promise((resolve) => child.once('exit', resolve))

  async function admin(method, route, body = undefined) {
    const response = await fetch(`${info.admin_url}${route}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`admin ${method} ${route}: ${response.status} ${text}`)
    return text ? JSON.parse(text) : null
  }

  return {
    info,
    baseUrl: info.base_url,
    chatUrl: info.chat_url,
    privateKey: info.private_key,
    publicKey: info.public_key,
    admin,
    /** Client options for this emulator. */
    options(extra = {}) {
      return { privateKey: info.private_key, baseUrl: info.base_url, chatUrl: info.chat_url, publicKey: info.public_key, ...extra }
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
    async stop() {
      child.stdin.end()
      await exited
    },
  }
}

/** Milliseconds since `start` (a `process.hrtime.bigint()` value). */
function msSince(start) {
  return Number(process.hrtime.bigint() - start) / 1e6
}

module.exports = { startEmulator, emulatorBinary, root, msSince }
