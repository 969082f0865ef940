package dev.roomchat;

/** The {@code server_error} kind: the service failed (a 5xx); see eventId(). */
public class ServerErrorException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  ServerErrorException(Details d, Throwable cause) {
    super(d, cause);
  }
}
