package dev.roomchat;

/** The {@code internal} kind: a bug inside the library, caught at its boundary. */
public class InternalException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  InternalException(Details d, Throwable cause) {
    super(d, cause);
  }
}
