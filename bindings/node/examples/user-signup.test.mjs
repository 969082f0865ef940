// A test of your own code against the emulator, under node:test.
// Install: npm install roomchat && npm install -D roomchat-emulator. Run: node --test
import { after, before, beforeEach, test } from 'node:test'
import assert from 'node:assert/strict'
import { startEmulator } from 'roomchat/testing'

// Your code: makes `username` a moderator of `room` unless the name is taken.
async function signUp(client, username, room) {
  for await (const user of client.users()) {
    if (user.username === username) throw new Error(`${username} is taken`)
  }
  return (await client.createUser({ username, isModerator: true, chatRoom: room })).userId
}

let emu
before(async () => {
  emu = await startEmulator()
})
after(() => emu.stop())
beforeEach(() => emu.reset()) // each test starts from an empty account

test('signup backs off after a 429', async () => {
  await emu.seedUsers(3)
  await emu.failNext({ path: '/consumer/api/v1/user', status: 429, retryAfter: 1 })

  const userId = await signUp(emu.client(), 'ann', 'support')

  const posts = (await emu.journal()).filter((e) => e.method === 'POST')
  assert.deepEqual(posts.map((e) => e.status), [429, 200])
  assert.ok(posts[1].receivedAt - posts[0].receivedAt >= 1000)
  assert.deepEqual(posts[1].json(), { username: 'ann', isModerator: true, chatRoom: 'support' })
  assert.equal(posts[1].params.auth, 'REDACTED')
  const ann = (await emu.users()).find((u) => u.username === 'ann')
  assert.deepEqual([ann.userId, ann.isModerator, ann.chatRoom], [userId, true, 'support'])
})

test('a taken name is refused', async () => {
  await emu.seedUsers(3)
  await assert.rejects(signUp(emu.client(), 'seed-user-2', 'support'), /taken/)
  assert.equal((await emu.users()).length, 3)
})
