#include "conformance/internal/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace permitcheck::conformance::internal {
namespace {

// Process groups of running clients, for the signal handler. A slot holds 0 when free.
constexpr std::size_t kMaxGroups = 64;
std::array<std::atomic<pid_t>, kMaxGroups> g_groups{};
std::atomic<bool> g_handler_installed{false};

// The report written on a signal (set_interrupt_report). Every one set stays allocated until
// the process ends, so the handler never reads freed memory; a run sets a few dozen.
struct InterruptReport {
  std::string text;
  std::string path;  // empty: standard output
};
std::atomic<const InterruptReport*> g_report{nullptr};

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// SIGINT/SIGTERM of conform itself: kill every client group; then, with a report set, write it
// and exit 128 + the signal, else die of the same signal. Only async-signal-safe calls (kill,
// open, write, _exit, signal, raise).
void on_terminate(int sig) {
  for (auto& slot : g_groups) {
    const pid_t g = slot.load();
    if (g > 0) ::kill(-g, SIGKILL);
  }
  if (const InterruptReport* r = g_report.load()) {
    const int fd = r->path.empty()
                       ? STDOUT_FILENO
                       : ::open(r->path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) write_all(fd, r->text.data(), r->text.size());
    ::_exit(128 + sig);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handler_once() {
  bool expected = false;
  if (!g_handler_installed.compare_exchange_strong(expected, true)) return;
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // respect an ignored signal (nohup)
    struct sigaction sa {};
    sa.sa_handler = on_terminate;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

void register_group(pid_t g) {
  for (auto& slot : g_groups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, g)) return;
  }
}

void unregister_group(pid_t g) {
  for (auto& slot : g_groups) {
    pid_t expected = g;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace

void set_interrupt_report(std::string text, std::string path) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<InterruptReport>> kept;
  std::lock_guard<std::mutex> lock(mu);
  kept.push_back(std::make_unique<InterruptReport>(
      InterruptReport{.text = std::move(text), .path = std::move(path)}));
  g_report.store(kept.back().get());
  install_handler_once();
}

std::string signal_name(int sig) {
  if (const char* abbrev = ::sigabbrev_np(sig)) return absl::StrCat("SIG", abbrev);
  return absl::StrCat("signal ", sig);
}

ClientProcess::~ClientProcess() {
  stop(std::chrono::milliseconds(500));
  if (!keep_log_ && !log_path_.empty()) ::unlink(log_path_.c_str());
}

absl::Status ClientProcess::start(const std::string& command, const std::string& log_path) {
  log_path_ = log_path;
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot open ", log_path, ": ", std::strerror(errno)));
  }
  install_handler_once();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
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
  register_group(pid);
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

bool ClientProcess::group_alive() const {
  if (pid_ < 0) return false;
  if (::kill(-pid_, 0) != 0 && errno != EPERM) return false;
  // kill() also finds zombies, which may never be reaped when init does not reap orphans:
  // look for a member that is not a zombie.
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return true;
  bool alive = false;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300];
    std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses: parse after the last ')'.
    const char* rp = std::strrchr(buf, ')');
    char state = 0;
    int ppid = 0, pgrp = 0;
    if (rp == nullptr || std::sscanf(rp + 1, " %c %d %d", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pid_ && state != 'Z' && state != 'X') {
      alive = true;
      break;
    }
  }
  ::closedir(dir);
  return alive;
}

std::optional<std::string> ClientProcess::exit_description() {
  if (running() || pid_ < 0) return std::nullopt;
  if (WIFSIGNALED(status_)) return absl::StrCat("killed by ", signal_name(WTERMSIG(status_)));
  if (WIFEXITED(status_)) {
    const int code = WEXITSTATUS(status_);
    // sh -c reports a command killed by signal n as status 128 + n.
    if (code > 128 && code < 128 + 65) {
      return absl::StrCat("killed by ", signal_name(code - 128), " (exit status ", code,
                          " of its shell)");
    }
    return absl::StrCat("exited with status ", code);
  }
  return "ended";
}

bool ClientProcess::crashed() {
  if (pid_ < 0 || running() || stopped_by_us_) return false;
  return !(WIFEXITED(status_) && WEXITSTATUS(status_) == 0);
}

void ClientProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ < 0) return;
  const bool leader = running();
  if (!leader && !group_alive()) {
    unregister_group(pid_);
    return;
  }
  if (leader) stopped_by_us_ = true;
  ::kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    running();  // reap the leader so that it does not keep the group alive as a zombie
    if (!group_alive()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid_, SIGKILL);
  if (!reaped_) {
    int status = 0;
    if (::waitpid(pid_, &status, 0) == pid_) status_ = status;
    reaped_ = true;
  }
  // Members killed above are reparented and reaped by init; wait (bounded) until they are gone.
  const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (group_alive() && std::chrono::steady_clock::now() < gone_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  unregister_group(pid_);
}

std::string ClientProcess::log_tail(std::size_t max_bytes) const {
  const int fd = ::open(log_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st {};
  std::string out;
  if (::fstat(fd, &st) == 0) {
    const off_t size = st.st_size;
    const off_t from = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
    out.resize(static_cast<std::size_t>(size - from));
    std::size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::pread(fd, out.data() + got, out.size() - got, from + static_cast<off_t>(got));
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    out.resize(got);
  }
  ::close(fd);
  return out;
}

}  // namespace permitcheck::conformance::internal
