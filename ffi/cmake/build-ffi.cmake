# Run by the root CMakeLists.txt at build time (`cmake -P`, every input a -D):
# builds roomchat-ffi with cargo, then stages what `cmake --install` copies:
# the libraries (with the soname's links), roomchat.pc and roomchatConfig.cmake.
cmake_minimum_required(VERSION 3.18)

set(cargo_args rustc --release --locked -p roomchat-ffi --lib)
if(RUST_TARGET)
  list(APPEND cargo_args --target "${RUST_TARGET}")
endif()
# The static library's system libraries, as rustc knows them for this target;
# cargo replays the note when the build is already fresh.
list(APPEND cargo_args -- --print native-static-libs)
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env ${CARGO_ENV} "${CARGO}" ${cargo_args}
  WORKING_DIRECTORY "${SOURCE_DIR}"
  ERROR_VARIABLE cargo_stderr
  ECHO_ERROR_VARIABLE
  RESULT_VARIABLE cargo_status)
if(NOT cargo_status EQUAL 0)
  message(FATAL_ERROR "cargo failed (${cargo_status})")
endif()
if(NOT cargo_stderr MATCHES "native-static-libs: ([^\r\n]*)")
  message(FATAL_ERROR "cargo printed no native-static-libs line")
endif()
string(STRIP "${CMAKE_MATCH_1}" native_static_libs)

# The same libraries as CMake link items: -lfoo is foo, -framework X stays one
# item, MSVC's /defaultlib: entries are left to the compiler that links.
separate_arguments(native_items UNIX_COMMAND "${native_static_libs}")
set(cmake_link_items "")
set(framework_next FALSE)
foreach(item IN LISTS native_items)
  if(framework_next)
    list(APPEND cmake_link_items "-framework ${item}")
    set(framework_next FALSE)
  elseif(item STREQUAL "-framework")
    set(framework_next TRUE)
  elseif(item MATCHES "^-l(.+)$")
    list(APPEND cmake_link_items "${CMAKE_MATCH_1}")
  elseif(NOT item MATCHES "^/defaultlib:")
    list(APPEND cmake_link_items "${item}")
  endif()
endforeach()

set(libdir "${STAGE}/${LIBDIR}")
file(MAKE_DIRECTORY "${libdir}/pkgconfig" "${libdir}/cmake/roomchat" "${STAGE}/${SHARED_DIR}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${CARGO_OUT}/${CARGO_SHARED}" "${STAGE}/${SHARED_DIR}/${SHARED_FILE}"
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${CARGO_OUT}/${CARGO_STATIC}" "${libdir}/${STATIC_FILE}"
  COMMAND_ERROR_IS_FATAL ANY)
if(IMPLIB_FILE)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${CARGO_OUT}/${CARGO_IMPLIB}" "${libdir}/${IMPLIB_FILE}"
    COMMAND_ERROR_IS_FATAL ANY)
endif()
# libroomchat.so -> libroomchat.so.0 -> libroomchat.so.X.Y.Z (and the same for .dylib).
set(link_target "${SHARED_FILE}")
foreach(link IN LISTS LINKS)
  file(REMOVE "${libdir}/${link}")
  file(CREATE_LINK "${link_target}" "${libdir}/${link}" SYMBOLIC)
  set(link_target "${link}")
endforeach()

# roomchat.pc: relocatable (the prefix is found from the file's own place).
set(PC_PREFIX "\${pcfiledir}/${PC_TO_PREFIX}")
set(PC_LIBDIR "\${prefix}/${LIBDIR}")
set(PC_INCLUDEDIR "\${prefix}/${INCLUDEDIR}")
set(LIBS_PRIVATE "${native_static_libs}")
configure_file("${PC_IN}" "${libdir}/pkgconfig/roomchat.pc" @ONLY)

set(ROOMCHAT_NATIVE_STATIC_LIBS "${cmake_link_items}")
# Kept as written in the comment configure_package_config_file left.
set(PACKAGE_INIT "@PACKAGE_INIT@")
configure_file("${CONFIG_IN}" "${libdir}/cmake/roomchat/roomchatConfig.cmake" @ONLY)
