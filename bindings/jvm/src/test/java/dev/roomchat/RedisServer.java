package dev.roomchat;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server of the test's own on a free loopback port, without
 * persistence (REDIS_SERVER names the binary, else the one on PATH), as the
 * Go, Python and Node tests start theirs.
 */
final class RedisServer implements AutoCloseable {
  final int port;
  final String password;
  private final Process process;

  private RedisServer(int port, String password, Process process) {
    this.port = port;
    this.password = password;
    this.process = process;
  }

  static String binary() {
    String named = System.getenv("REDIS_SERVER");
    if (named != null && !named.isEmpty()) {
      return named;
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      File f = new File(dir, "redis-server");
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    throw new IllegalStateException("redis-server is needed (apt-get install -y redis-server, or REDIS_SERVER=path)");
  }

  /** Starts one; {@code password} (null: none) is its {@code requirepass}. */
  static RedisServer start(String password) throws IOException, InterruptedException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    List<String> command = new ArrayList<>(List.of(binary(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--loglevel", "warning"));
    if (password != null) {
      command.add("--requirepass");
      command.add(password);
    }
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    RedisServer server = new RedisServer(port, password, p);
    // Until it listens (a refused connect is an answer: no sleep stands for the state).
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try (Socket probe = new Socket()) {
        probe.connect(new InetSocketAddress("127.0.0.1", port), 1000);
        return server;
      } catch (IOException notYet) {
        if (!p.isAlive()) {
          throw new IOException("redis-server exited with " + p.exitValue());
        }
        if (System.nanoTime() > deadline) {
          server.close();
          throw new IOException("redis-server did not listen on port " + port);
        }
        Thread.sleep(20);
      }
    }
  }

  /** Its redis:// URL, with the password when it has one. */
  String url() {
    return "redis://" + (password == null ? "" : ":" + password + "@") + "127.0.0.1:" + port + "/0";
  }

  /** The names of the keys it holds ({@code KEYS *}), by RESP. */
  List<String> keys() throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      OutputStream out = s.getOutputStream();
      BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
      if (password != null) {
        out.write(("*2\r\n$4\r\nAUTH\r\n$" + password.getBytes(StandardCharsets.UTF_8).length + "\r\n" + password + "\r\n").getBytes(StandardCharsets.UTF_8));
        String ok = in.readLine();
        if (!"+OK".equals(ok)) {
          throw new IOException("AUTH answered " + ok);
        }
      }
      out.write("*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n".getBytes(StandardCharsets.UTF_8));
      String head = in.readLine();
      if (head == null || !head.startsWith("*")) {
        throw new IOException("KEYS answered " + head);
      }
      int n = Integer.parseInt(head.substring(1));
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        in.readLine(); // $length
        keys.add(in.readLine());
      }
      return keys;
    }
  }

  /** Kills it and waits for its end. */
  @Override
  public void close() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }
}
