'use strict'
// Record fields declared `secret = true` in api/operations.toml (an access token,
// a webhook URL) are hidden from util.inspect in every answer that holds one,
// nested and in lists too, while the values stay readable (issue 37, item 9).
const test = require('node:test')
const assert = require('node:assert/strict')
const util = require('node:util')
const { startEmulator } = require('./helpers.js')
const { Client } = require('..')

const HOOK = 'https://hooks.example/b?token=hook-secret-0123'

function shownForms(value) {
  return [util.inspect(value), util.inspect(value, { depth: null }), util.format('%o', value), util.format('%O', [value])]
}

test('util.inspect hides the access token of createUserV2 and updateUser, and a bot’s webhookURL', async (t) => {
  const emu = await startEmulator()
  t.after(() => emu.stop())
  const client = new Client(emu.options())

  const made = await client.createUserV2('crm-secret-1', 'sam')
  const updated = await client.updateUser({ uniqueUserIdentifier: 'crm-secret-1', username: 'sam2' })
  for (const answer of [made, updated]) {
    assert.equal(typeof answer.accessToken, 'string')
    assert.ok(answer.accessToken.length > 20)
    for (const shown of shownForms(answer)) {
      assert.ok(!shown.includes(answer.accessToken), shown)
      assert.match(shown, /accessToken: '\[hidden: \d+ characters\]'/)
    }
  }
  assert.match(util.inspect(updated), /^UpdatedUser \{/)
  assert.match(util.inspect(updated), /username: 'sam2'/)
  // withResponse's data is hidden the same way.
  const { data } = await client.updateUser({ uniqueUserIdentifier: 'crm-secret-1', username: 'sam3' }, { withResponse: true })
  assert.ok(!util.inspect(data).includes(data.accessToken))

  const created = await client.createBot('secret-bot', HOOK)
  const listed = await client.listBots()
  assert.equal(created.bot.webhookURL, HOOK)
  assert.equal(listed.bots[0].webhookURL, HOOK)
  for (const answer of [created, listed, created.bot, listed.bots]) {
    for (const shown of shownForms(answer)) {
      assert.ok(!shown.includes('hook-secret') && !shown.includes('hooks.example'), shown)
    }
  }
  assert.match(util.inspect(created, { depth: null }), /name: 'secret-bot'/)
  // Still the plain record for JSON and equality.
  assert.equal(JSON.parse(JSON.stringify(created)).bot.webhookURL, HOOK)
})
