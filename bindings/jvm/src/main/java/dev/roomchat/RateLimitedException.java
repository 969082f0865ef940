package dev.roomchat;

/** The {@code rate_limited} kind: the service (a 429) or the client's own budget said to slow down; see retryAfter(). */
public class RateLimitedException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  RateLimitedException(Details d, Throwable cause) {
    super(d, cause);
  }
}
