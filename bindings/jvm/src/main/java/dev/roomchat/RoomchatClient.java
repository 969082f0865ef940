package dev.roomchat;

import dev.roomchat.internal.Native;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import dev.roomchat.internal.Strings;
import java.lang.ref.Cleaner;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.spi.AbstractInterruptibleChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

/**
 * Calls the service: one method per operation (generated in
 * {@link RoomchatOperations}), {@link #async()} for futures. One client is
 * safe for any number of threads and shares its connection pool and rate
 * budget between them: make one per key and keep it; {@link #close()} it when
 * done (a client the program forgets is freed by a {@link Cleaner}).
 *
 * <p>A blocking call from a platform thread runs on that thread. One from a
 * virtual thread (or a fork/join pool's worker) runs on a bounded pool of the
 * client's platform threads while the caller waits on a future, so a virtual
 * thread unmounts while its request is on the wire (it never pins a carrier); so
 * do {@link #async()}'s calls. An
 * interrupt of the calling thread cancels the call through the C cancel token
 * and throws {@link CancelledException} (the thread's interrupt flag stays set).
 */
public final class RoomchatClient extends RoomchatOperations implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();
  private static final AtomicInteger POOLS = new AtomicInteger();

  /** How many of one client's calls from virtual threads and futures are in the library at once unless {@link Builder#maxInFlight} says otherwise. */
  public static final int DEFAULT_MAX_IN_FLIGHT = Math.max(64, 4 * Runtime.getRuntime().availableProcessors());

  private final State state;
  private final Cleaner.Cleanable cleanable;
  private final String baseUrl;
  private final RoomchatAsync async;
  /** OpenTelemetry's spans and metrics, or null without opentelemetry-api (OtelTelemetry). */
  private final Telemetry telemetry;

  /** What the cleaner frees: nothing in it refers to the client. */
  private static final class State implements Runnable {
    final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    final ThreadPoolExecutor pool;
    long ptr;
    boolean closed;
    /** Set as the close begins: calls from then on are refused, though the free may wait for the calls in flight. */
    volatile boolean closing;
    /** The telemetry's part of closing (its budget gauge), before the pointer is freed. */
    volatile Runnable onClose;

    State(long ptr, ThreadPoolExecutor pool) {
      this.ptr = ptr;
      this.pool = pool;
    }

    @Override
    public void run() {
      closing = true;
      pool.shutdown();
      Runnable closed = onClose;
      if (closed != null) {
        onClose = null;
        closed.run();
      }
      if (lock.getReadHoldCount() > 0) {
        // Closed from a callback (a logger's) of this client's call on this thread: the
        // call holds the read lock, which never becomes the write lock. The thread frees
        // the client when its calls end (releaseRead).
        closer = Thread.currentThread();
        return;
      }
      free();
    }

    /** Ends a call's hold; the last one of a thread that closed the client from within it frees the client. */
    void releaseRead() {
      lock.readLock().unlock();
      if (closer == Thread.currentThread() && lock.getReadHoldCount() == 0) {
        closer = null;
        free();
      }
    }

    /** The thread that closed the client from within its own call, which frees it when that call ends. */
    private volatile Thread closer;

    private void free() {
      lock.writeLock().lock();
      try {
        if (!closed) {
          closed = true;
          Native.roomchat_client_free(ptr);
          ptr = 0;
        }
      } finally {
        lock.writeLock().unlock();
      }
    }

    /** The budget's free slots now (the telemetry's gauge); -1 once closed, or while it closes. */
    long remaining() {
      // Never waits: a collection must not hang on a close waiting for calls.
      if (!lock.readLock().tryLock()) {
        return -1;
      }
      try {
        if (closed || closing) {
          return -1;
        }
        byte[] out = new byte[48];
        if (Native.roomchat_client_rate_limit_state(ptr, out) != Bridge.OK) {
          return -1;
        }
        // roomchat_rate_limit_state.remaining: a uint32_t at offset 8.
        return java.nio.ByteBuffer.wrap(out).order(java.nio.ByteOrder.nativeOrder()).getInt(8) & 0xffffffffL;
      } finally {
        lock.readLock().unlock();
      }
    }
  }

  private RoomchatClient(long ptr, Builder b, Telemetry telemetry) {
    int id = POOLS.incrementAndGet();
    AtomicInteger threads = new AtomicInteger();
    ThreadFactory factory = r -> {
      Thread t = new Thread(r, "roomchat-" + id + "-call-" + threads.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
    ThreadPoolExecutor pool = new ThreadPoolExecutor(b.maxInFlight, b.maxInFlight, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), factory);
    pool.allowCoreThreadTimeOut(true);
    this.state = new State(ptr, pool);
    this.cleanable = CLEANER.register(this, state);
    this.baseUrl = b.baseUrl != null ? b.baseUrl : baseUrlOf(ptr);
    this.async = new RoomchatAsync(this);
    this.telemetry = telemetry;
    if (telemetry != null) {
      long[] address = new long[1];
      short[] port = new short[1];
      Bridge.check(Native.roomchat_client_server(ptr, address, port), null);
      telemetry.server(Strings.take(address[0]), Short.toUnsignedInt(port[0]));
      state.onClose = telemetry::clientClosed;
      State s = state;
      telemetry.clientStarted(s::remaining);
    }
  }

  /** The base URL the library checked (one read from {@code ROOMCHAT_BASE_URL}, for one). */
  private static String baseUrlOf(long client) {
    long[] url = new long[1];
    long[] err = new long[1];
    Bridge.check(Native.roomchat_client_base_url(client, url, err), err);
    return Strings.take(url[0]);
  }

  /** A builder of a client for the account's private key. */
  public static Builder builder(String privateKey) {
    return new Builder(privateKey, false);
  }

  /**
   * A client from the environment, as every roomchat package reads it:
   * {@code ROOMCHAT_PRIVATE_KEY} and {@code ROOMCHAT_BASE_URL} (both required),
   * and {@code ROOMCHAT_CHAT_URL}, {@code ROOMCHAT_PUBLIC_KEY},
   * {@code ROOMCHAT_APP_NAME} when set; an empty variable counts as unset. The
   * library reads them, with core's rules and messages.
   *
   * @throws ConfigurationException when a required variable is not set, a
   *     variable is not UTF-8, or a value is wrong (a base URL that is not one)
   */
  public static RoomchatClient fromEnv() {
    return builderFromEnv().build();
  }

  /**
   * {@link #fromEnv()}'s builder, to set more before building: what it sets
   * replaces the variables' values.
   *
   * @throws ConfigurationException when a required variable is not set
   */
  public static Builder builderFromEnv() {
    Native.init();
    // The library reads the environment (core's rules and errors); read now so
    // that an unset variable throws here, and again by build(), which keeps no
    // native options alive in a builder in the meantime.
    Native.roomchat_client_options_free(Builder.optionsFromEnv());
    return new Builder(null, true);
  }

  /** The same operations, each returning a {@link CompletableFuture} whose {@code cancel(true)} cancels the call. */
  public RoomchatAsync async() {
    return async;
  }

  /**
   * Frees the client once the calls in flight have ended; a call after it throws {@link ConfigurationException}. Closing
   * twice does nothing. Closed from inside one of its own calls (a logger receiving the client's log line on the
   * calling thread, say), it returns at once: the client refuses new calls, and that thread frees it when the call
   * it is inside returns (after the other calls in flight).
   */
  @Override
  public void close() {
    cleanable.clean();
  }

  @Override
  public String toString() {
    return "RoomchatClient[baseUrl=" + baseUrl + "]";
  }

  // ------------------------------------------------------------ calls

  /** A call's cancel token: cancelled by whoever waits, freed by the call once it has returned. */
  static final class Token {
    private long ptr;
    private boolean cancelled;

    Token() {
      long[] out = new long[1];
      Bridge.check(Native.roomchat_cancel_token_new(out), null);
      ptr = out[0];
    }

    synchronized void cancel() {
      cancelled = true;
      if (ptr != 0) {
        Native.roomchat_cancel_token_cancel(ptr);
      }
    }

    synchronized boolean isCancelled() {
      return cancelled;
    }

    synchronized long ptr() {
      return ptr;
    }

    synchronized void free() {
      if (ptr != 0) {
        Native.roomchat_cancel_token_free(ptr);
        ptr = 0;
      }
    }
  }

  /** A call's future: {@code cancel} cancels the call through its token. */
  static final class CallFuture<T> extends CompletableFuture<T> {
    final Token token;
    /** Claimed once: by the pool's task before it runs the call, or by an interrupted wait before the call has started. */
    private final java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
    /** What ends a call that never ran (its token and telemetry), run by whoever claims it instead of the task. */
    volatile Runnable abandon;

    CallFuture(Token token) {
      this.token = token;
    }

    boolean claim() {
      return started.compareAndSet(false, true);
    }

    /** Ends a call still queued for a slot: nothing was sent, so the outcome is known. False once it has started. */
    boolean cancelQueued() {
      if (!claim()) {
        return false;
      }
      Runnable end = abandon;
      if (end != null) {
        end.run();
      }
      completeExceptionally(RoomchatException.of(ErrorKind.CANCELLED, "the call was cancelled before it was sent"));
      return true;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      // The future is cancelled first, so that the call's own end (a
      // cancelled error, as soon as the token is) cannot complete it before.
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      token.cancel();
      return cancelled;
    }
  }

  /** Runs {@code work} (given the client's pointer, or a view of it with the options and token) on the pool. */
  private <T> CallFuture<T> submit(String operation, CallOptions options, boolean withToken, Token token, CallBody<T> work) {
    CallFuture<T> future = new CallFuture<>(token);
    // The telemetry's call: its parent is the context current here, and it counts in flight from now.
    Object call = telemetry == null || operation == null ? null : telemetry.dispatch(operation);
    future.abandon = () -> {
      token.free();
      if (call != null) {
        telemetry.exit(call, null);
      }
    };
    try {
      state.pool.execute(() -> {
        if (!future.claim()) {
          return; // an interrupted wait ended it in the queue (token and telemetry included)
        }
        T value = null;
        Throwable failure = null;
        try {
          if (future.isDone()) {
            return; // cancelled before it started: nothing was sent
          }
          if (call != null) {
            telemetry.enter(call);
          }
          value = runOnPool(options, withToken ? token : null, work);
        } catch (Throwable t) {
          failure = t;
        } finally {
          token.free();
          // Before the future completes: whoever waits sees the call's spans ended and it out of flight.
          if (call != null) {
            telemetry.exit(call, failure);
          }
        }
        if (failure == null) {
          future.complete(value);
        } else {
          future.completeExceptionally(failure);
        }
      });
    } catch (RejectedExecutionException e) {
      future.claim(); // ended here: an interrupted wait must not end it again
      token.free();
      if (call != null) {
        telemetry.exit(call, null);
      }
      future.completeExceptionally(RoomchatException.of(ErrorKind.CONFIGURATION, "the client is closed"));
    }
    return future;
  }

  interface CallBody<T> {
    T run(long client, long token);
  }

  private <T> T runOnPool(CallOptions options, Token token, CallBody<T> work) {
    state.lock.readLock().lock();
    try {
      if (state.closed || state.closing) {
        throw RoomchatException.of(ErrorKind.CONFIGURATION, "the client is closed");
      }
      long tokenPtr = token == null ? 0 : token.ptr();
      boolean needView = tokenPtr != 0 || (options != null && !options.isEmpty());
      if (!needView) {
        return work.run(state.ptr, 0);
      }
      long view = view(state.ptr, options, tokenPtr);
      try {
        return work.run(view, tokenPtr);
      } finally {
        Native.roomchat_client_free(view);
      }
    } finally {
      state.releaseRead();
    }
  }

  private static long view(long client, CallOptions o, long token) {
    long[] out = new long[1];
    Bridge.check(Native.roomchat_call_options_new(out), null);
    long options = out[0];
    try {
      if (o != null) {
        if (o.timeout != null) Native.roomchat_call_options_set_timeout_ms(options, Bridge.ms("timeout", o.timeout));
        if (o.connectTimeout != null) Native.roomchat_call_options_set_connect_timeout_ms(options, Bridge.ms("connectTimeout", o.connectTimeout));
        if (o.maxRetries != null) Native.roomchat_call_options_set_max_retries(options, o.maxRetries);
        if (o.maxRetryWait != null) Native.roomchat_call_options_set_max_retry_wait_ms(options, Bridge.ms("maxRetryWait", o.maxRetryWait));
      }
      if (token != 0) {
        Native.roomchat_call_options_set_cancel_token(options, token);
      }
      long[] view = new long[1];
      long[] err = new long[1];
      Bridge.check(Native.roomchat_client_with_options(client, options, view, err), err);
      return view[0];
    } finally {
      Native.roomchat_call_options_free(options);
    }
  }

  /** {@code Thread::isVirtual} (Java 21+), or null before it. */
  private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

  private static MethodHandle isVirtualHandle() {
    try {
      return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  static boolean onVirtualThread() {
    if (IS_VIRTUAL == null) {
      return false;
    }
    try {
      return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
    } catch (Throwable t) {
      return false;
    }
  }

  /**
   * Runs a blocking call's {@code work}: on this thread when it is a platform thread
   * (no hand-off: a thread in the library is what it would wait with anyway), on the
   * pool when it is a virtual thread (which then unmounts instead of pinning its carrier
   * in native code) or a fork/join worker (whose wait on the future lets its pool add a
   * worker meanwhile, as a parallel stream's does). Either way an interrupt of this
   * thread cancels the call's token.
   */
  private <T> T blocking(String operation, CallOptions options, boolean withToken, Token token, CallBody<T> work) {
    if (onVirtualThread() || Thread.currentThread() instanceof java.util.concurrent.ForkJoinWorkerThread) {
      return await(submit(operation, options, withToken, token, work));
    }
    // The telemetry's call, as submit makes it: in flight from here, its spans ended before this returns.
    Object call = telemetry == null || operation == null ? null : telemetry.dispatch(operation);
    InterruptHook hook = new InterruptHook(token);
    Throwable failure = null;
    try {
      if (call != null) {
        telemetry.enter(call);
      }
      hook.enter();
      return runOnPool(options, withToken ? token : null, work);
    } catch (Throwable t) {
      failure = t;
      throw t;
    } finally {
      hook.exit();
      token.free();
      // A call made from a callback of another on this thread: that one's hook again.
      InterruptHook.resume();
      if (call != null) {
        telemetry.exit(call, failure);
      }
    }
  }

  /**
   * Turns an interrupt of the thread in a call into a cancel of the call's token: the JDK
   * closes an interruptible channel that a thread is blocked on from within
   * {@code Thread.interrupt()} (as it does for a FileChannel), and closing this one
   * cancels the token. An interrupt before the call cancels it at once. The thread's
   * interrupt flag is left as it is.
   */
  static final class InterruptHook extends AbstractInterruptibleChannel {
    /**
     * The hook of the call this thread is in, innermost first. The JDK keeps one
     * interruptible per thread and clears it at the end of whatever set it last: a
     * roomchat call, or a FileChannel's write, made from a log callback of a call
     * leaves that call with none, so the call's hook is set again after them
     * ({@link #resume}).
     */
    private static final ThreadLocal<InterruptHook> CURRENT = new ThreadLocal<>();

    private final Token token;
    private final InterruptHook outer = CURRENT.get();

    InterruptHook(Token token) {
      this.token = token;
    }

    void enter() {
      CURRENT.set(this);
      begin();
    }

    void exit() {
      try {
        end(true);
      } catch (AsynchronousCloseException e) {
        // Interrupted: the call saw its token cancelled and ended with its own error.
      } finally {
        if (outer == null) {
          CURRENT.remove();
        } else {
          CURRENT.set(outer);
        }
      }
    }

    /**
     * Sets the hook of the call this thread is in (if any) as the thread's
     * interruptible again, after a callback ran code that may have replaced it;
     * an interrupt that came meanwhile cancels the call now.
     */
    static void resume() {
      InterruptHook hook = CURRENT.get();
      if (hook != null) {
        hook.begin();
      }
    }

    @Override
    protected void implCloseChannel() {
      token.cancel();
    }
  }

  /**
   * Waits for a call's future; an interrupt cancels the call, waits for its end, and throws its cancel. A call still
   * queued for a slot (maxInFlight) ends at once: nothing was sent.
   */
  static <T> T await(CallFuture<T> future) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return future.get();
        } catch (InterruptedException e) {
          interrupted = true;
          future.token.cancel();
          // Still queued for a slot: end it now rather than when a slot frees.
          future.cancelQueued();
        } catch (ExecutionException e) {
          Throwable cause = e.getCause();
          if (cause instanceof RuntimeException) {
            throw (RuntimeException) cause;
          }
          if (cause instanceof Error) {
            throw (Error) cause;
          }
          throw RoomchatException.of(ErrorKind.INTERNAL, String.valueOf(cause), cause);
        } catch (java.util.concurrent.CancellationException e) {
          throw RoomchatException.of(ErrorKind.CANCELLED, "the call was cancelled", e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  <T> CallFuture<T> invokeAsync(String operation, Map<String, ?> params, CallOptions options, Function<Object, T> decode) {
    return callAsync(operation, params, options, false, (text, meta) -> Bridge.decode(operation, text, decode));
  }

  interface Answer<T> {
    T make(String json, long meta);
  }

  private <T> CallFuture<T> callAsync(String operation, Map<String, ?> params, CallOptions options, boolean withMeta, Answer<T> answer) {
    return submit(operation, options, true, new Token(), callBody(operation, params, withMeta, answer));
  }

  /** A blocking call: an interrupted thread's sends nothing. */
  private <T> T callBlocking(String operation, Map<String, ?> params, CallOptions options, boolean withMeta, Answer<T> answer) {
    CallBody<T> body = callBody(operation, params, withMeta, answer);
    Token token = new Token();
    if (Thread.currentThread().isInterrupted()) {
      token.cancel();
    }
    return blocking(operation, options, true, token, body);
  }

  private <T> CallBody<T> callBody(String operation, Map<String, ?> params, boolean withMeta, Answer<T> answer) {
    byte[] op = Bridge.c("operation", operation);
    byte[] json = Bridge.params(operation, params);
    return (client, t) -> {
      long[] result = new long[1];
      long[] meta = withMeta ? new long[1] : null;
      long[] err = new long[1];
      int code = Native.roomchat_client_call_operation(client, op, json, result, meta, err);
      Bridge.check(code, err);
      String text = dev.roomchat.internal.Strings.take(result[0]);
      try {
        return answer.make(text, meta == null ? 0 : meta[0]);
      } finally {
        if (meta != null) {
          Native.roomchat_response_meta_free(meta[0]);
        }
      }
    };
  }

  /**
   * Calls the declared operation named {@code operation} (snake_case:
   * {@code "list_users"}; {@code "raw"} for a raw request: {@code method},
   * {@code path}, {@code query} as name/value pairs, {@code body},
   * {@code auth} of {@code private_key}, {@code public_key} or {@code none})
   * with {@code params} by their wire names, as the conformance vectors give
   * them, and answers with the status, headers and attempts too.
   */
  public Response call(String operation, Map<String, ?> params, CallOptions options) {
    return callBlocking(operation, params, options, true, (text, meta) -> response(meta, Bridge.decode(operation, text, j -> j), text));
  }

  /** The answer's meta (status, headers, attempts, request id) beside its JSON. */
  private static Response response(long meta, Object json, String text) {
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    long count = Native.roomchat_response_meta_header_count(meta);
    for (long i = 0; i < count; i++) {
      headers.add(new java.util.AbstractMap.SimpleImmutableEntry<>(
          dev.roomchat.internal.Strings.borrowed(Native.roomchat_response_meta_header_name(meta, i)),
          dev.roomchat.internal.Strings.borrowed(Native.roomchat_response_meta_header_value(meta, i))));
    }
    return new Response(Short.toUnsignedInt(Native.roomchat_response_meta_status(meta)), java.util.Collections.unmodifiableList(headers),
        Native.roomchat_response_meta_attempts(meta), java.util.Optional.ofNullable(dev.roomchat.internal.Strings.borrowed(Native.roomchat_response_meta_request_id(meta))), json, text);
  }

  /** An operation's record beside its answer's meta: the JSON is read once, for both. */
  private static <T> WithResponse<T> withResponse(String operation, String text, long meta, Function<Object, T> decode) {
    Object json = Bridge.decode(operation, text, j -> j);
    return new WithResponse<>(Bridge.decodeJson(operation, json, decode), response(meta, json, text));
  }

  <T> CallFuture<WithResponse<T>> invokeWithResponseAsync(String operation, Map<String, ?> params, CallOptions options, Function<Object, T> decode) {
    return callAsync(operation, params, options, true, (text, meta) -> withResponse(operation, text, meta, decode));
  }

  @Override
  <T> WithResponse<T> invokeWithResponse(String operation, Map<String, Object> params, CallOptions options, Function<Object, T> decode) {
    return callBlocking(operation, params, options, true, (text, meta) -> withResponse(operation, text, meta, decode));
  }

  /** {@link #call(String, Map, CallOptions)} with the client's settings. */
  public Response call(String operation, Map<String, ?> params) {
    return call(operation, params, null);
  }

  @Override
  <T> T invoke(String operation, Map<String, Object> params, CallOptions options, Function<Object, T> decode) {
    return callBlocking(operation, params, options, false, (text, meta) -> Bridge.decode(operation, text, decode));
  }

  @Override
  <P, T> Listing<T> listing(String operation, Map<String, Object> params, CallOptions options, Function<Object, P> decodePage, Function<P, List<T>> items) {
    return new Listing<>(this, operation, params, options, decodePage, items);
  }

  /** Opens the library's iterator over a listing's pages (sends nothing). */
  long openPages(String operation, Map<String, Object> params, CallOptions options) {
    byte[] op = Bridge.c("operation", operation);
    byte[] json = Bridge.params(operation, params);
    return blocking(null, options, false, new Token(), (client, t) -> {
      long[] pages = new long[1];
      long[] err = new long[1];
      Bridge.check(Native.roomchat_client_operation_pages(client, op, json, pages, err), err);
      return pages[0];
    });
  }

  /** One step of an iterator: the page's JSON, or null at the end. */
  String nextPage(String operation, long pages) {
    Token token = new Token();
    if (Thread.currentThread().isInterrupted()) {
      token.cancel();
    }
    return blocking(operation, null, false, token, (client, t) -> {
      long[] page = new long[1];
      long[] err = new long[1];
      int code = Native.roomchat_operation_pages_next(pages, token.ptr(), page, err);
      if (code == Bridge.ITERATION_DONE) {
        return null;
      }
      Bridge.check(code, err);
      return dev.roomchat.internal.Strings.take(page[0]);
    });
  }

  /**
   * The browser address that signs the holder of {@code accessToken} in to
   * the room {@code roomId}: {@code <chatUrl>/<roomId>?accessToken=<token>},
   * each part encoded. Sends nothing.
   *
   * @throws ConfigurationException when the client has no {@link Builder#chatUrl}
   * @throws ValidationException when the room id or the token is empty
   */
  public String signInUrl(String roomId, String accessToken) {
    byte[] room = Bridge.c("room id", roomId);
    byte[] token = Bridge.c("access token", accessToken);
    return text((client, out, err) -> Native.roomchat_client_sign_in_url(client, room, token, out, err));
  }

  /**
   * An {@code <iframe>} element showing the room {@code roomId} signed in as
   * the holder of {@code accessToken}, {@code width} and {@code height} as
   * given ({@code "100%"}, {@code "600"}), every attribute HTML-escaped.
   * Sends nothing.
   *
   * @throws ConfigurationException when the client has no {@link Builder#chatUrl}
   * @throws ValidationException when the room id or the token is empty
   */
  public String iframeHtml(String roomId, String accessToken, String width, String height) {
    byte[] room = Bridge.c("room id", roomId);
    byte[] token = Bridge.c("access token", accessToken);
    byte[] w = Bridge.c("width", width);
    byte[] h = Bridge.c("height", height);
    return text((client, out, err) -> Native.roomchat_client_iframe_html(client, room, token, w, h, out, err));
  }

  /** {@link #iframeHtml(String, String, String, String)} 100% wide and 600 pixels high. */
  public String iframeHtml(String roomId, String accessToken) {
    return iframeHtml(roomId, accessToken, "100%", "600");
  }

  private interface TextCall {
    int run(long client, long[] out, long[] err);
  }

  /** A string the library makes from the client without I/O (on the caller's thread: nothing blocks). */
  private String text(TextCall call) {
    state.lock.readLock().lock();
    try {
      if (state.closed || state.closing) {
        throw RoomchatException.of(ErrorKind.CONFIGURATION, "the client is closed");
      }
      long[] out = new long[1];
      long[] err = new long[1];
      Bridge.check(call.run(state.ptr, out, err), err);
      return dev.roomchat.internal.Strings.take(out[0]);
    } finally {
      state.releaseRead();
    }
  }

  static Cleaner cleaner() {
    return CLEANER;
  }

  // ------------------------------------------------------------ building

  /** What the service's {@code https://} client trusts. */
  public enum TlsRoots {
    /** The Mozilla roots built into the library (the default). */
    WEB_PKI,
    /** The operating system's roots. */
    SYSTEM
  }

  /** What a client does while Redis cannot be reached. */
  public enum RedisPolicy {
    /** Counts in the process, the limit divided among the expected processes, until Redis is back (the default). */
    LOCAL_FALLBACK,
    /** Fails each call with {@link BudgetUnavailableException}. */
    FAIL_CLOSED,
    /** Sends without counting. */
    FAIL_OPEN
  }

  /** Builds a {@link RoomchatClient}; every setting of the C options. Not thread-safe. */
  public static final class Builder {
    private final String privateKey;
    private String baseUrl, publicKey, chatUrl, appName;
    private Duration connectTimeout, timeout;
    private Integer maxRetries;
    private boolean retryNonIdempotent;
    private int rateRequests;
    private Duration rateWindow, rateMaxWait;
    private boolean failFast, setRate;
    private String caPem;
    private Boolean gzip;
    private TlsRoots tlsRoots;
    private String proxy;
    private boolean noProxy;
    private String redisUrl;
    private RedisPolicy redisPolicy;
    private int redisProcesses;
    private Duration redisConnect, redisIo, redisCooldown;
    private String redisKeyPrefix;
    private Long maxResponseBytes;
    private boolean allowInsecureHttp;
    private final List<String[]> headers = new ArrayList<>();
    private boolean noPropagation;
    private Object openTelemetry; // an io.opentelemetry.api.OpenTelemetry: Object, so that the API stays optional
    private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
    private org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(RoomchatClient.class);

    /** From the environment (builderFromEnv): the library reads the key and URLs there. */
    private final boolean fromEnv;

    private Builder(String privateKey, boolean fromEnv) {
      this.privateKey = privateKey;
      this.fromEnv = fromEnv;
    }

    /** Native options from the environment ({@code roomchat_client_options_new_from_env}). */
    private static long optionsFromEnv() {
      long[] out = new long[1];
      long[] err = new long[1];
      Bridge.check(Native.roomchat_client_options_new_from_env(out, err), err);
      return out[0];
    }

    /** The service's REST base URL (required), e.g. {@code https://api.example.com}. */
    public Builder baseUrl(String url) { this.baseUrl = url; return this; }

    /** The public key, which validating access tokens needs. */
    public Builder publicKey(String key) { this.publicKey = key; return this; }

    /** The address rooms are served at to browsers (sign-in URLs). */
    public Builder chatUrl(String url) { this.chatUrl = url; return this; }

    /** A name appended to the User-Agent. */
    public Builder appName(String name) { this.appName = name; return this; }

    /** The connect timeout and the overall timeout of one attempt (null keeps a default: 10 s and 30 s). */
    public Builder timeouts(Duration connect, Duration overall) { this.connectTimeout = connect; this.timeout = overall; return this; }

    /** The retries after the first attempt (default 2). */
    public Builder maxRetries(int retries) { this.maxRetries = retries; return this; }

    /** Lets a create or a post be sent again after a 5xx or a timeout (default false: it could create twice). */
    public Builder retryNonIdempotent(boolean allow) { this.retryNonIdempotent = allow; return this; }

    /**
     * The key's client-side budget: requests per window (default 600 per minute).
     * A call over it waits, unless {@link #rateLimitMaxWait} says otherwise, as
     * long as every roomchat package does: the window, its jitter allowance (a
     * twentieth of it, at most 1 s) and a second, and at least a minute.
     */
    public Builder rateLimit(int requests, Duration window) { this.rateRequests = requests; this.rateWindow = window; this.setRate = true; return this; }

    /** A call over the budget fails at once with {@link RateLimitedException} instead of waiting. */
    public Builder rateLimitFailFast() { this.failFast = true; this.setRate = true; return this; }

    /** The longest a call waits for a slot of the budget. */
    public Builder rateLimitMaxWait(Duration wait) { this.rateMaxWait = wait; this.setRate = true; return this; }

    /** Shares the key's budget with every process and host through Redis ({@code redis://}, {@code rediss://}, ...). */
    public Builder redisBudget(String url) { this.redisUrl = url; return this; }

    /** What the client does while Redis cannot be reached, and how many processes share the limit (0: 4). */
    public Builder redisPolicy(RedisPolicy policy, int expectedProcesses) { this.redisPolicy = policy; this.redisProcesses = expectedProcesses; return this; }

    /** Redis's connect timeout, each round trip's, and how long Redis is left alone after a failure (null keeps a default). */
    public Builder redisTimeouts(Duration connect, Duration io, Duration cooldown) { this.redisConnect = connect; this.redisIo = io; this.redisCooldown = cooldown; return this; }

    /** The prefix of the budget's Redis keys (default {@code roomchat}). */
    public Builder redisKeyPrefix(String prefix) { this.redisKeyPrefix = prefix; return this; }

    /** Also trusts the certificates of this PEM text (a private CA), beside the roots. */
    public Builder caPem(String pem) { this.caPem = pem; return this; }

    /** The roots an https client trusts. */
    public Builder tlsRoots(TlsRoots roots) { this.tlsRoots = roots; return this; }

    /** Sends through this proxy ({@code http://} or {@code https://}, with {@code user:password@} if needed; never shown). */
    public Builder proxy(String url) { this.proxy = url; this.noProxy = false; return this; }

    /** Sends directly, whatever the environment's proxy variables say. */
    public Builder noProxy() { this.proxy = null; this.noProxy = true; return this; }

    /** Whether answers are asked for gzip-compressed (default true). */
    public Builder gzip(boolean enabled) { this.gzip = enabled; return this; }

    /** The largest answer accepted (default 16 MiB; {@link Long#MAX_VALUE}: no cap). */
    public Builder maxResponseBytes(long bytes) {
      // The C parameter is unsigned: -1 would be UINT64_MAX, no cap at all.
      if (bytes < 0) {
        throw RoomchatException.of(ErrorKind.CONFIGURATION, "maxResponseBytes must not be negative");
      }
      this.maxResponseBytes = bytes;
      return this;
    }

    /** Allows sending the key over plain {@code http://} to a host that is not loopback (default false). */
    public Builder allowInsecureHttp(boolean allow) { this.allowInsecureHttp = allow; return this; }

    /** A header on every request (the client's own, such as User-Agent, are refused when the client is built). */
    public Builder header(String name, String value) { this.headers.add(new String[] {name, value}); return this; }

    /**
     * Records the client's spans and metrics with {@code openTelemetry}
     * (default: {@code GlobalOpenTelemetry} once it is set, as the Java agent
     * sets it; {@code OpenTelemetry.noop()} records nothing). Needs
     * {@code io.opentelemetry:opentelemetry-api} on the classpath: without it
     * the client makes no telemetry at all.
     */
    public Builder openTelemetry(io.opentelemetry.api.OpenTelemetry openTelemetry) { this.openTelemetry = openTelemetry; return this; }

    /**
     * Whether trace context ({@code traceparent}, {@code tracestate},
     * {@code baggage}) is sent to the service (default true); false also
     * drops those headers set with {@link #header}.
     */
    public Builder propagateTraceContext(boolean propagate) { this.noPropagation = !propagate; return this; }

    /**
     * Where the client's log lines go (default: SLF4J's logger
     * {@code dev.roomchat.RoomchatClient}; null: nowhere). A line per attempt
     * at debug; a retry, a wait for the rate budget, a failure of the shared
     * budget at warn. No key, token or password is in them.
     */
    public Builder logger(org.slf4j.Logger logger) { this.logger = logger; return this; }

    /**
     * Bounds the client's calls from virtual threads and futures in the library at
     * once (default {@link #DEFAULT_MAX_IN_FLIGHT}): each holds a platform thread of
     * the client's pool. A blocking call from a platform thread runs on that thread.
     */
    public Builder maxInFlight(int n) {
      if (n < 1) {
        throw RoomchatException.of(ErrorKind.CONFIGURATION, "maxInFlight must be at least 1");
      }
      this.maxInFlight = n;
      return this;
    }

    /**
     * Builds the client.
     *
     * @throws ConfigurationException when a setting is wrong (no base URL, a bad URL, ...)
     */
    public RoomchatClient build() {
      Native.init();
      long[] out = new long[1];
      long[] err = new long[1];
      if (fromEnv) {
        out[0] = optionsFromEnv();
      } else {
        if (privateKey == null) {
          throw RoomchatException.of(ErrorKind.CONFIGURATION, "the private key is null");
        }
        Bridge.check(Native.roomchat_client_options_new(Bridge.c("private key", privateKey), out, err), err);
      }
      long o = out[0];
      try {
        apply(o);
        Telemetry telemetry = Telemetry.create(openTelemetry);
        if (telemetry != null) {
          telemetry.attach(o);
        }
        long[] client = new long[1];
        Bridge.check(Native.roomchat_client_new(o, client, err), err);
        return new RoomchatClient(client[0], this, telemetry);
      } finally {
        Native.roomchat_client_options_free(o);
      }
    }

    private static byte b(boolean v) {
      return (byte) (v ? 1 : 0);
    }

    private static long keepDefault(String what, Duration d) {
      return d == null || d.isZero() ? 0 : Bridge.ms(what, d);
    }

    private void text(String what, String value, Function<byte[], Integer> set) {
      if (value != null) {
        Bridge.check(set.apply(Bridge.c(what, value)), null);
      }
    }

    private void apply(long o) {
      text("base URL", baseUrl, c -> Native.roomchat_client_options_set_base_url(o, c));
      text("public key", publicKey, c -> Native.roomchat_client_options_set_public_key(o, c));
      text("chat URL", chatUrl, c -> Native.roomchat_client_options_set_chat_url(o, c));
      text("app name", appName, c -> Native.roomchat_client_options_set_app_name(o, c));
      if (connectTimeout != null || timeout != null) {
        Bridge.check(Native.roomchat_client_options_set_timeouts(o, keepDefault("connect timeout", connectTimeout), keepDefault("timeout", timeout)), null);
      }
      if (maxRetries != null || retryNonIdempotent) {
        int retries = maxRetries == null ? 2 : maxRetries;
        if (retries < 0) {
          throw RoomchatException.of(ErrorKind.CONFIGURATION, "maxRetries must not be negative");
        }
        Bridge.check(Native.roomchat_client_options_set_retries(o, retries, b(retryNonIdempotent)), null);
      }
      if (setRate) {
        int requests = rateRequests;
        Duration window = rateWindow;
        if (requests == 0 && window == null) {
          requests = 600;
          window = Duration.ofMinutes(1);
        }
        if (requests < 1 || window == null || window.isNegative() || window.isZero()) {
          throw RoomchatException.of(ErrorKind.CONFIGURATION, "rateLimit: at least 1 request per a window above 0");
        }
        long windowMs = Bridge.ms("rate window", window);
        // Unset: core's default for the window, as every roomchat package waits.
        long waitMs;
        if (rateMaxWait == null) {
          waitMs = Native.roomchat_rate_limit_default_max_wait_ms(windowMs);
        } else if (rateMaxWait.isNegative()) {
          throw RoomchatException.of(ErrorKind.CONFIGURATION, "rateLimitMaxWait must not be negative");
        } else {
          waitMs = rateMaxWait.isZero() ? 0 : Bridge.ms("rateLimitMaxWait", rateMaxWait);
        }
        Bridge.check(Native.roomchat_client_options_set_rate_limit(o, requests, windowMs, b(failFast), waitMs), null);
      }
      text("CA PEM", caPem, c -> Native.roomchat_client_options_set_ca_pem(o, c));
      if (gzip != null) {
        Bridge.check(Native.roomchat_client_options_set_gzip(o, b(gzip)), null);
      }
      if (tlsRoots != null) {
        Bridge.check(Native.roomchat_client_options_set_tls_roots(o, tlsRoots.ordinal()), null);
      }
      if (noProxy) {
        Bridge.check(Native.roomchat_client_options_set_proxy(o, null), null);
      }
      text("proxy", proxy, c -> Native.roomchat_client_options_set_proxy(o, c));
      text("Redis URL", redisUrl, c -> Native.roomchat_client_options_set_rate_limit_redis(o, c));
      if (redisPolicy != null) {
        Bridge.check(Native.roomchat_client_options_set_redis_policy(o, redisPolicy.ordinal(), Math.max(0, redisProcesses)), null);
      }
      if (redisConnect != null || redisIo != null || redisCooldown != null) {
        Bridge.check(Native.roomchat_client_options_set_redis_timeouts(o, keepDefault("Redis connect timeout", redisConnect), keepDefault("Redis I/O timeout", redisIo), keepDefault("Redis cooldown", redisCooldown)), null);
      }
      text("Redis key prefix", redisKeyPrefix, c -> Native.roomchat_client_options_set_redis_key_prefix(o, c));
      if (maxResponseBytes != null) {
        Bridge.check(Native.roomchat_client_options_set_max_response_bytes(o, maxResponseBytes), null);
      }
      if (allowInsecureHttp) {
        Bridge.check(Native.roomchat_client_options_set_allow_insecure_http(o, b(true)), null);
      }
      for (String[] h : headers) {
        Bridge.check(Native.roomchat_client_options_add_header(o, Bridge.c("header name", h[0]), Bridge.c("header value", h[1])), null);
      }
      Logging.attach(o, logger);
      if (noPropagation) {
        Bridge.check(Native.roomchat_client_options_set_propagate_trace_context(o, b(false)), null);
      }
    }
  }

}
