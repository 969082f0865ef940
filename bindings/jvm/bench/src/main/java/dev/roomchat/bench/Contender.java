package dev.roomchat.bench;

import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.roomchat.ListUsersParams;
import dev.roomchat.RoomchatClient;
import dev.roomchat.User;
import dev.roomchat.UserPage;
import dev.roomchat.Wire;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One way to call list_users: {@link #call} makes one call of a page of 50 and reads every
 * username (an error when the page is not 50 users), as a program showing them would.
 */
abstract class Contender implements AutoCloseable {
  static final int PAGE = 50;
  static final String ROOMCHAT = "roomchat";
  static final String JDK = "HttpClient+Jackson";
  static final List<String> NAMES = List.of(ROOMCHAT, JDK);

  /** The usernames' lengths read, summed: what the calls' answers were used for. */
  long sink;

  abstract UserPage fetch() throws Exception;

  final void call() throws Exception {
    UserPage page = fetch();
    if (page.data() == null || page.data().size() != PAGE) {
      throw new IllegalStateException("a page of " + (page.data() == null ? 0 : page.data().size()) + " users, not " + PAGE);
    }
    int n = 0;
    for (User user : page.data()) {
      if (user.username() == null) {
        throw new IllegalStateException("a user without a username");
      }
      n += user.username().length();
    }
    synchronized (this) {
      sink += n;
    }
  }

  @Override
  public void close() {}

  static Contender of(String name, String baseUrl, String key) {
    return switch (name) {
      case ROOMCHAT -> new Roomchat(baseUrl, key);
      case JDK -> new Jdk(baseUrl, key);
      default -> throw new IllegalArgumentException("no contender " + name);
    };
  }

  /** The package with its defaults, but a budget the benchmark never reaches. */
  static final class Roomchat extends Contender {
    private final RoomchatClient client;
    private final ListUsersParams params = ListUsersParams.builder().limit(PAGE).build();

    Roomchat(String baseUrl, String key) {
      client = RoomchatClient.builder(key).baseUrl(baseUrl).rateLimit(1_000_000_000, Duration.ofSeconds(1)).build();
    }

    @Override
    UserPage fetch() {
      return client.listUsers(params);
    }

    @Override
    public void close() {
      client.close();
    }
  }

  /**
   * What a JVM team writes without the package: one shared {@link HttpClient} (HTTP/1.1,
   * the service's protocol; its default executor), the request core would send (its URL
   * from the package's pure wire layer, built once), and Jackson decoding the body into
   * the package's own records through mix-ins.
   */
  static final class Jdk extends Contender {
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
    private final HttpRequest request;
    private final ObjectMapper mapper = new ObjectMapper()
        .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
        .addMixIn(UserPage.class, UserPageMixin.class)
        .addMixIn(User.class, UserMixin.class);

    Jdk(String baseUrl, String key) {
      Map<String, Object> wire = Wire.buildRequestUrl("list_users", ListUsersParams.builder().limit(PAGE).build().toWire(), baseUrl, key);
      request = HttpRequest.newBuilder(URI.create((String) wire.get("url"))).timeout(Duration.ofSeconds(30)).header("Accept", "application/json").GET().build();
    }

    @Override
    UserPage fetch() throws IOException, InterruptedException {
      HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
      if (response.statusCode() != 200) {
        throw new IOException("HTTP " + response.statusCode());
      }
      return mapper.readValue(response.body(), UserPage.class);
    }

    @Override
    public void close() {
      // HttpClient is AutoCloseable from Java 21.
      http.close();
    }
  }

  abstract static class UserPageMixin {
    @JsonCreator
    UserPageMixin(
        @JsonProperty("total") Long total,
        @JsonProperty("limit") Long limit,
        @JsonProperty("skip") Long skip,
        @JsonProperty("data") List<User> data,
        @JsonAnySetter Map<String, Object> extra) {}
  }

  abstract static class UserMixin {
    @JsonCreator
    UserMixin(
        @JsonProperty("_id") String id,
        @JsonProperty("userId") String userId,
        @JsonProperty("username") String username,
        @JsonProperty("profilePic") String profilePic,
        @JsonProperty("email") String email,
        @JsonProperty("uniqueUserIdentifier") String uniqueUserIdentifier,
        @JsonProperty("isModerator") Boolean isModerator,
        @JsonProperty("chatRoom") String chatRoom,
        @JsonAnySetter Map<String, Object> extra) {}
  }
}
