package dev.roomchat.testing;

import dev.roomchat.RoomchatClient;
import dev.roomchat.internal.Json;
import dev.roomchat.internal.JsonException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A running roomchat emulator (the service's REST API on loopback) and its
 * admin API ({@code /_emulator/}): what {@link RoomchatExtension} hands a
 * test. Its executable is {@code $ROOMCHAT_EMULATOR} (or the system property
 * {@code roomchat.emulator}), else {@code target/release/roomchat-emulator}
 * (then {@code target/debug/}) of the repository checkout above the current
 * folder. Each emulator has keys of its own; the emulator stops with
 * {@link #close()}, or when this JVM exits (its stdin closes).
 */
public final class RoomchatEmulator implements AutoCloseable {
  private final Process process;
  private final String baseUrl;
  private final String adminUrl;
  private final String chatUrl;
  private final String privateKey;
  private final String publicKey;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private RoomchatEmulator(Process process, Map<String, Object> ready) {
    this.process = process;
    this.baseUrl = (String) ready.get("base_url");
    this.adminUrl = (String) ready.get("admin_url");
    this.chatUrl = (String) ready.get("chat_url");
    this.privateKey = (String) ready.get("private_key");
    this.publicKey = (String) ready.get("public_key");
  }

  /** Starts an emulator with keys of its own. */
  public static RoomchatEmulator start(String... extraArgs) {
    Path binary = find();
    String token = randomHex(8);
    List<String> command = new ArrayList<>(List.of(binary.toString(), "--port", "0", "--private-key", "sk_test_emulator_" + token, "--public-key", "pk_test_emulator_" + token));
    command.addAll(List.of(extraArgs));
    Process process;
    try {
      process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      throw new EmulatorException("cannot start " + binary + ": " + e.getMessage(), e);
    }
    CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
      try {
        return new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)).readLine();
      } catch (IOException e) {
        return null;
      }
    });
    String text;
    try {
      text = line.get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      process.destroy();
      throw new EmulatorException("the emulator printed no ready line within 30 s", e);
    }
    if (text == null) {
      process.destroy();
      throw new EmulatorException("the emulator exited before it was ready", null);
    }
    Object ready;
    try {
      ready = Json.parse(text);
    } catch (JsonException e) {
      process.destroy();
      throw new EmulatorException("the emulator's ready line is not JSON: " + e.getMessage(), e);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) ready;
    return new RoomchatEmulator(process, map);
  }

  /** The emulator executable this kit runs. */
  public static Path find() {
    for (String explicit : new String[] {System.getProperty("roomchat.emulator"), System.getenv("ROOMCHAT_EMULATOR")}) {
      if (explicit != null && !explicit.isEmpty()) {
        Path p = Paths.get(explicit);
        if (!Files.isExecutable(p)) {
          throw new EmulatorException(explicit + " (ROOMCHAT_EMULATOR) is not an executable file", null);
        }
        return p;
      }
    }
    List<Path> starts = new ArrayList<>();
    String repo = System.getenv("ROOMCHAT_REPO");
    if (repo != null && !repo.isEmpty()) {
      starts.add(Paths.get(repo));
    }
    starts.add(Paths.get("").toAbsolutePath());
    for (Path start : starts) {
      for (Path dir = start.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
        for (String profile : new String[] {"release", "debug"}) {
          Path p = dir.resolve("target").resolve(profile).resolve("roomchat-emulator");
          if (Files.isExecutable(p)) {
            return p;
          }
        }
      }
    }
    throw new EmulatorException("no roomchat-emulator found: set ROOMCHAT_EMULATOR to its path (cargo build --release -p roomchat-emulator builds it)", null);
  }

  /** The REST API's base URL. */
  public String baseUrl() {
    return baseUrl;
  }

  /** The address of the sign-in pages. */
  public String chatUrl() {
    return chatUrl;
  }

  /** The private key it accepts (a test key). */
  public String privateKey() {
    return privateKey;
  }

  /** The public key it accepts. */
  public String publicKey() {
    return publicKey;
  }

  /** A builder of a client for this emulator (its keys, base and chat URLs). */
  public RoomchatClient.Builder clientBuilder() {
    return RoomchatClient.builder(privateKey).baseUrl(baseUrl).publicKey(publicKey).chatUrl(chatUrl);
  }

  /** Empties it: users, rooms, faults, journal, rate-limit counters. */
  public void reset() {
    admin("POST", "/reset", null);
  }

  /** Adds {@code count} users; returns the new total. */
  public long seedUsers(int count) {
    return ((Number) object(admin("POST", "/users/seed", Map.of("count", count))).get("total")).longValue();
  }

  /** Creates a room ({@code POST /_emulator/rooms}); returns it, {@code _id} included. */
  public Map<String, Object> createRoom(Map<String, Object> room) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("name", "General");
    body.putAll(room);
    return object(admin("POST", "/rooms", body));
  }

  /** Adds a fault rule ({@code POST /_emulator/faults}: {@code {"method"?, "path", "times"?, "action"}}). */
  public void addFault(Map<String, Object> rule) {
    admin("POST", "/faults", rule);
  }

  /** The next {@code times} requests to {@code path} ({@code *}: any) are answered {@code status} with {@code body}, without effect. */
  public void failNext(String path, int status, String body, int times) {
    addFault(Map.of("path", path, "times", times, "action", Map.of("kind", "respond", "status", status, "body", body, "headers", Map.of())));
  }

  /** The account's rate limit (default 600 per 60 s) until the next reset. */
  public void setRateLimit(int requests, Duration window) {
    admin("PUT", "/config", Map.of("rate_limit", Map.of("requests", requests, "window_ms", window.toMillis())));
  }

  /** The answers a {@code hold} fault holds back now. */
  public long held() {
    return ((Number) object(admin("GET", "/held", null)).get("held")).longValue();
  }

  /** Lets every held answer go. */
  public void releaseHeld() {
    admin("DELETE", "/held", null);
  }

  /** An admin request ({@code /_emulator} + route); its answer's JSON. */
  public Object admin(String method, String route, Object body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(adminUrl + route)).timeout(Duration.ofSeconds(30));
    HttpRequest.BodyPublisher publisher = body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(Json.write(body));
    b.method(method, publisher).header("Content-Type", "application/json");
    HttpResponse<String> response;
    try {
      response = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new EmulatorException(method + " " + route + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EmulatorException(method + " " + route + ": interrupted", e);
    }
    if (response.statusCode() != 200) {
      throw new EmulatorException(method + " " + route + " was answered " + response.statusCode() + ": " + response.body(), null);
    }
    return response.body().isEmpty() ? null : Json.parse(response.body());
  }

  /** The requests it received (REST API and sign-in pages), oldest first, the private key shown as REDACTED. */
  public List<JournalEntry> journal() {
    Object entries = object(admin("GET", "/journal", null)).get("entries");
    List<JournalEntry> out = new ArrayList<>();
    String encoded = URLEncoder.encode(privateKey, StandardCharsets.UTF_8);
    for (Object e : (List<?>) entries) {
      Map<String, Object> m = object(e);
      out.add(new JournalEntry(
          ((Number) m.get("seq")).longValue(),
          (String) m.get("method"),
          scrub((String) m.get("path"), encoded),
          scrub((String) m.get("query"), encoded),
          scrub((String) m.get("body"), encoded),
          ((Number) m.get("status")).intValue()));
    }
    return out;
  }

  /** Empties the journal. */
  public void clearJournal() {
    admin("DELETE", "/journal", null);
  }

  private String scrub(String text, String encoded) {
    return text == null ? null : text.replace(privateKey, "REDACTED").replace(encoded, "REDACTED");
  }

  /** One request the emulator received. */
  public record JournalEntry(long seq, String method, String path, String query, String body, int status) {}

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "RoomchatEmulator[" + baseUrl + "]";
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Object json) {
    if (!(json instanceof Map)) {
      throw new EmulatorException("the admin API answered " + json + ", not an object", null);
    }
    return (Map<String, Object>) json;
  }

  private static String randomHex(int bytes) {
    byte[] b = new byte[bytes];
    new SecureRandom().nextBytes(b);
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x));
    }
    return s.toString();
  }

  /** The emulator could not be found, could not start, or refused an admin request. */
  public static final class EmulatorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    EmulatorException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
