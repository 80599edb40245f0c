// A client process under test: started with /bin/sh -c in its own process group, output to a
// log file, stopped with SIGTERM then SIGKILL. Every wait is bounded.
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_PROCESS_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace permitcheck::conformance::internal {

class ClientProcess {
 public:
  ClientProcess() = default;
  ~ClientProcess() { stop(std::chrono::milliseconds(500)); }
  ClientProcess(const ClientProcess&) = delete;
  ClientProcess& operator=(const ClientProcess&) = delete;

  // Starts `command` (a shell command line); stdout and stderr go to `log_path`.
  absl::Status start(const std::string& command, const std::string& log_path);

  // Whether it is still running; when it has exited, its status is kept.
  bool running();
  // "exited with status 1", "killed by signal 11"; nullopt while running.
  std::optional<std::string> exit_description();
  // Exited on its own (not stopped by us) with a non-zero status or a signal.
  bool crashed();

  // SIGTERM to the group, wait up to `grace`, then SIGKILL. Idempotent.
  void stop(std::chrono::milliseconds grace);

  // The last `max_bytes` of the log.
  std::string log_tail(std::size_t max_bytes) const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  bool stopped_by_us_ = false;
  int status_ = 0;
  std::string log_path_;
};

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_PROCESS_H_
