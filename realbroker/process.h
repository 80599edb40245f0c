// A child process in its own process group (the standalone broker's JVM, a client under test),
// its output in a log file, stopped with SIGTERM to the whole group and SIGKILL after a grace
// period. Every wait is bounded.
//
//   GroupProcess p;
//   absl::Status s = p.start({"java", "-cp", cp, "Main"}, "/tmp/broker.log");
//   p.stop(std::chrono::seconds(5));   // the group is gone when this returns
//
// Guarantees: while a GroupProcess runs, its group is registered with a SIGINT/SIGTERM handler
// of this process (installed on first start): when permitcheck is interrupted, every running
// group gets SIGKILL before permitcheck ends by that signal. A TempDir is removed when it is
// destroyed, or by a watchdog (its own process group) when this process is gone, so an
// interrupted or killed run leaves no temporary files either.
#ifndef PERMITCHECK_REALBROKER_PROCESS_H_
#define PERMITCHECK_REALBROKER_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace permitcheck::realbroker {

class GroupProcess {
 public:
  GroupProcess() = default;
  ~GroupProcess();  // stop(2 s)
  GroupProcess(const GroupProcess&) = delete;
  GroupProcess& operator=(const GroupProcess&) = delete;

  // Starts `argv` (argv[0] looked up on PATH) with stdout and stderr appended to `log_path`.
  absl::Status start(const std::vector<std::string>& argv, const std::string& log_path);
  // A shell command line (/bin/sh -c).
  absl::Status start_shell(const std::string& command, const std::string& log_path);

  bool running();             // the leader has not exited
  bool group_alive() const;   // a process of the group is alive (the leader may be gone)
  pid_t pid() const { return pid_; }
  // "exited with status 1", "killed by SIGSEGV"; nullopt while running or never started.
  std::optional<std::string> exit_description();
  // Exited on its own (not stopped by us) with a non-zero status or a signal.
  bool crashed();

  // SIGTERM to the group, up to `grace` for all of it to end, then SIGKILL. Idempotent.
  void stop(std::chrono::milliseconds grace);

  std::string log_tail(std::size_t max_bytes) const;

 private:
  void reap(bool block);
  pid_t pid_ = -1;
  bool reaped_ = false;
  bool stopped_by_us_ = false;
  int status_ = 0;
  std::string log_path_;
};

// A fresh directory under $TMPDIR (or /tmp), removed with its content on destruction, or by
// a watchdog process once this process is gone.
class TempDir {
 public:
  static absl::StatusOr<std::unique_ptr<TempDir>> create(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  TempDir(std::string path, pid_t watchdog) : path_(std::move(path)), watchdog_(watchdog) {}
  std::string path_;
  pid_t watchdog_ = -1;
};

}  // namespace permitcheck::realbroker

#endif  // PERMITCHECK_REALBROKER_PROCESS_H_
