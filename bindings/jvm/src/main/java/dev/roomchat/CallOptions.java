package dev.roomchat;

import java.time.Duration;

/**
 * One call's settings, over the client's: give them as a method's last
 * argument. Immutable; {@code CallOptions.builder().timeout(Duration.ofSeconds(5)).build()}.
 */
public final class CallOptions {
  final Duration timeout;
  final Duration connectTimeout;
  final Integer maxRetries;
  final Duration maxRetryWait;

  private CallOptions(Builder b) {
    this.timeout = b.timeout;
    this.connectTimeout = b.connectTimeout;
    this.maxRetries = b.maxRetries;
    this.maxRetryWait = b.maxRetryWait;
  }

  /** A builder with nothing changed. */
  public static Builder builder() {
    return new Builder();
  }

  boolean isEmpty() {
    return timeout == null && connectTimeout == null && maxRetries == null && maxRetryWait == null;
  }

  @Override
  public String toString() {
    return "CallOptions[timeout=" + timeout + ", connectTimeout=" + connectTimeout + ", maxRetries=" + maxRetries + ", maxRetryWait=" + maxRetryWait + "]";
  }

  /** Builds {@link CallOptions}. */
  public static final class Builder {
    private Duration timeout;
    private Duration connectTimeout;
    private Integer maxRetries;
    private Duration maxRetryWait;

    private Builder() {}

    /** The overall timeout of each attempt of this call. */
    public Builder timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /** The connect timeout of this call. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = timeout;
      return this;
    }

    /** The retries after this call's first attempt (0: one attempt). */
    public Builder maxRetries(int retries) {
      if (retries < 0) {
        throw RoomchatException.of(ErrorKind.CONFIGURATION, "maxRetries must not be negative");
      }
      this.maxRetries = retries;
      return this;
    }

    /** The longest wait this call sleeps before a retry. */
    public Builder maxRetryWait(Duration wait) {
      this.maxRetryWait = wait;
      return this;
    }

    public CallOptions build() {
      return new CallOptions(this);
    }
  }
}
