package dev.roomchat;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An answer with what came with it: {@link RoomchatClient#call}'s result, and
 * {@link WithResponse#response()} of an operation's {@code ...WithResponse} method.
 *
 * @param status the HTTP status
 * @param headers the answer's headers in the order they came (names in lower case)
 * @param attempts the attempts the call made (1 when the first was answered)
 * @param requestId the id the service gave the request ({@code X-Request-Id}), to quote to support
 * @param json the answer's record as JSON by the service's field names (unknown fields kept):
 *     a {@code Map}, a {@code List}, ...; for {@code raw}, {@code {"status", "body"}}
 * @param body the same JSON as the library wrote it, as text
 */
public record Response(int status, List<Map.Entry<String, String>> headers, int attempts, Optional<String> requestId, Object json, String body) {
  /** The value of the first header called {@code name} (any case). */
  public Optional<String> header(String name) {
    for (Map.Entry<String, String> h : headers) {
      if (h.getKey().equalsIgnoreCase(name)) {
        return Optional.of(h.getValue());
      }
    }
    return Optional.empty();
  }

  /** The status, attempts, request id and header names; never the body (an access token may be in it). */
  @Override
  public String toString() {
    List<String> names = new java.util.ArrayList<>();
    for (Map.Entry<String, String> h : headers) {
      names.add(h.getKey());
    }
    return "Response[status=" + status + ", attempts=" + attempts + ", requestId=" + requestId.orElse(null)
        + ", headers=" + names + ", body=" + (body == null ? 0 : body.length()) + " chars]";
  }
}
