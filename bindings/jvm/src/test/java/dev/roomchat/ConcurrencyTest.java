package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Many calls at once: futures, platform threads, and virtual threads that never pin a carrier. */
@ExtendWith(RoomchatExtension.class)
class ConcurrencyTest {
  @Test
  void manyAsyncCallsAtOnce(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.seedUsers(5);
    List<CompletableFuture<UserPage>> futures = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      futures.add(client.async().listUsers());
    }
    CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0])).join();
    for (CompletableFuture<UserPage> f : futures) {
      assertEquals(5L, f.join().total());
    }
  }

  @Test
  void aForkJoinWorkerInACallLeavesItsPoolAWorker(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    // A parallel stream's or the common pool's task that calls the client: while its
    // request is held, the pool (of one worker) still runs another task.
    String path = CancelTest.createPath(emulator, client);
    emulator.addFault(java.util.Map.of("path", path, "action", java.util.Map.of("kind", "hold")));
    ForkJoinPool pool = new ForkJoinPool(1);
    try {
      ForkJoinTask<RoomAnswer> held = pool.submit(() -> client.createChatRoom(CreateChatRoomParams.builder().name("held").build()));
      CancelTest.waitUntil(() -> emulator.held() == 1, "the request is held");
      assertEquals("ran", pool.submit(() -> "ran").get(30, TimeUnit.SECONDS));
      emulator.releaseHeld();
      assertEquals(1, emulator.journal().size());
      held.get(30, TimeUnit.SECONDS);
    } finally {
      emulator.releaseHeld();
      pool.shutdownNow();
    }
  }

  @Test
  void aThousandVirtualThreadsAndNoPinnedCarrier(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    try {
      Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
    } catch (NoSuchMethodException e) {
      assumeTrue(false, "virtual threads need Java 21+");
      return;
    }
    emulator.seedUsers(50);
    emulator.setRateLimit(1_000_000, java.time.Duration.ofMinutes(1));
    try (RoomchatClient fast = emulator.clientBuilder().rateLimit(1_000_000, java.time.Duration.ofMinutes(1)).maxInFlight(16).build()) {
      measure(fast);
    }
  }

  static void measure(RoomchatClient client) throws Exception {
    ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    // Warm: the library, the JIT and the pool's threads.
    List<Future<UserPage>> warm = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      warm.add(virtual.submit(() -> client.listUsers(ListUsersParams.builder().limit(50).build())));
    }
    for (Future<UserPage> f : warm) {
      f.get();
    }
    Path jfr = Files.createTempFile("roomchat-pinned-", ".jfr");
    try (Recording recording = new Recording()) {
      recording.enable("jdk.VirtualThreadPinned").withThreshold(java.time.Duration.ZERO).withStackTrace();
      recording.start();
      long start = System.nanoTime();
      List<Future<UserPage>> futures = new ArrayList<>();
      try {
        for (int i = 0; i < 1000; i++) {
          futures.add(virtual.submit(() -> client.listUsers(ListUsersParams.builder().limit(50).build())));
        }
        for (Future<UserPage> f : futures) {
          assertEquals(50, f.get().data().size());
        }
      } finally {
        virtual.shutdown();
      }
      long ms = (System.nanoTime() - start) / 1_000_000;
      recording.stop();
      recording.dump(jfr);
      int pinned = 0;
      for (RecordedEvent event : RecordingFile.readAllEvents(jfr)) {
        if (event.getEventType().getName().equals("jdk.VirtualThreadPinned")) {
          pinned++;
        }
      }
      ExecutorService platform = Executors.newFixedThreadPool(16);
      long started = System.nanoTime();
      List<Future<UserPage>> onPlatform = new ArrayList<>();
      try {
        for (int i = 0; i < 1000; i++) {
          onPlatform.add(platform.submit(() -> client.listUsers(ListUsersParams.builder().limit(50).build())));
        }
        for (Future<UserPage> f : onPlatform) {
          assertEquals(50, f.get().data().size());
        }
      } finally {
        platform.shutdown();
      }
      long platformMs = (System.nanoTime() - started) / 1_000_000;
      System.out.printf("[measure] 1000 x list_users(50): 1000 virtual threads %d ms (%d jdk.VirtualThreadPinned events), 16 platform threads %d ms%n", ms, pinned, platformMs);
      assertEquals(0, pinned, "no virtual thread pinned its carrier");
    } finally {
      Files.deleteIfExists(jfr);
    }
  }
}
