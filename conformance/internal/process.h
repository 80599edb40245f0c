// A client process under test: started with /bin/sh -c in its own process group, output to a
// log file, stopped with SIGTERM then SIGKILL to the whole group. Every wait is bounded.
//
//   ClientProcess p;
//   if (!p.start("my-consumer --url pulsar://127.0.0.1:6650", "/tmp/c.log").ok()) ...;
//   p.stop(std::chrono::milliseconds(500));  // the group is gone when this returns
//
// While a ClientProcess runs, its group is registered with a SIGINT/SIGTERM handler of this
// process: when conform itself is interrupted, every running client group gets SIGKILL before
// conform ends with that signal, so no client is left behind.
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_PROCESS_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace permitcheck::conformance::internal {

class ClientProcess {
 public:
  ClientProcess() = default;
  // Stops the group (see stop) and removes the log unless keep_log(true) was called.
  ~ClientProcess();
  ClientProcess(const ClientProcess&) = delete;
  ClientProcess& operator=(const ClientProcess&) = delete;

  // Starts `command` (a shell command line); stdout and stderr go to `log_path`.
  absl::Status start(const std::string& command, const std::string& log_path);

  // Whether the leader is still running; when it has exited, its status is kept.
  bool running();
  // Whether any process of the group is still alive (the leader may be gone).
  bool group_alive() const;
  // "exited with status 1", "killed by SIGSEGV"; nullopt while running. When the leader is a
  // shell that reports its command's death by a signal (status 128 + n), that signal is named.
  std::optional<std::string> exit_description();
  // Exited on its own (not stopped by us) with a non-zero status or a signal.
  bool crashed();

  // SIGTERM to the group, wait up to `grace` for the whole group to end, then SIGKILL to the
  // group, whether its leader is alive or not. Idempotent.
  void stop(std::chrono::milliseconds grace);

  // The last `max_bytes` of the log; reads at most that many bytes, whatever the log's size.
  std::string log_tail(std::size_t max_bytes) const;

  // Keep the log file after destruction (default: it is removed).
  void keep_log(bool keep) { keep_log_ = keep; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  bool stopped_by_us_ = false;
  bool keep_log_ = false;
  int status_ = 0;
  std::string log_path_;
};

// From now on, SIGINT or SIGTERM of this process (after killing every client group) writes
// `text` to `path` (empty: standard output) and exits 128 + the signal. Thread-safe; the
// latest text wins. Installs the handler if no client has yet.
void set_interrupt_report(std::string text, std::string path);

// The signal name of `sig` ("SIGSEGV"), or "signal N".
std::string signal_name(int sig);

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_PROCESS_H_
