package dev.roomchat;

/** The {@code invalid_auth} kind: the service refused the key. */
public class InvalidAuthException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  InvalidAuthException(Details d, Throwable cause) {
    super(d, cause);
  }
}
