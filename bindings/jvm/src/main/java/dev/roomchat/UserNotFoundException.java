package dev.roomchat;

/** The {@code user_not_found} kind: no (active) user has this id. */
public class UserNotFoundException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  UserNotFoundException(Details d, Throwable cause) {
    super(d, cause);
  }
}
