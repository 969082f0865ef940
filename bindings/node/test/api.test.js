'use strict'
// The whole documented API (issue 29) against one emulator, started once: one
// end-to-end test per operation (the typed answer, and the state change seen
// through another operation or the emulator's journal), not-found errors, the
// webinar story, and the history export through the lazy iterators. Seeded with
// the package's test kit (roomchat/testing). Not run again over TLS: the
// transport is the one every other test covers.
const test = require('node:test')
const assert = require('node:assert/strict')
const { RoomchatError, RoomchatValidationError } = require('..')
const { startEmulator } = require('../testing.js')
const { emulatorBinary } = require('./helpers.js')

let emu
let client
let rooms = 0

test.before(async () => {
  emu = await startEmulator({ binary: emulatorBinary })
  client = emu.client()
})
test.after(() => emu?.stop())

/** A new room of the emulator's (each test its own). */
async function room(fields = {}) {
  rooms += 1
  return (await emu.createRoom({ roomId: `room-${rooms}`, name: `Room ${rooms}`, ...fields })).roomId
}

/** The error a promise rejects with. */
async function rejection(promise) {
  try {
    await promise
  } catch (error) {
    return error
  }
  assert.fail('it resolved')
}

async function assertNotFound(promise) {
  const error = await rejection(promise)
  assert.ok(error instanceof RoomchatError, String(error))
  assert.deepEqual([error.kind, error.code], ['not_found', 'ROOMCHAT_NOT_FOUND'], error.message)
  return error
}

/** The journal's entries since `seq`. */
async function sentSince(seq) {
  return (await emu.journal()).filter((e) => e.seq > seq)
}

async function lastSeq() {
  const journal = await emu.journal()
  return journal.length === 0 ? 0 : journal[journal.length - 1].seq
}

/** A user made through the API, with a unique identifier. */
async function user(uniqueUserIdentifier, username = uniqueUserIdentifier) {
  return client.createUserV2(uniqueUserIdentifier, username)
}

// ---- rooms ----------------------------------------------------------------------------

test('createChatRoom: switches sent as on/off, untyped fields through extra, the room as created', async () => {
  const before = await lastSeq()
  const answer = await client.createChatRoom({
    name: 'Webinar',
    passwordProtected: true,
    roomPassword: 's3cret',
    enableChannels: false,
    chatRoomPermissionLevel: 'members',
    customization: { sidebarColor: '#123456' },
    extra: { mainColor: '#abcdef' },
  })
  assert.equal(answer.success, true)
  assert.match(answer.roomId, /^\S+$/)
  assert.equal(answer.url, `${emu.chatUrl}/${answer.roomId}`)
  const [sent] = await sentSince(before)
  assert.deepEqual(sent.json(), {
    name: 'Webinar',
    passwordProtected: 'on',
    roomPassword: 's3cret',
    enableChannels: 'off',
    chatRoomPermissionLevel: 'members',
    customization: { sidebarColor: '#123456' },
    mainColor: '#abcdef',
  })
  const created = await client.getChatRoom(answer.roomId)
  assert.equal(created.passwordProtected, true)
  assert.equal(created.enableChannels, false)
  assert.equal(created.extra.mainColor, '#abcdef')

  const noPassword = await rejection(client.createChatRoom({ passwordProtected: true }))
  assert.equal(noPassword.kind, 'invalid_request')
  assert.match(noPassword.detail, /roomPassword/)
  const seq = await lastSeq()
  for (const [params, message] of [
    [{ passwordProtcted: true }, /unknown parameter "passwordProtcted"/],
    [{ extra: { name: 'twice' } }, /name is a parameter of its own/],
    [{ passwordProtected: 'on' }, /passwordProtected must be true or false/],
    [{ metadata: 'm'.repeat(1001) }, /metadata/],
  ]) {
    const error = await rejection(client.createChatRoom(params))
    assert.ok(error instanceof RoomchatValidationError, String(error))
    assert.match(error.message, message)
  }
  assert.equal((await sentSince(seq)).length, 0, 'nothing sent for a refused call')
})

test('listChatRooms: Room records, unknown fields kept in extra', async () => {
  const id = await room({ description: 'all hands' })
  const listed = await client.listChatRooms()
  assert.ok(Array.isArray(listed))
  const found = listed.find((r) => r.roomId === id)
  assert.equal(found.description, 'all hands')
  assert.equal(found.passwordProtected, false)
  assert.equal(found.roomPassword, undefined) // null on the wire: absent
  assert.equal(found.chatOff, false)
  assert.equal(typeof found.extra, 'object')
})

test('getChatRoom: the typed room; an unknown one is not_found (404 {})', async () => {
  const id = await room({ name: 'Typed' })
  const got = await client.getChatRoom(id)
  assert.equal(got.roomId, id)
  assert.equal(got.name, 'Typed')
  assert.equal(got.enableOneToOneChat, false)
  const error = await assertNotFound(client.getChatRoom('no-such-room'))
  assert.equal(error.status, 404)
})

test('updateChatRoom: the change visible through getChatRoom; an unknown room is not_found', async () => {
  const id = await room()
  const answer = await client.updateChatRoom(id, { name: 'Renamed', passwordProtected: false, metadata: 'm' })
  assert.deepEqual([answer.success, answer.roomId], [true, id])
  const got = await client.getChatRoom(id)
  assert.deepEqual([got.name, got.metadata, got.passwordProtected], ['Renamed', 'm', false])
  await assertNotFound(client.updateChatRoom('no-such-room', { name: 'x' }))
})

test('deleteChatRoom: the room and its messages gone; again, not_found', async () => {
  const id = await room()
  await emu.seedMessages(id, 3)
  const answer = await client.deleteChatRoom(id)
  assert.deepEqual([answer.success, answer.roomId], [true, id])
  await assertNotFound(client.getChatRoom(id))
  await assertNotFound(client.roomMessages(id))
  assert.ok(!(await client.listChatRooms()).some((r) => r.roomId === id))
  await assertNotFound(client.deleteChatRoom(id))
})

test('turnChatOff / turnChatOn: /off and /on, users cannot post while off, the system can', async () => {
  const id = await room()
  const jon = await user('crm-chat-off')
  const before = await lastSeq()
  assert.equal((await client.turnChatOff(id)).success, true)
  assert.equal((await client.getChatRoom(id)).chatOff, true)
  const refused = await rejection(client.sendRoomMessage(id, 'hello', { userAccessToken: jon.accessToken }))
  assert.equal(refused.kind, 'invalid_request')
  await client.sendRoomMessage(id, 'maintenance', { systemMessage: true })
  assert.equal((await client.turnChatOn(id)).success, true)
  assert.equal((await client.getChatRoom(id)).chatOff, false)
  await client.sendRoomMessage(id, 'hello', { userAccessToken: jon.accessToken })
  const paths = (await sentSince(before)).map((e) => `${e.method} ${e.path}`)
  assert.ok(paths.includes(`POST /consumer/api/v1/chatRoom/${id}/off`), paths.join('\n'))
  assert.ok(paths.includes(`POST /consumer/api/v1/chatRoom/${id}/on`), paths.join('\n'))
  assert.deepEqual(
    (await client.roomMessages(id)).messages.map((m) => m.message),
    ['maintenance', 'hello'],
  )
  await assertNotFound(client.turnChatOff('no-such-room'))
  await assertNotFound(client.turnChatOn('no-such-room'))
})

test('setChatOffMessage: the room shows it', async () => {
  const id = await room()
  assert.equal((await client.setChatOffMessage(id, 'Back at 10:00')).success, true)
  assert.equal((await client.getChatRoom(id)).extra.chatOffMessage, 'Back at 10:00')
  await assertNotFound(client.setChatOffMessage('no-such-room', 'x'))
})

// ---- messages, channels, conversations ------------------------------------------------

test('roomMessages: a typed page (authors, files), limit/skip, onlyAttachments', async () => {
  const id = await room()
  await emu.seedMessages(id, 5, { attachmentEvery: 2, text: 'seeded' })
  const page = await client.roomMessages(id, { limit: 2, skip: 1 })
  assert.deepEqual([page.limit, page.skip, page.totalRecords, page.count], [2, 1, 5, 2])
  assert.deepEqual(page.messages.map((m) => m.message), ['seeded 2', 'seeded 3'])
  const [second] = page.messages
  assert.equal(second.chatRoom, id)
  assert.equal(second.user.username, 'seed-author')
  assert.equal(second.file.fileName, 'file-2.png')
  assert.equal(second.file.size, 1024)
  assert.match(second.id, /^[0-9a-f]{24}$/)
  const files = await client.roomMessages(id, { onlyAttachments: true })
  assert.deepEqual(files.messages.map((m) => m.message), ['seeded 2', 'seeded 4'])
  await assertNotFound(client.roomMessages('no-such-room'))
})

test('deleteRoomMessages: every message gone, or the channel ones kept', async () => {
  const id = await room()
  const channel = await emu.addChannel(id, { channelName: 'qa' })
  await emu.seedMessages(id, 3)
  await emu.seedMessages(id, 2, { channelId: channel._id })
  const kept = await client.deleteRoomMessages(id, { doNotDeleteChannelMessages: true })
  assert.deepEqual([kept.success, kept.roomId], [true, id])
  assert.equal((await client.roomMessages(id)).totalRecords, 0)
  assert.equal((await client.channelMessages(id, channel._id)).totalRecords, 2)
  await client.deleteRoomMessages(id)
  assert.equal((await client.channelMessages(id, channel._id)).totalRecords, 0)
  await assertNotFound(client.deleteRoomMessages('no-such-room'))
})

test('sendRoomMessage: as a user, the system, or a throw-away user; exactly one author', async () => {
  const id = await room()
  const ann = await user('crm-ann', 'ann')
  await client.sendRoomMessage(id, 'from ann', { userAccessToken: ann.accessToken })
  await client.sendRoomMessage(id, 'from the system', { systemMessage: true })
  const answer = await client.sendRoomMessage(id, 'from a guest', { user: { username: 'guest-1' } })
  assert.equal(answer.success, true)
  const { messages } = await client.roomMessages(id)
  assert.deepEqual(
    messages.map((m) => [m.message, m.user.username]),
    [
      ['from ann', 'ann'],
      ['from the system', 'system'],
      ['from a guest', 'guest-1'],
    ],
  )
  assert.equal(messages[0].user.uniqueUserIdentifier, 'crm-ann')
  const seq = await lastSeq()
  const both = await rejection(client.sendRoomMessage(id, 'x', { systemMessage: true, user: { username: 'y' } }))
  assert.ok(both instanceof RoomchatValidationError)
  const none = await rejection(client.sendRoomMessage(id, 'x', {}))
  assert.ok(none instanceof RoomchatValidationError)
  assert.equal((await sentSince(seq)).length, 0)
  await assertNotFound(client.sendRoomMessage('no-such-room', 'x', { systemMessage: true }))
})

test('createChannel: the typed channel, its messages readable', async () => {
  const id = await room({ enableChannels: true })
  const channel = await client.createChannel(id, 'questions', { notifyAllUsers: true, metadata: 'q' })
  assert.match(channel.id, /^[0-9a-f]{24}$/)
  assert.deepEqual([channel.channelName, channel.notifyAllUsers, channel.metadata, channel.roomId], ['questions', true, 'q', id])
  assert.equal((await client.channelMessages(id, channel.id)).totalRecords, 0)
  await assertNotFound(client.createChannel('no-such-room', 'x'))
})

test('updateChannel: the changed channel; an unknown one is not_found', async () => {
  const id = await room()
  const channel = await emu.addChannel(id, { channelName: 'old' })
  const updated = await client.updateChannel(id, channel._id, { channelName: 'new', enabled: false })
  assert.deepEqual([updated.id, updated.channelName, updated.enabled], [channel._id, 'new', false])
  await assertNotFound(client.updateChannel(id, '0'.repeat(24), { channelName: 'x' }))
})

test('sendChannelMessage and channelMessages: posted into the channel, not the room', async () => {
  const id = await room()
  const channel = await emu.addChannel(id, { channelName: 'general' })
  assert.equal((await client.sendChannelMessage(id, channel._id, 'in the channel', { systemMessage: true })).success, true)
  const page = await client.channelMessages(id, channel._id, { limit: 10 })
  assert.deepEqual([page.totalRecords, page.count], [1, 1])
  assert.equal(page.messages[0].message, 'in the channel')
  assert.equal(page.messages[0].channel, channel._id)
  assert.equal((await client.roomMessages(id)).totalRecords, 0)
  await assertNotFound(client.sendChannelMessage(id, '0'.repeat(24), 'x', { systemMessage: true }))
  await assertNotFound(client.channelMessages(id, '0'.repeat(24)))
})

test('deleteChannelMessage: the message gone; again, not_found', async () => {
  const id = await room()
  const channel = await emu.addChannel(id, { channelName: 'c' })
  const [first, second] = await emu.addMessages(id, ['one', 'two'], { channelId: channel._id })
  const answer = await client.deleteChannelMessage(id, channel._id, first)
  assert.equal(answer.success, true)
  const { messages } = await client.channelMessages(id, channel._id)
  assert.deepEqual(messages.map((m) => m.id), [second])
  await assertNotFound(client.deleteChannelMessage(id, channel._id, first))
})

test('listConversations: each with its two typed members, by either path form', async () => {
  const id = await room()
  const bob = await user('crm-bob', 'bob')
  const conversationId = await emu.addConversation(id, [['bob', 'hi']], {
    memberOne: { uniqueUserIdentifier: 'crm-bob' },
    memberTwo: { username: 'carol' },
  })
  const [conversation] = await client.listConversations(id)
  assert.deepEqual([conversation.conversationId, conversation.roomId], [conversationId, id])
  assert.equal(conversation.memberOne.username, 'bob')
  assert.equal(conversation.memberOne.uniqueUserIdentifier, 'crm-bob')
  assert.equal(conversation.memberOne.id, bob.user.id)
  assert.equal(conversation.memberTwo.username, 'carol')
  const before = await lastSeq()
  assert.equal((await client.listConversations(id, { pathForm: 'chatroom' })).length, 1)
  assert.equal((await sentSince(before))[0].path, `/consumer/api/v2/chatroom/${id}/conversations`)
  await assertNotFound(client.listConversations('no-such-room'))
})

// ---- users ------------------------------------------------------------------------------

test('updateUser: by uniqueUserIdentifier, the changed user answered and listed', async () => {
  await user('crm-upd', 'before')
  const updated = await client.updateUser({ uniqueUserIdentifier: 'crm-upd', username: 'after', isModerator: true, meta: { plan: 'pro' } })
  assert.deepEqual([updated.username, updated.isModerator], ['after', true])
  assert.ok(updated.accessToken.length > 0)
  assert.equal((await client.getUser('crm-upd')).username, 'after')
  const missing = await rejection(client.updateUser({ userId: '0'.repeat(24), username: 'x' }))
  assert.equal(missing.kind, 'user_not_found')
})

test('createUserV2: the user and a token, a member of the room with its role', async () => {
  const id = await room()
  const made = await client.createUserV2('crm-v2', 'vee', {
    firstName: 'Vee',
    email: 'vee@example.com',
    membershipDetails: { roleName: 'moderator', roomId: id },
  })
  assert.equal(made.success, true)
  assert.ok(made.accessToken.length > 0)
  assert.deepEqual([made.user.username, made.user.firstName, made.user.uniqueUserIdentifier], ['vee', 'Vee', 'crm-v2'])
  const members = await client.listMembers(id)
  assert.deepEqual(members.data.map((m) => [m.user.username, m.roleName]), [['vee', 'moderator']])
  await assertNotFound(client.createUserV2('crm-v2b', 'x', { membershipDetails: { roleName: 'user', roomId: 'no-such-room' } }))
})

test('getUser: the profile; an unknown identifier is user_not_found', async () => {
  await client.createUserV2('crm-get', 'gina', { lastName: 'G', meta: { tier: 2 } })
  const profile = await client.getUser('crm-get')
  assert.deepEqual([profile.username, profile.lastName, profile.provisioned], ['gina', 'G', true])
  assert.deepEqual(profile.meta, { tier: 2 })
  assert.equal(typeof profile.created, 'string')
  const error = await rejection(client.getUser('crm-nobody'))
  assert.deepEqual([error.kind, error.code], ['user_not_found', 'ROOMCHAT_USER_NOT_FOUND'])
})

test('userRooms: the rooms a user is a member of', async () => {
  const one = await room({ name: 'One' })
  const two = await room({ name: 'Two' })
  await user('crm-rooms')
  await client.setMember(one, 'crm-rooms', 'user')
  await client.setMember(two, 'crm-rooms', 'guest')
  const listed = await client.userRooms('crm-rooms')
  assert.deepEqual(
    listed.map((r) => [r.roomId, r.name]).sort(),
    [
      [one, 'One'],
      [two, 'Two'],
    ],
  )
  assert.equal((await rejection(client.userRooms('crm-nobody'))).kind, 'user_not_found')
})

test('removeUser: gone for good, memberships erased; again, user_not_found', async () => {
  const id = await room()
  await user('crm-gone')
  await client.setMember(id, 'crm-gone', 'user')
  const answer = await client.removeUser({ uniqueUserIdentifier: 'crm-gone' })
  assert.deepEqual([answer.success, answer.message], [true, 'user removed'])
  assert.equal((await rejection(client.getUser('crm-gone'))).kind, 'user_not_found')
  assert.equal((await client.listMembers(id)).total, 0)
  assert.equal((await rejection(client.removeUser({ uniqueUserIdentifier: 'crm-gone' }))).kind, 'user_not_found')
})

// ---- members ----------------------------------------------------------------------------

test('listMembers: a typed page with limit/skip; a limit over 200 is refused before sending', async () => {
  const id = await room({ name: 'Members' })
  for (const n of [1, 2, 3]) {
    await user(`crm-m${n}`, `m${n}`)
    await emu.addMember(id, { uniqueUserIdentifier: `crm-m${n}`, roleName: n === 1 ? 'admin' : 'user' })
  }
  const page = await client.listMembers(id, { limit: 2, skip: 1 })
  assert.deepEqual([page.total, page.limit, page.skip], [3, 2, 1])
  assert.deepEqual(page.data.map((m) => m.user.username), ['m2', 'm3'])
  assert.deepEqual([page.data[0].chatRoom.roomId, page.data[0].chatRoom.name, page.data[0].roleName], [id, 'Members', 'user'])
  const seq = await lastSeq()
  assert.ok((await rejection(client.listMembers(id, { limit: 201 }))) instanceof RoomchatValidationError)
  assert.equal((await sentSince(seq)).length, 0)
  await assertNotFound(client.listMembers('no-such-room'))
})

test('setMember: adds a member, then changes the role (an upsert)', async () => {
  const id = await room()
  await user('crm-host', 'host')
  const added = await client.setMember(id, 'crm-host', 'user')
  assert.deepEqual([added.roleName, added.user.username, added.chatRoom.roomId], ['user', 'host', id])
  const promoted = await client.setMember(id, 'crm-host', 'moderator')
  assert.equal(promoted.roleName, 'moderator')
  const { data } = await client.listMembers(id)
  assert.deepEqual(data.map((m) => m.roleName), ['moderator'])
  assert.equal((await rejection(client.setMember(id, 'crm-nobody', 'user'))).kind, 'user_not_found')
  await assertNotFound(client.setMember('no-such-room', 'crm-host', 'user'))
  assert.ok((await rejection(client.setMember(id, 'crm-host', 'owner'))) instanceof RoomchatValidationError)
})

test('removeMember: no longer a member; again, not_found (not a member)', async () => {
  const id = await room()
  await user('crm-leave')
  await client.setMember(id, 'crm-leave', 'user')
  const answer = await client.removeMember(id, 'crm-leave')
  assert.deepEqual([answer.success, answer.message], [true, 'user removed as member'])
  assert.equal((await client.listMembers(id)).total, 0)
  const again = await assertNotFound(client.removeMember(id, 'crm-leave'))
  assert.match(again.detail, /not a member/)
})

// ---- bots ---------------------------------------------------------------------------------

test('createBot: the typed bot; the trigger/visibility rule is invalid_request', async () => {
  const made = await client.createBot('faq-bot', 'https://hooks.example/faq', { trigger: 'mention', messageHistoryLimit: 5 })
  assert.equal(made.success, true)
  assert.match(made.bot.id, /^[0-9a-f]{24}$/)
  assert.deepEqual([made.bot.name, made.bot.webhookURL, made.bot.trigger, made.bot.messageHistoryLimit], ['faq-bot', 'https://hooks.example/faq', 'mention', 5])
  const rule = await rejection(client.createBot('loud', 'https://hooks.example/l', { trigger: 'message', messageVisibility: 'private' }))
  assert.equal(rule.kind, 'invalid_request')
})

test('listBots: every bot, typed', async () => {
  const made = await emu.createBot({ name: 'listed-bot', webhookURL: 'https://hooks.example/x', trigger: 'mention', messageVisibility: 'public' })
  const listed = await client.listBots()
  assert.equal(listed.success, true)
  const found = listed.bots.find((b) => b.id === made._id)
  assert.deepEqual([found.name, found.trigger], ['listed-bot', 'mention'])
})

test('enableBot / disableBot: the bot’s state; an unknown bot is not_found (a 401 read by its body)', async () => {
  const made = await emu.createBot({ name: 'toggled', webhookURL: 'https://hooks.example/t', trigger: 'mention', messageVisibility: 'public' })
  assert.equal((await client.disableBot(made._id)).bot.enabled, false)
  assert.equal((await client.listBots()).bots.find((b) => b.id === made._id).enabled, false)
  assert.equal((await client.enableBot(made._id)).bot.enabled, true)
  const error = await assertNotFound(client.enableBot('0'.repeat(24)))
  assert.equal(error.status, 401)
  await assertNotFound(client.disableBot('0'.repeat(24)))
})

test('enableBotInRoom / disableBotInRoom: a room’s bot may answer only while enabled there', async () => {
  const id = await room()
  const made = await emu.createBot({ name: 'room-bot', webhookURL: 'https://hooks.example/r', trigger: 'mention', messageVisibility: 'public' })
  const enabled = await client.enableBotInRoom(made._id, id)
  assert.deepEqual([enabled.success, enabled.botStatus.status], [true, 'ENABLED'])
  await client.sendBotMessage(made._id, id, 'hello from the bot')
  const disabled = await client.disableBotInRoom(made._id, id)
  assert.deepEqual([disabled.success, disabled.message], [true, 'Bot successfully disabled in the chat room'])
  assert.equal((await rejection(client.sendBotMessage(made._id, id, 'again'))).kind, 'invalid_request')
  await assertNotFound(client.enableBotInRoom(made._id, 'no-such-room'))
  await assertNotFound(client.disableBotInRoom('0'.repeat(24), id))
})

test('sendBotMessage: the message with its action buttons, typed in the history', async () => {
  const id = await room()
  const made = await emu.createBot({ name: 'buttons', webhookURL: 'https://hooks.example/b', trigger: 'mention', messageVisibility: 'public' })
  await client.enableBotInRoom(made._id, id)
  const answer = await client.sendBotMessage(made._id, id, 'pick one', {
    actionButtons: [
      { type: 'link', displayText: 'Docs', id: 'docs', url: 'https://docs.example' },
      { type: 'action', displayText: 'Yes', id: 'yes', payload: 'y' },
    ],
  })
  assert.equal(answer.success, true)
  const [message] = (await client.roomMessages(id)).messages
  assert.equal(message.message, 'pick one')
  assert.equal(message.user.username, 'buttons')
  assert.deepEqual(
    message.actionButtons.map((b) => [b.type, b.id, b.displayText, b.url]),
    [
      ['link', 'docs', 'Docs', 'https://docs.example'],
      ['action', 'yes', 'Yes', undefined],
    ],
  )
  assert.ok((await rejection(client.sendBotMessage(made._id, id, 'm'.repeat(1001)))) instanceof RoomchatValidationError)
  await assertNotFound(client.sendBotMessage('0'.repeat(24), id, 'x'))
})

// ---- paging and the stories --------------------------------------------------------------

test('iterRoomMessages: a history export with for await, oldest first, resumable from nextSkip', async () => {
  const id = await room()
  await emu.seedMessages(id, 450, { text: 'm' })
  const texts = []
  for await (const message of client.iterRoomMessages(id, { pageSize: 200 })) texts.push(message.message)
  assert.equal(texts.length, 450)
  assert.deepEqual([texts[0], texts[449]], ['m 1', 'm 450'])
  const requests = (await emu.journal()).filter((e) => e.path === `/consumer/api/v1/chatRoom/${id}/messages`)
  assert.deepEqual(requests.map((e) => [e.params.limit, e.params.skip]), [
    ['200', '0'],
    ['200', '200'],
    ['200', '400'],
  ])

  // Stopped after 250: a new iterator from its nextSkip yields the rest.
  const first = client.iterRoomMessages(id, { pageSize: 100 })
  let seen = 0
  for await (const message of first) {
    seen += 1
    if (seen === 250) {
      assert.equal(message.message, 'm 250')
      break
    }
  }
  assert.equal(first.nextSkip, 250)
  const rest = []
  for await (const message of client.iterRoomMessages(id, { skip: first.nextSkip, pageSize: 100 })) rest.push(message.message)
  assert.deepEqual([rest.length, rest[0]], [200, 'm 251'])

  // Pages, and only the messages with a file.
  const sizes = []
  for await (const page of client.roomMessagesPages(id, { pageSize: 200 })) sizes.push([page.skip, page.count, page.totalRecords])
  assert.deepEqual(sizes, [
    [0, 200, 450],
    [200, 200, 450],
    [400, 50, 450],
  ])
  const other = await room()
  await emu.seedMessages(other, 10, { attachmentEvery: 5 })
  const withFiles = []
  for await (const message of client.iterRoomMessages(other, { onlyAttachments: true })) withFiles.push(message.file.fileName)
  assert.deepEqual(withFiles, ['file-5.png', 'file-10.png'])
})

test('paging: an error rejects one step, the next step fetches the same page again; unknown room not_found', async () => {
  const id = await room()
  await emu.seedMessages(id, 30)
  const it = client.iterRoomMessages(id, { pageSize: 10 }, { maxRetries: 0 })
  for (let n = 0; n < 10; n += 1) await it.next()
  await emu.failNext({ path: `/consumer/api/v1/chatRoom/${id}/messages`, status: 503 })
  const error = await rejection(it.next())
  assert.equal(error.kind, 'server_error')
  assert.equal(it.nextSkip, 10)
  const after = await it.next()
  assert.equal(after.value.message, 'message 11')
  let rest = 1
  for await (const _ of it) rest += 1
  assert.equal(rest, 20)
  const unknown = client.iterRoomMessages('no-such-room')
  await assertNotFound(unknown.next())
  await assertNotFound(unknown.next())
})

test('iterChannelMessages and iterListMembers (and their pages)', async () => {
  const id = await room()
  const channel = await emu.addChannel(id, { channelName: 'export' })
  await emu.seedMessages(id, 25, { channelId: channel._id, text: 'c' })
  const texts = []
  for await (const message of client.iterChannelMessages(id, channel._id, { pageSize: 10 })) texts.push(message.message)
  assert.equal(texts.length, 25)
  assert.equal(texts[24], 'c 25')
  let pages = 0
  for await (const page of client.channelMessagesPages(id, channel._id, { pageSize: 10 })) pages += page.count > 0 ? 1 : 0
  assert.equal(pages, 3)

  for (let n = 0; n < 5; n += 1) {
    await user(`crm-it${n}`, `it${n}`)
    await emu.addMember(id, { uniqueUserIdentifier: `crm-it${n}` })
  }
  const names = []
  for await (const member of client.iterListMembers(id, { pageSize: 2 })) names.push(member.user.username)
  assert.deepEqual(names, ['it0', 'it1', 'it2', 'it3', 'it4'])
  const totals = []
  for await (const page of client.listMembersPages(id, { pageSize: 2, skip: 1 })) totals.push(page.data.length)
  assert.deepEqual(totals, [2, 2])
  const tooBig = client.iterListMembers(id, { pageSize: 201 })
  const refused = await rejection(tooBig.next())
  assert.ok(refused instanceof RoomchatValidationError)
  // Issue 37, item 20: the error names what the caller passed (pageSize), not the request's limit;
  // a page size of 0 is refused the same way for every listing (the declared limit's least is 1).
  assert.match(refused.message, /pageSize/)
  assert.doesNotMatch(refused.message, /\blimit\b/)
  for (const iterator of [client.iterListMembers(id, { pageSize: 0 }), client.iterRoomMessages(id, { pageSize: 0 }), client.users({ pageSize: 0 })]) {
    const zero = await rejection(iterator.next())
    assert.ok(zero instanceof RoomchatValidationError)
    assert.match(zero.message, /pageSize/)
  }
})

test('the webinar story: a room, its moderator, posts as the system and a user, the history page by page, the export, the delete', async () => {
  // Provision the room and its host.
  const { roomId } = await client.createChatRoom({ name: 'Webinar: Q3 results', enableChannels: false })
  await client.createUserV2('crm-host-7', 'Dana (host)')
  const host = await client.setMember(roomId, 'crm-host-7', 'moderator')
  assert.equal(host.roleName, 'moderator')
  const attendee = await client.createUserV2('crm-att-8', 'Sam', { membershipDetails: { roleName: 'user', roomId } })

  // Announce, then let an attendee talk.
  await client.sendRoomMessage(roomId, 'The webinar starts in 5 minutes', { systemMessage: true })
  await client.sendRoomMessage(roomId, 'Hello!', { userAccessToken: attendee.accessToken })
  await emu.seedMessages(roomId, 120, { uniqueUserIdentifier: 'crm-att-8', text: 'question' })

  // Read the history page by page, then export it whole.
  const first = await client.roomMessages(roomId, { limit: 50 })
  assert.deepEqual([first.totalRecords, first.count], [122, 50])
  assert.equal(first.messages[0].user.username, 'system')
  const transcript = []
  for await (const message of client.iterRoomMessages(roomId)) transcript.push(`${message.user.username}: ${message.message}`)
  assert.equal(transcript.length, 122)
  assert.deepEqual(transcript.slice(0, 3), ['system: The webinar starts in 5 minutes', 'Sam: Hello!', 'Sam: question 3'])

  // Close the room.
  assert.equal((await client.deleteChatRoom(roomId)).success, true)
  await assertNotFound(client.getChatRoom(roomId))
  assert.deepEqual(await client.userRooms('crm-host-7'), [])
})
