// Benchmark (printed figures, not a test): a history export, every message of a
// room of 100,000 through `for await (const m of client.iterRoomMessages(roomId))`
// (core's iterator, 200 a page, each page fetched on the package's threads),
// against one release emulator seeded in bulk. Prints messages/s, the RSS
// before and at the end, the largest RSS sampled during the export (every 20 ms)
// and the process's peak RSS (process.resourceUsage().maxRSS: the whole life of
// the process, so the loaded round's includes the idle round's). The first export
// of the process gives the README's figures (the largest RSS sampled during it
// against the RSS when it started; the peak RSS after three exports against the
// same start); then twice: on the machine as it is (idle), then with one
// busy-loop process per core beside it (../../../scripts/bench/cpu-load.sh).
//
//   node bench/export-messages.mjs       (ROOMCHAT_BENCH_MESSAGES messages, default 100000)
//   ROOMCHAT_BENCH_ASSERT_RSS=1          (exit 1 if the RSS grew more than the README says)
//   ROOMCHAT_EMULATOR=path/to/roomchat-emulator (default: target/release/roomchat-emulator)
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startEmulator } from 'roomchat/testing'
import { loadedLabel, withCpuLoad } from './cpu-load.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..', '..')
const target = process.env.CARGO_TARGET_DIR || path.join(root, 'target')
const binary = process.env.ROOMCHAT_EMULATOR || path.join(target, 'release', 'roomchat-emulator')
const MESSAGES = Number(process.env.ROOMCHAT_BENCH_MESSAGES || 100_000)
/** What bindings/node/README.md promises: the first export of a process raises its RSS by at most this many MiB. */
const RSS_PROMISE_MIB = 16
/** … and the process's peak RSS stays within this many MiB of where the first export started, however many follow. */
const RSS_CEILING_MIB = 28
/** Exit non-zero when the RSS grows more than the README says (the test command sets it). */
const ASSERT_RSS = process.env.ROOMCHAT_BENCH_ASSERT_RSS === '1'

const mib = (bytes) => `${(bytes / 1048576).toFixed(1)} MiB`

const emu = await startEmulator({ binary, rateLimit: { requests: 1_000_000_000, windowMs: 1000 } })
const client = emu.client({ rateLimit: { requests: 1_000_000_000, windowMs: 1000 } })
const { roomId } = await emu.createRoom({ roomId: 'export-bench', name: 'Export' })
const seeded = await emu.seedMessages(roomId, MESSAGES, { text: 'a message of the webinar', attachmentEvery: 50 })
if (seeded !== MESSAGES) throw new Error(`seeded ${seeded}`)

async function exportOnce() {
  const before = process.memoryUsage().rss
  let largest = before
  const sampler = setInterval(() => {
    largest = Math.max(largest, process.memoryUsage().rss)
  }, 20)
  const started = performance.now()
  let count = 0
  let chars = 0
  for await (const message of client.iterRoomMessages(roomId)) {
    count += 1
    chars += message.message.length
  }
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  largest = Math.max(largest, process.memoryUsage().rss)
  if (count !== MESSAGES || chars === 0) throw new Error(`exported ${count} of ${MESSAGES}`)
  return { seconds, before, largest, after: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 }
}

function print(label, r) {
  console.log(
    `${label}: ${MESSAGES} messages in ${r.seconds.toFixed(2)} s = ${Math.round(MESSAGES / r.seconds)} messages/s; ` +
      `RSS ${mib(r.before)} before, largest sampled ${mib(r.largest)}, ${mib(r.after)} after; peak RSS (maxRSS) ${mib(r.maxRss)}`,
  )
}

console.log(`export of a ${MESSAGES}-message room with iterRoomMessages (200 a page), Node ${process.version}`)
// The first export of this process gives the README's memory figure: the RSS
// when the export starts (the client made, the room seeded, nothing exported
// yet) against the largest sampled during it. It also warms the connections
// and the JIT for the speed figures, the next ones.
const first = await exportOnce()
print('first export of the process', first)
const grown = first.largest - first.before
console.log(
  `the first export raised the RSS by ${mib(grown)} (the README: at most ${RSS_PROMISE_MIB} MiB)` +
    (grown > RSS_PROMISE_MIB * 1048576 ? ': MORE than the README says' : ''),
)
print('idle', await exportOnce())
const last = await withCpuLoad(exportOnce)
print(loadedLabel, last)
await emu.stop()
const ceiling = last.maxRss - first.before
console.log(
  `after three exports the peak RSS is ${mib(ceiling)} above where the first started (the README: at most ${RSS_CEILING_MIB} MiB)` +
    (ceiling > RSS_CEILING_MIB * 1048576 ? ': MORE than the README says' : ''),
)
if (ASSERT_RSS && (grown > RSS_PROMISE_MIB * 1048576 || ceiling > RSS_CEILING_MIB * 1048576)) {
  console.error('export-messages: the RSS grew more than bindings/node/README.md says')
  process.exitCode = 1
}
