// ES module entry: the same objects as the CommonJS entry (index.js).
import roomchat from './index.js'

export const {
  Client,
  RoomchatError,
  RoomchatValidationError,
  AbortError,
  errorCodes,
  wire,
  setMaxThreads,
  threadPoolStats,
  inFlightCalls,
} = roomchat
export default roomchat
