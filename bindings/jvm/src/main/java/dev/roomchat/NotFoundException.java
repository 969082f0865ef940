package dev.roomchat;

/** The {@code not_found} kind: this room, channel, message, member or bot does not exist. */
public class NotFoundException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  NotFoundException(Details d, Throwable cause) {
    super(d, cause);
  }
}
