#include <chrono>
#include <cstdlib>
#include <iostream>
#include <roomchat.hpp>

int main() {
  const char *base_url = std::getenv("ROOMCHAT_BASE_URL");
  const char *key = std::getenv("ROOMCHAT_PRIVATE_KEY");
  const char *public_key = std::getenv("ROOMCHAT_PUBLIC_KEY");
  try {
    roomchat::ClientOptions options(key ? key : "sk_test_emulator_private_key_0001");
    options.base_url(base_url ? base_url : "http://127.0.0.1:8080")
        .public_key(public_key ? public_key : "pk_test_emulator_public_key_0001")  // validates access tokens
        .log_callback([](roomchat::LogLevel, std::string_view line) { std::clog << "[roomchat] " << line << "\n"; },
                      roomchat::LogLevel::Warning);  // retries and waits; the key never appears
    const roomchat::Client client(options);  // thread-safe: share it

    roomchat::CreatedUser ada = client.create_user("ada", roomchat::Role::ModeratorOfAllRooms, std::nullopt,
                                                   R"({"uniqueUserIdentifier": "crm-42"})");
    std::cout << "created " << ada.username << " (" << ada.user_id << ")\n";

    for (const roomchat::User &user : client.users()) {  // every user, a page at a time
      std::cout << "  " << user.username.value_or("?") << (user.is_moderator.value_or(false) ? " (moderator)" : "")
                << "\n";
    }

    // The user a token signs in, with the answer it came from.
    roomchat::WithResponse<roomchat::TokenUser> record = client.validate_access_token_with_response(ada.access_token);
    std::cout << "the token signs in " << record.value.username.value_or("?") << " (HTTP " << record.meta.status
              << ", request " << record.meta.request_id.value_or("?") << ")\n";

    // A view of the client with its own settings: one attempt, 5 s at most.
    const roomchat::Client once =
        client.with_options(roomchat::CallOptions().max_retries(0).timeout(std::chrono::seconds(5)));
    once.invalidate_access_token(ada.access_token);

    try {
      client.deactivate_user(roomchat::UserIdentifier::UniqueUserIdentifier, "crm-43");
    } catch (const roomchat::Error &error) {
      if (error.code() != ROOMCHAT_RESULT_USER_NOT_FOUND) throw;
      std::cout << "crm-43: " << error.name() << " (HTTP " << error.status().value_or(0) << ")\n";
    }
  } catch (const roomchat::Error &error) {
    std::cerr << error.name() << ": " << error.what() << "\n";
    return 1;
  }
  return 0;
}
