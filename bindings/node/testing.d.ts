// Types of `roomchat/testing`: the roomchat emulator in your own tests.
import type { Client, ClientOptions } from './index'

/** What `startEmulator` takes; every field is optional. */
export interface StartEmulatorOptions {
  /** The emulator executable (default: `$ROOMCHAT_EMULATOR`, else the `roomchat-emulator` package's). */
  binary?: string
  /** The account's private key (default: a random test key, renewed at each reset). */
  privateKey?: string
  /** The account's public key (default: a random test key, renewed at each reset). */
  publicKey?: string
  /** The account's rate limit (default 600 per 60 000 ms, as the service). */
  rateLimit?: { requests: number; windowMs: number }
  /** `X-RateLimit-*` on answers and `Retry-After` on 429s (default false: the service documents none). */
  rateLimitHeaders?: boolean
  /** Users named `seed-user-<k>` made at start and at each reset (default 0). */
  seedUsers?: number
  /** Serve HTTPS with a CA of its own (`caFile`, `ca`), which `client()` trusts (default false). */
  tls?: boolean
  /** How long to wait for the emulator to be ready (default 10 000 ms). */
  startupTimeoutMs?: number
}

/** A fault's target: `path` exact, or a prefix ending in `*` (`'*'`: every request); `method` any when left out. */
export interface FaultTarget {
  path?: string
  method?: string
  /** How many matching requests it applies to (default 1). */
  times?: number
}

export interface FailNextOptions extends FaultTarget {
  /** The status answered (default 500). */
  status?: number
  /** Text, or a value sent as JSON (default: the service's own body for 429, else `{"message": <reason>}`). */
  body?: string | Record<string, unknown> | unknown[]
  /** `Retry-After`: whole seconds, or an HTTP date. */
  retryAfter?: number | string
  /** More headers on the answer. */
  headers?: Record<string, string>
  /** The answer's content type (default `application/json`). */
  contentType?: string
}

export interface DelayNextOptions extends FaultTarget {
  /** How long the answer is held back, in milliseconds. */
  ms: number
}

/** A message of `addConversation`: `[username, text]`, or the emulator's own form. */
export type SeedMessage =
  | [username: string, text: string]
  | { messages: string; user: { username: string; _id?: string; email?: string }; created?: string }

/** An existing user of the emulator, by one of its identifiers. */
export type SeedUserRef = { userId: string; uniqueUserIdentifier?: never } | { uniqueUserIdentifier: string; userId?: never }

/** A user made up for a seeded message or conversation. */
export interface SeedAuthorUser {
  username: string
  [field: string]: unknown
}

/**
 * The author of seeded room or channel messages: the room's system, an existing
 * user, a bot, or a throw-away user (`user`; `seed-author` when none is given).
 */
export type SeedAuthor =
  | { system: true }
  | { userId: string }
  | { uniqueUserIdentifier: string }
  | { botId: string }
  | { user: SeedAuthorUser }
  | {}

/** A seeded room or channel message. */
export type SeedRoomMessage = SeedAuthor & {
  message: string
  /** ISO 8601 (default: now). */
  created?: string
  file?: Record<string, unknown>
  actionButtons?: Array<Record<string, unknown>>
}

/** One request the emulator received (REST API and sign-in pages; never the admin API). */
export class JournalEntry {
  private constructor()
  /** Arrival number, from 1 (a reset starts again). */
  readonly seq: number
  readonly method: string
  readonly path: string
  /** The raw query string; `auth` and `publicKey` show as `REDACTED`. */
  readonly query: string
  /** The query's pairs (a repeated name keeps its last value). */
  readonly params: Record<string, string>
  readonly body: string
  /** What was answered; 0 when the connection was dropped without an answer. */
  readonly status: number
  readonly receivedAt: Date
  readonly userAgent: string | null
  /**
   * The request's headers, as Node's `IncomingMessage.headers`: names in lower case,
   * a repeated name's values joined by `', '` (frozen). The values of `authorization`,
   * `proxy-authorization`, `cookie`, `set-cookie` and of any header whose name holds
   * `token`, `secret`, `passw`, `credential`, `session`, `signature`, `jwt`, `bearer` or
   * `auth`, or ends in `key` or `keys` (any case, `-` and `_` aside: `x-private-key`) are
   * `'REDACTED'`, and
   * the private key shows nowhere. At most 8 KiB of them (the first).
   */
  readonly headers: Readonly<Record<string, string>>
  /** Whether the emulator kept only the start of a long field. */
  readonly truncated: boolean
  /** The body parsed as JSON (`null` for an empty body). */
  json(): unknown
}

/** A user as the emulator holds it, deactivated ones included (`active` false). */
export interface EmulatedUser {
  userId: string
  username: string
  isModerator: boolean
  active: boolean
  /** ISO 8601. */
  created: string
  chatRoom?: string
  uniqueUserIdentifier?: string
  email?: string
  profilePic?: string
  externalUserId?: string
  meta?: unknown
}

/** A running emulator and its admin API (made by `startEmulator`). */
export class Emulator {
  private constructor()
  /** The REST base URL, e.g. `http://127.0.0.1:41234`. */
  readonly baseUrl: string
  /** Where sign-in pages are served (`${baseUrl}/chat`). */
  readonly chatUrl: string
  /** The admin API's base URL (`${baseUrl}/_emulator`). */
  readonly adminUrl: string
  /** The account's private key (renewed by `reset()` unless given). */
  readonly privateKey: string
  readonly publicKey: string
  /** With `tls`: the path of the CA's PEM file, and the PEM itself. */
  readonly caFile: string | undefined
  readonly ca: string | undefined
  readonly pid: number
  readonly running: boolean
  /** Stops it, frees its port and removes its CA file; safe to call twice. */
  stop(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
  /**
   * Back to how it started: users (the `seedUsers` made again), rooms,
   * conversations, faults, journal, plan gates and rate-limit counters cleared,
   * the rate limit restored, and new keys unless given to `startEmulator`.
   */
  reset(): Promise<void>
  /** Adds `n` users named `seed-user-<k>`; resolves to the number of active users. */
  seedUsers(n: number): Promise<number>
  /** Creates a room (`name` "General" and a made-up `roomId` unless given); resolves to it. */
  createRoom(room?: { roomId?: string; name?: string; [field: string]: unknown }): Promise<Record<string, unknown>>
  /** Creates a bot (`name` and `webhookURL` required, the others as the service defaults them); resolves to it, with its `_id`. */
  createBot(bot: { name: string; webhookURL: string; [field: string]: unknown }): Promise<Record<string, unknown>>
  /**
   * Adds messages to a one-to-one conversation of `roomId` (a new one unless
   * `conversationId`); resolves to its id. `memberOne`/`memberTwo` are its members,
   * else the messages' first two authors.
   */
  addConversation(
    roomId: string,
    messages: SeedMessage[],
    options?: { conversationId?: string; memberOne?: SeedUserRef | SeedAuthorUser; memberTwo?: SeedUserRef | SeedAuthorUser },
  ): Promise<string>
  /** Posts messages into a room, or one of its channels (`channelId`), after those it holds; resolves to their ids. */
  addMessages(roomId: string, messages: Array<string | SeedRoomMessage>, options?: { channelId?: string }): Promise<string[]>
  /**
   * Posts `count` messages at once (`"<text> <n>"`, `n` their position; every
   * `attachmentEvery`-th with a file) by one author; resolves to how many the room
   * (or channel) holds.
   */
  seedMessages(
    roomId: string,
    count: number,
    options?: SeedAuthor & { channelId?: string; text?: string; attachmentEvery?: number },
  ): Promise<number>
  /** Creates a channel in `roomId`; resolves to it, with its `_id`. */
  addChannel(
    roomId: string,
    channel: { channelName: string; enabled?: boolean; notifyAllUsers?: boolean; metadata?: string },
  ): Promise<Record<string, unknown>>
  /** Makes a user a member of `roomId` with `roleName` (default `user`); resolves to the member record. */
  addMember(roomId: string, member: SeedUserRef & { roleName?: 'user' | 'guest' | 'admin' | 'moderator' }): Promise<Record<string, unknown>>
  /** The next matching requests are answered `status` instead, without taking effect. */
  failNext(options?: FailNextOptions): Promise<void>
  /** The next matching requests take effect, and their answers come `ms` late. */
  delayNext(options: DelayNextOptions): Promise<void>
  /** The next matching requests get no answer: the connection is closed (no effect). */
  dropConnectionNext(options?: FaultTarget): Promise<void>
  /** The account's rate limit until the next reset; `headers` turns the rate-limit headers on or off. */
  setRateLimit(requests: number, windowMs?: number, options?: { headers?: boolean }): Promise<void>
  /** Takes `"GET /consumer/api/v1/chatrooms"` (or a path, for every method) out of the plan. */
  gate(endpoint: string): Promise<void>
  /** The requests received since the last reset, oldest first. */
  journal(): Promise<JournalEntry[]>
  /** Every user it holds, deactivated ones too, in creation order. */
  users(): Promise<EmulatedUser[]>
  /** A Client of this emulator (its URLs, keys and CA; no client-side throttling); `options` override. */
  client(options?: Partial<ClientOptions>): Client
}

/** The emulator could not start, exited, or refused an admin request (`code` `ROOMCHAT_EMULATOR_ERROR`). */
export class EmulatorError extends Error {
  code: 'ROOMCHAT_EMULATOR_ERROR' | 'ROOMCHAT_EMULATOR_NOT_FOUND'
}

/** No emulator executable (`code` `ROOMCHAT_EMULATOR_NOT_FOUND`): `npm install -D roomchat-emulator`. */
export class EmulatorNotFoundError extends EmulatorError {
  code: 'ROOMCHAT_EMULATOR_NOT_FOUND'
}

/** Starts an emulator on a free loopback port; resolves once it answers. */
export function startEmulator(options?: StartEmulatorOptions): Promise<Emulator>

/** The executable `startEmulator` runs: `binary`, else `$ROOMCHAT_EMULATOR`, else the `roomchat-emulator` package's. */
export function findEmulator(binary?: string): string
