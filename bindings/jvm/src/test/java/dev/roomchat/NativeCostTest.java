package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.roomchat.internal.Native;
import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Prints what a JNA direct call and a whole call cost (a measure, never a timed assertion). */
@ExtendWith(RoomchatExtension.class)
class NativeCostTest {
  @Test
  void aDirectCallsCost(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    Native.init();
    long[] out = new long[1];
    assertEquals(0, Native.roomchat_cancel_token_new(out));
    long token = out[0];
    try {
      int sum = 0;
      for (int round = 0; round < 3; round++) {
        int n = 2_000_000;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
          sum += Native.roomchat_cancel_token_is_cancelled(token);
        }
        long ns = System.nanoTime() - start;
        System.out.printf("[measure] JNA direct call roomchat_cancel_token_is_cancelled: %.1f ns/call (round %d)%n", (double) ns / n, round);
      }
      assertEquals(0, sum);
    } finally {
      Native.roomchat_cancel_token_free(token);
    }
    emulator.seedUsers(50);
    emulator.setRateLimit(1_000_000, java.time.Duration.ofMinutes(1));
    try (RoomchatClient fast = emulator.clientBuilder().rateLimit(1_000_000, java.time.Duration.ofMinutes(1)).build()) {
      measure(fast);
    }
  }

  static void measure(RoomchatClient client) throws Exception {
    for (int round = 0; round < 2; round++) {
      int n = 500;
      long start = System.nanoTime();
      for (int i = 0; i < n; i++) {
        client.listUsers(ListUsersParams.builder().limit(50).build());
      }
      System.out.printf("[measure] list_users(50) one at a time against the emulator: %.0f us/call (round %d)%n", (System.nanoTime() - start) / 1000.0 / n, round);
    }
  }
}
