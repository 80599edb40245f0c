#include "conformance/internal/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"

namespace permitcheck::conformance::internal {

absl::Status ClientProcess::start(const std::string& command, const std::string& log_path) {
  log_path_ = log_path;
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot open ", log_path, ": ", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(fd);
  pid_ = pid;
  reaped_ = false;
  stopped_by_us_ = false;
  return absl::OkStatus();
}

bool ClientProcess::running() {
  if (pid_ < 0 || reaped_) return false;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
    return false;
  }
  return r == 0;
}

namespace {

// "SIGSEGV" for 11; "signal 77" for a number without a name.
std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? absl::StrCat("SIG", abbrev) : absl::StrCat("signal ", sig);
}

}  // namespace

std::optional<std::string> ClientProcess::exit_description() {
  if (running() || pid_ < 0) return std::nullopt;
  if (WIFEXITED(status_)) {
    const int code = WEXITSTATUS(status_);
    // The client runs under /bin/sh -c: a shell reports its child's death by signal n as
    // exit status 128 + n.
    if (code > 128 && code < 128 + NSIG) {
      return absl::StrCat("killed by ", signal_name(code - 128), " (the shell's exit status ",
                          code, ")");
    }
    return absl::StrCat("exited with status ", code);
  }
  if (WIFSIGNALED(status_)) return absl::StrCat("killed by ", signal_name(WTERMSIG(status_)));
  return "ended";
}

bool ClientProcess::crashed() {
  if (pid_ < 0 || running() || stopped_by_us_) return false;
  return !(WIFEXITED(status_) && WEXITSTATUS(status_) == 0);
}

void ClientProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ < 0 || !running()) return;
  stopped_by_us_ = true;
  ::kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  reaped_ = true;
  status_ = status;
}

std::string ClientProcess::log_tail(std::size_t max_bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_bytes) s = s.substr(s.size() - max_bytes);
  return s;
}

}  // namespace permitcheck::conformance::internal
