package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** The client's log lines reach SLF4J, with no secret in them. */
@ExtendWith(RoomchatExtension.class)
class LoggingTest {
  /** An SLF4J logger that keeps its lines. */
  static final class Captured extends LegacyAbstractLogger {
    private static final long serialVersionUID = 1L;
    final List<String> lines = new CopyOnWriteArrayList<>();
    final boolean debug;

    Captured(boolean debug) {
      this.name = "captured";
      this.debug = debug;
    }

    @Override protected String getFullyQualifiedCallerName() { return null; }
    @Override protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] args, Throwable t) {
      lines.add(level + " " + MessageFormatter.basicArrayFormat(pattern, args));
    }
    @Override public boolean isTraceEnabled() { return false; }
    @Override public boolean isDebugEnabled() { return debug; }
    @Override public boolean isInfoEnabled() { return true; }
    @Override public boolean isWarnEnabled() { return true; }
    @Override public boolean isErrorEnabled() { return true; }
  }

  @Test
  void aLinePerAttemptAtDebugAndARetryAtWarn(RoomchatEmulator emulator) {
    Captured log = new Captured(true);
    try (RoomchatClient client = emulator.clientBuilder().logger(log).build()) {
      emulator.failNext("/consumer/api/v2/users", 503, "{\"message\":\"busy\"}", 1);
      client.listUsers();
    }
    assertTrue(log.lines.stream().anyMatch(l -> l.startsWith("DEBUG ") && l.contains("/consumer/api/v2/users")), log.lines.toString());
    assertTrue(log.lines.stream().anyMatch(l -> l.startsWith("WARN ")), log.lines.toString());
    for (String line : log.lines) {
      assertFalse(line.contains(emulator.privateKey()), line);
    }
  }

  @Test
  void warnOnlyLeavesTheDebugLinesInTheLibrary(RoomchatEmulator emulator) {
    Captured log = new Captured(false);
    try (RoomchatClient client = emulator.clientBuilder().logger(log).build()) {
      client.listUsers();
    }
    assertEquals(List.of(), log.lines);
  }
}
