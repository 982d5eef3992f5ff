# GPUVET_SANITIZE=ON builds gpuvet and its tests with AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer; `make test` runs the suite a second time in such a tree (build-asan).
# The dlopen()ed driver test doubles stay uninstrumented there (tests/fakes/CMakeLists.txt): they
# run inside gpuvet's instrumented process, whose runtime comes first and intercepts their calls.
option(GPUVET_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
set(GPUVET_TEST_LAUNCHER "")
# Tests that run gpuvet end to end scale their time limit by this: sanitized code runs slower.
set(GPUVET_TEST_TIMEOUT_FACTOR 1)
if(GPUVET_SANITIZE)
  set(GPUVET_TEST_TIMEOUT_FACTOR 3)
  set(_gpuvet_sanitizers -fsanitize=address,undefined -fno-sanitize-recover=all)
  # -O1 (after the build type's -O3, so it wins): the level ASan recommends, and the sanitized
  # tree compiles about twice as fast. -g1: line tables for readable reports at little build cost;
  # frame pointers for full stacks.
  add_compile_options(${_gpuvet_sanitizers} -O1 -fno-omit-frame-pointer -g1)
  # The instrumentation makes GCC 12 report "maybe uninitialized" std::function members inside
  # libstdc++'s <regex> (fake_cuda.cpp, unit tests); GCC's manual warns that sanitizers raise the
  # rate of false -Wmaybe-uninitialized. Here only, that one stays a warning; the plain tree
  # still holds the same sources to -Werror for it.
  add_compile_options(-Wno-error=maybe-uninitialized)
  add_link_options(${_gpuvet_sanitizers})
  # Every test runs through this wrapper: it makes any sanitizer report fatal and fails the test
  # even when the report came from a child process whose exit code the test expected to be non-zero.
  set(GPUVET_TEST_LAUNCHER ${CMAKE_SOURCE_DIR}/tests/sanitize/checked)
  # Prefixed by CMake to add_test(COMMAND <target>) and gtest_discover_tests (tests run as targets).
  set(CMAKE_CROSSCOMPILING_EMULATOR ${GPUVET_TEST_LAUNCHER})
endif()
