package dev.roomchat;

import dev.roomchat.internal.Json;
import dev.roomchat.internal.Native;
import dev.roomchat.internal.Strings;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The pure wire layer, core's: the HTTP request of a declared operation built
 * without sending it, and an answer decoded without I/O. For a program with
 * an HTTP stack of its own, and for the conformance vectors. Params are a
 * JSON object by the operation's wire names (a params class's
 * {@code toWire()}, or a {@code Map}).
 */
public final class Wire {
  private Wire() {}

  /**
   * The request core sends for {@code operation} (its snake_case name) with
   * {@code params} (null: none): {@code {"method", "path", "query", "body",
   * "auth"}} as JSON values.
   *
   * @throws ValidationException when the declaration refuses the params
   */
  public static Map<String, Object> buildRequest(String operation, Map<String, ?> params) {
    return build(operation, params, null, null);
  }

  /** {@link #buildRequest} with its whole {@code "url"} at {@code baseUrl}, {@code key} as the key's query parameter (shown as given). */
  public static Map<String, Object> buildRequestUrl(String operation, Map<String, ?> params, String baseUrl, String key) {
    return build(operation, params, baseUrl, key);
  }

  private static Map<String, Object> build(String operation, Map<String, ?> params, String baseUrl, String key) {
    dev.roomchat.internal.Native.init();
    long[] out = new long[1];
    long[] err = new long[1];
    int code = Native.roomchat_wire_build_request(Bridge.c("operation", operation), Bridge.params(operation, params), Bridge.c("base URL", baseUrl), Bridge.c("key", key), out, err);
    Bridge.check(code, err);
    return Bridge.decode(operation, Strings.take(out[0]), json -> Records.object(json, "a wire request"));
  }

  /**
   * The answer of {@code operation} decoded from a wire response: the
   * record's JSON by the wire names (unknown fields kept). An error answer
   * throws its {@link RoomchatException}, as a call would.
   *
   * @param headers name/value pairs, in order
   */
  public static Object decodeResponse(String operation, int status, List<Map.Entry<String, String>> headers, byte[] body) {
    dev.roomchat.internal.Native.init();
    if (status < 100 || status > 599) {
      throw RoomchatException.of(ErrorKind.INVALID_ARGUMENT, "status must be 100 to 599");
    }
    List<List<String>> pairs = new ArrayList<>();
    if (headers != null) {
      for (Map.Entry<String, String> h : headers) {
        pairs.add(List.of(h.getKey(), h.getValue()));
      }
    }
    byte[] bytes = body == null ? new byte[0] : body;
    long[] out = new long[1];
    long[] err = new long[1];
    int code = Native.roomchat_wire_decode_response(Bridge.c("operation", operation), (short) status, Bridge.c("headers", Json.write(pairs)), bytes.length == 0 ? null : bytes, bytes.length, out, err);
    Bridge.check(code, err);
    return Bridge.decode(operation, Strings.take(out[0]), json -> json);
  }

  /** {@link #decodeResponse} of a UTF-8 text body. */
  public static Object decodeResponse(String operation, int status, List<Map.Entry<String, String>> headers, String body) {
    return decodeResponse(operation, status, headers, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
  }

  /** The library's version, e.g. {@code 0.1.0}. */
  public static String libraryVersion() {
    dev.roomchat.internal.Native.init();
    return Strings.borrowed(Native.roomchat_version());
  }
}
