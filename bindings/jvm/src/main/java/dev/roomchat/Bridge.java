package dev.roomchat;

import dev.roomchat.internal.Json;
import dev.roomchat.internal.JsonException;
import dev.roomchat.internal.Native;
import dev.roomchat.internal.Strings;
import java.time.Duration;
import java.util.function.Function;

/** What every call does at the C boundary: errors read back, params written, answers decoded. */
final class Bridge {
  private Bridge() {}

  static final int OK = 0;
  static final int ITERATION_DONE = 102;

  /** Throws the error of {@code code} (not OK), reading and freeing {@code err[0]}. */
  static RoomchatException error(int code, long err) {
    ErrorKind kind = ErrorKind.fromCode(code);
    if (err == 0) {
      return RoomchatException.of(kind, Strings.borrowed(Native.roomchat_result_name(code)));
    }
    try {
      RoomchatException.Details d = new RoomchatException.Details(kind, Strings.borrowed(Native.roomchat_error_message(err)));
      d.status = Short.toUnsignedInt(Native.roomchat_error_status(err));
      d.serviceMessage = Strings.borrowed(Native.roomchat_error_service_message(err));
      d.serviceError = Strings.borrowed(Native.roomchat_error_service_error(err));
      d.serviceErrorMessage = Strings.borrowed(Native.roomchat_error_service_error_message(err));
      long retry = Native.roomchat_error_retry_after_ms(err);
      d.retryAfter = retry >= 0 ? Duration.ofMillis(retry) : null;
      d.eventId = Strings.borrowed(Native.roomchat_error_event_id(err));
      d.method = Strings.borrowed(Native.roomchat_error_method(err));
      d.path = Strings.borrowed(Native.roomchat_error_path(err));
      if (d.message != null) {
        d.message = d.message.replace("roomchat_client_options_set_allow_insecure_http", "RoomchatClient.Builder.allowInsecureHttp(true)");
      }
      d.outcomeUnknown = kind == ErrorKind.CANCELLED && Native.roomchat_error_never_sent(err) == 0;
      return RoomchatException.of(d, null);
    } finally {
      Native.roomchat_error_free(err);
    }
  }

  /** Throws when {@code code} is not OK. */
  static void check(int code, long[] err) {
    if (code != OK) {
      throw error(code, err == null ? 0 : err[0]);
    }
  }

  /** {@code text} as a C string; a NUL or a lone surrogate inside is an {@link InvalidArgumentException} naming {@code what}. */
  static byte[] c(String what, String text) {
    try {
      return Strings.c(text);
    } catch (IllegalArgumentException e) {
      throw RoomchatException.of(ErrorKind.INVALID_ARGUMENT, what + " " + e.getMessage());
    }
  }

  /** The JSON text of params (null: none) as a C string. */
  static byte[] params(String operation, Object params) {
    if (params == null) {
      return null;
    }
    String text;
    try {
      text = Json.write(params);
    } catch (JsonException e) {
      throw RoomchatException.of(ErrorKind.VALIDATION, operation + "'s params cannot be sent as JSON: " + e.getMessage(), e);
    }
    return c(operation + "'s params", text);
  }

  /** The answer's JSON text decoded into the operation's record. */
  static <T> T decode(String operation, String text, Function<Object, T> decode) {
    Object json;
    try {
      json = Json.parse(text);
    } catch (RuntimeException e) {
      throw RoomchatException.of(ErrorKind.DECODE, "the answer of " + operation + " does not fit its record: " + e.getMessage(), e);
    }
    return decodeJson(operation, json, decode);
  }

  /** Decoded JSON made into the operation's record. */
  static <T> T decodeJson(String operation, Object json, Function<Object, T> decode) {
    try {
      return decode.apply(json);
    } catch (RoomchatException e) {
      throw e;
    } catch (RuntimeException e) {
      throw RoomchatException.of(ErrorKind.DECODE, "the answer of " + operation + " does not fit its record: " + e.getMessage(), e);
    }
  }

  static long ms(String what, Duration d) {
    if (d == null) {
      return 0;
    }
    if (d.isNegative() || d.isZero()) {
      throw RoomchatException.of(ErrorKind.CONFIGURATION, what + " must be above 0");
    }
    long ms;
    try {
      ms = d.toMillis();
    } catch (ArithmeticException e) {
      throw RoomchatException.of(ErrorKind.CONFIGURATION, what + " is too long");
    }
    return ms == 0 ? 1 : ms;
  }
}
