package dev.roomchat.internal;

import com.sun.jna.NativeLibrary;

/**
 * The C ABI of {@code include/roomchat.h}, bound by JNA's direct mapping (each
 * method a JNI native registered to the C function: no reflection per call).
 * Handles are {@code long}s (every platform shipped is 64-bit), out-pointers
 * {@code long[1]}, strings NUL-terminated UTF-8 {@code byte[]}s made by
 * {@link Strings}, and C's {@code bool} a {@code byte}. Internal: the public
 * surface is {@code dev.roomchat}.
 */
public final class Native {
  private Native() {}

  static {
    NativeLibrary library = NativeLoader.load();
    com.sun.jna.Native.register(Native.class, library);
  }

  /** Makes sure the library is loaded (a no-op after the first call). */
  public static void init() {}

  // Client options and the client.
  public static native int roomchat_client_options_new(byte[] privateKey, long[] optionsOut, long[] errOut);
  public static native int roomchat_client_options_new_from_env(long[] optionsOut, long[] errOut);
  public static native void roomchat_client_options_free(long options);
  public static native int roomchat_client_options_set_base_url(long options, byte[] url);
  public static native int roomchat_client_options_set_public_key(long options, byte[] key);
  public static native int roomchat_client_options_set_chat_url(long options, byte[] url);
  public static native int roomchat_client_options_set_app_name(long options, byte[] name);
  public static native int roomchat_client_options_set_timeouts(long options, long connectMs, long overallMs);
  public static native int roomchat_client_options_set_retries(long options, int maxRetries, byte retryNonIdempotent);
  public static native int roomchat_client_options_set_rate_limit(long options, int requests, long windowMs, byte failFast, long maxWaitMs);
  public static native long roomchat_rate_limit_default_max_wait_ms(long windowMs);
  public static native int roomchat_client_options_set_ca_pem(long options, byte[] pem);
  public static native int roomchat_client_options_set_gzip(long options, byte enabled);
  public static native int roomchat_client_options_set_tls_roots(long options, int roots);
  public static native int roomchat_client_options_set_proxy(long options, byte[] url);
  public static native int roomchat_client_options_set_rate_limit_redis(long options, byte[] url);
  public static native int roomchat_client_options_set_redis_policy(long options, int policy, int expectedProcesses);
  public static native int roomchat_client_options_set_redis_timeouts(long options, long connectMs, long ioMs, long cooldownMs);
  public static native int roomchat_client_options_set_redis_key_prefix(long options, byte[] prefix);
  public static native int roomchat_client_options_set_max_response_bytes(long options, long bytes);
  public static native int roomchat_client_options_set_allow_insecure_http(long options, byte allow);
  public static native int roomchat_client_options_add_header(long options, byte[] name, byte[] value);
  public static native int roomchat_client_options_set_propagate_trace_context(long options, byte propagate);
  public static native int roomchat_client_new(long options, long[] clientOut, long[] errOut);
  public static native void roomchat_client_free(long client);
  public static native int roomchat_client_base_url(long client, long[] urlOut, long[] errOut);
  public static native int roomchat_client_server(long client, long[] addressOut, short[] portOut);

  // Per-call options, views and the cancel token.
  public static native int roomchat_call_options_new(long[] optionsOut);
  public static native void roomchat_call_options_free(long options);
  public static native int roomchat_call_options_set_timeout_ms(long options, long ms);
  public static native int roomchat_call_options_set_connect_timeout_ms(long options, long ms);
  public static native int roomchat_call_options_set_max_retries(long options, int retries);
  public static native int roomchat_call_options_set_max_retry_wait_ms(long options, long ms);
  public static native int roomchat_call_options_set_cancel_token(long options, long token);
  public static native int roomchat_client_with_options(long client, long options, long[] viewOut, long[] errOut);
  public static native int roomchat_cancel_token_new(long[] tokenOut);
  public static native void roomchat_cancel_token_cancel(long token);
  public static native byte roomchat_cancel_token_is_cancelled(long token);
  public static native void roomchat_cancel_token_free(long token);

  // Calls by an operation's name.
  public static native int roomchat_client_call_operation(long client, byte[] operation, byte[] paramsJson, long[] resultOut, long[] metaOut, long[] errOut);
  public static native int roomchat_client_operation_pages(long client, byte[] operation, byte[] paramsJson, long[] pagesOut, long[] errOut);
  public static native int roomchat_operation_pages_next(long pages, long cancel, long[] pageOut, long[] errOut);
  public static native long roomchat_operation_pages_next_skip(long pages);
  public static native void roomchat_operation_pages_free(long pages);

  // The pure wire layer.
  public static native int roomchat_wire_build_request(byte[] operation, byte[] paramsJson, byte[] baseUrl, byte[] key, long[] requestOut, long[] errOut);
  public static native int roomchat_wire_decode_response(byte[] operation, short status, byte[] headersJson, byte[] body, long bodyLen, long[] resultOut, long[] errOut);

  // The answer's meta.
  public static native short roomchat_response_meta_status(long meta);
  public static native int roomchat_response_meta_attempts(long meta);
  public static native long roomchat_response_meta_header_count(long meta);
  public static native long roomchat_response_meta_header_name(long meta, long index);
  public static native long roomchat_response_meta_header_value(long meta, long index);
  public static native long roomchat_response_meta_request_id(long meta);
  public static native void roomchat_response_meta_free(long meta);

  // Sign-in addresses (no I/O).
  public static native int roomchat_client_sign_in_url(long client, byte[] roomId, byte[] accessToken, long[] urlOut, long[] errOut);
  public static native int roomchat_client_iframe_html(long client, byte[] roomId, byte[] accessToken, byte[] width, byte[] height, long[] htmlOut, long[] errOut);

  // The log callback.
  /** Receives a client's log lines: {@code roomchat_log_callback}. */
  public interface LogCallback extends com.sun.jna.Callback {
    void invoke(long userData, int level, com.sun.jna.Pointer line);
  }

  /** Releases a callback's user data: {@code roomchat_destroy_notify}. */
  public interface DestroyCallback extends com.sun.jna.Callback {
    void invoke(long userData);
  }

  public static native int roomchat_client_options_set_log_callback_with_destroy(long options, LogCallback callback, long userData, int lowestLevel, DestroyCallback destroy);

  // The observer (OpenTelemetry: dev.roomchat.OtelTelemetry reads the reports).
  /** Receives each report of each call: {@code roomchat_observer_callback}. */
  public interface ObserverCallback extends com.sun.jna.Callback {
    void invoke(long userData, com.sun.jna.Pointer observation, com.sun.jna.Pointer headers);
  }

  public static native int roomchat_client_options_set_observer_with_destroy(long options, ObserverCallback callback, long userData, DestroyCallback destroy);
  public static native int roomchat_attempt_headers_set(com.sun.jna.Pointer headers, byte[] name, byte[] value);
  /** {@code state} is a {@code roomchat_rate_limit_state}: 48 bytes. */
  public static native int roomchat_client_rate_limit_state(long client, byte[] state);

  // Errors and strings.
  public static native int roomchat_error_code(long error);
  public static native long roomchat_error_message(long error);
  public static native short roomchat_error_status(long error);
  public static native long roomchat_error_event_id(long error);
  public static native long roomchat_error_retry_after_ms(long error);
  public static native long roomchat_error_method(long error);
  public static native long roomchat_error_path(long error);
  public static native long roomchat_error_service_message(long error);
  public static native long roomchat_error_service_error(long error);
  public static native long roomchat_error_service_error_message(long error);
  public static native byte roomchat_error_never_sent(long error);
  public static native void roomchat_error_free(long error);
  public static native long roomchat_result_name(int code);
  public static native void roomchat_string_free(long text);
  public static native long roomchat_version();
}
