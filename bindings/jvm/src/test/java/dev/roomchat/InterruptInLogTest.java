package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/**
 * An interrupt still cancels a platform thread's call after that thread, in a log
 * callback of the call, ran something that is itself interruptible: another roomchat
 * call, or a write to a FileChannel (a file appender's). Each of those registers its own
 * interrupt handler on the thread and clears it when done, which left the outer call
 * with none: the interrupt was lost and the call waited out its budget.
 */
@ExtendWith(RoomchatExtension.class)
class InterruptInLogTest {
  /** At the line saying the call waits for the budget: runs {@code inCallback}, then interrupts the caller from another thread. */
  static final class InterruptAfter extends LegacyAbstractLogger {
    private static final long serialVersionUID = 1L;
    final List<String> lines = new CopyOnWriteArrayList<>();
    final AtomicReference<Thread> caller = new AtomicReference<>();
    final transient Runnable inCallback;
    volatile boolean interrupt = true;
    volatile boolean ran;

    InterruptAfter(Runnable inCallback) {
      this.name = "interrupt-after";
      this.inCallback = inCallback;
    }

    @Override protected String getFullyQualifiedCallerName() { return null; }
    @Override protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] args, Throwable t) {
      String line = level + " " + MessageFormatter.basicArrayFormat(pattern, args);
      lines.add(line);
      Thread waiting = caller.get();
      if (waiting == Thread.currentThread() && line.contains("for the rate-limit budget") && !ran) {
        ran = true;
        inCallback.run();
        if (interrupt) {
          new Thread(waiting::interrupt).start();
        }
      }
    }
    @Override public boolean isTraceEnabled() { return false; }
    @Override public boolean isDebugEnabled() { return false; }
    @Override public boolean isInfoEnabled() { return true; }
    @Override public boolean isWarnEnabled() { return true; }
    @Override public boolean isErrorEnabled() { return true; }
  }

  /** A call waiting 10 s for its budget, whose log callback runs {@code inCallback}: the interrupt after it must end the call. */
  static void interruptAfter(RoomchatEmulator emulator, Runnable inCallback) throws Exception {
    InterruptAfter log = new InterruptAfter(inCallback);
    try (RoomchatClient client = emulator.clientBuilder().rateLimit(100, Duration.ofSeconds(1)).maxRetries(0).logger(log).build()) {
      emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1,
          "action", Map.of("kind", "respond", "status", 429, "body", "{\"message\":\"slow down\"}", "headers", Map.of("Retry-After", "10"))));
      assertThrows(RateLimitedException.class, client::listUsers);
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicReference<Boolean> flag = new AtomicReference<>();
      Thread caller = new Thread(() -> {
        try {
          client.listUsers();
        } catch (Throwable t) {
          thrown.set(t);
        }
        flag.set(Thread.currentThread().isInterrupted());
      });
      log.caller.set(caller);
      caller.start();
      caller.join(60_000);
      assertFalse(caller.isAlive());
      assertTrue(thrown.get() instanceof CancelledException, "the interrupt ended the wait: " + thrown.get() + " " + log.lines);
      assertTrue(flag.get(), "the interrupt flag stays set");
      // The outer call sent nothing (the callback's own calls are its to count).
      assertFalse(((CancelledException) thrown.get()).outcomeUnknown(), "cancelled in the budget wait: nothing was sent");
    }
  }

  /**
   * One test for both (each failed alone before the fix): the 429 holds this key's
   * budget off for 10 s in the whole process, so a second such test would wait it out.
   */
  @Test
  void afterANestedCallAndAFileChannelWriteInALogCallback(RoomchatEmulator emulator) throws Exception {
    Path file = Files.createTempFile("roomchat-log", ".txt");
    // Another key's client: this key's budget is held off (shared by the process's clients of a key).
    try (RoomchatClient other = RoomchatClient.builder("another-key").baseUrl(emulator.baseUrl()).maxRetries(0).build();
        FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      interruptAfter(emulator, () -> {
        try {
          other.listUsers();
        } catch (RoomchatException e) {
          // The emulator refuses the key: the call was made either way.
        }
        try {
          channel.write(ByteBuffer.wrap("a line\n".getBytes(StandardCharsets.UTF_8)));
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /**
   * A client closed from a log callback of its own call (on the calling thread) neither
   * hangs (the call held the client's read lock, close waited for the write lock) nor
   * frees the client under the call: the call ends, then the client is closed.
   */
  @Test
  void aClientClosedFromALogCallbackOfItsOwnCallClosesAfterIt(RoomchatEmulator emulator) throws Exception {
    AtomicReference<RoomchatClient> self = new AtomicReference<>();
    AtomicReference<Throwable> closeFailed = new AtomicReference<>();
    InterruptAfter log = new InterruptAfter(() -> {
      try {
        self.get().close();
      } catch (Throwable t) {
        closeFailed.set(t);
      }
    });
    // One call a 2 s window: the second call waits for the budget (whatever the machine's pace), if the first did not.
    RoomchatClient client = emulator.clientBuilder().rateLimit(1, Duration.ofSeconds(2)).logger(log).build();
    self.set(client);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Throwable> after = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        for (int i = 0; i < 3 && !log.ran; i++) {
          client.listUsers(); // the one that waits for the budget closes the client from its log line, and succeeds
        }
      } catch (Throwable t) {
        thrown.set(t);
      }
      try {
        client.listUsers();
      } catch (Throwable t) {
        after.set(t);
      }
    });
    log.caller.set(caller);
    log.interrupt = false;
    caller.start();
    caller.join(60_000);
    boolean hung = caller.isAlive();
    if (hung) {
      caller.interrupt();
    }
    assertFalse(hung, "the call hung on its own client's close");
    assertTrue(log.ran, "a call waited for the budget");
    assertEquals(null, closeFailed.get());
    assertEquals(null, thrown.get(), "the call in flight ends as it would have");
    assertTrue(after.get() instanceof ConfigurationException, "closed after it: " + after.get());
  }
}
