package dev.roomchat;

/**
 * Another process on the same key and the same Redis budget
 * ({@link RedisBudgetTest}): makes {@code args[0]} calls and prints each one's
 * outcome, {@code ok} or its error's kind. The key, base URL and Redis URL
 * come in the environment, never on the command line.
 */
public final class RedisBudgetChild {
  private RedisBudgetChild() {}

  public static void main(String[] args) {
    int calls = Integer.parseInt(args[0]);
    try (RoomchatClient client = RedisBudgetTest.budget(RoomchatClient.builderFromEnv(), System.getenv("ROOMCHAT_TEST_REDIS_URL"), "jvm-shared").build()) {
      for (int i = 0; i < calls; i++) {
        try {
          client.listChatRooms();
          System.out.println("ok");
        } catch (RoomchatException e) {
          System.out.println(e.kind().wireName() + " " + e.status());
        }
      }
    }
    System.out.flush();
  }
}
