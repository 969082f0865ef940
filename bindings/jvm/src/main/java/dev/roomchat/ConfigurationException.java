package dev.roomchat;

/** The {@code configuration} kind: a setting of the client is wrong (or the client is closed). */
public class ConfigurationException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  ConfigurationException(Details d, Throwable cause) {
    super(d, cause);
  }
}
