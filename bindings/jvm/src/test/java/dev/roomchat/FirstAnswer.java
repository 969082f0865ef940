package dev.roomchat;

import dev.roomchat.testing.RoomchatEmulator;
import java.lang.management.ManagementFactory;

/**
 * Prints the time from the JVM's start to the first answer: the JVM's start to
 * main, plus building a client (the native library extracted and loaded) and
 * its first call. The emulator's own start is left out. Run by
 * scripts/dist/jvm.sh on each JDK.
 */
public final class FirstAnswer {
  private FirstAnswer() {}

  public static void main(String[] args) {
    long toMain = System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime();
    try (RoomchatEmulator emulator = RoomchatEmulator.start()) {
      long started = System.nanoTime();
      try (RoomchatClient client = emulator.clientBuilder().build()) {
        long total = client.listUsers().total();
        long toAnswer = (System.nanoTime() - started) / 1_000_000;
        System.out.printf("[measure] Java %s: JVM start to main %d ms + client built and first answer %d ms = %d ms (the emulator's start left out; %d users)%n",
            System.getProperty("java.version"), toMain, toAnswer, toMain + toAnswer, total);
      }
    }
  }
}
