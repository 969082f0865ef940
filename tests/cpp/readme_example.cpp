#include <cstdlib>
#include <iostream>
#include <roomchat.hpp>

int main() {
  const char *base_url = std::getenv("ROOMCHAT_BASE_URL");
  const char *key = std::getenv("ROOMCHAT_PRIVATE_KEY");
  try {
    roomchat::ClientOptions options(key ? key : "sk_test_emulator_private_key_0001");
    options.base_url(base_url ? base_url : "http://127.0.0.1:8080");
    const roomchat::Client client(options);  // thread-safe: share it

    roomchat::CreatedUser ada = client.create_user("ada", roomchat::Role::ModeratorOfAllRooms, std::nullopt,
                                                   R"({"uniqueUserIdentifier": "crm-42"})");
    std::cout << "created " << ada.username << " (" << ada.user_id << ")\n";

    for (const roomchat::User &user : client.users()) {  // every user, a page at a time
      std::cout << "  " << user.username.value_or("?") << (user.is_moderator.value_or(false) ? " (moderator)" : "")
                << "\n";
    }

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
