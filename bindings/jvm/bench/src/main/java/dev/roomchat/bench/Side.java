package dev.roomchat.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One contender's process: it answers the conductor's requests, one line each, on its
 * stdout (which nothing else writes). Requests: {@code warm MODE COUNT}, {@code block MODE
 * COUNT}, {@code results}, {@code end}. A block's figures are its own process's: wall time,
 * each call's time, CPU time, bytes allocated by every thread, GCs.
 */
final class Side {
  private Side() {}

  /** How calls are made: by how many threads at once, and of which kind. */
  enum Mode {
    ONE(1, false, "one call at a time"),
    PLATFORM16(16, false, "16 platform threads"),
    VIRTUAL1000(1000, true, "1,000 virtual threads");

    final int threads;
    final boolean virtual;
    final String title;

    Mode(int threads, boolean virtual, String title) {
      this.threads = threads;
      this.virtual = virtual;
      this.title = title;
    }
  }

  /** The figures of the blocks since the last results. */
  static final class Tally {
    int calls;
    long wallNs, cpuNs, bytes, gcs;
    final List<long[]> latencies = new ArrayList<>();

    String line() {
      long[] all = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
      long median = all.length == 0 ? 0 : all[all.length / 2];
      long p99 = all.length == 0 ? 0 : all[Math.min(all.length - 1, (int) (0.99 * all.length))];
      return "ok " + calls + " " + wallNs + " " + median + " " + p99 + " " + cpuNs + " " + bytes + " " + gcs;
    }
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err); // nothing but the answers on the conductor's pipe
    try (Contender c = Contender.of(args[0], System.getenv("ROOMCHAT_BENCH_BASE_URL"), System.getenv("ROOMCHAT_BENCH_KEY"))) {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      Tally tally = new Tally();
      String line;
      while ((line = in.readLine()) != null) {
        String[] w = line.split(" ");
        try {
          switch (w[0]) {
            case "warm" -> {
              run(c, Mode.valueOf(w[1]), Integer.parseInt(w[2]), null);
              out.println("ok");
            }
            case "block" -> {
              block(c, Mode.valueOf(w[1]), Integer.parseInt(w[2]), tally);
              out.println("ok");
            }
            case "results" -> {
              out.println(tally.line());
              tally = new Tally();
            }
            case "end" -> {
              out.println(c.sink > 0 ? "ok" : "error nothing was read");
              return;
            }
            default -> out.println("error unknown request " + line);
          }
        } catch (Exception e) {
          out.println("error " + String.valueOf(e).replace('\n', ' '));
        }
      }
    }
  }

  static void block(Contender c, Mode mode, int count, Tally t) throws Exception {
    long[] latencies = new long[count];
    com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long gc0 = gcs(), cpu0 = os.getProcessCpuTime(), bytes0 = threads.getTotalThreadAllocatedBytes();
    long start = System.nanoTime();
    run(c, mode, count, latencies);
    long wall = System.nanoTime() - start;
    long cpu1 = os.getProcessCpuTime(), bytes1 = threads.getTotalThreadAllocatedBytes(), gc1 = gcs();
    t.calls += count;
    t.wallNs += wall;
    t.cpuNs += cpu1 - cpu0;
    t.bytes += bytes1 - bytes0;
    t.gcs += gc1 - gc0;
    t.latencies.add(latencies);
  }

  static long gcs() {
    long n = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      n += Math.max(0, gc.getCollectionCount());
    }
    return n;
  }

  /** Makes {@code count} calls from the mode's threads, each taking the next call until none is left. */
  static void run(Contender c, Mode mode, int count, long[] latencies) throws Exception {
    AtomicInteger next = new AtomicInteger();
    AtomicReference<Exception> failure = new AtomicReference<>();
    Runnable worker = () -> {
      int i;
      while ((i = next.getAndIncrement()) < count) {
        long start = System.nanoTime();
        try {
          c.call();
        } catch (Exception e) {
          failure.compareAndSet(null, e);
          next.set(count); // the others stop too
          return;
        }
        if (latencies != null) {
          latencies[i] = System.nanoTime() - start;
        }
      }
    };
    if (mode.threads == 1) {
      worker.run();
    } else {
      Thread.Builder builder = mode.virtual ? Thread.ofVirtual() : Thread.ofPlatform().daemon(true);
      List<Thread> started = new ArrayList<>(mode.threads);
      for (int k = 0; k < Math.min(mode.threads, count); k++) {
        started.add(builder.start(worker));
      }
      for (Thread thread : started) {
        thread.join();
      }
    }
    if (failure.get() != null) {
      throw failure.get();
    }
  }
}
