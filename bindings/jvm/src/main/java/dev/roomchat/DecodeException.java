package dev.roomchat;

/** The {@code decode} kind: the answer was not what the operation answers. */
public class DecodeException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  DecodeException(Details d, Throwable cause) {
    super(d, cause);
  }
}
