package dev.roomchat;

/** The {@code timeout} kind: an attempt took longer than its timeout. */
public class RequestTimeoutException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  RequestTimeoutException(Details d, Throwable cause) {
    super(d, cause);
  }
}
