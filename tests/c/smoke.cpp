// C++17 smoke test: the header compiles as C++, and RAII wrappers over the
// C handles work against the emulator.
#include <memory>
#include <string>

#include "harness.h"
#include "roomchat.h"

namespace {
struct Deleter {
  void operator()(roomchat_client *p) const { roomchat_client_free(p); }
  void operator()(roomchat_client_options *p) const { roomchat_client_options_free(p); }
  void operator()(roomchat_created_user *p) const { roomchat_created_user_free(p); }
  void operator()(roomchat_user_page *p) const { roomchat_user_page_free(p); }
  void operator()(roomchat_error *p) const { roomchat_error_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Deleter>;
}  // namespace

int main(int argc, char **argv) {
  emulator emu;
  const char *args[] = {nullptr};
  if (argc < 2 || !emulator_start(&emu, argv[1], args)) return 2;
  {
    roomchat_client_options *raw_options = nullptr;
    CHECK(roomchat_client_options_new(emu.private_key, &raw_options, nullptr) == ROOMCHAT_RESULT_OK);
    Owned<roomchat_client_options> options(raw_options);
    roomchat_client_options_set_base_url(options.get(), emu.base_url);

    roomchat_client *raw_client = nullptr;
    CHECK(roomchat_client_new(options.get(), &raw_client, nullptr) == ROOMCHAT_RESULT_OK);
    Owned<roomchat_client> client(raw_client);

    roomchat_created_user *raw_user = nullptr;
    CHECK(roomchat_client_create_user(client.get(), "cpp", ROOMCHAT_ROLE_MODERATOR_OF_ALL_ROOMS, nullptr, nullptr,
                                      &raw_user, nullptr) == ROOMCHAT_RESULT_OK);
    Owned<roomchat_created_user> user(raw_user);
    CHECK(std::string(roomchat_created_user_username(user.get())) == "cpp");
    CHECK(roomchat_created_user_is_moderator(user.get()));

    roomchat_user_page *raw_page = nullptr;
    CHECK(roomchat_client_list_users(client.get(), 10, 0, &raw_page, nullptr) == ROOMCHAT_RESULT_OK);
    Owned<roomchat_user_page> page(raw_page);
    CHECK(roomchat_user_page_total(page.get()) == 1);

    roomchat_error *raw_error = nullptr;
    CHECK(roomchat_client_deactivate_user(client.get(), ROOMCHAT_USER_IDENTIFIER_USER_ID, "nobody", &raw_error) ==
          ROOMCHAT_RESULT_USER_NOT_FOUND);
    Owned<roomchat_error> error(raw_error);
    CHECK(std::string(roomchat_error_message(error.get())) == "user not found");
  }
  CHECK(emulator_stop(&emu));
  printf("C++: %d passed, %d failed\n", harness_passed, harness_failed);
  return harness_failed == 0 ? 0 : 1;
}
