package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Cancelling through the C cancel token: a thread's interrupt, a future's cancel. */
@ExtendWith(RoomchatExtension.class)
class CancelTest {
  static final String ROOMS = "/consumer/api/v1/chatroom/create";

  static void waitUntil(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("never: " + what);
      }
      Thread.sleep(5);
    }
  }

  static String createPath(RoomchatEmulator emulator, RoomchatClient client) {
    client.createChatRoom(CreateChatRoomParams.builder().name("probe").build());
    String path = emulator.journal().get(0).path();
    emulator.reset();
    return path;
  }

  @Test
  void anInterruptedThreadSendsNothing(RoomchatClient client, RoomchatEmulator emulator) {
    Thread.currentThread().interrupt();
    try {
      CancelledException e = assertThrows(CancelledException.class, () -> client.createChatRoom(CreateChatRoomParams.builder().name("x").build()));
      assertFalse(e.outcomeUnknown(), "nothing was sent");
      assertTrue(Thread.currentThread().isInterrupted(), "the interrupt flag stays set");
    } finally {
      Thread.interrupted();
    }
    assertTrue(emulator.journal().isEmpty());
  }

  @Test
  void anAsyncCallFromAnInterruptedThreadIsNotCancelled(RoomchatClient client) {
    Thread.currentThread().interrupt();
    try {
      CompletableFuture<UserPage> page = client.async().listUsers();
      assertTrue(Thread.interrupted(), "the flag is the caller's");
      assertEquals(0L, page.join().total());
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void anInterruptDuringACallCancelsIt(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    String path = createPath(emulator, client);
    emulator.addFault(Map.of("path", path, "action", Map.of("kind", "hold")));
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        client.createChatRoom(CreateChatRoomParams.builder().name("held").build());
      } catch (Throwable t) {
        thrown.set(t);
      }
    });
    caller.start();
    waitUntil(() -> emulator.held() == 1, "the request is held");
    caller.interrupt();
    caller.join(30_000);
    assertFalse(caller.isAlive());
    CancelledException e = (CancelledException) thrown.get();
    assertTrue(e.outcomeUnknown(), "the create was on the wire: it may have happened");
    emulator.releaseHeld();
    assertEquals(1, emulator.journal().size(), "not sent again");
  }

  @Test
  void aFuturesCancelCancelsTheCall(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    String path = createPath(emulator, client);
    emulator.addFault(Map.of("path", path, "action", Map.of("kind", "hold")));
    CompletableFuture<RoomAnswer> future = client.async().createChatRoom(CreateChatRoomParams.builder().name("held").build());
    waitUntil(() -> emulator.held() == 1, "the request is held");
    assertTrue(future.cancel(true));
    assertThrows(CancellationException.class, future::join);
    // The client goes on: the cancelled call ended in the library.
    emulator.releaseHeld();
    assertEquals(0L, client.listUsers().total());
  }

  @Test
  void aCancelDuringARetryWaitEndsIt(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1,
        "action", Map.of("kind", "respond", "status", 503, "body", "{\"message\":\"busy\"}", "headers", Map.of("Retry-After", "60"))));
    CompletableFuture<UserPage> future = client.async().listUsers(ListUsersParams.builder().build(),
        CallOptions.builder().maxRetryWait(java.time.Duration.ofSeconds(120)).build());
    waitUntil(() -> emulator.journal().size() == 1, "the first attempt was answered");
    assertFalse(future.isDone(), "waiting 60 s before the retry");
    future.cancel(true);
    assertThrows(CancellationException.class, future::join);
    assertEquals(0L, client.listUsers().total(), "the client goes on");
    assertEquals(2, emulator.journal().size(), "the cancelled call did not retry");
  }
}
