// A check run in a forked child whose heap is limited (setrlimit RLIMIT_DATA), shared by the
// memory tests of several modules (tests/spec/monitor_*_test.cc, tests/validate/
// validate_memory_test.cc, tests/conformance/hostile_client_test.cc): the limit applies to the
// child only, and a std::bad_alloc that escapes the check is an exit code, not a crashed test
// binary.
//
//   EXPECT_EQ(child_testing::run_under_heap_limit(64, [] { return work() ? 0 : 1; }), 0)
//       << child_testing::explain_exit("1 work failed");
//
// The check must not use GoogleTest assertions (they would report in the child): it returns
// an exit code, 0 for success, and leaves 3 and 4 to this helper.
#ifndef PERMITCHECK_TESTS_TESTING_LIMITED_CHILD_H_
#define PERMITCHECK_TESTS_TESTING_LIMITED_CHILD_H_

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <new>
#include <string>
#include <string_view>

namespace permitcheck::child_testing {

inline constexpr int kOutOfMemory = 3;     // std::bad_alloc escaped the check
inline constexpr int kSetrlimitFailed = 4;
inline constexpr int kForkOrWaitFailed = -1;
inline constexpr int kKilledBase = 100;    // 100 + the signal that killed the child

// Runs `check` in a child whose heap is limited to `heap_mib` MiB and returns the child's exit
// code: what `check` returned, kOutOfMemory, kSetrlimitFailed, kForkOrWaitFailed, or
// kKilledBase + signal.
template <typename Check>
int run_under_heap_limit(std::size_t heap_mib, Check check) {
  const pid_t child = ::fork();
  if (child < 0) return kForkOrWaitFailed;
  if (child == 0) {
    const rlim_t bytes = static_cast<rlim_t>(heap_mib) << 20;
    const rlimit limit{.rlim_cur = bytes, .rlim_max = bytes};
    if (::setrlimit(RLIMIT_DATA, &limit) != 0) ::_exit(kSetrlimitFailed);
    try {
      ::_exit(check());
    } catch (const std::bad_alloc&) {
      ::_exit(kOutOfMemory);
    }
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child) return kForkOrWaitFailed;
  if (!WIFEXITED(status)) return kKilledBase + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// The failure message for an exit code of run_under_heap_limit: the check's own codes
// (`codes`, as "1 violations, 5 events missing") and this helper's.
inline std::string explain_exit(std::string_view codes) {
  return std::string(codes) + ", 3 out of memory (bad_alloc), 4 setrlimit, -1 fork or wait "
                              "failed, 100+ killed by that signal";
}

}  // namespace permitcheck::child_testing

#endif  // PERMITCHECK_TESTS_TESTING_LIMITED_CHILD_H_
