package dev.roomchat;

/** The {@code unexpected_status} kind: an answer whose status the package does not expect. */
public class UnexpectedStatusException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  UnexpectedStatusException(Details d, Throwable cause) {
    super(d, cause);
  }
}
