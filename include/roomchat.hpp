/*
 * roomchat.hpp: a header-only C++17 wrapper over the C API of roomchat.h.
 *
 * Written by hand (roomchat.h is generated), but for the generated operations'
 * records, parameters and methods, which it includes from roomchat_operations.hpp;
 * the guide is ffi/README.md.
 *
 * Conventions:
 * - Handles (ClientOptions, CallOptions, Client, Users) own their C object and
 *   free it in their destructor. They are move-only; a moved-from handle holds nothing,
 *   and any call on it throws roomchat::Error (ROOMCHAT_RESULT_INVALID_ARGUMENT).
 * - Strings go in as std::string_view (copied; one holding a NUL byte is refused
 *   with ROOMCHAT_RESULT_INVALID_ARGUMENT and nothing is sent) and come out as
 *   std::string, or std::optional<std::string> where the service may leave a
 *   field out. Results are plain values that own their data.
 * - A failure throws roomchat::Error, which carries the C result code, the
 *   message, the HTTP status, the server's event id and the retry-after delay.
 * - Threads: a Client is thread-safe, like roomchat_client (its methods are
 *   const; share one by reference, or by std::shared_ptr). ClientOptions,
 *   CallOptions and Users are used by one thread at a time.
 * - Every endpoint call has a _with_response form returning WithResponse<T>:
 *   the result and the answer it came from (status, headers, attempts).
 */
#ifndef ROOMCHAT_HPP
#define ROOMCHAT_HPP

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "roomchat.h"

namespace roomchat {

// The library's version, e.g. "0.1.0" (static).
inline std::string_view version() noexcept { return roomchat_version(); }

// The stable snake_case name of a result code, e.g. "user_not_found" ("unknown"
// for a number the library does not know).
inline std::string_view result_name(roomchat_result code) noexcept {
  return roomchat_result_name(static_cast<std::uint32_t>(code));
}

// A failure of the library or the service. what() is the message (the
// service's own text when it sent one; never the private key). Copying one
// never throws: the details are shared.
class Error : public std::runtime_error {
 public:
  // The parts of a failure that are not the code and the message.
  struct Details {
    // The HTTP status of the answer, when there was one.
    std::optional<std::uint16_t> status;
    // The service's eventId of a server failure, to quote to support.
    std::optional<std::string> event_id;
    // How long to wait before trying again, when known (rate limits, 5xx with Retry-After).
    std::optional<std::chrono::milliseconds> retry_after;
    // The request's method, when a request was made.
    std::optional<std::string> method;
    // The request's path and query, the key shown as REDACTED.
    std::optional<std::string> path;
    // The texts of the service's error body, as they came: its message, its error (when
    // text), its errorMessage. what() shows each distinct one.
    std::optional<std::string> service_message;
    std::optional<std::string> service_error;
    std::optional<std::string> service_error_message;
  };

  Error(roomchat_result code, const std::string &message, Details details = {})
      : std::runtime_error(message), code_(code), details_(std::make_shared<const Details>(std::move(details))) {}

  // The result code (ROOMCHAT_RESULT_*): the same numbers as the C API and the core's kinds.
  roomchat_result code() const noexcept { return code_; }
  // The code's stable name, e.g. "rate_limited".
  std::string_view name() const noexcept { return result_name(code_); }
  // The message, as what().
  std::string_view message() const noexcept { return what(); }
  // The HTTP status, or std::nullopt when no answer came.
  std::optional<std::uint16_t> status() const noexcept { return details_->status; }
  // The eventId of a server failure, or std::nullopt.
  const std::optional<std::string> &event_id() const noexcept { return details_->event_id; }
  // How long to wait before trying again, or std::nullopt when unknown.
  std::optional<std::chrono::milliseconds> retry_after() const noexcept { return details_->retry_after; }
  // The request's method, or std::nullopt when none was made.
  const std::optional<std::string> &method() const noexcept { return details_->method; }
  // The request's path and query with the key shown as REDACTED, or std::nullopt.
  const std::optional<std::string> &path() const noexcept { return details_->path; }
  // The service's error body's `message`, `error` (when text) and `errorMessage`, or std::nullopt.
  const std::optional<std::string> &service_message() const noexcept { return details_->service_message; }
  const std::optional<std::string> &service_error() const noexcept { return details_->service_error; }
  const std::optional<std::string> &service_error_message() const noexcept { return details_->service_error_message; }

 private:
  roomchat_result code_;
  std::shared_ptr<const Details> details_;
};

// Which key authenticates a raw request (roomchat_raw_auth).
enum class RawAuth : std::uint32_t {
  PrivateKey = ROOMCHAT_RAW_AUTH_PRIVATE_KEY,
  PublicKey = ROOMCHAT_RAW_AUTH_PUBLIC_KEY,
  None = ROOMCHAT_RAW_AUTH_NONE,
};

// The roots an https:// client trusts (roomchat_tls_roots).
enum class TlsRoots : std::uint32_t {
  Webpki = ROOMCHAT_TLS_ROOTS_WEBPKI,
  System = ROOMCHAT_TLS_ROOTS_SYSTEM,
};

// What the client does while Redis cannot be reached (roomchat_redis_policy).
enum class RedisPolicy : std::uint32_t {
  LocalFallback = ROOMCHAT_REDIS_POLICY_LOCAL_FALLBACK,
  FailClosed = ROOMCHAT_REDIS_POLICY_FAIL_CLOSED,
  FailOpen = ROOMCHAT_REDIS_POLICY_FAIL_OPEN,
};

// How much a log line matters (roomchat_log_level).
enum class LogLevel : std::uint32_t {
  // One line per attempt.
  Debug = ROOMCHAT_LOG_LEVEL_DEBUG,
  // A retry, a wait for the rate-limit budget, a failure of the shared budget.
  Warning = ROOMCHAT_LOG_LEVEL_WARNING,
};

// Receives a client's log lines (ClientOptions::log_callback): the line's
// level and the line, the key shown as REDACTED, valid during the call only.
using LogCallback = std::function<void(LogLevel level, std::string_view line)>;

// A point in time in whole seconds since the Unix epoch (C++20's
// std::chrono::sys_seconds): any int64 number of seconds fits, unlike
// system_clock::time_point.
using SysSeconds = std::chrono::time_point<std::chrono::system_clock, std::chrono::seconds>;

// Where a key's budget is counted (roomchat_budget_backend).
enum class BudgetBackend : std::uint32_t {
  Local = ROOMCHAT_BUDGET_BACKEND_LOCAL,
  Redis = ROOMCHAT_BUDGET_BACKEND_REDIS,
};

// A user record of a listing.
struct User {
  // `_id` (or `userId`).
  std::optional<std::string> id;
  std::optional<std::string> username;
  std::optional<std::string> profile_pic;
  std::optional<std::string> email;
  std::optional<std::string> unique_user_identifier;
  // The room a moderator is limited to.
  std::optional<std::string> chat_room;
  // std::nullopt when the service did not say.
  std::optional<bool> is_moderator;
  // The whole record as JSON text with the service's field names, unknown fields included.
  std::string json;
};

// One page of the users listing; iterate it for its users.
struct UserPage {
  // The number of users of the account.
  std::uint64_t total = 0;
  // The limit and offset the service applied.
  std::uint64_t limit = 0;
  std::uint64_t skip = 0;
  std::vector<User> users;

  std::vector<User>::const_iterator begin() const noexcept { return users.begin(); }
  std::vector<User>::const_iterator end() const noexcept { return users.end(); }
  std::size_t size() const noexcept { return users.size(); }
  bool empty() const noexcept { return users.empty(); }
  const User &operator[](std::size_t index) const { return users.at(index); }
};

// A message of a conversation; only the fields the service sent are set.
struct Message {
  std::optional<std::string> id;
  std::optional<std::string> conversation;
  // The text (wire field `messages`).
  std::optional<std::string> text;
  // ISO 8601 UTC, as sent.
  std::optional<std::string> created;
  std::optional<std::string> author_id;
  std::optional<std::string> author_username;
  std::optional<std::string> author_email;
  std::optional<std::string> author_unique_user_identifier;
};

// A newly created user.
struct CreatedUser {
  // Signs the user in to a room (a secret of that user): see Client::sign_in_url.
  std::string access_token;
  std::string username;
  std::string user_id;
  bool is_moderator = false;
  // The room a moderator is limited to.
  std::optional<std::string> chat_room;
};

// The user an access token signs in (Client::validate_access_token).
struct TokenUser {
  // `_id`.
  std::string id;
  std::optional<std::string> username;
  // The room a moderator is limited to.
  std::optional<std::string> chat_room;
  // std::nullopt when the service did not say.
  std::optional<bool> is_moderator;
  // The customer's own id of the user (`externalUserId`).
  std::optional<std::string> external_user_id;
  // When the user was created, and when the record last changed: ISO 8601, as sent.
  std::optional<std::string> created;
  std::optional<std::string> updated;
  // When the token was issued (`iat`), or std::nullopt when the service did not say.
  std::optional<SysSeconds> iat;
  // The whole record as JSON text with the service's field names, unknown fields
  // included (`iat` as seconds since the epoch).
  std::string json;
};

// The answer to a raw request: its 2xx status and the body's JSON text ("null" when empty).
struct RawResponse {
  std::uint16_t status = 0;
  std::string body;
};

// Where a key's rate-limit budget stands (roomchat_rate_limit_state).
struct RateLimitState {
  // Requests the client allows itself per window.
  std::uint32_t limit = 0;
  // Requests started within the current window.
  std::uint32_t used = 0;
  // Requests that may start now.
  std::uint32_t remaining = 0;
  // The window the client counts in.
  std::chrono::milliseconds window{0};
  // How long until the next request may start (0: now).
  std::chrono::milliseconds next_free_in{0};
  // How long every caller is still held off after a 429, or std::nullopt.
  std::optional<std::chrono::milliseconds> blocked_for;
  BudgetBackend backend = BudgetBackend::Local;
  // Redis is the backend but cannot be reached: the figures are the fallback's.
  bool degraded = false;
};

// The HTTP answer a call's result came from (roomchat_response_meta).
struct ResponseMeta {
  // The HTTP status (200 for a call answered 200).
  std::uint16_t status = 0;
  // The attempts the call made: 1 when the first was answered, more after retries.
  std::uint32_t attempts = 0;
  // The id the service gave the request (`X-Request-Id`): the one to quote to support.
  std::optional<std::string> request_id;
  // Every header as (name in lower case, value), in the order they came.
  std::vector<std::pair<std::string, std::string>> headers;

  // The value of the first header called `name` (any case), e.g. "x-ratelimit-remaining".
  std::optional<std::string> header(std::string_view name) const {
    for (const auto &[header_name, value] : headers) {
      if (header_name.size() != name.size()) continue;
      bool same = true;
      for (std::size_t i = 0; same && i < name.size(); i++) same = header_name[i] == ascii_lower(name[i]);
      if (same) return value;
    }
    return std::nullopt;
  }

 private:
  static char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
};

// What a _with_response call returns: the plain call's result and the answer it came from.
template <typename T>
struct WithResponse {
  T value;
  ResponseMeta meta;
};

// The _with_response form of a call that returns nothing: the answer alone.
template <>
struct WithResponse<void> {
  ResponseMeta meta;
};

namespace detail {

// Frees each C object with its own _free.
struct Free {
  void operator()(roomchat_client_options *p) const noexcept { roomchat_client_options_free(p); }
  void operator()(roomchat_client *p) const noexcept { roomchat_client_free(p); }
  void operator()(roomchat_error *p) const noexcept { roomchat_error_free(p); }
  void operator()(roomchat_user *p) const noexcept { roomchat_user_free(p); }
  void operator()(roomchat_users_iter *p) const noexcept { roomchat_users_iter_free(p); }
  void operator()(roomchat_call_options *p) const noexcept { roomchat_call_options_free(p); }
  void operator()(roomchat_cancel_token *p) const noexcept { roomchat_cancel_token_free(p); }
  void operator()(char *p) const noexcept { roomchat_string_free(p); }
};

template <typename T>
using Owned = std::unique_ptr<T, Free>;

// Frees a C object with `FreeFunction`: the generated records' and params' _free.
template <auto FreeFunction>
struct FreeWith {
  template <typename T>
  void operator()(T *p) const noexcept {
    FreeFunction(p);
  }
};

template <typename T, auto FreeFunction>
using OwnedBy = std::unique_ptr<T, FreeWith<FreeFunction>>;

inline std::optional<std::string> optional_string(const char *text) {
  return text ? std::optional<std::string>(text) : std::nullopt;
}

inline std::string string_or_empty(const char *text) { return text ? std::string(text) : std::string(); }

// The C accessors' forms of an absent field (-1, NaN, NULL) as std::nullopt.
inline std::optional<bool> optional_bool(std::int32_t value) {
  return value >= 0 ? std::optional<bool>(value == 1) : std::nullopt;
}

inline std::optional<std::int64_t> optional_integer(std::int64_t value) {
  return value >= 0 ? std::optional<std::int64_t>(value) : std::nullopt;
}

inline std::optional<double> optional_number(double value) {
  return std::isnan(value) ? std::nullopt : std::optional<double>(value);
}

// A record borrowed from another (NULL when absent), read into its C++ class.
template <typename Record, typename Raw>
std::optional<Record> optional_record(const Raw *raw) {
  return raw ? std::optional<Record>(Record(raw)) : std::nullopt;
}

// The records of a C list (a list handle, or a record's list field: `len` and
// `get` are its C accessors), each read into its C++ class.
template <typename Record, typename Raw, typename Len, typename Get>
std::vector<Record> record_list(const Raw *raw, Len len, Get get) {
  std::vector<Record> out;
  const std::size_t count = len(raw);
  out.reserve(count);
  for (std::size_t i = 0; i < count; i++) out.emplace_back(get(raw, i));
  return out;
}

inline std::optional<std::chrono::milliseconds> optional_ms(std::int64_t ms) {
  return ms >= 0 ? std::optional<std::chrono::milliseconds>(std::chrono::milliseconds(ms)) : std::nullopt;
}

// A duration for the C API. A negative one is taken as the largest value, which
// the library refuses as too long, rather than wrapped into a short one.
inline std::uint64_t non_negative_ms(std::chrono::milliseconds value) noexcept {
  return value.count() < 0 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(value.count());
}

// Throws the Error for a failed call; frees `raw` (which may be NULL).
[[noreturn]] inline void throw_error(roomchat_result code, roomchat_error *raw) {
  Owned<roomchat_error> error(raw);
  if (!error) throw Error(code, std::string(result_name(code)));
  Error::Details details;
  if (std::uint16_t status = roomchat_error_status(error.get())) details.status = status;
  details.event_id = optional_string(roomchat_error_event_id(error.get()));
  details.retry_after = optional_ms(roomchat_error_retry_after_ms(error.get()));
  details.method = optional_string(roomchat_error_method(error.get()));
  details.path = optional_string(roomchat_error_path(error.get()));
  details.service_message = optional_string(roomchat_error_service_message(error.get()));
  details.service_error = optional_string(roomchat_error_service_error(error.get()));
  details.service_error_message = optional_string(roomchat_error_service_error_message(error.get()));
  std::string message = roomchat_error_message(error.get());
  // A setting the message names as the way past a refusal: C's words for it, put there
  // by the library, become C++'s (the setter is a ClientOptions method here).
  if (roomchat_error_remedy(error.get()) == ROOMCHAT_REMEDY_ALLOW_INSECURE_HTTP) {
    const std::string c_name = "roomchat_client_options_set_allow_insecure_http(options, true)";
    const std::string::size_type at = message.rfind(c_name);
    if (at != std::string::npos) message.replace(at, c_name.size(), "ClientOptions::allow_insecure_http(true)");
  }
  throw Error(roomchat_error_code(error.get()), message, std::move(details));
}

// Throws for a failed call that has no error out-parameter.
inline void check(roomchat_result code) {
  if (code != ROOMCHAT_RESULT_OK) throw_error(code, nullptr);
}

// Runs `call(roomchat_error **)` and throws what it reports.
template <typename Call>
void check_call(Call &&call) {
  roomchat_error *error = nullptr;
  const roomchat_result code = call(&error);
  if (code != ROOMCHAT_RESULT_OK) throw_error(code, error);
  roomchat_error_free(error);
}

// A NUL-terminated copy of a string argument; a NUL byte inside is refused,
// as C would otherwise see a shorter string than the caller gave.
class CString {
 public:
  CString(std::string_view value, const char *what) : text_(value) {
    if (value.find('\0') != std::string_view::npos)
      throw Error(ROOMCHAT_RESULT_INVALID_ARGUMENT, std::string(what) + " holds a NUL byte");
  }
  const char *get() const noexcept { return text_.c_str(); }

 private:
  std::string text_;
};

// As CString, NULL for std::nullopt.
class OptionalCString {
 public:
  OptionalCString(std::optional<std::string_view> value, const char *what) {
    if (value) text_.emplace(*value, what);
  }
  const char *get() const noexcept { return text_ ? text_->get() : nullptr; }

 private:
  std::optional<CString> text_;
};

// Gives a generated params handle `value`, when it is set, through its C setter.
// A setter's failure is recorded in the handle: the call reports it, with its message.
template <typename Raw, typename Setter, typename Value>
void set_param(Raw *raw, Setter setter, const std::optional<Value> &value, const char *what) {
  if (!value) return;
  if constexpr (std::is_same_v<Value, std::string>) {
    static_cast<void>(setter(raw, CString(*value, what).get()));
  } else {
    static_cast<void>(setter(raw, *value));
  }
}

// Refuses a set integer param below its declared least value, before anything is sent.
// The C setters read 0 as "not set" where 0 is below it (a listing's `limit`), so a set 0
// would otherwise go out as the service's default; a set value is a value, and is refused
// as every language refuses it: ROOMCHAT_RESULT_VALIDATION, with core's message, naming the
// operation and the param's wire name. (The C call checks the rest of the declared limits.)
inline void check_minimum(const std::optional<std::uint64_t> &value, std::uint64_t min, std::uint64_t max,
                          const char *operation, const char *name) {
  if (!value || *value >= min) return;
  throw Error(ROOMCHAT_RESULT_VALIDATION, std::string(operation) + ": " + name + " must be between " +
                                              std::to_string(min) + " and " + std::to_string(max) + ", not " +
                                              std::to_string(*value));
}

// Takes a string the library returned through char ** (frees it).
inline std::string take_string(char *text) {
  Owned<char> owned(text);
  return string_or_empty(owned.get());
}

inline User to_user(const roomchat_user *user) {
  User out;
  out.id = optional_string(roomchat_user_id(user));
  out.username = optional_string(roomchat_user_username(user));
  out.profile_pic = optional_string(roomchat_user_profile_pic(user));
  out.email = optional_string(roomchat_user_email(user));
  out.unique_user_identifier = optional_string(roomchat_user_unique_user_identifier(user));
  out.chat_room = optional_string(roomchat_user_chat_room(user));
  const std::int32_t moderator = roomchat_user_is_moderator(user);
  if (moderator >= 0) out.is_moderator = moderator == 1;
  out.json = string_or_empty(roomchat_user_json(user));
  return out;
}

inline Message to_message(const roomchat_message *message) {
  auto field = [message](roomchat_message_field which) {
    return optional_string(roomchat_message_get_field(message, static_cast<std::uint32_t>(which)));
  };
  Message out;
  out.id = field(ROOMCHAT_MESSAGE_FIELD_ID);
  out.conversation = field(ROOMCHAT_MESSAGE_FIELD_CONVERSATION);
  out.text = field(ROOMCHAT_MESSAGE_FIELD_TEXT);
  out.created = field(ROOMCHAT_MESSAGE_FIELD_CREATED);
  out.author_id = field(ROOMCHAT_MESSAGE_FIELD_AUTHOR_ID);
  out.author_username = field(ROOMCHAT_MESSAGE_FIELD_AUTHOR_USERNAME);
  out.author_email = field(ROOMCHAT_MESSAGE_FIELD_AUTHOR_EMAIL);
  out.author_unique_user_identifier = field(ROOMCHAT_MESSAGE_FIELD_AUTHOR_UNIQUE_USER_IDENTIFIER);
  return out;
}

inline UserPage to_user_page(const roomchat_user_page *page) {
  UserPage out;
  out.total = roomchat_user_page_total(page);
  out.limit = roomchat_user_page_limit(page);
  out.skip = roomchat_user_page_skip(page);
  const std::size_t count = roomchat_user_page_len(page);
  out.users.reserve(count);
  for (std::size_t i = 0; i < count; i++) out.users.push_back(to_user(roomchat_user_page_get(page, i)));
  return out;
}

inline std::vector<Message> to_messages(const roomchat_messages *messages) {
  std::vector<Message> out;
  const std::size_t count = roomchat_messages_len(messages);
  out.reserve(count);
  for (std::size_t i = 0; i < count; i++) out.push_back(to_message(roomchat_messages_get(messages, i)));
  return out;
}

inline CreatedUser to_created_user(const roomchat_created_user *user) {
  CreatedUser out;
  out.access_token = string_or_empty(roomchat_created_user_access_token(user));
  out.username = string_or_empty(roomchat_created_user_username(user));
  out.user_id = string_or_empty(roomchat_created_user_user_id(user));
  out.is_moderator = roomchat_created_user_is_moderator(user);
  out.chat_room = optional_string(roomchat_created_user_chat_room(user));
  return out;
}

inline TokenUser to_token_user(const roomchat_token_user *user) {
  TokenUser out;
  out.id = string_or_empty(roomchat_token_user_id(user));
  out.username = optional_string(roomchat_token_user_username(user));
  out.chat_room = optional_string(roomchat_token_user_chat_room(user));
  const std::int32_t moderator = roomchat_token_user_is_moderator(user);
  if (moderator >= 0) out.is_moderator = moderator == 1;
  out.external_user_id = optional_string(roomchat_token_user_external_user_id(user));
  out.created = optional_string(roomchat_token_user_created(user));
  out.updated = optional_string(roomchat_token_user_updated(user));
  const std::int64_t iat = roomchat_token_user_iat(user);
  if (iat >= 0) out.iat = SysSeconds(std::chrono::seconds(iat));
  out.json = string_or_empty(roomchat_token_user_json(user));
  return out;
}

// Receives the roomchat_response_meta of a _with_response call and frees it,
// whatever is thrown meanwhile (the C call writes it before the result is converted).
class MetaOut {
 public:
  MetaOut() noexcept = default;
  MetaOut(const MetaOut &) = delete;
  MetaOut &operator=(const MetaOut &) = delete;
  ~MetaOut() { roomchat_response_meta_free(raw_); }

  roomchat_response_meta **out() noexcept { return &raw_; }

  ResponseMeta take() const {
    ResponseMeta meta;
    meta.status = roomchat_response_meta_status(raw_);
    meta.attempts = roomchat_response_meta_attempts(raw_);
    meta.request_id = optional_string(roomchat_response_meta_request_id(raw_));
    const std::size_t count = roomchat_response_meta_header_count(raw_);
    meta.headers.reserve(count);
    for (std::size_t i = 0; i < count; i++)
      meta.headers.emplace_back(string_or_empty(roomchat_response_meta_header_name(raw_, i)),
                                string_or_empty(roomchat_response_meta_header_value(raw_, i)));
    return meta;
  }

 private:
  roomchat_response_meta *raw_ = nullptr;
};

// Runs `send(roomchat_response_meta **)`, one endpoint's call, for its result
// and the answer it came from: the one shape of every _with_response method.
template <typename Send, typename Value = std::invoke_result_t<Send &, roomchat_response_meta **>>
WithResponse<Value> with_response(Send &&send) {
  MetaOut meta;
  if constexpr (std::is_void_v<Value>) {
    send(meta.out());
    return WithResponse<void>{meta.take()};
  } else {
    Value value = send(meta.out());
    return WithResponse<Value>{std::move(value), meta.take()};
  }
}

// The roomchat_log_callback of every ClientOptions::log_callback: `user_data`
// is the LogCallback the library owns (see delete_log_callback).
inline void log_to_callback(void *user_data, roomchat_log_level level, const char *line) noexcept {
  try {
    (*static_cast<const LogCallback *>(user_data))(static_cast<LogLevel>(level), line);
  } catch (...) {
    // Nothing may unwind into the library: a callback's exception drops its line.
  }
}

// Its roomchat_destroy_notify: the library calls it once, when the last
// options, client, view or iteration holding the LogCallback is freed.
inline void delete_log_callback(void *user_data) noexcept { delete static_cast<LogCallback *>(user_data); }

}  // namespace detail

// The headers of the attempt whose start is being reported (roomchat_attempt_headers),
// given to an Observer; valid during that call only.
class AttemptHeaders {
 public:
  explicit AttemptHeaders(roomchat_attempt_headers *raw) noexcept : raw_(raw) {}
  // Sets `name: value` on this attempt's request, over the client's header of the
  // same name (any case): a W3C traceparent, a tenant id. Throws Error
  // (ROOMCHAT_RESULT_VALIDATION) for a name or value the library refuses (a
  // reserved name such as Host or Content-Length, CR, LF, non-ASCII): nothing is set.
  void set(std::string_view name, std::string_view value) const {
    const detail::CString header_name(name, "header name");
    const detail::CString header_value(value, "header value");
    detail::check_call([&](roomchat_error **error) {
      return roomchat_attempt_headers_set(raw_, header_name.get(), header_value.get(), error);
    });
  }

 private:
  roomchat_attempt_headers *raw_;
};

// Receives each report of each call (ClientOptions::observer): an attempt's start
// (`headers` not null: set this attempt's headers), an attempt's end, the call's end
// (`observation.kind`: ROOMCHAT_OBSERVATION_KIND_ATTEMPT_START, _ATTEMPT_END,
// _CALL_END). The report and its strings live during the call only; its fields are
// roomchat_observation's (roomchat.h). Called on the thread making the client call.
using Observer = std::function<void(const roomchat_observation &observation, AttemptHeaders *headers)>;

namespace detail {

// The roomchat_observer_callback of every ClientOptions::observer: `user_data` is
// the Observer the library owns (see delete_observer).
inline void observe_to_callback(void *user_data, const roomchat_observation *observation,
                                roomchat_attempt_headers *headers) noexcept {
  try {
    const auto &observer = *static_cast<const Observer *>(user_data);
    if (headers) {
      AttemptHeaders attempt(headers);
      observer(*observation, &attempt);
    } else {
      observer(*observation, nullptr);
    }
  } catch (...) {
    // Nothing may unwind into the library: an observer's exception ends its report, not the call.
  }
}

// Its roomchat_destroy_notify: the library calls it once, when the last options,
// client, view or iteration holding the Observer is freed.
inline void delete_observer(void *user_data) noexcept { delete static_cast<Observer *>(user_data); }

}  // namespace detail

// A lazy iteration over every record of a paged listing (Client::iter_room_messages,
// iter_channel_messages, iter_list_members), a page at a time: an input range, so
// iterate it once, from one thread at a time. A failure throws from begin() or ++
// and ends that loop, never the iteration: a new loop fetches the page that failed
// again and goes on from where the last one stopped. It holds one page at most and
// keeps its own reference to the client (and so to its log callback). The paging
// rules are the library's (see the C iterator's _next).
template <typename Item, typename RawIter, typename RawItem, auto Next, auto NextSkip, auto FreeIter,
          auto FreeItem>
class Items {
 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Item;
    using difference_type = std::ptrdiff_t;
    using pointer = const Item *;
    using reference = const Item &;

    iterator() noexcept = default;
    reference operator*() const { return *owner_->current_; }
    pointer operator->() const { return &*owner_->current_; }
    iterator &operator++() {
      owner_->fetch();
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator &a, const iterator &b) noexcept { return a.at_end() == b.at_end(); }
    friend bool operator!=(const iterator &a, const iterator &b) noexcept { return !(a == b); }

   private:
    friend class Items;
    explicit iterator(Items *owner) noexcept : owner_(owner) {}
    bool at_end() const noexcept { return owner_ == nullptr || !owner_->current_; }
    Items *owner_ = nullptr;
  };

  // Takes ownership of `raw` (from the C roomchat_client_iter_<name>).
  explicit Items(RawIter *raw) noexcept : raw_(raw) {}
  Items(Items &&other) noexcept
      : raw_(std::move(other.raw_)), current_(std::exchange(other.current_, std::nullopt)), done_(other.done_) {}
  Items &operator=(Items &&other) noexcept {
    raw_ = std::move(other.raw_);
    current_ = std::exchange(other.current_, std::nullopt);
    done_ = other.done_;
    return *this;
  }

  // The record the iteration stands at, fetching the first one if none was.
  iterator begin() {
    if (!current_ && !done_) fetch();
    return iterator(this);
  }
  iterator end() noexcept { return iterator(); }

  // The `skip` of the record after the one the iteration stands at: given as
  // `skip` to a new iteration, it goes on from there.
  std::uint64_t next_skip() const noexcept { return NextSkip(raw_.get()); }

  // The C object, still owned by this handle (NULL once moved from).
  RawIter *get() const noexcept { return raw_.get(); }

 private:
  void fetch() {
    current_.reset();
    RawItem *raw = nullptr;
    roomchat_error *error = nullptr;
    const roomchat_result code = Next(raw_.get(), &raw, &error);
    if (code == ROOMCHAT_RESULT_ITERATION_DONE) {
      done_ = true;
      return;
    }
    if (code != ROOMCHAT_RESULT_OK) detail::throw_error(code, error);
    detail::OwnedBy<RawItem, FreeItem> item(raw);
    current_.emplace(raw);
  }

  detail::OwnedBy<RawIter, FreeIter> raw_;
  std::optional<Item> current_;
  bool done_ = false;
};

}  // namespace roomchat

// The generated operations: their records, parameters, and detail::Operations,
// the methods Client inherits.
#include "roomchat_operations.hpp"

namespace roomchat {

// Settings for a Client (roomchat_client_options). Setters only record and
// return *this, so they chain; bad values are reported by the Client
// constructor (ROOMCHAT_RESULT_CONFIGURATION). Use it from one thread at a time.
class ClientOptions {
 public:
  // Starts settings for `private_key` (copied).
  explicit ClientOptions(std::string_view private_key) {
    roomchat_client_options *raw = nullptr;
    detail::CString key(private_key, "private_key");
    detail::check_call([&](roomchat_error **error) { return roomchat_client_options_new(key.get(), &raw, error); });
    raw_.reset(raw);
  }

  // Starts settings from the environment, as every roomchat package reads it
  // (roomchat_client_options_new_from_env): ROOMCHAT_PRIVATE_KEY and
  // ROOMCHAT_BASE_URL (both required), and ROOMCHAT_CHAT_URL,
  // ROOMCHAT_PUBLIC_KEY, ROOMCHAT_APP_NAME when set. The setters apply after
  // them. Throws an Error (ROOMCHAT_RESULT_CONFIGURATION) when a required
  // variable is unset or a variable is not UTF-8.
  static ClientOptions from_env() {
    roomchat_client_options *raw = nullptr;
    detail::check_call([&](roomchat_error **error) { return roomchat_client_options_new_from_env(&raw, error); });
    return ClientOptions(raw);
  }

  // The REST base URL, e.g. "https://api.example.com". Required.
  ClientOptions &base_url(std::string_view url) {
    return set(roomchat_client_options_set_base_url(get(), detail::CString(url, "base_url").get()));
  }
  // The public key: it authenticates validate_access_token and RawAuth::PublicKey requests.
  ClientOptions &public_key(std::string_view key) {
    return set(roomchat_client_options_set_public_key(get(), detail::CString(key, "public_key").get()));
  }
  // The address rooms are served at to browsers, for sign_in_url.
  ClientOptions &chat_url(std::string_view url) {
    return set(roomchat_client_options_set_chat_url(get(), detail::CString(url, "chat_url").get()));
  }
  // An application name appended to the User-Agent.
  ClientOptions &app_name(std::string_view name) {
    return set(roomchat_client_options_set_app_name(get(), detail::CString(name, "app_name").get()));
  }
  // The connect timeout and the overall timeout of one attempt (0 keeps the defaults, 10 s and 30 s).
  ClientOptions &timeouts(std::chrono::milliseconds connect, std::chrono::milliseconds overall) {
    return set(roomchat_client_options_set_timeouts(get(), non_negative(connect), non_negative(overall)));
  }
  // Retries after the first attempt (default 2), and whether a POST may be
  // retried after a 5xx or timeout (default false: it could create twice).
  ClientOptions &retries(std::uint32_t max_retries, bool retry_non_idempotent = false) {
    return set(roomchat_client_options_set_retries(get(), max_retries, retry_non_idempotent));
  }
  // The key's client-side rate limit: `requests` per `window` (default 600 per
  // minute); a call fails at once when the budget is spent (`fail_fast`) or
  // waits up to `max_wait` for a slot (default_max_wait(window) is how long
  // every roomchat package waits unless told otherwise).
  ClientOptions &rate_limit(std::uint32_t requests, std::chrono::milliseconds window, bool fail_fast,
                            std::chrono::milliseconds max_wait) {
    return set(roomchat_client_options_set_rate_limit(get(), requests, non_negative(window), fail_fast,
                                                      non_negative(max_wait)));
  }
  // The longest a call waits for a slot of a budget with this `window` unless
  // told otherwise (roomchat_rate_limit_default_max_wait_ms): at least a minute.
  static std::chrono::milliseconds default_max_wait(std::chrono::milliseconds window) noexcept {
    return std::chrono::milliseconds(
        static_cast<std::chrono::milliseconds::rep>(roomchat_rate_limit_default_max_wait_ms(non_negative(window))));
  }
  // Also trusts the certificates of `pem` (PEM text) for https://.
  ClientOptions &ca_pem(std::string_view pem) {
    return set(roomchat_client_options_set_ca_pem(get(), detail::CString(pem, "ca_pem").get()));
  }
  // Whether to ask for gzip-compressed answers (default true).
  ClientOptions &gzip(bool enabled) { return set(roomchat_client_options_set_gzip(get(), enabled)); }
  // The roots an https:// client trusts (default TlsRoots::Webpki).
  ClientOptions &tls_roots(TlsRoots roots) {
    return set(roomchat_client_options_set_tls_roots(get(), static_cast<std::uint32_t>(roots)));
  }
  // The proxy, http://[user:password@]host[:port] or https://…; never called,
  // the environment's https_proxy, no_proxy, … are read as curl reads them.
  ClientOptions &proxy(std::string_view url) {
    return set(roomchat_client_options_set_proxy(get(), detail::CString(url, "proxy").get()));
  }
  // No proxy, whatever the environment says.
  ClientOptions &no_proxy() { return set(roomchat_client_options_set_proxy(get(), nullptr)); }
  // Shares the key's budget through the Redis deployment at `url`: one server (redis://,
  // rediss://, redis+unix://), a Cluster (redis+cluster://host:port,host:port…) or the
  // primary that sentinels name (redis+sentinel://host,host…/service). Call it before
  // the other Redis setters.
  ClientOptions &rate_limit_redis(std::string_view url) {
    return set(roomchat_client_options_set_rate_limit_redis(get(), detail::CString(url, "redis url").get()));
  }
  // What the client does while Redis cannot be reached; `expected_processes`
  // (0 keeps 4) divides the limit for RedisPolicy::LocalFallback.
  ClientOptions &redis_policy(RedisPolicy policy, std::uint32_t expected_processes = 0) {
    return set(roomchat_client_options_set_redis_policy(get(), static_cast<std::uint32_t>(policy),
                                                        expected_processes));
  }
  // The Redis connect and round-trip timeouts, and how long Redis is left alone after a failure (0 keeps a default).
  ClientOptions &redis_timeouts(std::chrono::milliseconds connect, std::chrono::milliseconds io,
                                std::chrono::milliseconds breaker_cooldown) {
    return set(roomchat_client_options_set_redis_timeouts(get(), non_negative(connect), non_negative(io),
                                                          non_negative(breaker_cooldown)));
  }
  // The prefix of the budget's Redis keys (default "roomchat").
  ClientOptions &redis_key_prefix(std::string_view prefix) {
    return set(roomchat_client_options_set_redis_key_prefix(get(), detail::CString(prefix, "redis key prefix").get()));
  }
  // The largest response body accepted, in bytes (default 16 MiB; UINT64_MAX: no cap).
  ClientOptions &max_response_bytes(std::uint64_t bytes) {
    return set(roomchat_client_options_set_max_response_bytes(get(), bytes));
  }
  // Allows sending the key over plain http:// to a host that is not loopback (default false).
  ClientOptions &allow_insecure_http(bool allow) {
    return set(roomchat_client_options_set_allow_insecure_http(get(), allow));
  }
  // Sends the log lines of `lowest` and above to `callback` (an empty one turns
  // it off; without one, ROOMCHAT_LOG=debug|info|warn prints them to stderr).
  // It is called on the thread making the client call, possibly on several at
  // once: it must be thread-safe, quick, and must not call the same client; an
  // exception it throws drops the line. The callback is moved into a copy the
  // library owns (roomchat_client_options_set_log_callback_with_destroy): these
  // options, every Client made from them, their views and Users share it, and
  // it is destroyed once the last of them is (in any order), on the thread
  // destroying that one; what it captures by reference must live as long. A
  // later log_callback replaces it. A level that is not a LogLevel is reported
  // by the Client constructor (ROOMCHAT_RESULT_INVALID_ARGUMENT).
  ClientOptions &log_callback(LogCallback callback, LogLevel lowest = LogLevel::Debug) {
    const auto level = static_cast<std::uint32_t>(lowest);
    if (!callback) return set(roomchat_client_options_set_log_callback(get(), nullptr, nullptr, level));
    // The library deletes the copy exactly once, whatever the call returns.
    return set(roomchat_client_options_set_log_callback_with_destroy(
        get(), detail::log_to_callback, new LogCallback(std::move(callback)), level, detail::delete_log_callback));
  }

  // Hands each report of each call (an attempt's start, its end, the call's end) to
  // `observer` (an empty one turns it off): the way to make OpenTelemetry spans and
  // metrics of the calls, and to put trace context on each attempt (see Observer and
  // roomchat_observation). The same rules as log_callback: called on the thread making
  // the client call, possibly on several at once (thread-safe, quick, never calling
  // the same client); an exception it throws ends that report, not the call; the
  // library owns a copy, shared by these options and every Client, view and Users
  // made from them, destroyed when the last of them is; a later observer replaces it.
  ClientOptions &observer(Observer observer) {
    if (!observer) return set(roomchat_client_options_set_observer(get(), nullptr, nullptr));
    // The library deletes the copy exactly once, whatever the call returns.
    return set(roomchat_client_options_set_observer_with_destroy(
        get(), detail::observe_to_callback, new Observer(std::move(observer)), detail::delete_observer));
  }
  // Puts `name: value` on every request of the clients made from these options (an
  // Observer's header of the same name wins for its attempt). Throws Error
  // (ROOMCHAT_RESULT_VALIDATION) for a name or value the library refuses (a reserved
  // name such as Host, Content-Length or Authorization, CR, LF, non-ASCII); the
  // options then keep that failure, and the Client constructor reports it.
  ClientOptions &header(std::string_view name, std::string_view value) {
    return set(roomchat_client_options_add_header(get(), detail::CString(name, "header name").get(),
                                                  detail::CString(value, "header value").get()));
  }
  // Whether trace context leaves the client (default true): false keeps every
  // traceparent, tracestate and baggage header off the wire, whoever set it.
  ClientOptions &propagate_trace_context(bool propagate) {
    return set(roomchat_client_options_set_propagate_trace_context(get(), propagate));
  }

  // The C object, still owned by this handle (NULL once moved from).
  roomchat_client_options *get() const noexcept { return raw_.get(); }

 private:
  explicit ClientOptions(roomchat_client_options *raw) noexcept { raw_.reset(raw); }

  ClientOptions &set(roomchat_result code) {
    detail::check(code);
    return *this;
  }
  // A negative duration is taken as the largest value, which the client refuses as too long.
  static std::uint64_t non_negative(std::chrono::milliseconds value) noexcept { return detail::non_negative_ms(value); }

  detail::Owned<roomchat_client_options> raw_;
};

// Cancels calls from any thread (roomchat_cancel_token): give it to
// CallOptions::cancel_token, make a view with Client::with_options, and call
// cancel() from another thread; the view's calls then throw an Error whose
// code() is ROOMCHAT_RESULT_CANCELLED (at once when waiting for the budget or
// before a retry, within 50 ms with a request on the wire). A create or post
// cancelled on the wire may have reached the service: its outcome is unknown,
// and the Error's message says so. Thread-safe; cannot be reset. The options and
// views keep their own reference, so this handle may be destroyed before them.
class CancelToken {
 public:
  CancelToken() {
    roomchat_cancel_token *raw = nullptr;
    detail::check(roomchat_cancel_token_new(&raw));
    raw_.reset(raw);
  }

  // Cancels every call carrying this token, now and later; again does nothing more.
  void cancel() const noexcept { roomchat_cancel_token_cancel(raw_.get()); }
  bool cancelled() const noexcept { return roomchat_cancel_token_is_cancelled(raw_.get()); }

  // The C object, still owned by this handle (NULL once moved from).
  roomchat_cancel_token *get() const noexcept { return raw_.get(); }

 private:
  detail::Owned<roomchat_cancel_token> raw_;
};

// Settings a view of a client uses instead of the client's (roomchat_call_options;
// see Client::with_options). A setting never set keeps the client's. Setters
// only record and return *this, so they chain; bad values are reported by
// Client::with_options (ROOMCHAT_RESULT_CONFIGURATION). Use it from one thread at a time.
class CallOptions {
 public:
  // Starts options that change nothing.
  CallOptions() {
    roomchat_call_options *raw = nullptr;
    detail::check(roomchat_call_options_new(&raw));
    raw_.reset(raw);
  }

  // The overall timeout of one attempt. Unlike ClientOptions::timeouts, 0 is
  // refused, as is more than 10^12 ms or a negative one.
  CallOptions &timeout(std::chrono::milliseconds overall) {
    return set(roomchat_call_options_set_timeout_ms(get(), detail::non_negative_ms(overall)));
  }
  // The connect timeout (0, more than 10^12 ms or a negative one is refused).
  CallOptions &connect_timeout(std::chrono::milliseconds connect) {
    return set(roomchat_call_options_set_connect_timeout_ms(get(), detail::non_negative_ms(connect)));
  }
  // Retries after the first attempt (0: one attempt only). POSTs are still
  // never sent again after a 5xx or a lost answer unless the client allows it.
  CallOptions &max_retries(std::uint32_t retries) {
    return set(roomchat_call_options_set_max_retries(get(), retries));
  }
  // The longest wait slept before a retry (more than 10^12 ms or a negative one is refused).
  CallOptions &max_retry_wait(std::chrono::milliseconds wait) {
    return set(roomchat_call_options_set_max_retry_wait_ms(get(), detail::non_negative_ms(wait)));
  }

  // The calls of views made with these options are cancelled by `token`
  // (the options keep their own reference to it).
  CallOptions &cancel_token(const CancelToken &token) {
    return set(roomchat_call_options_set_cancel_token(get(), token.get()));
  }

  // The C object, still owned by this handle (NULL once moved from).
  roomchat_call_options *get() const noexcept { return raw_.get(); }

 private:
  CallOptions &set(roomchat_result code) {
    detail::check(code);
    return *this;
  }

  detail::Owned<roomchat_call_options> raw_;
};

class Users;

// A client of the chat service (roomchat_client). Thread-safe: one Client may
// be used by many threads at once. Every client of the same private key in the
// process shares one rate-limit budget. The methods of the generated operations
// (one per operation of api/operations.toml) are inherited from detail::Operations
// (roomchat_operations.hpp).
class Client : public detail::Operations<Client> {
 public:
  // Builds a client; `options` may be destroyed right after (the library
  // keeps their log callback as long as the client needs it). Throws
  // ROOMCHAT_RESULT_CONFIGURATION on bad settings.
  explicit Client(const ClientOptions &options) {
    roomchat_client *raw = nullptr;
    detail::check_call([&](roomchat_error **error) { return roomchat_client_new(options.get(), &raw, error); });
    raw_.reset(raw);
  }

  Client(Client &&other) noexcept = default;
  Client &operator=(Client &&other) noexcept = default;
  ~Client() = default;

  // A view of this client whose calls use `options` where they set something
  // and this client's settings elsewhere (roomchat_client_with_options): a
  // Client like any other (a view of it adds its own options), sharing this
  // client's connection pool, rate-limit budget and log callback. Either may
  // be destroyed first; `options` may be destroyed at once. Throws
  // ROOMCHAT_RESULT_CONFIGURATION on a timeout of 0 or a duration above 10^12 ms.
  Client with_options(const CallOptions &options) const {
    roomchat_client *raw = nullptr;
    detail::check_call([&](roomchat_error **e) { return roomchat_client_with_options(get(), options.get(), &raw, e); });
    return Client(raw);
  }

  // Every user, lazily, `page_size` (1 to 200; 0 = 200) at a time: see Users.
  inline Users users(std::uint32_t page_size = 0) const;

  // A request to an operation without a documented shape, through the same
  // limits, retries and error decoding. `query_json` is a JSON array of
  // ["name", "value"] pairs; `body_json` the JSON body.
  RawResponse raw_request(std::string_view method, std::string_view path,
                          std::optional<std::string_view> query_json = std::nullopt,
                          std::optional<std::string_view> body_json = std::nullopt,
                          RawAuth auth = RawAuth::PrivateKey) const {
    return send_raw_request(nullptr, method, path, query_json, body_json, auth);
  }
  WithResponse<RawResponse> raw_request_with_response(std::string_view method, std::string_view path,
                                                      std::optional<std::string_view> query_json = std::nullopt,
                                                      std::optional<std::string_view> body_json = std::nullopt,
                                                      RawAuth auth = RawAuth::PrivateKey) const {
    return detail::with_response([&](roomchat_response_meta **meta) {
      return send_raw_request(meta, method, path, query_json, body_json, auth);
    });
  }

  // Where the key's rate-limit budget stands (no request is made).
  RateLimitState rate_limit_state() const {
    roomchat_rate_limit_state raw{};
    detail::check(roomchat_client_rate_limit_state(get(), &raw));
    RateLimitState out;
    out.limit = raw.limit;
    out.used = raw.used;
    out.remaining = raw.remaining;
    out.window = std::chrono::milliseconds(raw.window_ms);
    out.next_free_in = std::chrono::milliseconds(raw.next_free_in_ms);
    out.blocked_for = detail::optional_ms(raw.blocked_for_ms);
    out.backend = static_cast<BudgetBackend>(raw.backend);
    out.degraded = raw.degraded;
    return out;
  }

  // The base URL the client sends to, as the constructor checked it (one read
  // from ROOMCHAT_BASE_URL by ClientOptions::from_env, for one).
  std::string base_url() const {
    char *url = nullptr;
    detail::check_call([&](roomchat_error **e) { return roomchat_client_base_url(get(), &url, e); });
    return detail::take_string(url);
  }

  // The browser address that signs the holder of `access_token` in to `room_id` (needs ClientOptions::chat_url).
  std::string sign_in_url(std::string_view room_id, std::string_view access_token) const {
    detail::CString room(room_id, "room_id"), token(access_token, "access_token");
    char *url = nullptr;
    detail::check_call([&](roomchat_error **e) {
      return roomchat_client_sign_in_url(get(), room.get(), token.get(), &url, e);
    });
    return detail::take_string(url);
  }

  // An <iframe> element for the sign-in address, HTML-escaped; `width` and `height` e.g. "100%", "600".
  std::string iframe_html(std::string_view room_id, std::string_view access_token, std::string_view width,
                          std::string_view height) const {
    detail::CString room(room_id, "room_id"), token(access_token, "access_token");
    detail::CString width_c(width, "width"), height_c(height, "height");
    char *html = nullptr;
    detail::check_call([&](roomchat_error **e) {
      return roomchat_client_iframe_html(get(), room.get(), token.get(), width_c.get(), height_c.get(), &html, e);
    });
    return detail::take_string(html);
  }

  // The C object, still owned by this handle (NULL once moved from).
  roomchat_client *get() const noexcept { return raw_.get(); }

 private:
  explicit Client(roomchat_client *raw) noexcept : raw_(raw) {}

  // The raw request's call once, through its _with_response C function: `meta`
  // NULL is the plain call, else the answer is written there on success.
  RawResponse send_raw_request(roomchat_response_meta **meta, std::string_view method, std::string_view path,
                               std::optional<std::string_view> query_json, std::optional<std::string_view> body_json,
                               RawAuth auth) const {
    detail::CString method_c(method, "method"), path_c(path, "path");
    detail::OptionalCString query(query_json, "query_json"), body(body_json, "body_json");
    RawResponse out;
    char *text = nullptr;
    detail::check_call([&](roomchat_error **e) {
      return roomchat_client_raw_request_with_response(get(), method_c.get(), path_c.get(), query.get(), body.get(),
                                                       static_cast<std::uint32_t>(auth), &out.status, &text, meta, e);
    });
    out.body = detail::take_string(text);
    return out;
  }

  detail::Owned<roomchat_client> raw_;
};

// A lazy iteration over every user (Client::users), a page at a time: an input
// range, so iterate it once, from one thread at a time. A failure throws from
// begin() or ++ and ends that loop, never the iteration: a new loop fetches the
// page that failed again and goes on from where the last one stopped.
// It keeps its own reference to the client (and so to its log callback).
class Users {
 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = User;
    using difference_type = std::ptrdiff_t;
    using pointer = const User *;
    using reference = const User &;

    iterator() noexcept = default;
    reference operator*() const { return *owner_->current_; }
    pointer operator->() const { return &*owner_->current_; }
    iterator &operator++() {
      owner_->fetch();
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator &a, const iterator &b) noexcept { return a.at_end() == b.at_end(); }
    friend bool operator!=(const iterator &a, const iterator &b) noexcept { return !(a == b); }

   private:
    friend class Users;
    explicit iterator(Users *owner) noexcept : owner_(owner) {}
    bool at_end() const noexcept { return owner_ == nullptr || !owner_->current_; }
    Users *owner_ = nullptr;
  };

  // Takes ownership of `raw` (from roomchat_client_users_iter).
  explicit Users(roomchat_users_iter *raw) noexcept : raw_(raw) {}
  Users(Users &&other) noexcept
      : raw_(std::move(other.raw_)), current_(std::exchange(other.current_, std::nullopt)), done_(other.done_) {}
  Users &operator=(Users &&other) noexcept {
    raw_ = std::move(other.raw_);
    current_ = std::exchange(other.current_, std::nullopt);
    done_ = other.done_;
    return *this;
  }

  // The user the iteration stands at, fetching the first one if none was.
  iterator begin() {
    if (!current_ && !done_) fetch();
    return iterator(this);
  }
  iterator end() noexcept { return iterator(); }

  // Does nothing: a new loop after a failure retries the failed page by itself.
  // Kept for code written when a failure ended the iteration.
  void resume() {
    detail::check(roomchat_users_iter_resume(raw_.get()));
    done_ = false;
  }

  // The C object, still owned by this handle (NULL once moved from).
  roomchat_users_iter *get() const noexcept { return raw_.get(); }

 private:
  void fetch() {
    current_.reset();
    roomchat_user *raw = nullptr;
    roomchat_error *error = nullptr;
    const roomchat_result code = roomchat_users_iter_next(raw_.get(), &raw, &error);
    if (code == ROOMCHAT_RESULT_ITERATION_DONE) {
      done_ = true;
      return;
    }
    if (code != ROOMCHAT_RESULT_OK) detail::throw_error(code, error);
    detail::Owned<roomchat_user> user(raw);
    current_ = detail::to_user(raw);
  }

  detail::Owned<roomchat_users_iter> raw_;
  std::optional<User> current_;
  bool done_ = false;
};

inline Users Client::users(std::uint32_t page_size) const {
  roomchat_users_iter *raw = nullptr;
  detail::check_call([&](roomchat_error **e) { return roomchat_client_users_iter(get(), page_size, &raw, e); });
  return Users(raw);
}

}  // namespace roomchat

#endif  // ROOMCHAT_HPP
