package dev.roomchat;

/** The {@code validation} kind: the params were refused before anything was sent. */
public class ValidationException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  ValidationException(Details d, Throwable cause) {
    super(d, cause);
  }
}
