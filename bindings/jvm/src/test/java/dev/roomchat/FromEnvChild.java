package dev.roomchat;

/**
 * Run by {@link FromEnvTest} in a JVM of its own, with the environment it is
 * testing (a JVM cannot change its own): makes a client with
 * {@link RoomchatClient#fromEnv()} (or, with the argument {@code builder},
 * {@link RoomchatClient#builderFromEnv()}), and prints what happened.
 */
public final class FromEnvChild {
  private FromEnvChild() {}

  public static void main(String[] args) {
    RoomchatClient.Builder builder;
    try {
      builder = args.length > 0 && args[0].equals("builder") ? RoomchatClient.builderFromEnv() : null;
    } catch (RoomchatException e) {
      System.out.println("builderFromEnv " + e.getMessage());
      return;
    }
    try (RoomchatClient client = builder != null ? builder.build() : RoomchatClient.fromEnv()) {
      System.out.println("listed " + client.listUsers().total() + " " + client);
      try {
        client.validateAccessToken("forged-token");
      } catch (RoomchatException e) {
        // Sent with the public key (without one: a configuration error, nothing sent).
        System.out.println("validated " + e.kind());
      }
    } catch (RoomchatException e) {
      System.out.println("fromEnv " + e.getMessage());
    }
  }
}
