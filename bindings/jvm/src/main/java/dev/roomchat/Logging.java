package dev.roomchat;

import dev.roomchat.internal.Native;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * The clients' log lines (the C log callback) to SLF4J: a line per attempt at
 * debug, a retry, a wait for the budget or a failure of the shared budget at
 * warn. The library writes every key, token and password in them as
 * {@code REDACTED}. One callback for every client (never collected while the
 * library may call it); each client's logger by its id, forgotten when the
 * library lets go of it.
 */
final class Logging {
  private Logging() {}

  private static final Map<Long, Logger> LOGGERS = new ConcurrentHashMap<>();
  private static final AtomicLong IDS = new AtomicLong();

  private static final Native.LogCallback LOG = (userData, level, line) -> {
    try {
      Logger logger = LOGGERS.get(userData);
      if (logger == null || line == null) {
        return;
      }
      String text = line.getString(0, "UTF-8");
      if (level == 0) {
        logger.debug(text);
      } else {
        logger.warn(text);
      }
    } catch (Throwable ignored) {
      // Nothing may unwind into the library.
    } finally {
      // The logger may have done interruptible I/O (a FileChannel) or a call of its own.
      RoomchatClient.InterruptHook.resume();
    }
  };

  private static final Native.DestroyCallback RELEASE = userData -> LOGGERS.remove(userData);

  /** Sends the options' clients' lines to {@code logger} (nothing when it logs neither debug nor warn). */
  static void attach(long options, Logger logger) {
    if (logger == null || !logger.isWarnEnabled()) {
      return;
    }
    long id = IDS.incrementAndGet();
    LOGGERS.put(id, logger);
    int lowest = logger.isDebugEnabled() ? 0 : 1;
    int code = Native.roomchat_client_options_set_log_callback_with_destroy(options, LOG, id, lowest, RELEASE);
    if (code != Bridge.OK) {
      LOGGERS.remove(id);
      Bridge.check(code, null);
    }
  }
}
