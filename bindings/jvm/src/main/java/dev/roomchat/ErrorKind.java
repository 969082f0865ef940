package dev.roomchat;

/** What went wrong, as every roomchat package names it; the numbers are the C ABI's {@code roomchat_result} codes. */
public enum ErrorKind {
  MISSING_AUTH(1, "missing_auth"),
  INVALID_AUTH(2, "invalid_auth"),
  INVALID_REQUEST(3, "invalid_request"),
  USER_NOT_FOUND(4, "user_not_found"),
  PLAN_UPGRADE_REQUIRED(5, "plan_upgrade_required"),
  RATE_LIMITED(6, "rate_limited"),
  SERVER_ERROR(7, "server_error"),
  UNEXPECTED_STATUS(8, "unexpected_status"),
  TIMEOUT(9, "timeout"),
  CONNECTION(10, "connection"),
  DECODE(11, "decode"),
  RESPONSE_TOO_LARGE(12, "response_too_large"),
  VALIDATION(13, "validation"),
  CONFIGURATION(14, "configuration"),
  CANCELLED(15, "cancelled"),
  BUDGET_UNAVAILABLE(16, "budget_unavailable"),
  TLS(17, "tls"),
  NOT_FOUND(18, "not_found"),
  /** A value the C boundary refused (a string holding a NUL character). */
  INVALID_ARGUMENT(100, "invalid_argument"),
  /** A bug inside the library, caught at its boundary. */
  INTERNAL(101, "internal"),
  /** A kind newer than this package. */
  UNKNOWN(103, "unknown");

  private final int code;
  private final String wireName;

  ErrorKind(int code, String wireName) {
    this.code = code;
    this.wireName = wireName;
  }

  /** The C ABI's result code. */
  public int code() {
    return code;
  }

  /** The stable snake_case name ({@code rate_limited}), as the conformance vectors and every package spell it. */
  public String wireName() {
    return wireName;
  }

  /** The kind of a C result code; {@link #UNKNOWN} for a code this package does not know. */
  public static ErrorKind fromCode(int code) {
    for (ErrorKind k : values()) {
      if (k.code == code) {
        return k;
      }
    }
    return UNKNOWN;
  }

  @Override
  public String toString() {
    return wireName;
  }
}
