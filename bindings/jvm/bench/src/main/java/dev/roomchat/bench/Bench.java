package dev.roomchat.bench;

import dev.roomchat.testing.RoomchatEmulator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Prints the JVM package's figures beside what a JVM team writes without it (figures, not
 * a test: nothing is asserted on time): list_users of 50 users (the release emulator,
 * --seed-users 50) through {@code RoomchatClient.listUsers} against
 * {@code java.net.http.HttpClient} with Jackson into the same records ({@link Contender}),
 * each call reading every username. One call at a time, 16 platform threads, 1,000 virtual
 * threads. Per call: the wall time of the blocks over their calls, the median and p99 of
 * the calls' own times, the process's CPU time, and the bytes the JVM's threads allocated
 * (the library's own Rust allocations are not the JVM's and not in them). Each mode twice:
 * on the machine as it is (idle), then loaded: one busy-loop process per core beside it
 * (scripts/bench/cpu-load.sh, the loader every language's benchmarks share). Last, the
 * time from a JVM's start to its first answer ({@link FirstAnswer}: the process started,
 * the client built, one call, its line read), each contender ROOMCHAT_BENCH_STARTS times.
 *
 * <p>Each contender runs in a JVM of its own ({@link Side}), which loads only its own
 * client and times its own blocks; this process conducts them over their stdin and
 * stdout, one block at a time, rotating who goes first, and is idle while a block runs.
 *
 * <pre>
 *   bash bindings/jvm/bench/run.sh
 *   ROOMCHAT_BENCH_N          calls per contender one at a time, idle (default 2000; 4x that on threads)
 *   ROOMCHAT_BENCH_N_LOADED   the same, loaded (default ROOMCHAT_BENCH_N, at most 1000)
 *   ROOMCHAT_BENCH_STARTS     first answers of each contender, idle and loaded (default 5)
 *   ROOMCHAT_EMULATOR         the emulator (run.sh: target/release/roomchat-emulator)
 * </pre>
 */
public final class Bench {
  private Bench() {}

  static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
  static final int LOAD_PROCESSES = Runtime.getRuntime().availableProcessors();

  /** One contender's JVM and the pipes to it. */
  static final class SideProcess implements AutoCloseable {
    final String name;
    final Process process;
    final OutputStream in;
    final BufferedReader out;

    SideProcess(String name, Process process) {
      this.name = name;
      this.process = process;
      this.in = process.getOutputStream();
      this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    String ask(String request) throws IOException {
      in.write((request + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
      String line = out.readLine();
      if (line == null) {
        throw new IOException(name + "'s process ended");
      }
      if (!line.startsWith("ok")) {
        throw new IOException(name + ": " + line);
      }
      return line;
    }

    @Override
    public void close() throws Exception {
      in.close();
      process.waitFor();
    }
  }

  /** A contender's figures over a mode's blocks. */
  record Results(int calls, double usPerCall, double medianUs, double p99Us, double cpuUs, double bytes, double gcsPer1000) {
    static Results parse(String line) {
      String[] w = line.split(" ");
      int calls = Integer.parseInt(w[1]);
      double n = calls;
      return new Results(calls, Long.parseLong(w[2]) / 1e3 / n, Long.parseLong(w[3]) / 1e3, Long.parseLong(w[4]) / 1e3,
          Long.parseLong(w[5]) / 1e3 / n, Long.parseLong(w[6]) / n, Long.parseLong(w[7]) * 1000 / n);
    }
  }

  static int envInt(String name, int fallback) {
    try {
      int v = Integer.parseInt(System.getenv(name));
      return v > 0 ? v : fallback;
    } catch (NumberFormatException e) {
      return fallback;
    }
  }

  static List<String> java(String mainClass, String... args) {
    List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), mainClass));
    command.addAll(List.of(args));
    return command;
  }

  /** Runs {@code body} while scripts/bench/cpu-load.sh keeps every core busy; the load stops when it returns. */
  static <T> T withCpuLoad(Path root, Callable<T> body) throws Exception {
    Process load = new ProcessBuilder("bash", root.resolve("scripts/bench/cpu-load.sh").toString(), String.valueOf(LOAD_PROCESSES), "900")
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      String ready = new BufferedReader(new InputStreamReader(load.getInputStream(), StandardCharsets.UTF_8)).readLine();
      if (ready == null || !ready.startsWith("cpu-load:")) {
        throw new IOException("cpu-load.sh did not start: " + ready);
      }
      return body.call();
    } finally {
      load.getOutputStream().close(); // its stdin closed: the loops stop
      load.waitFor();
    }
  }

  public static void main(String[] args) throws Exception {
    Path root = Paths.get(System.getProperty("roomchat.repo", "../../..")).toAbsolutePath().normalize();
    int n = envInt("ROOMCHAT_BENCH_N", 2000);
    int nLoaded = envInt("ROOMCHAT_BENCH_N_LOADED", Math.min(n, 1000));
    int starts = envInt("ROOMCHAT_BENCH_STARTS", 5);
    String loadedLabel = "loaded (" + LOAD_PROCESSES + " busy processes)";

    try (RoomchatEmulator emulator = RoomchatEmulator.start("--seed-users", String.valueOf(Contender.PAGE), "--rate-limit", "1000000000/1s")) {
      Map<String, String> env = Map.of("ROOMCHAT_BENCH_BASE_URL", emulator.baseUrl(), "ROOMCHAT_BENCH_KEY", emulator.privateKey());
      Map<String, SideProcess> sides = new LinkedHashMap<>();
      try {
        for (String name : Contender.NAMES) {
          ProcessBuilder pb = new ProcessBuilder(java(Side.class.getName(), name)).redirectError(ProcessBuilder.Redirect.INHERIT);
          pb.environment().putAll(env);
          sides.put(name, new SideProcess(name, pb.start()));
        }
        List<String[]> summary = new ArrayList<>();
        Map<String, Map<String, Results>> byModeAndLoad = new LinkedHashMap<>();
        for (Side.Mode mode : Side.Mode.values()) {
          int scale = mode == Side.Mode.ONE ? 1 : 4;
          Map<String, Results> idle = measure(sides, mode, n * scale);
          table(mode, "idle", idle);
          Map<String, Results> loaded = withCpuLoad(root, () -> measure(sides, mode, nLoaded * scale));
          table(mode, loadedLabel, loaded);
          byModeAndLoad.put(mode + " idle", idle);
          byModeAndLoad.put(mode + " loaded", loaded);
          for (var load : List.of(Map.entry("idle", idle), Map.entry(loadedLabel, loaded))) {
            Results ours = load.getValue().get(Contender.ROOMCHAT), theirs = load.getValue().get(Contender.JDK);
            double ratio = theirs.usPerCall() / ours.usPerCall();
            summary.add(new String[] {String.format(Locale.ROOT,
                "jvm: %s, %s: roomchat %.1f µs/call (median %.1f, p99 %.1f; %.0f B/call, CPU %.1f µs), %s %.1f µs/call (median %.1f, p99 %.1f; %.0f B/call, CPU %.1f µs): %.2f× the reference's speed%s, CPU %.2f×",
                mode.title, load.getKey(), ours.usPerCall(), ours.medianUs(), ours.p99Us(), ours.bytes(), ours.cpuUs(),
                Contender.JDK, theirs.usPerCall(), theirs.medianUs(), theirs.p99Us(), theirs.bytes(), theirs.cpuUs(), ratio,
                ratio < 1 ? " (BEHIND the reference)" : "", theirs.cpuUs() / ours.cpuUs())});
          }
        }
        for (SideProcess side : sides.values()) {
          side.ask("end");
        }

        // The first answer of a fresh JVM.
        Map<String, List<Double>> startIdle = firstAnswers(env, starts);
        Map<String, List<Double>> startLoaded = withCpuLoad(root, () -> firstAnswers(env, starts));
        OUT.printf(Locale.ROOT, "%njvm: the time from a JVM's start to its first answer (the process started, the client built, list_users, its line read; %d runs each, interleaved; Java %s)%n",
            starts, System.getProperty("java.version"));
        OUT.printf(Locale.ROOT, "%-22s%14s%14s%16s%14s%n", "contender", "idle median", "idle max", "loaded median", "loaded max");
        for (String name : Contender.NAMES) {
          OUT.printf(Locale.ROOT, "%-22s%11.0f ms%11.0f ms%13.0f ms%11.0f ms%n", name, median(startIdle.get(name)), max(startIdle.get(name)),
              median(startLoaded.get(name)), max(startLoaded.get(name)));
        }

        // The figures a regression shows in, one line each.
        OUT.println();
        for (String[] line : summary) {
          OUT.println(line[0]);
        }
        for (String load : List.of("idle", "loaded")) {
          Map<String, Results> platform = byModeAndLoad.get(Side.Mode.PLATFORM16 + " " + load);
          Map<String, Results> virtual = byModeAndLoad.get(Side.Mode.VIRTUAL1000 + " " + load);
          OUT.printf(Locale.ROOT, "jvm: 1,000 virtual threads beside 16 platform threads, %s: roomchat %.2f× their throughput, %s %.2f×%n",
              load.equals("idle") ? "idle" : loadedLabel,
              platform.get(Contender.ROOMCHAT).usPerCall() / virtual.get(Contender.ROOMCHAT).usPerCall(),
              Contender.JDK, platform.get(Contender.JDK).usPerCall() / virtual.get(Contender.JDK).usPerCall());
        }
        for (var load : List.of(Map.entry("idle", startIdle), Map.entry(loadedLabel, startLoaded))) {
          OUT.printf(Locale.ROOT, "jvm: first answer, %s: roomchat %.0f ms, %s %.0f ms (medians of %d)%n", load.getKey(),
              median(load.getValue().get(Contender.ROOMCHAT)), Contender.JDK, median(load.getValue().get(Contender.JDK)), starts);
        }
      } finally {
        for (SideProcess side : sides.values()) {
          side.close();
        }
      }
    }
  }

  static Map<String, Results> measure(Map<String, SideProcess> sides, Side.Mode mode, int calls) throws IOException {
    for (SideProcess side : sides.values()) { // connections open, code paths hot
      side.ask("warm " + mode.name() + " " + Math.max(mode.threads, 500));
    }
    int blockSize = switch (mode) {
      case ONE -> 100;
      case PLATFORM16 -> 800;
      case VIRTUAL1000 -> 2000;
    };
    List<SideProcess> order = new ArrayList<>(sides.values());
    for (int done = 0, round = 0; done < calls; round++) {
      int count = Math.min(blockSize, calls - done);
      for (int i = 0; i < order.size(); i++) { // who goes first rotates
        order.get((i + round) % order.size()).ask("block " + mode.name() + " " + count);
      }
      done += count;
    }
    Map<String, Results> all = new LinkedHashMap<>();
    for (SideProcess side : order) {
      all.put(side.name, Results.parse(side.ask("results")));
    }
    return all;
  }

  static Map<String, List<Double>> firstAnswers(Map<String, String> env, int starts) throws Exception {
    Map<String, List<Double>> times = new LinkedHashMap<>();
    List<String> names = Contender.NAMES;
    for (int i = 0; i < starts; i++) {
      for (int j = 0; j < names.size(); j++) {
        String name = names.get((i + j) % names.size());
        ProcessBuilder pb = new ProcessBuilder(java(FirstAnswer.class.getName(), name)).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().putAll(env);
        long start = System.nanoTime();
        Process p = pb.start();
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        double ms = (System.nanoTime() - start) / 1e6;
        int code = p.waitFor();
        if (code != 0 || line == null || !line.trim().equals(String.valueOf(Contender.PAGE))) {
          throw new IOException(name + "'s first-answer program printed " + line + " and exited " + code);
        }
        times.computeIfAbsent(name, k -> new ArrayList<>()).add(ms);
      }
    }
    return times;
  }

  static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    return sorted.get(sorted.size() / 2);
  }

  static double max(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).max().orElse(0);
  }

  static void table(Side.Mode mode, String load, Map<String, Results> all) {
    Results ours = all.get(Contender.ROOMCHAT);
    OUT.printf(Locale.ROOT, "%njvm list_users (%d users), %s, %s (%d calls per contender, each in its own JVM, interleaved in blocks; Java %s, %d CPUs)%n",
        Contender.PAGE, mode.title, load, ours.calls(), System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
    OUT.printf(Locale.ROOT, "%-22s%9s%9s%11s%9s%13s%10s%10s%12s%n", "contender", "µs/call", "calls/s", "median µs", "p99 µs", "CPU µs/call", "B/call", "GCs/1000", "roomchat ×");
    for (Map.Entry<String, Results> e : all.entrySet()) {
      Results r = e.getValue();
      OUT.printf(Locale.ROOT, "%-22s%9.1f%9.0f%11.1f%9.1f%13.1f%10.0f%10.1f%12.2f%n", e.getKey(), r.usPerCall(), 1e6 / r.usPerCall(), r.medianUs(), r.p99Us(),
          r.cpuUs(), r.bytes(), r.gcsPer1000(), r.usPerCall() / ours.usPerCall());
    }
  }
}
