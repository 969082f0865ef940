package dev.roomchat;

/** The {@code connection} kind: the service could not be reached. */
public class ConnectionException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  ConnectionException(Details d, Throwable cause) {
    super(d, cause);
  }
}
