package dev.roomchat;

/** The {@code missing_auth} kind: the request carried no key. */
public class MissingAuthException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  MissingAuthException(Details d, Throwable cause) {
    super(d, cause);
  }
}
