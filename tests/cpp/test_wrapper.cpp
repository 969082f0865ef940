// The C++17 wrapper (include/roomchat.hpp) against the emulator binary: every
// endpoint, the errors it throws and what they carry, the lazy user iteration
// with a failure and the retry of the next loop, access tokens, views (with_options), the answer
// beside the result (_with_response), the log callback and its lifetime, the observer
// and extra headers,
// move-only handles, one client shared by threads, and the generated operations
// (eject_all_users, update_bot; a set limit of 0 refused before anything is sent).
// Run under valgrind by tests/c/run.sh. Prints "cpp: N passed, M failed".
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness.h"
#include "roomchat.hpp"

using namespace std::chrono_literals;

namespace {

emulator emu;

// The moved-from and copy rules the header promises, checked by the compiler.
static_assert(!std::is_copy_constructible_v<roomchat::Client>);
static_assert(!std::is_copy_assignable_v<roomchat::Client>);
static_assert(std::is_nothrow_move_constructible_v<roomchat::Client>);
static_assert(!std::is_copy_constructible_v<roomchat::ClientOptions>);
static_assert(std::is_nothrow_move_constructible_v<roomchat::ClientOptions>);
static_assert(!std::is_copy_constructible_v<roomchat::Users>);
static_assert(std::is_nothrow_move_constructible_v<roomchat::Users>);
static_assert(std::is_nothrow_copy_constructible_v<roomchat::Error>);
static_assert(std::is_base_of_v<std::runtime_error, roomchat::Error>);
static_assert(std::is_same_v<std::iterator_traits<roomchat::Users::iterator>::iterator_category,
                             std::input_iterator_tag>);

roomchat::ClientOptions options_for_emulator() {
  roomchat::ClientOptions options(emu.private_key);
  options.base_url(emu.base_url)
      .chat_url(emu.chat_url)
      .public_key(emu.public_key)
      .app_name("cpp-tests/1.0")
      .rate_limit(100000, 60s, false, 60s);
  return options;
}

// A client of the emulator with `retries` retries (and optionally a short overall timeout).
roomchat::Client make_client(std::uint32_t retries, std::chrono::milliseconds overall = 0ms) {
  roomchat::ClientOptions options = options_for_emulator();
  options.retries(retries).timeouts(0ms, overall);
  return roomchat::Client(options);
}

void admin(const char *method, const char *path, const char *body) {
  CHECK(http_request(&emu, method, path, body, nullptr) == 200);
}

std::string admin_get(const char *path) {
  char *body = nullptr;
  CHECK(http_request(&emu, "GET", path, nullptr, &body) == 200);
  std::string text = body ? body : "";
  free(body);
  return text;
}

int journal_count(const std::string &needle) { return count_occurrences(admin_get("/_emulator/journal").c_str(), needle.c_str()); }

// Runs `call`, which must throw roomchat::Error; returns it (code UNKNOWN and a failed check otherwise).
template <typename Call>
roomchat::Error expect_error(Call &&call, roomchat_result code) {
  try {
    call();
  } catch (const roomchat::Error &error) {
    CHECK(error.code() == code);
    if (error.code() != code) fprintf(stderr, "  got %s: %s\n", std::string(error.name()).c_str(), error.what());
    return error;
  }
  CHECK(!"no roomchat::Error was thrown");
  fprintf(stderr, "  expected %s\n", std::string(roomchat::result_name(code)).c_str());
  return roomchat::Error(ROOMCHAT_RESULT_UNKNOWN, "none");
}

void test_version() {
  CHECK(roomchat::version() == std::string_view(roomchat_version()));
  CHECK(!roomchat::version().empty());
  CHECK(roomchat::result_name(ROOMCHAT_RESULT_USER_NOT_FOUND) == "user_not_found");
}

void test_configuration_errors() {
  // Bad settings are reported by the constructor, as a typed error.
  roomchat::Error bad_url = expect_error(
      [] { roomchat::Client client(roomchat::ClientOptions(emu.private_key).base_url("not a url")); },
      ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(bad_url.name() == "configuration");
  CHECK(!bad_url.status());
  CHECK(!bad_url.method());
  // No base URL at all.
  expect_error([] { roomchat::Client client{roomchat::ClientOptions(emu.private_key)}; },
               ROOMCHAT_RESULT_CONFIGURATION);
  // A negative duration is refused as too long, never wrapped into a short one.
  expect_error([] { roomchat::Client client(options_for_emulator().timeouts(-1ms, 0ms)); },
               ROOMCHAT_RESULT_CONFIGURATION);
  // A NUL byte inside a string_view is refused before C could see a shorter string.
  roomchat::Error nul = expect_error(
      [] { roomchat::ClientOptions options(std::string_view("sk_test\0more", 12)); },
      ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(std::string(nul.what()) == "private_key holds a NUL byte");
  // The private key appears in no message.
  roomchat::Error wrong_key = expect_error(
      [] {
        roomchat::ClientOptions options("sk_wrong_key_secret_42");
        options.base_url(emu.base_url).retries(0);
        roomchat::Client(options).list_users();
      },
      ROOMCHAT_RESULT_INVALID_AUTH);
  CHECK(wrong_key.status() == std::optional<std::uint16_t>(401));
  CHECK(std::string(wrong_key.what()).find("sk_wrong_key_secret_42") == std::string::npos);
  CHECK(wrong_key.path() && wrong_key.path()->find("sk_wrong_key_secret_42") == std::string::npos);
}

// ClientOptions::from_env: core's variables and errors; Client::base_url; the default budget wait.
void test_from_env() {
  unsetenv("ROOMCHAT_PRIVATE_KEY");
  setenv("ROOMCHAT_BASE_URL", emu.base_url, 1);
  roomchat::Error unset = expect_error([] { roomchat::ClientOptions::from_env(); }, ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(std::string(unset.what()) == "the environment variable ROOMCHAT_PRIVATE_KEY is not set");
  setenv("ROOMCHAT_PRIVATE_KEY", emu.private_key, 1);
  setenv("ROOMCHAT_APP_NAME", "cpp-env/1.0", 1);
  roomchat::ClientOptions options = roomchat::ClientOptions::from_env();
  unsetenv("ROOMCHAT_PRIVATE_KEY");
  unsetenv("ROOMCHAT_BASE_URL");
  unsetenv("ROOMCHAT_APP_NAME");
  const roomchat::Client client(options.retries(0));
  CHECK(client.base_url() == emu.base_url);
  client.list_users();
  // The one request, its User-Agent in the journal twice: among its headers and as user_agent.
  CHECK(journal_count(" cpp-env/1.0\"") == 2);
  CHECK(roomchat::ClientOptions::default_max_wait(60s) == 62s);
  CHECK(roomchat::ClientOptions::default_max_wait(5s) == 60s);
}

// The setters the other tests do not use, each seen to take effect.
void test_settings() {
  // A response cap: a large answer is refused.
  const roomchat::Client capped(options_for_emulator().retries(0).max_response_bytes(1000));
  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v1/chatrooms\", \"action\": {\"kind\": \"large_body\", "
        "\"bytes\": 5000}}");
  expect_error([&] { capped.list_chat_rooms(); }, ROOMCHAT_RESULT_RESPONSE_TOO_LARGE);
  admin("DELETE", "/_emulator/faults", nullptr);

  // PEM without a certificate, and a SOCKS proxy for a remote host, are refused;
  // no_proxy() and gzip(false) work.
  expect_error([] { roomchat::Client client(options_for_emulator().ca_pem("not a certificate")); },
               ROOMCHAT_RESULT_CONFIGURATION);
  expect_error(
      [] {
        roomchat::Client client(
            roomchat::ClientOptions("sk_other").base_url("https://chat.example.invalid").proxy("socks5://127.0.0.1:1080"));
      },
      ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(roomchat::Client(options_for_emulator().no_proxy().gzip(false)).list_users(1).limit == 1);

  // Plain http:// to a host that is not loopback carries the key only when allowed.
  expect_error([] { roomchat::Client client(roomchat::ClientOptions("sk_other").base_url("http://chat.example.invalid")); },
               ROOMCHAT_RESULT_CONFIGURATION);
  // The refusal names C++'s setter, and no other language's.
  try {
    roomchat::Client client(roomchat::ClientOptions("sk_other").base_url("http://chat.example.invalid"));
    CHECK(false);
  } catch (const roomchat::Error &e) {
    const std::string shown = e.what();
    const std::string want = "use https://, or ClientOptions::allow_insecure_http(true) if you really mean it";
    CHECK(shown.size() > want.size() && shown.compare(shown.size() - want.size(), want.size(), want) == 0);
    CHECK(shown.find("roomchat_client_options_set") == std::string::npos);
    CHECK(shown.find("allow_insecure_http=True") == std::string::npos);
    CHECK(shown.find("allowInsecureHttp") == std::string::npos);
    CHECK(shown.find(" allow_insecure_http(true)") == std::string::npos);
    if (shown.find(want) == std::string::npos) fprintf(stderr, "  message: %s\n", shown.c_str());
  }
  roomchat::Client allowed(
      roomchat::ClientOptions("sk_other").base_url("http://chat.example.invalid").allow_insecure_http(true));
  CHECK(allowed.get() != nullptr);

  // An enum value the C API does not have is refused, not undefined behaviour.
  expect_error([] { roomchat::Client client(options_for_emulator().tls_roots(static_cast<roomchat::TlsRoots>(9))); },
               ROOMCHAT_RESULT_INVALID_ARGUMENT);

  // A Redis budget that cannot be reached, failing closed: nothing is sent.
  // (Another key, so that the emulator key's budget keeps its settings.)
  roomchat::ClientOptions redis("sk_cpp_redis_key");
  redis.base_url(emu.base_url)
      .rate_limit_redis("redis://127.0.0.1:1/0")
      .redis_policy(roomchat::RedisPolicy::FailClosed, 2)
      .redis_timeouts(200ms, 200ms, 1000ms)
      .redis_key_prefix("cpp-tests");
  const roomchat::Client closed(redis);
  const int before = journal_count("\"path\":\"/consumer/api/v2/users\"");
  expect_error([&] { closed.list_users(); }, ROOMCHAT_RESULT_BUDGET_UNAVAILABLE);
  CHECK(journal_count("\"path\":\"/consumer/api/v2/users\"") == before);
  const roomchat::RateLimitState state = closed.rate_limit_state();
  CHECK(state.backend == roomchat::BudgetBackend::Redis);
  CHECK(state.degraded);
}

void test_create_and_list(const roomchat::Client &client) {
  admin("POST", "/_emulator/reset", nullptr);
  admin("POST", "/_emulator/rooms", "{\"roomId\": \"r1\", \"name\": \"Room one\"}");

  roomchat::CreatedUser regular = client.create_user("alice");
  CHECK(regular.username == "alice");
  CHECK(regular.user_id.size() == 24);
  CHECK(!regular.access_token.empty());
  CHECK(!regular.is_moderator);
  CHECK(!regular.chat_room);

  roomchat::CreatedUser all = client.create_user("bob", roomchat::Role::ModeratorOfAllRooms);
  CHECK(all.is_moderator);
  CHECK(!all.chat_room);

  roomchat::CreatedUser room_mod = client.create_user("carol", roomchat::Role::ModeratorOfRoom, "r1");
  CHECK(room_mod.is_moderator);
  CHECK(room_mod.chat_room == std::optional<std::string>("r1"));

  roomchat::CreatedUser extra = client.create_user(
      std::string("dave"), roomchat::Role::Regular, std::nullopt,
      std::string_view(R"({"uniqueUserIdentifier": "crm-4", "email": "dave@example.com"})"));
  CHECK(extra.username == "dave");

  // A moderator of one room needs the room: refused before anything is sent.
  const int posts = journal_count("\"method\":\"POST\",\"path\":\"/consumer/api/v1/user\"");
  roomchat::Error no_room =
      expect_error([&] { client.create_user("erin", roomchat::Role::ModeratorOfRoom); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(no_room.message() == "a room moderator needs chat_room");
  expect_error([&] { client.create_user(std::string_view("er\0in", 5)); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(journal_count("\"method\":\"POST\",\"path\":\"/consumer/api/v1/user\"") == posts);

  roomchat::UserPage page = client.list_users(3, 0);
  CHECK(page.total == 4);
  CHECK(page.limit == 3);
  CHECK(page.skip == 0);
  CHECK(page.size() == 3);
  std::vector<std::string> names;
  for (const roomchat::User &user : page) names.push_back(user.username.value_or("?"));
  CHECK((names == std::vector<std::string>{"alice", "bob", "carol"}));
  CHECK(page[0].id == std::optional<std::string>(regular.user_id));
  CHECK(page[0].is_moderator == std::optional<bool>(false));
  CHECK(page[1].is_moderator == std::optional<bool>(true));
  CHECK(page[2].chat_room == std::optional<std::string>("r1"));
  CHECK(page[0].json.find("\"username\":\"alice\"") != std::string::npos);

  roomchat::UserPage rest = client.list_users(3, 3);
  CHECK(rest.size() == 1 && rest.skip == 3);
  CHECK(rest[0].email == std::optional<std::string>("dave@example.com"));
  CHECK(rest[0].unique_user_identifier == std::optional<std::string>("crm-4"));
  CHECK(!rest[0].chat_room);
  bool threw = false;
  try {
    (void)rest[1];
  } catch (const std::out_of_range &) {
    threw = true;
  }
  CHECK(threw);

  // A limit over 200 is refused by the library: nothing is sent.
  roomchat::Error too_many = expect_error([&] { client.list_users(201); }, ROOMCHAT_RESULT_VALIDATION);
  CHECK(!too_many.status());
}

void test_deactivate(const roomchat::Client &client) {
  roomchat::CreatedUser frank = client.create_user("frank");
  client.create_user("gina", roomchat::Role::Regular, std::nullopt, R"({"uniqueUserIdentifier": "crm-gina"})");
  const std::uint64_t before = client.list_users().total;
  client.deactivate_user(roomchat::UserIdentifier::UserId, frank.user_id);
  client.deactivate_user(roomchat::UserIdentifier::UniqueUserIdentifier, "crm-gina");
  CHECK(client.list_users().total == before - 2);

  roomchat::Error gone = expect_error(
      [&] { client.deactivate_user(roomchat::UserIdentifier::UserId, frank.user_id); }, ROOMCHAT_RESULT_USER_NOT_FOUND);
  CHECK(gone.name() == "user_not_found");
  CHECK(gone.message() == "user not found");
  CHECK(gone.status() == std::optional<std::uint16_t>(400));
  CHECK(gone.method() == std::optional<std::string>("DELETE"));
  CHECK(gone.path() && gone.path()->rfind("/consumer/api/v2/user/deactivate", 0) == 0);
  CHECK(gone.path() && gone.path()->find(emu.private_key) == std::string::npos);
  CHECK(!gone.event_id());
  CHECK(!gone.retry_after());
  CHECK(gone.service_message() == std::optional<std::string>("user not found"));
  CHECK(!gone.service_error() && !gone.service_error_message());
  // Copies share the details.
  roomchat::Error copy = gone;
  CHECK(copy.code() == ROOMCHAT_RESULT_USER_NOT_FOUND && copy.path() == gone.path());
}

void test_users_iteration() {
  admin("POST", "/_emulator/reset", nullptr);
  const roomchat::Client client = make_client(0);

  // An empty account: begin() is end() at once.
  roomchat::Users none = client.users();
  CHECK(none.begin() == none.end());

  admin("POST", "/_emulator/users/seed", "{\"count\": 7}");
  admin("DELETE", "/_emulator/journal", nullptr);
  std::vector<std::string> names;
  for (const roomchat::User &user : client.users(2)) names.push_back(*user.username);
  CHECK(names.size() == 7);
  CHECK(names.front() == "seed-user-1" && names.back() == "seed-user-7");
  // 7 users, 2 a page: 4 requests (the last page is short, so no empty fifth).
  CHECK(journal_count("\"path\":\"/consumer/api/v2/users\"") == 4);

  // A server failure on the second page throws from ++ and ends that loop;
  // a new loop retries that page by itself, without repeating a user.
  roomchat::Users users = client.users(3);
  std::vector<std::string> seen;
  auto it = users.begin();
  seen.push_back(it->username.value_or("?"));
  ++it;
  ++it;
  seen.push_back((*it).username.value_or("?"));
  seen.push_back(it->username.value_or("?"));
  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"respond\", "
        "\"status\": 500, \"body\": \"{\\\"message\\\": \\\"page boom\\\", \\\"eventId\\\": \\\"ev-page-2\\\"}\"}}");
  roomchat::Error failed = expect_error([&] { ++it; }, ROOMCHAT_RESULT_SERVER_ERROR);
  CHECK(failed.event_id() == std::optional<std::string>("ev-page-2"));
  CHECK(failed.status() == std::optional<std::uint16_t>(500));
  CHECK(failed.message() == "page boom");
  CHECK(it == users.end());
  for (const roomchat::User &user : users) seen.push_back(*user.username);
  // seen[1] and seen[2] are the same user (read through * and through ->).
  CHECK(seen.size() == 7);
  if (seen.size() == 7) {
    CHECK(seen[0] == "seed-user-1" && seen[1] == "seed-user-3" && seen[2] == "seed-user-3");
    CHECK(seen[3] == "seed-user-4" && seen[6] == "seed-user-7");
  }

  // A moved-to Users goes on; the moved-from one holds nothing.
  roomchat::Users first = client.users(5);
  CHECK(first.begin()->username == std::optional<std::string>("seed-user-1"));
  roomchat::Users moved = std::move(first);
  CHECK(moved.begin()->username == std::optional<std::string>("seed-user-1"));
  CHECK(first.get() == nullptr);
  expect_error([&] { (void)first.begin(); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
}

void test_messages_rooms_raw(const roomchat::Client &client) {
  admin("POST", "/_emulator/reset", nullptr);
  admin("POST", "/_emulator/rooms", "{\"roomId\": \"r1\", \"name\": \"Room one\"}");
  char *body = nullptr;
  CHECK(http_request(&emu, "POST", "/_emulator/conversations",
                     "{\"roomId\": \"r1\", \"messages\": [{\"messages\": \"hello\", \"user\": {\"username\": \"jon\", "
                     "\"email\": \"jon@example.com\"}}, {\"messages\": \"again\", \"user\": {\"username\": \"ann\"}}]}",
                     &body) == 200);
  char conversation[128] = "";
  CHECK(json_string_field(body, "conversationId", conversation, sizeof conversation));
  free(body);

  for (roomchat::PathForm form : {roomchat::PathForm::Room, roomchat::PathForm::ChatRoom}) {
    std::vector<roomchat::Message> messages = client.conversation_messages("r1", conversation, form);
    CHECK(messages.size() == 2);
    if (messages.size() != 2) continue;
    CHECK(messages[0].text == std::optional<std::string>("hello"));
    CHECK(messages[0].conversation == std::optional<std::string>(conversation));
    CHECK(messages[0].author_username == std::optional<std::string>("jon"));
    CHECK(messages[0].author_email == std::optional<std::string>("jon@example.com"));
    CHECK(!messages[0].author_unique_user_identifier);
    CHECK(messages[0].id && messages[0].created && messages[0].author_id);
    CHECK(messages[1].text == std::optional<std::string>("again"));
    CHECK(!messages[1].author_email);
  }
  CHECK(journal_count(std::string("\"path\":\"/consumer/api/v2/chatroom/r1/conversation/") + conversation +
                      "/messages\"") == 1);
  roomchat::Error unknown = expect_error([&] { client.conversation_messages("r1", "nope"); },
                                         ROOMCHAT_RESULT_NOT_FOUND);
  CHECK(unknown.status() == std::optional<std::uint16_t>(400));

  const std::vector<roomchat::Room> rooms = client.list_chat_rooms();
  CHECK(rooms.size() == 1 && rooms[0].room_id() == std::optional<std::string>("r1"));

  roomchat::RawResponse raw = client.raw_request("GET", "/consumer/api/v1/chatrooms");
  CHECK(raw.status == 200);
  CHECK(raw.body.find("\"roomId\":\"r1\"") != std::string::npos);
  roomchat::RawResponse limited = client.raw_request("GET", "/consumer/api/v2/users", R"([["limit", "1"]])");
  CHECK(limited.body.find("\"limit\":1") != std::string::npos);
  roomchat::RawResponse created =
      client.raw_request("POST", "/consumer/api/v1/user", std::nullopt, R"({"username": "raw"})");
  CHECK(created.body.find("\"username\":\"raw\"") != std::string::npos);
  roomchat::Error no_auth = expect_error(
      [&] { client.raw_request("GET", "/consumer/api/v2/users", std::nullopt, std::nullopt, roomchat::RawAuth::None); },
      ROOMCHAT_RESULT_MISSING_AUTH);
  CHECK(no_auth.status() == std::optional<std::uint16_t>(401));
  expect_error([&] { client.raw_request("GET", "/consumer/api/v2/users", "not json"); },
               ROOMCHAT_RESULT_INVALID_ARGUMENT);

  roomchat::CreatedUser mod = client.create_user("mod", roomchat::Role::ModeratorOfRoom, "r1");
  const std::string url = client.sign_in_url("r1", mod.access_token);
  CHECK(url.rfind(emu.chat_url, 0) == 0);
  CHECK(url.find("/r1?accessToken=") != std::string::npos);
  char *page = nullptr;
  CHECK(http_request(&emu, "GET", url.c_str() + strlen(emu.base_url), nullptr, &page) == 200);
  CHECK(page && strstr(page, "data-moderator=\"true\"") != nullptr);
  free(page);
  const std::string html = client.iframe_html("r1", mod.access_token, "100%", "600");
  CHECK(html.rfind("<iframe src=\"", 0) == 0);
  CHECK(html.find("height=\"600\"") != std::string::npos);
  roomchat::RawResponse valid = client.raw_request("GET", "/consumer/api/v1/validate",
                                                   "[[\"accessToken\", \"" + mod.access_token + "\"]]", std::nullopt,
                                                   roomchat::RawAuth::PublicKey);
  CHECK(valid.body.find("\"valid\":true") != std::string::npos);

  // sign_in_url needs the chat URL option. (The key's budget takes the settings
  // of its latest client: the same rate limit as the others.)
  roomchat::ClientOptions bare(emu.private_key);
  bare.base_url(emu.base_url).rate_limit(100000, 60s, false, 60s);
  const roomchat::Client without_chat_url(bare);
  expect_error([&] { without_chat_url.sign_in_url("r1", mod.access_token); }, ROOMCHAT_RESULT_CONFIGURATION);
}

void test_failures() {
  admin("POST", "/_emulator/reset", nullptr);
  const roomchat::Client client = make_client(2);

  // A server error on a POST: thrown with its eventId, the POST sent once.
  admin("POST", "/_emulator/faults",
        "{\"method\": \"POST\", \"path\": \"/consumer/api/v1/user\", \"action\": {\"kind\": \"respond\", "
        "\"status\": 500, \"body\": \"{\\\"message\\\": \\\"boom\\\", \\\"eventId\\\": \\\"ev-cpp-1\\\"}\"}}");
  roomchat::Error boom = expect_error([&] { client.create_user("twice?"); }, ROOMCHAT_RESULT_SERVER_ERROR);
  CHECK(boom.event_id() == std::optional<std::string>("ev-cpp-1"));
  CHECK(boom.status() == std::optional<std::uint16_t>(500));
  CHECK(boom.method() == std::optional<std::string>("POST"));
  CHECK(journal_count("\"method\":\"POST\",\"path\":\"/consumer/api/v1/user\"") == 1);

  // An answer that is not JSON.
  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v1/chatrooms\", \"times\": 3, \"action\": {\"kind\": \"not_json\"}}");
  expect_error([&] { client.list_chat_rooms(); }, ROOMCHAT_RESULT_DECODE);
  admin("DELETE", "/_emulator/faults", nullptr);

  // A held-back answer: the overall timeout runs out.
  const roomchat::Client quick = make_client(0, 300ms);
  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"delay\", \"ms\": 1500}}");
  roomchat::Error slow = expect_error([&] { quick.list_users(); }, ROOMCHAT_RESULT_TIMEOUT);
  CHECK(!slow.status());
}

// The latest request the emulator journaled: its X-Request-Id ("req_<seq>") and path.
// (An entry's fields come in name order: body, method, path, query, …, seq.)
std::pair<std::string, std::string> last_journaled() {
  const std::string journal = admin_get("/_emulator/journal");
  const std::size_t at = journal.rfind("\"method\":");
  if (at == std::string::npos) return {"", ""};
  char path[512] = "";
  CHECK(json_string_field(journal.c_str() + at, "path", path, sizeof path));
  return {"req_" + std::to_string(json_number_field(journal.c_str() + at, "seq")), path};
}

// A user's life: validate, deactivate, reactivate, invalidate.
void test_access_tokens(const roomchat::Client &client) {
  admin("POST", "/_emulator/reset", nullptr);
  const auto created_at = std::chrono::system_clock::now();
  roomchat::CreatedUser hal = client.create_user("hal", roomchat::Role::Regular, std::nullopt,
                                                 R"({"uniqueUserIdentifier": "crm-hal"})");

  roomchat::TokenUser record = client.validate_access_token(hal.access_token);
  CHECK(record.id == hal.user_id);
  CHECK(record.username == std::optional<std::string>("hal"));
  CHECK(record.is_moderator == std::optional<bool>(false));
  CHECK(!record.chat_room);
  CHECK(record.created && record.updated);
  // iat: the token's issue time, whole seconds, within the moment of creation.
  CHECK(record.iat.has_value());
  if (record.iat) {
    const auto skew = *record.iat - std::chrono::time_point_cast<std::chrono::seconds>(created_at);
    CHECK(skew >= -2s && skew <= 5s);
    CHECK(record.json.find("\"iat\":" + std::to_string(record.iat->time_since_epoch().count())) !=
          std::string::npos);
  }
  CHECK(record.json.find("\"createdUsingApi\":true") != std::string::npos);
  CHECK(journal_count("\"method\":\"POST\",\"path\":\"/consumer/api/v1/user/accessToken/validate\"") == 1);

  // A deactivated user's token does not validate; reactivated, it does again.
  client.deactivate_user(roomchat::UserIdentifier::UserId, hal.user_id);
  roomchat::Error while_deactivated =
      expect_error([&] { client.validate_access_token(hal.access_token); }, ROOMCHAT_RESULT_INVALID_REQUEST);
  CHECK(while_deactivated.message() == "invalid accessToken");
  client.reactivate_user(roomchat::UserIdentifier::UniqueUserIdentifier, "crm-hal");
  CHECK(client.validate_access_token(hal.access_token).id == hal.user_id);
  CHECK(client.list_users().total == 1);
  // Reactivating an active user: no deactivated user has that id.
  roomchat::Error active = expect_error(
      [&] { client.reactivate_user(roomchat::UserIdentifier::UserId, hal.user_id); }, ROOMCHAT_RESULT_USER_NOT_FOUND);
  CHECK(active.status() == std::optional<std::uint16_t>(400));
  CHECK(active.method() == std::optional<std::string>("POST"));
  CHECK(active.path() && active.path()->rfind("/consumer/api/v2/user/reactivate", 0) == 0);

  // Invalidated: refused for good, with the typed error and the service's message.
  client.invalidate_access_token(hal.access_token);
  roomchat::Error invalid =
      expect_error([&] { client.validate_access_token(hal.access_token); }, ROOMCHAT_RESULT_INVALID_REQUEST);
  CHECK(invalid.name() == "invalid_request");
  CHECK(invalid.message() == "invalid accessToken");
  CHECK(invalid.status() == std::optional<std::uint16_t>(400));
  CHECK(invalid.path() && invalid.path()->find(emu.private_key) == std::string::npos);
  expect_error([&] { client.invalidate_access_token(hal.access_token); }, ROOMCHAT_RESULT_INVALID_REQUEST);

  // Refused before anything is sent: an identifier kind the C API does not have,
  // a NUL byte, and validation without the public key.
  const int sent = journal_count("\"method\":\"POST\"");
  expect_error([&] { client.reactivate_user(static_cast<roomchat::UserIdentifier>(7), hal.user_id); },
               ROOMCHAT_RESULT_INVALID_ARGUMENT);
  expect_error([&] { client.invalidate_access_token(std::string_view("to\0ken", 6)); },
               ROOMCHAT_RESULT_INVALID_ARGUMENT);
  roomchat::ClientOptions no_public_key(emu.private_key);
  no_public_key.base_url(emu.base_url).rate_limit(100000, 60s, false, 60s);
  const roomchat::Client without_public_key(no_public_key);
  expect_error([&] { without_public_key.validate_access_token(hal.access_token); }, ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(journal_count("\"method\":\"POST\"") == sent);

  // Reactivate and invalidate are POSTs: never sent again after a 5xx (the client has 2 retries).
  client.deactivate_user(roomchat::UserIdentifier::UserId, hal.user_id);
  admin("DELETE", "/_emulator/journal", nullptr);
  for (const char *path : {"/consumer/api/v2/user/reactivate", "/consumer/api/v1/user/accesstoken/invalidate"}) {
    admin("POST", "/_emulator/faults",
          (std::string("{\"method\": \"POST\", \"path\": \"") + path +
           "\", \"times\": 3, \"action\": {\"kind\": \"respond\", \"status\": 503}}")
              .c_str());
  }
  expect_error([&] { client.reactivate_user(roomchat::UserIdentifier::UserId, hal.user_id); },
               ROOMCHAT_RESULT_SERVER_ERROR);
  roomchat::CreatedUser kim = client.create_user("kim");
  expect_error([&] { client.invalidate_access_token(kim.access_token); }, ROOMCHAT_RESULT_SERVER_ERROR);
  CHECK(journal_count("\"method\":\"POST\",\"path\":\"/consumer/api/v2/user/reactivate\"") == 1);
  CHECK(journal_count("\"method\":\"POST\",\"path\":\"/consumer/api/v1/user/accesstoken/invalidate\"") == 1);
  admin("DELETE", "/_emulator/faults", nullptr);
}

void test_views() {
  admin("POST", "/_emulator/reset", nullptr);
  static_assert(!std::is_copy_constructible_v<roomchat::CallOptions>);
  static_assert(std::is_nothrow_move_constructible_v<roomchat::CallOptions>);

  // A view with no retries makes one attempt on a 503; its parent keeps its 2 retries.
  auto parent = std::make_unique<roomchat::Client>(make_client(2));
  const roomchat::Client once_only = parent->with_options(roomchat::CallOptions().max_retries(0));
  CHECK(once_only.get() != nullptr && once_only.get() != parent->get());
  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"times\": 3, \"action\": {\"kind\": "
        "\"respond\", \"status\": 503}}");
  admin("DELETE", "/_emulator/journal", nullptr);
  roomchat::Error unavailable = expect_error([&] { once_only.list_users(); }, ROOMCHAT_RESULT_SERVER_ERROR);
  CHECK(unavailable.status() == std::optional<std::uint16_t>(503));
  CHECK(journal_count("\"path\":\"/consumer/api/v2/users\"") == 1);
  const roomchat::WithResponse<roomchat::UserPage> retried = parent->list_users_with_response();
  CHECK(retried.meta.attempts == 3);
  CHECK(journal_count("\"path\":\"/consumer/api/v2/users\"") == 4);

  // The view works once the parent is gone; a view of a view adds its own options.
  parent.reset();
  CHECK(once_only.list_users(1).limit == 1);
  const roomchat::Client quick = once_only.with_options(roomchat::CallOptions().timeout(300ms));
  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"delay\", \"ms\": 1500}}");
  expect_error([&] { quick.list_users(); }, ROOMCHAT_RESULT_TIMEOUT);
  admin("DELETE", "/_emulator/faults", nullptr);

  // A view shares its parent's budget: each call counts in both. (A key of its
  // own, so that the count starts at 0; the emulator answers 401, counted too.)
  roomchat::ClientOptions other_key("sk_cpp_view_budget");
  other_key.base_url(emu.base_url).retries(0);
  const roomchat::Client counted(other_key);
  const roomchat::Client counted_view = counted.with_options(roomchat::CallOptions().timeout(5s));
  expect_error([&] { counted_view.list_chat_rooms(); }, ROOMCHAT_RESULT_INVALID_AUTH);
  CHECK(counted.rate_limit_state().used == 1);
  expect_error([&] { counted.list_chat_rooms(); }, ROOMCHAT_RESULT_INVALID_AUTH);
  CHECK(counted_view.rate_limit_state().used == 2);

  // Bad settings are reported by with_options; a moved-from CallOptions holds nothing.
  const roomchat::Client client = make_client(2);
  roomchat::Error zero =
      expect_error([&] { client.with_options(roomchat::CallOptions().timeout(0ms)); }, ROOMCHAT_RESULT_CONFIGURATION);
  CHECK(std::string(zero.what()).find("timeout") != std::string::npos);
  expect_error([&] { client.with_options(roomchat::CallOptions().connect_timeout(-5ms)); },
               ROOMCHAT_RESULT_CONFIGURATION);
  expect_error([&] { client.with_options(roomchat::CallOptions().max_retry_wait(1000000000001ms)); },
               ROOMCHAT_RESULT_CONFIGURATION);
  roomchat::CallOptions options;
  options.timeout(5s).connect_timeout(1s).max_retries(1).max_retry_wait(100ms);
  roomchat::CallOptions taken = std::move(options);
  CHECK(options.get() == nullptr);
  expect_error([&] { options.max_retries(1); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  expect_error([&] { client.with_options(options); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(client.with_options(taken).list_users(1).limit == 1);
  roomchat::Client empty = make_client(0);
  roomchat::Client holder = std::move(empty);
  expect_error([&] { empty.with_options(taken); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
}

// A CancelToken cancels a view's calls from another thread, before or during a call.
void test_cancel_token() {
  admin("POST", "/_emulator/reset", nullptr);
  static_assert(!std::is_copy_constructible_v<roomchat::CancelToken>);
  const roomchat::Client client = make_client(2);
  roomchat::CancelToken before;
  CHECK(!before.cancelled());
  const roomchat::Client early = client.with_options(roomchat::CallOptions().cancel_token(before));
  before.cancel();
  CHECK(before.cancelled());
  admin("DELETE", "/_emulator/journal", nullptr);
  expect_error([&] { early.list_users(); }, ROOMCHAT_RESULT_CANCELLED);
  CHECK(journal_count("\"path\":\"/consumer/api/v2/users\"") == 0);

  // On the wire: the answer is held 30 s; the token is cancelled once the request arrived.
  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"delay\", \"ms\": 8000}}");
  auto token = std::make_unique<roomchat::CancelToken>();
  const roomchat::Client view = client.with_options(roomchat::CallOptions().cancel_token(*token));
  std::thread canceller([&] {
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (journal_count("\"path\":\"/consumer/api/v2/users\"") < 1 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(5ms);
    token->cancel();
  });
  const auto started = std::chrono::steady_clock::now();
  expect_error([&] { view.list_users(); }, ROOMCHAT_RESULT_CANCELLED);
  canceller.join();
  CHECK(std::chrono::steady_clock::now() - started < 6s);
  admin("DELETE", "/_emulator/faults", nullptr);
  // The view keeps the token when the handle is gone: still cancelled.
  token.reset();
  expect_error([&] { view.list_users(); }, ROOMCHAT_RESULT_CANCELLED);
  CHECK(client.list_users(1).limit == 1);
}

// The common checks of the answer to a call answered 200 after `attempts` attempts:
// the request id is the journal's latest request, which went to `path`.
void check_meta(const roomchat::ResponseMeta &meta, std::uint32_t attempts, const std::string &path) {
  const auto [request_id, journaled_path] = last_journaled();
  CHECK(meta.status == 200);
  CHECK(meta.attempts == attempts);
  CHECK(meta.request_id == std::optional<std::string>(request_id));
  CHECK(journaled_path == path);
  if (journaled_path != path) fprintf(stderr, "  journaled %s, wanted %s\n", journaled_path.c_str(), path.c_str());
  CHECK(meta.header("X-Request-Id") == meta.request_id);
  CHECK(meta.header("Date").has_value());
  CHECK(meta.header("date") == meta.header("DATE"));
  CHECK(!meta.header("no-such-header"));
  CHECK(meta.headers.size() >= 3);
  for (const auto &[name, value] : meta.headers) {
    CHECK(name.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string::npos);
    (void)value;
  }
}

void test_with_response(const roomchat::Client &client) {
  admin("POST", "/_emulator/reset", nullptr);
  const std::string users = "/consumer/api/v2/users";

  roomchat::WithResponse<roomchat::UserPage> page = client.list_users_with_response(5, 0);
  check_meta(page.meta, 1, users);
  CHECK(page.value.limit == 5 && page.value.total == 0);
  // After a retry: the second attempt's answer.
  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"respond\", \"status\": "
        "503}}");
  check_meta(client.list_users_with_response().meta, 2, users);

  // Every endpoint.
  roomchat::WithResponse<roomchat::CreatedUser> ivy = client.create_user_with_response(
      "ivy", roomchat::Role::Regular, std::nullopt, R"({"uniqueUserIdentifier": "crm-ivy"})");
  check_meta(ivy.meta, 1, "/consumer/api/v1/user");
  CHECK(ivy.value.username == "ivy");
  check_meta(client.deactivate_user_with_response(roomchat::UserIdentifier::UniqueUserIdentifier, "crm-ivy").meta, 1,
             "/consumer/api/v2/user/deactivate");
  check_meta(client.reactivate_user_with_response(roomchat::UserIdentifier::UserId, ivy.value.user_id).meta, 1,
             "/consumer/api/v2/user/reactivate");
  roomchat::WithResponse<roomchat::TokenUser> record = client.validate_access_token_with_response(ivy.value.access_token);
  check_meta(record.meta, 1, "/consumer/api/v1/user/accessToken/validate");
  CHECK(record.value.username == std::optional<std::string>("ivy"));
  check_meta(client.invalidate_access_token_with_response(ivy.value.access_token).meta, 1,
             "/consumer/api/v1/user/accesstoken/invalidate");
  admin("POST", "/_emulator/rooms", "{\"roomId\": \"r-meta\", \"name\": \"Meta\"}");
  char *body = nullptr;
  CHECK(http_request(&emu, "POST", "/_emulator/conversations",
                     "{\"roomId\": \"r-meta\", \"messages\": [{\"messages\": \"hi\", \"user\": {\"username\": \"ivy\"}}]}",
                     &body) == 200);
  char conversation[128] = "";
  CHECK(body && json_string_field(body, "conversationId", conversation, sizeof conversation));
  free(body);
  roomchat::WithResponse<std::vector<roomchat::Message>> messages =
      client.conversation_messages_with_response("r-meta", conversation);
  check_meta(messages.meta, 1, std::string("/consumer/api/v2/room/r-meta/conversation/") + conversation + "/messages");
  CHECK(messages.value.size() == 1 && messages.value[0].text == std::optional<std::string>("hi"));
  roomchat::WithResponse<std::vector<roomchat::Room>> rooms = client.list_chat_rooms_with_response();
  check_meta(rooms.meta, 1, "/consumer/api/v1/chatrooms");
  CHECK(rooms.value.size() == 1 && rooms.value[0].room_id() == std::optional<std::string>("r-meta"));
  roomchat::WithResponse<roomchat::RawResponse> raw = client.raw_request_with_response("GET", users, R"([["limit", "2"]])");
  check_meta(raw.meta, 1, users);
  CHECK(raw.value.status == 200 && raw.value.body.find("\"limit\":2") != std::string::npos);

  // A failure throws, as the plain call does (and the C answer is not leaked).
  roomchat::Error gone = expect_error(
      [&] { client.deactivate_user_with_response(roomchat::UserIdentifier::UserId, "000000000000000000000000"); },
      ROOMCHAT_RESULT_USER_NOT_FOUND);
  CHECK(gone.status() == std::optional<std::uint16_t>(400));
}

// What a log callback heard, from any thread.
struct Heard {
  std::mutex lock;
  std::vector<std::pair<roomchat::LogLevel, std::string>> lines;
};

roomchat::LogCallback hear_into(const std::shared_ptr<Heard> &heard) {
  return [heard](roomchat::LogLevel level, std::string_view line) {
    const std::lock_guard<std::mutex> guard(heard->lock);
    heard->lines.emplace_back(level, std::string(line));
  };
}

void test_log_callback() {
  admin("POST", "/_emulator/reset", nullptr);
  const std::string users_query = "GET /consumer/api/v2/users?auth=REDACTED&limit=5&skip=0 ";

  // The callback is owned by the options, then shared by the client, its view
  // and its Users: it lives until the last of them, whatever goes first.
  auto heard = std::make_shared<Heard>();
  std::weak_ptr<Heard> alive = heard;
  auto options = std::make_unique<roomchat::ClientOptions>(options_for_emulator());
  options->retries(2).log_callback(hear_into(heard));
  heard.reset();
  auto client = std::make_unique<roomchat::Client>(*options);
  options.reset();
  CHECK(!alive.expired());

  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"respond\", \"status\": "
        "503}}");
  CHECK(client->list_users(5).limit == 5);
  if (auto h = alive.lock()) {
    CHECK(h->lines.size() == 3);
    if (h->lines.size() == 3) {
      CHECK(h->lines[0].first == roomchat::LogLevel::Debug);
      CHECK(h->lines[0].second.rfind(users_query + "-> 503 (attempt 1, ", 0) == 0);
      CHECK(h->lines[1].first == roomchat::LogLevel::Warning);
      CHECK(h->lines[1].second.rfind("retrying " + users_query + "in ", 0) == 0);
      CHECK(h->lines[2].first == roomchat::LogLevel::Debug);
      CHECK(h->lines[2].second.find("-> 200 (attempt 2, ") != std::string::npos);
    }
    for (const auto &line : h->lines) CHECK(line.second.find(emu.private_key) == std::string::npos);
    h->lines.clear();
  }

  // The client gone, a view alone keeps the callback, then a Users alone does.
  auto view = std::make_unique<roomchat::Client>(client->with_options(roomchat::CallOptions().max_retries(0)));
  roomchat::Users users = client->users(1);
  client.reset();
  CHECK(!alive.expired());
  view->list_users(5);
  view.reset();
  CHECK(!alive.expired());
  CHECK(users.begin() == users.end());  // an empty account: one request, logged
  if (auto h = alive.lock()) {
    CHECK(h->lines.size() == 2);
    if (h->lines.size() == 2) {
      CHECK(h->lines[0].second.rfind(users_query + "-> 200 (attempt 1, ", 0) == 0);
      CHECK(h->lines[1].second.rfind("GET /consumer/api/v2/users?auth=REDACTED&limit=1&skip=0 -> 200", 0) == 0);
    }
  }
  users = roomchat::Users(nullptr);
  CHECK(alive.expired());

  // The other way round: the Users gone first, the view still logs.
  heard = std::make_shared<Heard>();
  alive = heard;
  client = std::make_unique<roomchat::Client>(options_for_emulator().log_callback(hear_into(heard)));
  heard.reset();
  users = client->users(1);
  view = std::make_unique<roomchat::Client>(client->with_options(roomchat::CallOptions()));
  client.reset();
  users = roomchat::Users(nullptr);
  CHECK(!alive.expired());
  view->list_users(5);
  if (auto h = alive.lock()) CHECK(h->lines.size() == 1);
  view.reset();
  CHECK(alive.expired());

  // An iteration made through the C API from the Client's C object (not a
  // Users of the wrapper) keeps the callback too: the library owns it.
  heard = std::make_shared<Heard>();
  alive = heard;
  client = std::make_unique<roomchat::Client>(options_for_emulator().log_callback(hear_into(heard)));
  heard.reset();
  roomchat_users_iter *raw_iter = nullptr;
  CHECK(roomchat_client_users_iter(client->get(), 1, &raw_iter, nullptr) == ROOMCHAT_RESULT_OK);
  client.reset();
  CHECK(!alive.expired());
  {
    roomchat::Users adopted(raw_iter);
    CHECK(adopted.begin() == adopted.end());
    if (auto h = alive.lock()) CHECK(h->lines.size() == 1);
  }
  CHECK(alive.expired());

  // Warnings only; a callback that throws loses its line, never the call.
  auto warnings = std::make_shared<Heard>();
  int thrown = 0;
  const roomchat::Client quiet(options_for_emulator().retries(2).log_callback(hear_into(warnings),
                                                                               roomchat::LogLevel::Warning));
  const roomchat::Client throwing(options_for_emulator().retries(2).log_callback(
      [&thrown](roomchat::LogLevel, std::string_view) {
        thrown++;
        throw std::runtime_error("a failing logger");
      }));
  const char *one_503 =
      "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"respond\", \"status\": "
      "503}}";
  admin("POST", "/_emulator/faults", one_503);
  CHECK(quiet.list_users(5).limit == 5);
  CHECK(warnings->lines.size() == 1 && warnings->lines[0].first == roomchat::LogLevel::Warning);
  admin("POST", "/_emulator/faults", one_503);
  CHECK(throwing.list_users(5).limit == 5);
  CHECK(thrown == 3);

  // An empty callback turns it off; a level that is not a LogLevel is refused by the constructor.
  auto off = std::make_shared<Heard>();
  const roomchat::Client silent(options_for_emulator().log_callback(hear_into(off)).log_callback(nullptr));
  silent.list_users(5);
  CHECK(off->lines.empty());
  roomchat::Error level = expect_error(
      [&] { roomchat::Client bad(options_for_emulator().log_callback(hear_into(off), static_cast<roomchat::LogLevel>(7))); },
      ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(std::string(level.what()).find("roomchat_log_level") != std::string::npos);
}

// The observer (issue 45) through the wrapper: the reports of a call, a header from
// the client and one from the attempt's start both seen by the emulator, refused
// headers throwing, an observer's exception ending its report only, and the
// std::function owned by the library until the last holder goes.
void test_observer() {
  struct Seen {
    std::vector<std::uint32_t> kinds;
    std::vector<std::uint16_t> statuses;
    std::string operation, url_full;
    roomchat_result refused = ROOMCHAT_RESULT_OK;
  };
  auto seen = std::make_shared<Seen>();
  std::weak_ptr<Seen> alive = seen;
  auto options = std::make_unique<roomchat::ClientOptions>(options_for_emulator());
  options->header("x-team", "payments").observer([seen](const roomchat_observation &o, roomchat::AttemptHeaders *h) {
    seen->kinds.push_back(static_cast<std::uint32_t>(o.kind));
    seen->statuses.push_back(o.status);
    seen->operation = o.operation;
    seen->url_full = o.url_full;
    if (h) {
      h->set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
      try {
        h->set("Content-Length", "1");
      } catch (const roomchat::Error &error) {
        seen->refused = error.code();
      }
    }
  });
  seen.reset();
  auto client = std::make_unique<roomchat::Client>(*options);
  options.reset();
  admin("DELETE", "/_emulator/journal", nullptr);
  client->list_users(5);
  if (auto s = alive.lock()) {
    CHECK((s->kinds == std::vector<std::uint32_t>{ROOMCHAT_OBSERVATION_KIND_ATTEMPT_START,
                                                  ROOMCHAT_OBSERVATION_KIND_ATTEMPT_END,
                                                  ROOMCHAT_OBSERVATION_KIND_CALL_END}));
    CHECK((s->statuses == std::vector<std::uint16_t>{0, 200, 200}));
    CHECK(s->operation == "list_users");
    CHECK(s->url_full.find("auth=REDACTED") != std::string::npos);
    CHECK(s->url_full.find(emu.private_key) == std::string::npos);
    CHECK(s->refused == ROOMCHAT_RESULT_VALIDATION);
  }
  CHECK(journal_count("[\"x-team\",\"payments\"]") == 1);
  CHECK(journal_count("[\"traceparent\",\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"]") == 1);
  CHECK(!alive.expired());
  client.reset();
  CHECK(alive.expired());

  // Refused on the client: thrown at once; the Client constructor reports it too.
  roomchat::ClientOptions refused = options_for_emulator();
  expect_error([&] { refused.header("Host", "evil.example"); }, ROOMCHAT_RESULT_VALIDATION);
  expect_error([&] { refused.header("x-bad", "a\r\nb"); }, ROOMCHAT_RESULT_VALIDATION);
  expect_error([&] { refused.header("x-nul", std::string_view("a\0b", 3)); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  expect_error([&] { roomchat::Client bad(refused); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);

  // An observer that throws: the call goes on; propagation off: no traceparent sent.
  int reports = 0;
  const roomchat::Client throwing(options_for_emulator().propagate_trace_context(false).observer(
      [&reports](const roomchat_observation &, roomchat::AttemptHeaders *h) {
        reports++;
        if (h) h->set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        throw std::runtime_error("an observer's bug");
      }));
  admin("DELETE", "/_emulator/journal", nullptr);
  CHECK(throwing.list_users(5).limit == 5);
  CHECK(reports == 3);
  CHECK(journal_count("traceparent") == 0);
  // An empty observer turns it off.
  const roomchat::Client quiet(options_for_emulator().observer([&reports](const roomchat_observation &,
                                                                          roomchat::AttemptHeaders *) { reports++; })
                                   .observer(nullptr));
  quiet.list_users(5);
  CHECK(reports == 3);
}

void test_moves(roomchat::Client &client) {
  roomchat::Client moved = std::move(client);
  CHECK(moved.get() != nullptr);
  CHECK(client.get() == nullptr);
  CHECK(moved.list_users(1).limit == 1);
  roomchat::Error empty = expect_error([&] { client.list_users(); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(!empty.status());
  client = std::move(moved);
  CHECK(client.list_users(1).limit == 1);

  roomchat::ClientOptions options = options_for_emulator();
  roomchat::ClientOptions taken = std::move(options);
  expect_error([&] { options.base_url(emu.base_url); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  expect_error([&] { roomchat::Client from_nothing(options); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(roomchat::Client(taken).list_users(1).limit == 1);
}

void test_threads(const roomchat::Client &client) {
  admin("DELETE", "/_emulator/journal", nullptr);
  constexpr int kThreads = 6, kCalls = 5;
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&client, &ok, t] {
      for (int i = 0; i < kCalls; i++) {
        try {
          if (client.list_users(1).limit == 1) ok[static_cast<std::size_t>(t)]++;
        } catch (const roomchat::Error &) {
        }
      }
    });
  }
  for (std::thread &thread : threads) thread.join();
  int total = 0;
  for (int n : ok) total += n;
  CHECK(total == kThreads * kCalls);
  CHECK(journal_count("\"path\":\"/consumer/api/v2/users\"") == kThreads * kCalls);
}

// Last: a 429 holds every client of the key off.
void test_rate_limited(const roomchat::Client &client) {
  roomchat::RateLimitState before = client.rate_limit_state();
  // 100000 per 60 s, less the core's margins: 2 % of the requests, 1 s more window.
  CHECK(before.limit == 98000);
  CHECK(before.window == 61s);
  CHECK(before.used >= 1 && before.remaining + before.used == before.limit);
  CHECK(before.backend == roomchat::BudgetBackend::Local);
  CHECK(!before.degraded);
  CHECK(!before.blocked_for);

  admin("POST", "/_emulator/faults",
        "{\"method\": \"GET\", \"path\": \"/consumer/api/v2/users\", \"action\": {\"kind\": \"respond\", "
        "\"status\": 429, \"headers\": {\"Retry-After\": \"120\"}}}");
  roomchat::Error limited = expect_error([&] { client.list_users(); }, ROOMCHAT_RESULT_RATE_LIMITED);
  CHECK(limited.retry_after() == std::optional<std::chrono::milliseconds>(120000ms));
  CHECK(limited.status() == std::optional<std::uint16_t>(429));
  roomchat::RateLimitState after = client.rate_limit_state();
  CHECK(after.blocked_for && *after.blocked_for > 100s);
}


// The generated operations (roomchat_operations.hpp): eject all users and
// update bot, their records (nested, unknown fields in extra_json), their
// parameters and declared limits, the exact paths, and moved-from clients.
void test_generated_operations(const roomchat::Client &client) {
  admin("POST", "/_emulator/rooms", "{\"roomId\": \"bbNiVFoXm\", \"name\": \"General\"}");
  const int ejects = journal_count("\"method\":\"POST\",\"path\":\"/api/v1/chatRoom/bbNiVFoXm/eject-all\"");
  roomchat::Acknowledged ack = client.eject_all_users("bbNiVFoXm");
  CHECK(ack.success() == std::optional<bool>(true));
  CHECK(!ack.message());
  CHECK(ack.extra_json() == "{}");
  CHECK(journal_count("\"method\":\"POST\",\"path\":\"/api/v1/chatRoom/bbNiVFoXm/eject-all\"") == ejects + 1);
  roomchat::WithResponse<roomchat::Acknowledged> acked = client.eject_all_users_with_response("bbNiVFoXm");
  CHECK(acked.value.success() == std::optional<bool>(true));
  CHECK(acked.meta.status == 200 && acked.meta.attempts == 1);
  roomchat::Error unknown_room =
      expect_error([&] { client.eject_all_users("nope"); }, ROOMCHAT_RESULT_NOT_FOUND);
  CHECK(unknown_room.status() == std::optional<std::uint16_t>(404));
  CHECK(unknown_room.message() == "invalid chatroom id");

  char *seeded = nullptr;
  CHECK(http_request(&emu, "POST", "/_emulator/bots",
                     "{\"name\": \"cpp-helper\", \"webhookURL\": \"https://hooks.example/b\", "
                     "\"trigger\": \"mention\", \"messageVisibility\": \"public\"}",
                     &seeded) == 200);
  char id[64] = "";
  CHECK(seeded && json_string_field(seeded, "_id", id, sizeof id));
  free(seeded);
  const std::string bot_id = id;
  const std::string bot_path = "/consumer/api/v2/bot/" + bot_id;
  const std::string put = "\"method\":\"PUT\",\"path\":\"" + bot_path + "\"";

  roomchat::UpdateBot change;
  change.description = "answers questions";
  change.message_history_limit = 20;
  change.enabled = false;
  roomchat::BotAnswer answer = client.update_bot(bot_id, change);
  CHECK(answer.success() == std::optional<bool>(true));
  CHECK(answer.extra_json() == "{}");
  CHECK(answer.bot().has_value());
  if (answer.bot()) {
    const roomchat::Bot &bot = *answer.bot();
    CHECK(bot.id() == std::optional<std::string>(bot_id));
    CHECK(bot.name() == std::optional<std::string>("cpp-helper"));
    CHECK(bot.description() == std::optional<std::string>("answers questions"));
    CHECK(bot.webhook_url() == std::optional<std::string>("https://hooks.example/b"));
    CHECK(bot.message_history_limit() == std::optional<std::int64_t>(20));
    CHECK(bot.enabled() == std::optional<bool>(false));
    CHECK(bot.is_allowed_in_all_chat_rooms() == std::optional<bool>(false));
    CHECK(bot.extra_json() == "{}");
  }
  CHECK(journal_count(put) == 1);
  // No params: none sent; the _with_response twin.
  roomchat::WithResponse<roomchat::BotAnswer> same = client.update_bot_with_response(bot_id);
  CHECK(same.meta.status == 200);
  CHECK(same.value.bot() && same.value.bot()->description() == std::optional<std::string>("answers questions"));
  CHECK(journal_count(put) == 2);

  // The service's errors.
  roomchat::UpdateBot private_on_every_message;
  private_on_every_message.trigger = "message";
  private_on_every_message.message_visibility = "private";
  roomchat::Error refused =
      expect_error([&] { client.update_bot(bot_id, private_on_every_message); }, ROOMCHAT_RESULT_INVALID_REQUEST);
  CHECK(refused.message().find("trigger on every message") != std::string_view::npos);
  roomchat::Error unknown_bot =
      expect_error([&] { client.update_bot("000000000000000000000000"); }, ROOMCHAT_RESULT_NOT_FOUND);
  CHECK(unknown_bot.status() == std::optional<std::uint16_t>(401));

  // Fields the records do not name are kept.
  admin("POST", "/_emulator/faults",
        ("{\"method\": \"PUT\", \"path\": \"" + bot_path +
         "\", \"action\": {\"kind\": \"respond\", \"status\": 200, \"body\": {\"success\": true, "
         "\"requestId\": \"r-1\", \"bot\": {\"name\": \"cpp-helper\", \"avatar\": \"a.png\"}}}}")
            .c_str());
  roomchat::BotAnswer extra = client.update_bot(bot_id);
  CHECK(extra.extra_json() == "{\"requestId\":\"r-1\"}");
  CHECK(extra.bot() && extra.bot()->extra_json() == "{\"avatar\":\"a.png\"}");
  CHECK(extra.bot() && !extra.bot()->enabled() && !extra.bot()->message_history_limit());

  // Refused before anything is sent: the declared limits, a NUL byte, a moved-from client.
  const int sent = journal_count("\"method\":\"PUT\"");
  roomchat::UpdateBot long_name;
  long_name.name = std::string(101, 'x');
  expect_error([&] { client.update_bot(bot_id, long_name); }, ROOMCHAT_RESULT_VALIDATION);
  roomchat::UpdateBot too_many;
  too_many.message_history_limit = 101;
  expect_error([&] { client.update_bot(bot_id, too_many); }, ROOMCHAT_RESULT_VALIDATION);
  roomchat::UpdateBot nul;
  nul.metadata = std::string("a\0b", 3);
  expect_error([&] { client.update_bot(bot_id, nul); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  expect_error([&] { client.eject_all_users(std::string_view("bb\0x", 4)); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  roomchat::Client moved = make_client(0);
  roomchat::Client taker = std::move(moved);
  expect_error([&] { moved.update_bot(bot_id, change); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  expect_error([&] { moved.eject_all_users("bbNiVFoXm"); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);
  CHECK(journal_count("\"method\":\"PUT\"") == sent);
}

// The whole documented API in C++ (issue 29), a smoke: typed answers of the
// new methods, required arguments, switch/JSON/extra params, lists, NOT_FOUND,
// and the Items range over a room's history (its break, its resume).
void test_documented_api(const roomchat::Client &client) {
  roomchat::CreateChatRoom room_params;
  room_params.name = "cpp webinar";
  room_params.enable_channels = true;
  room_params.customization = R"({"sidebarColor": "#123456"})";
  room_params.extra_json = R"({"mainColor": "#336699"})";
  const roomchat::RoomAnswer created = client.create_chat_room(room_params);
  CHECK(created.success() == std::optional<bool>(true) && created.room_id());
  const std::string room_id = created.room_id().value_or("");
  const roomchat::Room room = client.get_chat_room(room_id);
  CHECK(room.name() == std::optional<std::string>("cpp webinar") && room.enable_channels() == std::optional<bool>(true));
  CHECK(room.extra_json().find("\"mainColor\":\"#336699\"") != std::string::npos);
  roomchat::CreateChatRoom bad_json;
  bad_json.customization = "{nope";
  expect_error([&] { client.create_chat_room(bad_json); }, ROOMCHAT_RESULT_INVALID_ARGUMENT);

  const roomchat::ProvisionedUser host = client.create_user_v2("cpp-host", "Ada");
  CHECK(host.access_token() && host.user() && host.user()->username() == std::optional<std::string>("Ada"));
  const roomchat::Member member = client.set_member(room_id, "cpp-host", "moderator");
  CHECK(member.role_name() == std::optional<std::string>("moderator"));
  const std::vector<roomchat::RoomName> rooms = client.user_rooms("cpp-host");
  CHECK(rooms.size() == 1 && rooms[0].room_id() == std::optional<std::string>(room_id));

  // A record's accessors on a temporary (issue 37): its field moves out by value, so a
  // range-for over it or a reference bound to it does not dangle (valgrind saw freed memory
  // read when they returned references); on an lvalue they still return references.
  client.create_bot("cpp-bot", "https://bots.example/hook");
  std::size_t bots = 0;
  for (auto &b : client.list_bots().bots()) bots += b.name() == std::optional<std::string>("cpp-bot");
  CHECK(bots == 1);
  const std::optional<std::string> &host_id = client.get_user("cpp-host").unique_user_identifier();
  CHECK(host_id == std::optional<std::string>("cpp-host"));
  const std::string &extra = client.get_user("cpp-host").extra_json();
  CHECK(!extra.empty() && extra[0] == '{');
  static_assert(!std::is_reference_v<decltype(std::declval<roomchat::BotList>().bots())>);
  static_assert(std::is_reference_v<decltype(std::declval<const roomchat::BotList &>().bots())>);

  roomchat::SendRoomMessage as_system;
  as_system.system_message = true;
  admin("POST", "/_emulator/messages",
        (std::string(R"({"roomId": ")") + room_id + R"(", "count": 5, "system": true})").c_str());
  client.send_room_message(room_id, "the end", as_system);
  const roomchat::MessagePage page = client.room_messages(room_id);
  CHECK(page.total_records() == std::optional<std::int64_t>(6) && page.messages().size() == 6);
  CHECK(page.messages().back().message() == std::optional<std::string>("the end"));
  CHECK(page.messages().back().user() &&
        page.messages().back().user()->username() == std::optional<std::string>("system"));

  // The range: two records a page; a break, then a new iteration resumed from next_skip().
  roomchat::RoomMessages by_two;
  by_two.limit = 2;
  roomchat::RoomMessagesItems history = client.iter_room_messages(room_id, by_two);
  std::vector<std::string> texts;
  for (const roomchat::ChatMessage &message : history) {
    texts.push_back(message.message().value_or(""));
    if (texts.size() == 3) break;
  }
  CHECK(texts.size() == 3 && texts[0] == "message 1" && history.next_skip() == 3);
  by_two.skip = history.next_skip();
  for (const roomchat::ChatMessage &message : client.iter_room_messages(room_id, by_two))
    texts.push_back(message.message().value_or(""));
  CHECK(texts.size() == 6 && texts[3] == "message 4" && texts[5] == "the end");
  std::size_t members = 0;
  for (const roomchat::Member &each : client.iter_list_members(room_id)) members += each.role_name() == std::optional<std::string>("moderator");
  CHECK(members == 1);

  client.delete_chat_room(room_id);
  const roomchat::Error gone = expect_error([&] { client.get_chat_room(room_id); }, ROOMCHAT_RESULT_NOT_FOUND);
  CHECK(gone.status() == std::optional<std::uint16_t>(404) && gone.name() == "not_found");
  roomchat::RoomMessagesItems missing = client.iter_room_messages(room_id);
  expect_error([&] { missing.begin(); }, ROOMCHAT_RESULT_NOT_FOUND);
  expect_error([&] { missing.begin(); }, ROOMCHAT_RESULT_NOT_FOUND);
}

// A set limit of 0 is a value, never "not set" (issue 44): C's setters read 0 as unset, so the
// wrapper refuses it itself, before anything is sent, as Rust, Python and Node refuse it
// (ROOMCHAT_RESULT_VALIDATION, core's message naming the operation), in every method that
// takes such a param: the call, its _with_response form and its iterator.
void test_set_zero_limit_is_refused(const roomchat::Client &client) {
  roomchat::CreateChatRoom with_channels;
  with_channels.name = "cpp limits";
  with_channels.enable_channels = true;
  const std::string room_id = client.create_chat_room(with_channels).room_id().value_or("");
  const std::string channel_id = client.create_channel(room_id, "cpp-limits").id().value_or("");
  CHECK(!room_id.empty() && !channel_id.empty());
  admin("POST", "/_emulator/messages", (std::string(R"({"roomId": ")") + room_id + R"(", "count": 3})").c_str());
  const int sent = journal_count(room_id);

  const auto refused = [](roomchat::Error error, const char *message) {
    CHECK(error.name() == "validation" && std::string(error.what()) == message);
    if (std::string(error.what()) != message) fprintf(stderr, "  got \"%s\"\n", error.what());
    CHECK(!error.status() && !error.method() && !error.path());
  };
  const char *room_messages = "room_messages: limit must be between 1 and 18446744073709551615, not 0";
  roomchat::RoomMessages zero;
  zero.limit = 0;
  refused(expect_error([&] { client.room_messages(room_id, zero); }, ROOMCHAT_RESULT_VALIDATION), room_messages);
  refused(expect_error([&] { client.room_messages_with_response(room_id, zero); }, ROOMCHAT_RESULT_VALIDATION),
          room_messages);
  refused(expect_error([&] { client.iter_room_messages(room_id, zero); }, ROOMCHAT_RESULT_VALIDATION), room_messages);
  const char *channel_messages = "channel_messages: limit must be between 1 and 18446744073709551615, not 0";
  roomchat::ChannelMessages channel_zero;
  channel_zero.limit = 0;
  refused(expect_error([&] { client.channel_messages(room_id, channel_id, channel_zero); }, ROOMCHAT_RESULT_VALIDATION),
          channel_messages);
  refused(expect_error([&] { client.iter_channel_messages(room_id, channel_id, channel_zero); },
                       ROOMCHAT_RESULT_VALIDATION),
          channel_messages);
  roomchat::ListMembers members_zero;
  members_zero.limit = 0;
  refused(expect_error([&] { client.list_members(room_id, members_zero); }, ROOMCHAT_RESULT_VALIDATION),
          "list_members: limit must be between 1 and 200, not 0");
  refused(expect_error([&] { client.iter_list_members(room_id, members_zero); }, ROOMCHAT_RESULT_VALIDATION),
          "list_members: limit must be between 1 and 200, not 0");
  // Over the maximum the C call refuses it (core's check): the same kind, the same words.
  roomchat::ListMembers members_over;
  members_over.limit = 201;
  refused(expect_error([&] { client.list_members(room_id, members_over); }, ROOMCHAT_RESULT_VALIDATION),
          "list_members: limit must be between 1 and 200, not 201");
  CHECK(journal_count(room_id) == sent);

  // The least values are sent as given: limit 1, and skip 0 (whose least value is 0).
  roomchat::RoomMessages one;
  one.limit = 1;
  one.skip = 0;
  const roomchat::MessagePage page = client.room_messages(room_id, one);
  CHECK(page.messages().size() == 1 && page.limit() == std::optional<std::int64_t>(1));
  CHECK(journal_count(room_id + "/messages\",\"query\":\"auth=REDACTED&limit=1&skip=0\"") == 1);
  CHECK(journal_count(room_id) == sent + 1);
  client.delete_chat_room(room_id);
}

}  // namespace

int main(int argc, char **argv) {
  const char *args[] = {"--rate-limit", "100000/60s", nullptr};
  if (argc < 2 || !emulator_start(&emu, argv[1], args)) {
    fprintf(stderr, "usage: %s <roomchat-emulator>\n", argv[0]);
    return 2;
  }
  try {
    test_version();
    test_configuration_errors();
    test_from_env();
    test_settings();
    roomchat::Client client = make_client(2);
    test_create_and_list(client);
    test_deactivate(client);
    test_users_iteration();
    test_messages_rooms_raw(client);
    test_failures();
    test_access_tokens(client);
    test_views();
    test_cancel_token();
    test_with_response(client);
    test_log_callback();
    test_observer();
    test_moves(client);
    test_threads(client);
    test_generated_operations(client);
    test_documented_api(client);
    test_set_zero_limit_is_refused(client);
    test_rate_limited(client);
  } catch (const roomchat::Error &error) {
    fprintf(stderr, "unexpected roomchat::Error %s: %s\n", std::string(error.name()).c_str(), error.what());
    CHECK(!"unexpected exception");
  }
  CHECK(emulator_stop(&emu));
  printf("cpp: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
