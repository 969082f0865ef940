package dev.roomchat;

/**
 * A client's telemetry as the call path sees it. Nothing here names a type of
 * OpenTelemetry's: opentelemetry-api is an optional dependency, and the
 * package must load and run without it. {@link OtelTelemetry}, the only
 * implementation, is loaded by name and only when the API is on the classpath.
 */
abstract class Telemetry {
  /** Reads a client's free budget slots: -1 once the client is closed. */
  interface Remaining {
    long remaining();
  }

  /**
   * The telemetry of a client given {@code openTelemetry} (an
   * {@code io.opentelemetry.api.OpenTelemetry}, or null for
   * {@code GlobalOpenTelemetry}), or null when the API is not on the classpath.
   */
  static Telemetry create(Object openTelemetry) {
    if (!apiPresent()) {
      return null;
    }
    try {
      return (Telemetry) Class.forName("dev.roomchat.OtelTelemetry")
          .getDeclaredConstructor(Object.class)
          .newInstance(openTelemetry);
    } catch (ReflectiveOperationException | LinkageError e) {
      // An API too old for this package (or a broken classpath): no telemetry, never a failed client.
      return null;
    }
  }

  private static boolean apiPresent() {
    try {
      ClassLoader loader = Telemetry.class.getClassLoader();
      Class.forName("io.opentelemetry.api.GlobalOpenTelemetry", false, loader);
      Class.forName("io.opentelemetry.context.Context", false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Sets the observer on the client's options (before the client is made). */
  abstract void attach(long options);

  /**
   * A call of {@code operation} asked for now, on the caller's thread: its
   * parent context is the one current here, and it counts in flight from now.
   * Null when nothing observes it.
   */
  abstract Object dispatch(String operation);

  /** The call (from {@link #dispatch}) starts on this thread: the observer's reports are its. */
  abstract void enter(Object call);

  /** The call has returned ({@code error} null when it succeeded), or will never run: its last spans end, it leaves the calls in flight. */
  abstract void exit(Object call, Throwable error);

  /**
   * The server the client's calls go to, as core names it ({@code server.address},
   * {@code server.port}), before any call: what a call counts in flight against
   * before the library's first report of it.
   */
  abstract void server(String address, long port);

  /** The client is made: its budget joins the gauge. */
  abstract void clientStarted(Remaining remaining);

  /** The client is closing (before its pointer is freed): its budget leaves the gauge. */
  abstract void clientClosed();
}
