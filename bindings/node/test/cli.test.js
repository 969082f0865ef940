'use strict'
// The `roomchat` command embedded in a program (the addon's `cliMain`, which the
// package's bin calls): called twice, then the program goes on with its own
// Ctrl-C behaviour (issue 44, item 13). In a child process: signal handlers
// belong to the whole process.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { startEmulator } = require('./helpers')

const program = `
  const native = require(${JSON.stringify(path.join(__dirname, '..', 'native.js'))})
  let heard = 0
  process.on('SIGINT', () => { heard += 1 })
  for (const round of [1, 2]) {
    const code = native.cliMain(['room-messages', 'cli-r1', '--all', '--page-size', '10', '--output', 'jsonl'])
    if (code !== 0) { console.error('exit', code); process.exit(1) }
    process.kill(process.pid, 'SIGINT')
  }
  setTimeout(() => { console.log('heard ' + heard); console.log('went on') }, 300)
`

test('a program keeps its own Ctrl-C after calling the command line twice', async () => {
  const emu = await startEmulator()
  try {
    await emu.admin('POST', '/rooms', { roomId: 'cli-r1', name: 'General' })
    await emu.admin('POST', '/messages', { roomId: 'cli-r1', count: 25 })
    const env = {
      ...process.env,
      ...emu.env,
      ROOMCHAT_BASE_URL: emu.baseUrl,
      ROOMCHAT_PRIVATE_KEY: emu.privateKey,
      XDG_CONFIG_HOME: '/nonexistent-roomchat-config',
      NO_PROXY: '*',
      ...(emu.caFile ? { SSL_CERT_FILE: emu.caFile } : {}),
    }
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', program], { env, maxBuffer: 1 << 24 })
    const lines = stdout.trim().split('\n')
    assert.equal(lines.filter((line) => line.startsWith('{')).length, 50)
    assert.deepEqual(lines.slice(-2), ['heard 2', 'went on'])
  } finally {
    await emu.stop()
  }
})
