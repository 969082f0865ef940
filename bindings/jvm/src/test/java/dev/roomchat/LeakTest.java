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
 * native string, error, view, token and client is freed. 100,000 through the
 * pure wire layer, and 100,000 to the emulator from 4 threads (the system
 * property {@code roomchat.leak.calls} changes the latter). scripts/dist/jvm.sh
 * runs it on Java 17 only: the boundary is the same on 25.
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

  /** Runs rounds 0 to n - 1 split among the pool's threads (round i on thread i % threads). */
  static void run(java.util.concurrent.ExecutorService pool, int threads, int n, Round round) throws Exception {
    List<java.util.concurrent.Future<?>> parts = new java.util.ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int first = t;
      parts.add(pool.submit(() -> {
        for (int i = first; i < n; i += threads) {
          round.run(i);
        }
        return null;
      }));
    }
    for (java.util.concurrent.Future<?> part : parts) {
      try {
        part.get();
      } catch (java.util.concurrent.ExecutionException e) {
        throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
      }
    }
  }

  static void flat(String what, int warm, int n, Round round) throws Exception {
    flat(what, warm, n, 1, round);
  }

  /** Warms up, then measures RSS and heap around n rounds on {@code threads} threads (made before the first measure). */
  static void flat(String what, int warm, int n, int threads, Round round) throws Exception {
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
    try {
      run(pool, threads, warm, round);
      long heap0 = heapKb();
      long rss0 = rssKb() - jvmCommittedKb();
      long started = System.nanoTime();
      run(pool, threads, n, round);
      long seconds = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
      long heap1 = heapKb();
      long rss1 = rssKb() - jvmCommittedKb();
      System.out.printf("[measure] %s x %d (%d threads, %d s): RSS outside the JVM's committed memory %+d KiB, heap %+d KiB%n",
          what, n, threads, seconds, rss1 - rss0, heap1 - heap0);
      check(what, rss1 - rss0, heap1 - heap0);
    } finally {
      pool.shutdown();
    }
  }

  static void check(String what, long rssGrowthKb, long heapGrowthKb) {
    // A leak of 160 bytes a round would be 16 MB over 100,000: the margin is the
    // allocator's, the threads' stacks and the JIT's.
    assertTrue(rssGrowthKb < 16_000, what + ": RSS grew " + rssGrowthKb + " KiB");
    assertTrue(heapGrowthKb < 8_000, what + ": heap grew " + heapGrowthKb + " KiB");
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
      int calls = Integer.getInteger("roomchat.leak.calls", 100_000);
      flat("list_users calls", 4_000, calls, 4, i -> {
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
