package dev.roomchat;

import static dev.roomchat.CancelTest.waitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A careless or hostile caller: odd input, use after close, a stream closed from another thread. */
@ExtendWith(RoomchatExtension.class)
class HostileTest {
  static final String LONE = "room\uD800x"; // a lone high surrogate: no UTF-8 form

  static String everything(Throwable t) {
    StringWriter out = new StringWriter();
    t.printStackTrace(new PrintWriter(out));
    return t + "\n" + out;
  }

  @Test
  void aLoneSurrogateInAnArgumentIsRefusedNotSentAsAQuestionMark(RoomchatClient client) {
    // String.getBytes(UTF_8) would make it '?': a sign-in link to another room, a header that is not the one given.
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> client.signInUrl(LONE, "token"));
    assertTrue(e.getMessage().contains("room id"), e.getMessage());
    assertThrows(InvalidArgumentException.class, () -> client.iframeHtml("room", "tok\uDC00en"));
    assertThrows(InvalidArgumentException.class, () -> client.signInUrl("room", "\uDC00"));
  }

  @Test
  void aLoneSurrogateInASettingIsRefused(RoomchatEmulator emulator) {
    assertThrows(InvalidArgumentException.class, () -> emulator.clientBuilder().appName("app\uD83D").build());
    assertThrows(InvalidArgumentException.class, () -> emulator.clientBuilder().header("x-tag", "\uDE00").build());
    assertThrows(InvalidArgumentException.class, () -> RoomchatClient.builder(emulator.privateKey() + "\uD800").baseUrl(emulator.baseUrl()).build());
    // A pair is a character, and goes through.
    try (RoomchatClient c = emulator.clientBuilder().appName("app \uD83D\uDE00").build()) {
      assertTrue(c.signInUrl("r\uD83D\uDE00", "t").contains("r%F0%9F%98%80"));
    }
  }

  @Test
  void aLoneSurrogateInParamsIsAValidationErrorAndNothingIsSent(RoomchatClient client, RoomchatEmulator emulator) {
    assertThrows(ValidationException.class, () -> client.createChatRoom(CreateChatRoomParams.builder().name(LONE).build()));
    assertTrue(emulator.journal().isEmpty());
  }

  @Test
  void aNulCharacterIsRefusedByName(RoomchatClient client, RoomchatEmulator emulator) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> client.signInUrl("a\0b", "t"));
    assertTrue(e.getMessage().contains("room id"), e.getMessage());
    // In params JSON escapes it: the service is asked for the room "a\u0000b", and says there is none.
    assertThrows(RoomchatException.class, () -> client.getChatRoom("a\0b"));
  }

  @Test
  void nullsAreTypedErrorsNotCrashes(RoomchatClient client, RoomchatEmulator emulator) {
    assertThrows(ConfigurationException.class, () -> RoomchatClient.builder(null).baseUrl(emulator.baseUrl()).build());
    assertThrows(ConfigurationException.class, () -> RoomchatClient.builder(emulator.privateKey()).build(), "no base URL");
    assertThrows(RoomchatException.class, () -> emulator.clientBuilder().header(null, "v").build());
    assertThrows(RoomchatException.class, () -> emulator.clientBuilder().header("x-tag", null).build());
    assertThrows(RoomchatException.class, () -> client.call(null, Map.of()));
    assertThrows(RoomchatException.class, () -> client.signInUrl(null, "t"));
    assertThrows(RoomchatException.class, () -> client.signInUrl("r", null));
    assertThrows(RoomchatException.class, () -> Wire.buildRequest(null, null));
    assertThrows(ValidationException.class, () -> client.getChatRoom((String) null));
    assertTrue(emulator.journal().isEmpty(), "nothing was sent");
  }

  @Test
  void aNegativeSettingIsAConfigurationErrorNotAHugeUnsignedOne(RoomchatEmulator emulator) {
    // Passed on as it is, -1 is 2^64 - 1 to the library: no bound on the answer, a wait without end for the budget.
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().maxResponseBytes(-1).build());
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().rateLimit(10, Duration.ofSeconds(1)).rateLimitMaxWait(Duration.ofSeconds(-1)).build());
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().timeouts(Duration.ofSeconds(-1), null).build());
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().maxRetries(-1).build());
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().rateLimit(0, Duration.ofSeconds(1)).build());
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().rateLimit(5, Duration.ZERO).build());
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().maxInFlight(0));
    assertThrows(ConfigurationException.class, () -> CallOptions.builder().maxRetries(-1));
  }

  @Test
  void aPasswordInTheBaseUrlIsShownNowhere(RoomchatEmulator emulator) {
    String secret = "b4seS3cretPw";
    String url = emulator.baseUrl().replace("://", "://user:" + secret + "@");
    RoomchatClient c;
    try {
      c = emulator.clientBuilder().baseUrl(url).build();
    } catch (RoomchatException e) {
      assertFalse(everything(e).contains(secret), everything(e));
      return;
    }
    try (c) {
      assertFalse(c.toString().contains(secret), c.toString());
      try {
        c.getChatRoom("no-such-room");
      } catch (RoomchatException e) {
        assertFalse(everything(e).contains(secret), everything(e));
      }
    }
  }

  @Test
  void aProxyPasswordIsShownNowhere(RoomchatEmulator emulator) {
    String secret = "pr0xyS3cretPw";
    // A host that is not loopback, so that the proxy (nothing listens on its port) is used and fails.
    try (RoomchatClient c = emulator.clientBuilder().baseUrl("http://api.example.invalid").allowInsecureHttp(true)
        .proxy("http://user:" + secret + "@127.0.0.1:1").maxRetries(0).build()) {
      assertFalse(c.toString().contains(secret));
      RoomchatException e = assertThrows(RoomchatException.class, () -> c.listUsers());
      assertFalse(everything(e).contains(secret), everything(e));
    } catch (RoomchatException e) {
      assertFalse(everything(e).contains(secret), everything(e));
    }
  }

  @Test
  void everyUseAfterCloseIsATypedErrorAndCloseTwiceNothing(RoomchatEmulator emulator) {
    RoomchatClient c = emulator.clientBuilder().build();
    Listing<User> users = c.iterListUsers(ListUsersParams.builder().build());
    c.close();
    c.close();
    assertThrows(ConfigurationException.class, c::listUsers);
    assertThrows(ConfigurationException.class, () -> c.signInUrl("r", "t"));
    CompletableFuture<UserPage> f = c.async().listUsers();
    assertTrue(assertThrows(java.util.concurrent.CompletionException.class, f::join).getCause() instanceof ConfigurationException);
    assertThrows(ConfigurationException.class, () -> users.iterator().hasNext());
  }

  @Test
  void anIteratorOpenWhenItsClientClosesThrowsThenIsFreed(RoomchatEmulator emulator) {
    emulator.seedUsers(5);
    RoomchatClient c = emulator.clientBuilder().build();
    Iterator<User> it = c.iterListUsers(ListUsersParams.builder().limit(2).build()).iterator();
    it.next();
    it.next();
    c.close();
    // The page left is never fetched: the listing throws instead of ending.
    assertThrows(ConfigurationException.class, it::hasNext);
    assertThrows(ConfigurationException.class, it::hasNext);
  }

  /**
   * A stream closed on another thread while its page is on the wire: the
   * library's iterator must not be freed under the call (a use after free,
   * the JVM's crash or worse), and the page's thread ends.
   */
  @Test
  void aStreamClosedOnAnotherThreadDuringItsPageIsNotFreedUnderIt(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    emulator.seedUsers(3);
    for (int round = 0; round < 20; round++) {
      emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1, "action", Map.of("kind", "hold")));
      Stream<User> stream = client.iterListUsers(ListUsersParams.builder().limit(2).build()).stream();
      AtomicReference<Object> seen = new AtomicReference<>();
      Thread reader = new Thread(() -> {
        try {
          seen.set(stream.count());
        } catch (Throwable t) {
          seen.set(t);
        }
      });
      reader.start();
      waitUntil(() -> emulator.held() == 1, "the first page is held");
      Thread closer = new Thread(stream::close);
      closer.start();
      // The closer waits for the page in flight (or the page is cut off); either way nothing is freed under it.
      emulator.releaseHeld();
      closer.join(30_000);
      reader.join(30_000);
      assertFalse(closer.isAlive() || reader.isAlive(), "no hang");
      assertTrue(seen.get() instanceof Long || seen.get() instanceof RoomchatException, String.valueOf(seen.get()));
      emulator.reset();
      emulator.seedUsers(3);
    }
    assertEquals(3L, client.listUsers().total(), "the client goes on");
  }

  @Test
  void aCancelAtAnyInstantEndsEveryFuture(RoomchatClient client) throws Exception {
    for (int i = 0; i < 2000; i++) {
      CompletableFuture<UserPage> f = client.async().listUsers();
      for (int spin = 0; spin < (i % 50) * 20; spin++) {
        Thread.onSpinWait();
      }
      f.cancel(true);
      try {
        f.join();
      } catch (java.util.concurrent.CancellationException expected) {
        // cancelled before its answer
      }
    }
    assertEquals(0L, client.listUsers().total(), "the client goes on");
  }

  @Test
  void anInterruptDuringAListingCancelsItsPageAndKeepsTheFlag(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    emulator.seedUsers(3);
    emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1, "action", Map.of("kind", "hold")));
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> flag = new AtomicReference<>();
    Thread reader = new Thread(() -> {
      try {
        for (User u : client.iterListUsers(ListUsersParams.builder().limit(2).build())) {
          u.username();
        }
      } catch (Throwable t) {
        thrown.set(t);
      }
      flag.set(Thread.currentThread().isInterrupted());
    });
    reader.start();
    waitUntil(() -> emulator.held() == 1, "the first page is held");
    reader.interrupt();
    reader.join(30_000);
    assertFalse(reader.isAlive(), "the interrupt ended the wait");
    assertTrue(thrown.get() instanceof CancelledException, String.valueOf(thrown.get()));
    assertTrue(flag.get(), "the interrupt flag stays set");
    emulator.releaseHeld();
  }

  @Test
  void anInterruptDuringAWaitForTheRateBudgetEndsItAndSendsNothing() throws Exception {
    // The library reports the wait for a slot at warn before it waits: the sign that the call
    // is in it (a platform thread's call waits in the library, RUNNABLE to the JVM).
    LoggingTest.Captured log = new LoggingTest.Captured(false);
    // An emulator of its own: the process's budget is the key's, and the other tests' calls count in it.
    try (RoomchatEmulator emulator = RoomchatEmulator.start();
        RoomchatClient c = emulator.clientBuilder().rateLimit(1, Duration.ofMinutes(10)).rateLimitMaxWait(Duration.ofMinutes(11)).logger(log).build()) {
      c.listUsers(); // the budget is spent for 10 minutes
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicReference<Boolean> flag = new AtomicReference<>();
      Thread caller = new Thread(() -> {
        try {
          c.createChatRoom(CreateChatRoomParams.builder().name("waits").build());
        } catch (Throwable t) {
          thrown.set(t);
        }
        flag.set(Thread.currentThread().isInterrupted());
      });
      caller.start();
      waitUntil(() -> log.lines.stream().anyMatch(l -> l.startsWith("WARN ")), "the caller waits for a slot of the budget");
      caller.interrupt();
      caller.join(60_000);
      assertFalse(caller.isAlive(), "the interrupt ended the wait for the budget");
      CancelledException e = (CancelledException) thrown.get();
      assertFalse(e.outcomeUnknown(), "nothing was sent");
      assertTrue(flag.get(), "the interrupt flag stays set");
      assertEquals(1, emulator.journal().size(), "the create was never sent");
    }
  }

  @Test
  void aCloseOnAnotherThreadWaitsForTheCallInFlight(RoomchatClient client, RoomchatEmulator emulator) throws Exception {
    RoomchatClient c = emulator.clientBuilder().build();
    emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1, "action", Map.of("kind", "hold")));
    CompletableFuture<UserPage> inFlight = c.async().listUsers();
    waitUntil(() -> emulator.held() == 1, "the call is on the wire");
    Thread closer = new Thread(c::close);
    closer.start();
    emulator.releaseHeld();
    closer.join(30_000);
    assertFalse(closer.isAlive());
    assertEquals(0L, inFlight.join().total(), "the call in flight ended with its answer");
    assertThrows(ConfigurationException.class, c::listUsers);
  }

  @Test
  void manyThreadsCallingWhileTheClientClosesEndEachWithAnAnswerOrClosed(RoomchatEmulator emulator) throws Exception {
    RoomchatClient c = emulator.clientBuilder().maxInFlight(4).build();
    int threads = 8;
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(threads);
    java.util.List<Thread> callers = new java.util.ArrayList<>();
    java.util.concurrent.ConcurrentLinkedQueue<Throwable> wrong = new java.util.concurrent.ConcurrentLinkedQueue<>();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        started.countDown();
        while (true) {
          try {
            {
              for (User u : c.iterListUsers(ListUsersParams.builder().limit(1).build())) {
                u.username();
              }
            }
            c.listUsers();
          } catch (ConfigurationException closed) {
            return;
          } catch (Throwable t2) {
            wrong.add(t2);
            return;
          }
        }
      });
      t.start();
      callers.add(t);
    }
    emulator.seedUsers(2);
    started.await();
    c.close();
    for (Thread t : callers) {
      t.join(30_000);
      assertFalse(t.isAlive());
    }
    assertTrue(wrong.isEmpty(), String.valueOf(wrong));
  }

  @Test
  void aDurationTooLongForMillisecondsIsAConfigurationError(RoomchatClient client, RoomchatEmulator emulator) {
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
    assertThrows(ConfigurationException.class, () -> client.listUsers(ListUsersParams.builder().build(), CallOptions.builder().timeout(forever).build()));
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().timeouts(null, forever).build());
    assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().rateLimit(5, forever).build());
    assertTrue(emulator.journal().isEmpty());
  }

  @Test
  void aPageThatDoesNotFitItsRecordThrowsAndIsFetchedAgainNotSkipped(RoomchatClient client, RoomchatEmulator emulator) {
    emulator.seedUsers(3);
    // The first page's answer holds a user whose username is a number: the record cannot be made.
    emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1, "action", Map.of("kind", "respond", "status", 200,
        "body", "{\"users\":[{\"id\":\"u1\",\"username\":7},{\"id\":\"u2\",\"username\":\"b\"}],\"total\":3}")));
    Iterator<User> it = client.iterListUsers(ListUsersParams.builder().limit(2).build()).iterator();
    assertThrows(RoomchatException.class, it::hasNext);
    int count = 0;
    while (it.hasNext()) {
      it.next();
      count++;
    }
    assertEquals(3, count, "the page that failed is fetched again: no record is skipped");
  }

  @Test
  void theKeyIsInNoTransportErrorAndNoRecordOrParamsShowsAToken(RoomchatClient client, RoomchatEmulator emulator) {
    String key = emulator.privateKey();
    try (RoomchatClient dead = RoomchatClient.builder(key).baseUrl("http://127.0.0.1:1").maxRetries(0).build()) {
      RoomchatException e = assertThrows(RoomchatException.class, dead::listUsers);
      assertFalse(everything(e).contains(key), everything(e));
    }
    emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1, "action", Map.of("kind", "hold")));
    RoomchatException timedOut = assertThrows(RoomchatException.class,
        () -> client.listUsers(ListUsersParams.builder().build(), CallOptions.builder().timeout(Duration.ofMillis(200)).maxRetries(0).build()));
    emulator.releaseHeld();
    assertFalse(everything(timedOut).contains(key), everything(timedOut));

    CreatedUser ann = client.createUser(CreateUserParams.builder().username("ann").build());
    String token = ann.accessToken();
    assertFalse(ann.toString().contains(token), ann.toString());
    SendRoomMessageParams params = SendRoomMessageParams.builder().roomId("r").message("m").userAccessToken(token).build();
    assertFalse(params.toString().contains(token), params.toString());
    WithResponse<CreatedUser> with = client.createUserWithResponse(CreateUserParams.builder().username("bob").build());
    assertFalse(with.toString().contains(with.data().accessToken()), with.toString());
    RoomchatException e = assertThrows(RoomchatException.class, () -> client.sendRoomMessage(params));
    assertFalse(everything(e).contains(token), everything(e));
    RoomchatException v = assertThrows(RoomchatException.class, () -> client.signInUrl("", token));
    assertFalse(everything(v).contains(token), everything(v));
  }

  @Test
  void aForgottenClientIsFreedByTheCleanerAndItsThreadsEnd(RoomchatEmulator emulator) throws Exception {
    java.util.function.Supplier<Long> callThreads = () -> Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().matches("roomchat-\\d+-call-\\d+")).count();
    long before = callThreads.get();
    java.lang.ref.WeakReference<RoomchatClient> ref = forgottenClient(emulator);
    waitUntil(() -> {
      System.gc();
      return ref.get() == null && callThreads.get() <= before;
    }, "the forgotten client is collected and its pool's threads end");
  }

  private static java.lang.ref.WeakReference<RoomchatClient> forgottenClient(RoomchatEmulator emulator) {
    RoomchatClient c = emulator.clientBuilder().build();
    c.async().listUsers().join();
    c.listUsers();
    return new java.lang.ref.WeakReference<>(c);
  }

  /**
   * A blocking call queued behind {@code maxInFlight} calls: its thread's
   * interrupt should end it at once (nothing was sent), not when a slot frees.
   */
  @Test
  void anInterruptOfACallWaitingForASlotEndsItAtOnce(RoomchatEmulator emulator) throws Exception {
    try (RoomchatClient c = emulator.clientBuilder().maxInFlight(1).build()) {
      emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1, "action", Map.of("kind", "hold")));
      CompletableFuture<UserPage> slotHolder = c.async().listUsers();
      waitUntil(() -> emulator.held() == 1, "the one slot's call is on the wire");
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      AtomicReference<Thread> worker = new AtomicReference<>();
      java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
      // A fork/join worker's blocking call goes through the pool (as a virtual thread's does), so it queues for the slot.
      java.util.concurrent.ForkJoinPool callers = new java.util.concurrent.ForkJoinPool(1);
      try {
        callers.execute(() -> {
          worker.set(Thread.currentThread());
          try {
            c.createChatRoom(CreateChatRoomParams.builder().name("queued").build());
          } catch (Throwable t) {
            thrown.set(t);
          } finally {
            ended.countDown();
          }
        });
        waitUntil(() -> worker.get() != null && worker.get().getState() == Thread.State.WAITING, "the call waits for the slot");
        worker.get().interrupt();
        boolean endedWhileTheSlotWasHeld = ended.await(30, java.util.concurrent.TimeUnit.SECONDS);
        emulator.releaseHeld();
        slotHolder.join();
        ended.await();
        assertTrue(endedWhileTheSlotWasHeld, "the interrupt ended the queued call while the slot was still held");
      } finally {
        callers.shutdown();
      }
      assertTrue(thrown.get() instanceof CancelledException, String.valueOf(thrown.get()));
      assertFalse(((CancelledException) thrown.get()).outcomeUnknown());
    }
  }

  @Test
  void aLoggerIsForgottenWhenItsClientFailsToBuildOrCloses(RoomchatEmulator emulator) throws Exception {
    java.lang.reflect.Field field = Logging.class.getDeclaredField("LOGGERS");
    field.setAccessible(true);
    Map<?, ?> loggers = (Map<?, ?>) field.get(null);
    int before = loggers.size();
    for (int i = 0; i < 50; i++) {
      // A wait above 10^12 ms is refused by roomchat_client_new, after the logger is attached to the options.
      assertThrows(ConfigurationException.class, () -> emulator.clientBuilder().logger(new LoggingTest.Captured(true))
          .rateLimit(5, Duration.ofSeconds(1)).rateLimitMaxWait(Duration.ofDays(100_000)).build());
    }
    emulator.clientBuilder().logger(new LoggingTest.Captured(true)).build().close();
    assertEquals(before, loggers.size(), "no logger kept for a client that is not there");
  }

  /** A logger that closes the client from its line (on the call's thread, inside the call): the call and the close must end. */
  @Test
  void aCloseFromTheLoggerInsideACallDoesNotHang(RoomchatEmulator emulator) throws Exception {
    AtomicReference<RoomchatClient> self = new AtomicReference<>();
    org.slf4j.Logger closing = new org.slf4j.helpers.LegacyAbstractLogger() {
      private static final long serialVersionUID = 1L;

      @Override protected String getFullyQualifiedCallerName() { return null; }
      @Override public boolean isTraceEnabled() { return false; }
      @Override public boolean isDebugEnabled() { return true; }
      @Override public boolean isInfoEnabled() { return true; }
      @Override public boolean isWarnEnabled() { return true; }
      @Override public boolean isErrorEnabled() { return true; }

      @Override
      protected void handleNormalizedLoggingCall(org.slf4j.event.Level level, org.slf4j.Marker marker, String pattern, Object[] args, Throwable t) {
        RoomchatClient c = self.get();
        if (c != null) {
          c.close();
        }
      }
    };
    RoomchatClient c = emulator.clientBuilder().logger(closing).build();
    self.set(c);
    Thread caller = new Thread(() -> {
      try {
        c.listUsers();
      } catch (RoomchatException ended) {
        // closed under it: a typed end is enough
      }
    });
    caller.setDaemon(true);
    caller.start();
    caller.join(30_000);
    assertFalse(caller.isAlive(), "the call whose log line closed the client ended");
  }
}
