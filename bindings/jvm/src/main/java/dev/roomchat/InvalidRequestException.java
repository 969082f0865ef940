package dev.roomchat;

/** The {@code invalid_request} kind: the service refused the request (its texts say why). */
public class InvalidRequestException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  InvalidRequestException(Details d, Throwable cause) {
    super(d, cause);
  }
}
