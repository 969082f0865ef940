package dev.roomchat;

/** The {@code plan_upgrade_required} kind: the account's plan does not include this. */
public class PlanUpgradeRequiredException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  PlanUpgradeRequiredException(Details d, Throwable cause) {
    super(d, cause);
  }
}
