package dev.roomchat.internal;

/** JSON that {@link Json} refuses: text that is not strict JSON, or a value with no JSON form. */
public final class JsonException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public JsonException(String message) {
    super(message);
  }
}
