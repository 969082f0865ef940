package dev.roomchat.bench;

/**
 * A fresh process's first answer: the contender named by {@code args[0]} built from
 * ROOMCHAT_BENCH_BASE_URL and ROOMCHAT_BENCH_KEY, one list_users of 50, the page's size
 * printed, exit. The conductor times it from the process's start to that line.
 */
final class FirstAnswer {
  private FirstAnswer() {}

  public static void main(String[] args) throws Exception {
    try (Contender c = Contender.of(args[0], System.getenv("ROOMCHAT_BENCH_BASE_URL"), System.getenv("ROOMCHAT_BENCH_KEY"))) {
      System.out.println(c.fetch().data().size());
    }
  }
}
