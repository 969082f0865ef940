// The test of examples/user-signup.test.mjs under Jest (CommonJS, Jest's globals).
// Install: npm install roomchat && npm install -D roomchat-emulator jest. Run: npx jest
const { startEmulator } = require('roomchat/testing')

// Your code: makes `username` a moderator of `room` unless the name is taken.
async function signUp(client, username, room) {
  for await (const user of client.users()) {
    if (user.username === username) throw new Error(`${username} is taken`)
  }
  return (await client.createUser({ username, isModerator: true, chatRoom: room })).userId
}

let emu
beforeAll(async () => {
  emu = await startEmulator()
})
afterAll(() => emu.stop())
beforeEach(() => emu.reset()) // each test starts from an empty account

test('signup backs off after a 429', async () => {
  await emu.seedUsers(3)
  await emu.failNext({ path: '/consumer/api/v1/user', status: 429, retryAfter: 1 })

  const userId = await signUp(emu.client(), 'ann', 'support')

  const posts = (await emu.journal()).filter((e) => e.method === 'POST')
  expect(posts.map((e) => e.status)).toEqual([429, 200])
  expect(posts[1].receivedAt - posts[0].receivedAt).toBeGreaterThanOrEqual(1000)
  expect(posts[1].json()).toEqual({ username: 'ann', isModerator: true, chatRoom: 'support' })
  expect(posts[1].params.auth).toBe('REDACTED')
  const ann = (await emu.users()).find((u) => u.username === 'ann')
  expect([ann.userId, ann.isModerator, ann.chatRoom]).toEqual([userId, true, 'support'])
})

test('a taken name is refused', async () => {
  await emu.seedUsers(3)
  await expect(signUp(emu.client(), 'seed-user-2', 'support')).rejects.toThrow(/taken/)
  expect(await emu.users()).toHaveLength(3)
})
