package dev.roomchat;

/** The {@code budget_unavailable} kind: the shared (Redis) budget could not be reached and the policy fails closed. */
public class BudgetUnavailableException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  BudgetUnavailableException(Details d, Throwable cause) {
    super(d, cause);
  }
}
