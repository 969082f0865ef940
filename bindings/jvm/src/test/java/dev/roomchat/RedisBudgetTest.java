package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The rate budget shared through Redis, from the JVM: two processes count in
 * one budget; Redis dying is a {@link BudgetUnavailableException} under
 * FAIL_CLOSED and goes on under LOCAL_FALLBACK; a Redis password is in no
 * exception, log line or {@code toString}.
 */
@ExtendWith(RoomchatExtension.class)
class RedisBudgetTest {
  static final String PASSWORD = "jvm-redis-test-password-3";

  /** 5 requests a minute shared through Redis, refused at once (not waited for) past them. */
  static RoomchatClient.Builder budget(RoomchatClient.Builder b, String redisUrl, String prefix) {
    return b.redisBudget(redisUrl)
        .redisPolicy(RoomchatClient.RedisPolicy.FAIL_CLOSED, 0)
        .redisKeyPrefix(prefix)
        .rateLimit(5, Duration.ofMinutes(1))
        .rateLimitFailFast();
  }

  /** The lines another JVM running {@link RedisBudgetChild} printed: the outcome of each call. */
  static List<String> child(RoomchatEmulator emulator, String redisUrl, int calls) throws Exception {
    String java = ProcessHandle.current().info().command().orElseThrow();
    ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
        RedisBudgetChild.class.getName(), Integer.toString(calls));
    Map<String, String> env = pb.environment();
    env.put("ROOMCHAT_PRIVATE_KEY", emulator.privateKey());
    env.put("ROOMCHAT_BASE_URL", emulator.baseUrl());
    env.put("ROOMCHAT_TEST_REDIS_URL", redisUrl);
    pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child JVM did not end");
    assertEquals(0, p.exitValue(), out);
    List<String> lines = new ArrayList<>();
    for (String line : out.split("\n")) {
      if (line.equals("ok") || line.matches("[a-z_]+ [0-9]+")) {
        lines.add(line);
      }
    }
    return lines;
  }

  @Test
  void twoProcessesCountInOneBudget(RoomchatEmulator emulator) throws Exception {
    try (RedisServer redis = RedisServer.start(null);
        RoomchatClient one = budget(emulator.clientBuilder(), redis.url(), "jvm-shared").build();
        RoomchatClient two = budget(emulator.clientBuilder(), redis.url(), "jvm-shared").build()) {
      one.listChatRooms();
      two.listChatRooms();
      // Another JVM on the same key and Redis: 3 more, then the 6th of the 5 is refused there,
      // and here after it.
      assertEquals(List.of("ok", "ok", "ok", "rate_limited 0"), child(emulator, redis.url(), 4));
      for (RoomchatClient c : List.of(one, two)) {
        RateLimitedException e = assertThrows(RateLimitedException.class, c::listChatRooms);
        assertEquals(0, e.status(), "refused by the budget, not answered by the service: " + e);
      }
      assertEquals(5, emulator.journal().size(), "5 requests sent by the three clients together");

      // The budget is Redis's, not the processes': under another prefix the same key has 5 more.
      try (RoomchatClient other = budget(emulator.clientBuilder(), redis.url(), "jvm-other").build()) {
        for (int i = 0; i < 5; i++) {
          other.listChatRooms();
        }
        assertThrows(RateLimitedException.class, other::listChatRooms);
      }
      List<String> keys = redis.keys();
      assertTrue(keys.stream().anyMatch(k -> k.startsWith("jvm-shared")), keys.toString());
      assertTrue(keys.stream().anyMatch(k -> k.startsWith("jvm-other")), keys.toString());
      for (String key : keys) {
        assertFalse(key.contains(emulator.privateKey()), "the private key in a Redis key's name: " + key);
      }
    }
  }

  @Test
  void redisDyingFailClosedThrowsAndLocalFallbackGoesOn(RoomchatEmulator emulator) throws Exception {
    LoggingTest.Captured log = new LoggingTest.Captured(true);
    RedisServer redis = RedisServer.start(PASSWORD);
    Duration short_ = Duration.ofMillis(300);
    try (RoomchatClient closed = emulator.clientBuilder().maxRetries(0).logger(log).redisBudget(redis.url())
            .redisPolicy(RoomchatClient.RedisPolicy.FAIL_CLOSED, 0).redisKeyPrefix("jvm-closed").redisTimeouts(short_, short_, null).build();
        RoomchatClient fallback = emulator.clientBuilder().maxRetries(0).logger(log).redisBudget(redis.url())
            .redisPolicy(RoomchatClient.RedisPolicy.LOCAL_FALLBACK, 4).redisKeyPrefix("jvm-fallback").redisTimeouts(short_, short_, null).build()) {
      closed.listChatRooms();
      fallback.listChatRooms();
      assertTrue(redis.keys().stream().anyMatch(k -> k.startsWith("jvm-closed")), "the budget is counted in Redis, with its password");
      redis.close();

      BudgetUnavailableException e = assertThrows(BudgetUnavailableException.class, closed::listChatRooms);
      assertEquals(ErrorKind.BUDGET_UNAVAILABLE, e.kind());
      assertEquals(0, e.status());
      int sent = emulator.journal().size();
      assertEquals(2, sent, "FAIL_CLOSED sent nothing without its budget");
      fallback.listChatRooms();
      assertEquals(3, emulator.journal().size(), "LOCAL_FALLBACK sent it, counted in the process");

      List<String> texts = new ArrayList<>(List.of(e.getMessage(), e.toString(), stackTrace(e), closed.toString(), fallback.toString()));
      texts.addAll(log.lines);
      assertTrue(log.lines.stream().anyMatch(l -> l.toLowerCase().contains("redis")), "no log line about Redis: " + log.lines);
      for (String text : texts) {
        assertFalse(text.contains(PASSWORD), "the Redis password is shown: " + text);
      }
    } finally {
      redis.close();
    }
  }

  @Test
  void aRedisPasswordIsInNoConfigurationError() {
    for (String url : List.of(
        "redis://:" + PASSWORD + "@127.0.0.1:notaport/0",
        "redis+cluster://:" + PASSWORD + "@h:1/2",
        "redis+sentinel://:" + PASSWORD + "@s1",
        "redis://:" + PASSWORD + "?#/@127.0.0.1:notaport/0",
        "nosuchscheme://:" + PASSWORD + "@127.0.0.1:1/0")) {
      RoomchatException e = assertThrows(RoomchatException.class,
          () -> RoomchatClient.builder("sk_test_redis_config").baseUrl("http://127.0.0.1:9").redisBudget(url).build().close(), url);
      assertEquals(ErrorKind.CONFIGURATION, e.kind(), e.getMessage());
      for (String text : List.of(e.getMessage(), e.toString(), stackTrace(e))) {
        assertFalse(text.contains(PASSWORD), "the Redis password is shown for " + url.replace(PASSWORD, "<password>") + ": " + text);
      }
    }
  }

  @Test
  void aWrongRedisPasswordIsBudgetUnavailableWithoutTheGivenOne(RoomchatEmulator emulator) throws Exception {
    try (RedisServer redis = RedisServer.start(PASSWORD);
        RoomchatClient client = emulator.clientBuilder().maxRetries(0)
            .redisBudget("redis://:wrong-" + PASSWORD + "@127.0.0.1:" + redis.port + "/0")
            .redisPolicy(RoomchatClient.RedisPolicy.FAIL_CLOSED, 0).build()) {
      BudgetUnavailableException e = assertThrows(BudgetUnavailableException.class, client::listChatRooms);
      for (String text : List.of(e.getMessage(), e.toString(), stackTrace(e))) {
        assertFalse(text.contains(PASSWORD), text);
      }
      assertEquals(0, emulator.journal().size(), "nothing sent without the budget");
    }
  }

  static String stackTrace(Throwable t) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    t.printStackTrace(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return bytes.toString(StandardCharsets.UTF_8);
  }
}
