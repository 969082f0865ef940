import { Client, RoomchatError } from 'roomchat'

const client = new Client({
  privateKey: process.env.ROOMCHAT_PRIVATE_KEY,
  baseUrl: process.env.ROOMCHAT_BASE_URL,
  chatUrl: process.env.ROOMCHAT_CHAT_URL,
  publicKey: process.env.ROOMCHAT_PUBLIC_KEY,   // validates access tokens
  appName: 'my-backend/1.4',
})

const ann = await client.createUser({ username: 'ann', isModerator: true, chatRoom: 'bbNiVFoXm' })
console.log(`sign Ann in at ${client.signInUrl('bbNiVFoXm', ann.accessToken)}`)

// Every call returns a Promise, and takes an AbortSignal last.
const page = await client.listUsers({ limit: 50 }, { signal: AbortSignal.timeout(5000) })
console.log(`${page.total} users; the first is ${page.data[0]?.username}`)

for await (const user of client.users()) {   // lazily, 200 a page
  console.log(`  ${user.username}`)
}

try {
  await client.deactivateUser({ userId: ann.userId })
  await client.deactivateUser({ userId: ann.userId })
} catch (error) {
  if (!(error instanceof RoomchatError && error.code === 'ROOMCHAT_USER_NOT_FOUND')) throw error
  console.log(`already deactivated (${error.status} ${error.detail})`)
}

// A user's lifecycle, and the access token that signs her in.
const eve = await client.createUser({ username: 'eve' })
console.log(`eve's token signs in ${(await client.validateAccessToken(eve.accessToken)).username}`)
await client.deactivateUser({ userId: eve.userId })   // her token is refused while deactivated
await client.reactivateUser({ userId: eve.userId })
await client.invalidateAccessToken(eve.accessToken)   // for good
try {
  await client.validateAccessToken(eve.accessToken)
} catch (error) {
  if (!(error instanceof RoomchatError && error.code === 'ROOMCHAT_INVALID_REQUEST')) throw error
  console.log(`after invalidation: ${error.detail}`)
}
