package dev.roomchat;

/** The {@code invalid_argument} kind: a value the C boundary refused (a string holding a NUL character). */
public class InvalidArgumentException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  InvalidArgumentException(Details d, Throwable cause) {
    super(d, cause);
  }
}
