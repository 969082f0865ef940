package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A cancel while a call waits for a slot of the rate budget. A class of its
 * own: the budget of 1 a minute is the key's in this process, and the
 * extension gives each class an emulator with keys of its own.
 */
@ExtendWith(RoomchatExtension.class)
class BudgetWaitTest {
  @Test
  void anInterruptDuringABudgetWaitEndsItUnsent(RoomchatEmulator emulator) throws Exception {
    // The library reports the wait for a slot at warn before it waits: the sign that the call is in it.
    LoggingTest.Captured log = new LoggingTest.Captured(false);
    try (RoomchatClient client = emulator.clientBuilder().rateLimit(1, java.time.Duration.ofSeconds(60)).logger(log).build()) {
      client.listUsers(); // the budget's one slot
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread caller = new Thread(() -> {
        try {
          client.listUsers();
        } catch (Throwable t) {
          thrown.set(t);
        }
      });
      caller.start();
      CancelTest.waitUntil(() -> log.lines.stream().anyMatch(l -> l.startsWith("WARN ")), "the call waits for a slot of the budget");
      caller.interrupt();
      caller.join(30_000);
      assertFalse(caller.isAlive(), "the 60 s wait for a slot ended");
      CancelledException e = (CancelledException) thrown.get();
      assertFalse(e.outcomeUnknown(), "nothing was sent");
      assertEquals(1, emulator.journal().size());
    }
  }
}
