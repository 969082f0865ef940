package dev.roomchat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.roomchat.testing.RoomchatEmulator;
import dev.roomchat.testing.RoomchatExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link RoomchatClient#fromEnv()} reads the environment through the library
 * ({@code roomchat_client_options_new_from_env}): every variable honoured, and
 * core's errors word for word. Each case runs {@link FromEnvChild} in a JVM of
 * its own, given the environment. And the budget's default longest wait is core's.
 */
@ExtendWith(RoomchatExtension.class)
class FromEnvTest {
  private static final String[] NAMES = {"ROOMCHAT_PRIVATE_KEY", "ROOMCHAT_BASE_URL", "ROOMCHAT_CHAT_URL", "ROOMCHAT_PUBLIC_KEY", "ROOMCHAT_APP_NAME"};

  /**
   * What {@link FromEnvChild} prints with these variables (null: unset), each a
   * {@code printf} format of the shell, so that a test can give one bytes that
   * are not UTF-8 (Java's strings cannot).
   */
  private static String child(String[] values, String... args) throws IOException, InterruptedException {
    StringBuilder script = new StringBuilder();
    for (int i = 0; i < NAMES.length; i++) {
      script.append(values[i] == null ? "unset " + NAMES[i] + "; " : NAMES[i] + "=$(printf '" + values[i] + "'); export " + NAMES[i] + "; ");
    }
    script.append("exec \"$0\" --enable-native-access=ALL-UNNAMED -Dslf4j.internal.verbosity=ERROR -cp \"$1\" dev.roomchat.FromEnvChild \"$2\"");
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    Process process = new ProcessBuilder("sh", "-c", script.toString(), java, System.getProperty("java.class.path"), args.length > 0 ? args[0] : "")
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the child JVM ended");
    return out;
  }

  @Test
  void everyVariableIsHonoured(RoomchatEmulator emulator) throws Exception {
    emulator.clearJournal();
    String out = child(new String[] {emulator.privateKey(), emulator.baseUrl(), emulator.chatUrl(), emulator.publicKey(), "jvm-env/1.0"});
    assertEquals("listed 0 RoomchatClient[baseUrl=" + emulator.baseUrl() + "]\nvalidated invalid_request", out);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> entries = (List<Map<String, Object>>) ((Map<String, Object>) emulator.admin("GET", "/journal", null)).get("entries");
    assertTrue(((String) entries.get(0).get("user_agent")).endsWith(" jvm-env/1.0"), entries.toString());
  }

  @Test
  void coresErrors(RoomchatEmulator emulator) throws Exception {
    String key = emulator.privateKey();
    assertEquals("fromEnv configuration: the environment variable ROOMCHAT_PRIVATE_KEY is not set",
        child(new String[] {null, emulator.baseUrl(), null, null, null}));
    // Empty counts as unset; builderFromEnv throws at once, as it did.
    assertEquals("builderFromEnv configuration: the environment variable ROOMCHAT_BASE_URL is not set",
        child(new String[] {key, "", null, null, null}, "builder"));
    // Java would have read the byte as U+FFFD and sent that.
    assertEquals("fromEnv configuration: the environment variable ROOMCHAT_APP_NAME is not valid UTF-8",
        child(new String[] {key, emulator.baseUrl(), null, null, "app\\377"}));
    assertEquals("fromEnv configuration: the base URL must start with https:// or http://",
        child(new String[] {key, "api.example.com", null, null, null}));
  }

  /**
   * rateLimit without rateLimitMaxWait waits as core does, at least a minute: a
   * call of a 1 s window's budget held off 10 s by a 429 waits for it (until
   * interrupted here) rather than failing at once, as a wait of window + 3 s did.
   */
  @Test
  void theDefaultLongestBudgetWaitIsCores(RoomchatEmulator emulator) throws Exception {
    LoggingTest.Captured log = new LoggingTest.Captured(false);
    try (RoomchatClient client = emulator.clientBuilder().rateLimit(100, Duration.ofSeconds(1)).maxRetries(0).logger(log).build()) {
      emulator.addFault(Map.of("path", "/consumer/api/v2/users", "times", 1,
          "action", Map.of("kind", "respond", "status", 429, "body", "{\"message\":\"slow down\"}", "headers", Map.of("Retry-After", "10"))));
      RateLimitedException limited = assertThrows(RateLimitedException.class, client::listUsers);
      assertEquals(429, limited.status());
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread caller = new Thread(() -> {
        try {
          client.listUsers();
        } catch (Throwable t) {
          thrown.set(t);
        }
      });
      caller.start();
      CancelTest.waitUntil(() -> log.lines.stream().anyMatch(l -> l.contains("for the rate-limit budget")), "the call waits for the budget");
      caller.interrupt();
      caller.join(30_000);
      assertTrue(thrown.get() instanceof CancelledException, "the wait ended by the interrupt: " + thrown.get() + " " + log.lines);
    }
  }
}
