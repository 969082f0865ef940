package dev.roomchat;

/** The {@code response_too_large} kind: the answer was larger than the client accepts. */
public class ResponseTooLargeException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  ResponseTooLargeException(Details d, Throwable cause) {
    super(d, cause);
  }
}
