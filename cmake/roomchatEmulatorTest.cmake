# roomchat_add_emulator_test: a CTest test that runs with its own roomchat emulator.
#
#   include(roomchatEmulatorTest)   # installed beside roomchatConfig.cmake
#   roomchat_add_emulator_test(NAME <name> COMMAND <command> [<arg>...]
#                              [EMULATOR <path>] [EMULATOR_ARGS <arg>...]
#                              [SEED <file>] [WORKING_DIRECTORY <dir>])
#
# Before the command runs, an emulator starts on a free loopback port, and the
# command finds it in its environment:
#   ROOMCHAT_BASE_URL, ROOMCHAT_CHAT_URL, ROOMCHAT_PRIVATE_KEY,
#   ROOMCHAT_PUBLIC_KEY, ROOMCHAT_ADMIN_URL (the admin API: seeding, faults,
#   the request journal), and ROOMCHAT_CA_FILE with EMULATOR_ARGS --tls.
# The test's result is the command's exit code; the emulator is stopped after
# it (and stops by itself if the test is killed: it watches its parent). Each
# test has its own emulator, so `ctest -j` runs them side by side.
#
# SEED names a JSON file (relative to the current source directory) of admin
# requests the emulator applies before the test starts, e.g.
#   [{"path": "/rooms", "body": {"roomId": "webinar", "name": "Webinar"}},
#    {"path": "/messages", "body": {"roomId": "webinar", "count": 500}},
#    {"path": "/channels", "body": {"roomId": "webinar", "channelName": "Q&A"}},
#    {"path": "/members", "body": {"roomId": "webinar", "uniqueUserIdentifier": "host", "roleName": "moderator"}}]
# (the emulator's `--seed FILE`; the admin API's paths and bodies are in its README).
#
# The emulator executable is EMULATOR, else the ROOMCHAT_EMULATOR cache
# variable (found on PATH as `roomchat-emulator` when not set), else, when the
# test runs, the ROOMCHAT_EMULATOR environment variable or `roomchat-emulator`
# on PATH. `pip install roomchat-emulator` or `npm install roomchat-emulator`
# provides it on Linux x86_64 and aarch64. COMMAND's first word may name an
# executable target. Needs a POSIX shell (the launcher is
# roomchat-emulator-launch.sh, beside this file).

include_guard(GLOBAL)

set(_roomchat_emulator_launcher "${CMAKE_CURRENT_LIST_DIR}/roomchat-emulator-launch.sh")
find_program(ROOMCHAT_EMULATOR roomchat-emulator DOC "The roomchat emulator executable (roomchat_add_emulator_test)")

function(roomchat_add_emulator_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;EMULATOR;WORKING_DIRECTORY;SEED" "COMMAND;EMULATOR_ARGS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "roomchat_add_emulator_test: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_NAME OR NOT arg_COMMAND)
    message(FATAL_ERROR "roomchat_add_emulator_test: NAME and COMMAND are required")
  endif()
  set(emulator "${arg_EMULATOR}")
  if(NOT emulator AND ROOMCHAT_EMULATOR)
    set(emulator "${ROOMCHAT_EMULATOR}")
  endif()
  # An executable target as the command: its file, as add_test does for its own COMMAND.
  list(POP_FRONT arg_COMMAND program)
  if(TARGET "${program}")
    set(program "$<TARGET_FILE:${program}>")
  endif()
  if(arg_SEED)
    get_filename_component(seed "${arg_SEED}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND arg_EMULATOR_ARGS --seed "${seed}")
  endif()
  list(LENGTH arg_EMULATOR_ARGS emulator_argc)
  set(working_directory)
  if(arg_WORKING_DIRECTORY)
    set(working_directory WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}")
  endif()
  # The launcher takes: the emulator (empty: found when the test runs), how many
  # emulator arguments follow, those, then the command.
  add_test(NAME "${arg_NAME}"
    COMMAND sh "${_roomchat_emulator_launcher}" "${emulator}" ${emulator_argc} ${arg_EMULATOR_ARGS}
            "${program}" ${arg_COMMAND}
    ${working_directory})
endfunction()
