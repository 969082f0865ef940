'use strict'
// The package README's Quickstart (examples/readme.mjs, shown verbatim in bindings/node/README.md) runs against the emulator.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { startEmulator } = require('./helpers.js')

test('the README example runs', async (t) => {
  const emu = await startEmulator(['--seed-users', '3'])
  t.after(() => emu.stop())
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(__dirname, '..', 'examples', 'readme.mjs')], {
    env: {
      ...process.env,
      ...emu.env,
      ROOMCHAT_PRIVATE_KEY: emu.privateKey,
      ROOMCHAT_BASE_URL: emu.baseUrl,
      ROOMCHAT_CHAT_URL: emu.chatUrl,
      ROOMCHAT_PUBLIC_KEY: emu.publicKey,
    },
  })
  const lines = stdout.trim().split('\n')
  assert.match(lines[0], new RegExp(`^sign Ann in at ${emu.chatUrl}/bbNiVFoXm\\?accessToken=`))
  assert.equal(lines[1], '4 users; the first is seed-user-1')
  assert.deepEqual(lines.slice(2, 6), ['  seed-user-1', '  seed-user-2', '  seed-user-3', '  ann'])
  assert.equal(lines[6], 'already deactivated (400 user not found)')
  assert.equal(lines[7], "eve's token signs in eve")
  assert.equal(lines[8], 'after invalidation: invalid accessToken')
  assert.equal(lines.length, 9)
  const [entry] = await emu.journal()
  assert.match(entry.user_agent, /my-backend\/1\.4$/)
})
