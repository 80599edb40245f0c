#include "realbroker/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"

namespace permitcheck::realbroker {
namespace {

using std::chrono::milliseconds;

// Process groups running, for the signal handler. A slot holds 0 when free.
constexpr std::size_t kMaxGroups = 64;
std::array<std::atomic<pid_t>, kMaxGroups> g_groups{};
std::atomic<bool> g_handler_installed{false};

// SIGINT/SIGTERM of permitcheck: kill every group, then die of the same signal. Only
// async-signal-safe calls (kill, signal, raise).
void on_terminate(int sig) {
  for (auto& slot : g_groups) {
    const pid_t g = slot.load();
    if (g > 0) ::kill(-g, SIGKILL);
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
    if (old.sa_handler == SIG_IGN) continue;  // an ignored signal stays ignored (nohup)
    struct sigaction sa {};
    sa.sa_handler = on_terminate;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

void set_group(pid_t from, pid_t to) {
  for (auto& slot : g_groups) {
    pid_t expected = from;
    if (slot.compare_exchange_strong(expected, to)) return;
  }
}

std::string describe(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* abbrev = ::sigabbrev_np(WTERMSIG(status));
    return abbrev ? absl::StrCat("killed by SIG", abbrev)
                  : absl::StrCat("killed by signal ", WTERMSIG(status));
  }
  return "ended";
}

// The child's side of a fork: own group, output to the log, exec. Never returns.
[[noreturn]] void exec_child(const std::vector<std::string>& argv, const std::string& log) {
  ::setpgid(0, 0);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
  }
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  ::_exit(127);
}

}  // namespace

GroupProcess::~GroupProcess() { stop(milliseconds(2000)); }

absl::Status GroupProcess::start(const std::vector<std::string>& argv,
                                 const std::string& log_path) {
  if (pid_ > 0) return absl::FailedPreconditionError("process already started");
  if (argv.empty()) return absl::InvalidArgumentError("no command");
  install_handler_once();
  log_path_ = log_path;
  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) exec_child(argv, log_path);
  ::setpgid(pid, pid);  // also here: the group exists before anyone signals it
  pid_ = pid;
  set_group(0, pid);
  return absl::OkStatus();
}

absl::Status GroupProcess::start_shell(const std::string& command, const std::string& log_path) {
  return start({"/bin/sh", "-c", command}, log_path);
}

void GroupProcess::reap(bool block) {
  if (pid_ <= 0 || reaped_) return;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
  }
}

bool GroupProcess::running() {
  reap(false);
  return pid_ > 0 && !reaped_;
}

bool GroupProcess::group_alive() const { return pid_ > 0 && ::kill(-pid_, 0) == 0; }

std::optional<std::string> GroupProcess::exit_description() {
  if (pid_ <= 0 || running()) return std::nullopt;
  return describe(status_);
}

bool GroupProcess::crashed() {
  if (pid_ <= 0 || running() || stopped_by_us_) return false;
  return !(WIFEXITED(status_) && WEXITSTATUS(status_) == 0);
}

void GroupProcess::stop(milliseconds grace) {
  if (pid_ <= 0) return;
  if (!reaped_ || group_alive()) {
    if (running()) stopped_by_us_ = true;
    ::kill(-pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (group_alive() && std::chrono::steady_clock::now() < deadline) {
      reap(false);
      std::this_thread::sleep_for(milliseconds(20));
    }
    if (group_alive()) ::kill(-pid_, SIGKILL);
    reap(true);
    // SIGKILL cannot be refused; the bound only guards against a process stuck in the kernel.
    for (int i = 0; i < 500 && group_alive(); ++i) std::this_thread::sleep_for(milliseconds(10));
  }
  set_group(pid_, 0);
}

std::string GroupProcess::log_tail(std::size_t max_bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > static_cast<std::streamoff>(max_bytes)
                                  ? size - static_cast<std::streamoff>(max_bytes)
                                  : 0;
  in.seekg(from);
  std::string out(static_cast<std::size_t>(size - from), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

absl::StatusOr<std::unique_ptr<TempDir>> TempDir::create(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/", prefix, "XXXXXX");
  if (::mkdtemp(templ.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("mkdtemp ", templ, ": ", std::strerror(errno)));
  }
  // The watchdog: its own group (so the signal handler's SIGKILL of other groups spares it),
  // it removes the directory once this process is gone.
  const std::string script = absl::StrCat("while kill -0 ", ::getpid(),
                                          " 2>/dev/null; do sleep 0.5; done; rm -rf '", templ, "'");
  const pid_t pid = ::fork();
  if (pid == 0) exec_child({"/bin/sh", "-c", script}, "/dev/null");
  return std::unique_ptr<TempDir>(new TempDir(templ, pid));
}

TempDir::~TempDir() {
  if (watchdog_ > 0) {
    ::kill(-watchdog_, SIGKILL);
    ::waitpid(watchdog_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace permitcheck::realbroker
