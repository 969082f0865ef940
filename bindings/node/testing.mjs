// ES module entry of `roomchat/testing`: the same objects as the CommonJS one (testing.js).
import testing from './testing.js'

export const { startEmulator, findEmulator, Emulator, EmulatorError, EmulatorNotFoundError, JournalEntry } = testing
export default testing
