package dev.roomchat;

import java.time.Duration;
import java.util.Optional;

/**
 * Every error of this package (unchecked). Its subclass names its kind
 * ({@link RateLimitedException}, {@link NotFoundException}, ...), and
 * {@link #kind()} says it too. No key, access token or password is ever in
 * it: the library shows them as {@code REDACTED}.
 */
public class RoomchatException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final ErrorKind kind;
  private final int status;
  private final String serviceMessage;
  private final String serviceError;
  private final String serviceErrorMessage;
  private final Duration retryAfter;
  private final String eventId;
  private final String method;
  private final String path;
  private final boolean outcomeUnknown;

  /** An error of {@code kind} with only a message. */
  public RoomchatException(ErrorKind kind, String message) {
    this(new Details(kind, message), null);
  }

  RoomchatException(Details d, Throwable cause) {
    super(d.kind.wireName() + ": " + d.message, cause);
    this.kind = d.kind;
    this.status = d.status;
    this.serviceMessage = d.serviceMessage;
    this.serviceError = d.serviceError;
    this.serviceErrorMessage = d.serviceErrorMessage;
    this.retryAfter = d.retryAfter;
    this.eventId = d.eventId;
    this.method = d.method;
    this.path = d.path;
    this.outcomeUnknown = d.outcomeUnknown;
  }

  /** What went wrong. */
  public ErrorKind kind() {
    return kind;
  }

  /** The answer's HTTP status, 0 when no answer came. */
  public int status() {
    return status;
  }

  /** The service's {@code message} field, when its answer had one. */
  public Optional<String> serviceMessage() {
    return Optional.ofNullable(serviceMessage);
  }

  /** The service's {@code error} detail, when its answer had one as text. */
  public Optional<String> serviceError() {
    return Optional.ofNullable(serviceError);
  }

  /** The service's {@code errorMessage} field (older endpoints), when its answer had one. */
  public Optional<String> serviceErrorMessage() {
    return Optional.ofNullable(serviceErrorMessage);
  }

  /** How long the service asked to wait (a 429), when it said. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }

  /** The service's event id of a 5xx, for its support. */
  public Optional<String> eventId() {
    return Optional.ofNullable(eventId);
  }

  /** The request's method, when one was made. */
  public Optional<String> method() {
    return Optional.ofNullable(method);
  }

  /** The request's path and query (the key shown as {@code REDACTED}), when one was made. */
  public Optional<String> path() {
    return Optional.ofNullable(path);
  }

  /**
   * True when the call was cancelled with a request on the wire: a create or
   * a post may have happened (it was not sent again); look it up before
   * sending it again.
   */
  public boolean outcomeUnknown() {
    return outcomeUnknown;
  }

  /** What an exception is made of. */
  static final class Details {
    ErrorKind kind;
    String message;
    int status;
    String serviceMessage;
    String serviceError;
    String serviceErrorMessage;
    Duration retryAfter;
    String eventId;
    String method;
    String path;
    boolean outcomeUnknown;

    Details(ErrorKind kind, String message) {
      this.kind = kind;
      this.message = message;
    }
  }

  /** The exception of its kind's class. */
  static RoomchatException of(Details d, Throwable cause) {
    switch (d.kind) {
      case MISSING_AUTH: return new MissingAuthException(d, cause);
      case INVALID_AUTH: return new InvalidAuthException(d, cause);
      case INVALID_REQUEST: return new InvalidRequestException(d, cause);
      case USER_NOT_FOUND: return new UserNotFoundException(d, cause);
      case PLAN_UPGRADE_REQUIRED: return new PlanUpgradeRequiredException(d, cause);
      case RATE_LIMITED: return new RateLimitedException(d, cause);
      case SERVER_ERROR: return new ServerErrorException(d, cause);
      case UNEXPECTED_STATUS: return new UnexpectedStatusException(d, cause);
      case TIMEOUT: return new RequestTimeoutException(d, cause);
      case CONNECTION: return new ConnectionException(d, cause);
      case DECODE: return new DecodeException(d, cause);
      case RESPONSE_TOO_LARGE: return new ResponseTooLargeException(d, cause);
      case VALIDATION: return new ValidationException(d, cause);
      case CONFIGURATION: return new ConfigurationException(d, cause);
      case CANCELLED: return new CancelledException(d, cause);
      case BUDGET_UNAVAILABLE: return new BudgetUnavailableException(d, cause);
      case TLS: return new TlsException(d, cause);
      case NOT_FOUND: return new NotFoundException(d, cause);
      case INVALID_ARGUMENT: return new InvalidArgumentException(d, cause);
      case INTERNAL: return new InternalException(d, cause);
      default: return new RoomchatException(d, cause);
    }
  }

  static RoomchatException of(ErrorKind kind, String message) {
    return of(new Details(kind, message), null);
  }

  static RoomchatException of(ErrorKind kind, String message, Throwable cause) {
    return of(new Details(kind, message), cause);
  }
}
