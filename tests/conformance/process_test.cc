// ClientProcess: the client under test is always stopped as a whole group, its death by a
// signal is named, and its log is read only at its tail and removed unless kept.
#include "conformance/internal/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace permitcheck::conformance::internal {
namespace {

using std::chrono::milliseconds;

std::string temp_log(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("permitcheck-process-test-") + name + "-" + std::to_string(::getpid()) + ".log"))
      .string();
}

// Members of process group `pgid` that are not zombies (orphaned zombies may linger where init
// does not reap them).
int live_members(pid_t pgid) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const auto rp = line.rfind(')');
    if (rp == std::string::npos) continue;
    char state = 0;
    int ppid = 0, pgrp = 0;
    if (std::sscanf(line.c_str() + rp + 1, " %c %d %d", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') ++n;
  }
  return n;
}

bool wait_exit(ClientProcess& p, milliseconds max) {
  const auto until = std::chrono::steady_clock::now() + max;
  while (p.running()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

TEST(ClientProcess, StopKillsAGroupThatIgnoresSigterm) {
  ClientProcess p;
  ASSERT_TRUE(p.start("trap '' TERM; sleep 30; sleep 30", temp_log("ignore")).ok());
  std::this_thread::sleep_for(milliseconds(100));
  ASSERT_TRUE(p.group_alive());
  const auto t0 = std::chrono::steady_clock::now();
  p.stop(milliseconds(200));
  EXPECT_FALSE(p.group_alive());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
}

TEST(ClientProcess, StopKillsTheGroupAfterItsLeaderExited) {
  ClientProcess p;
  // The shell leaves a background child in its group and exits at once.
  ASSERT_TRUE(p.start("trap '' TERM; sleep 30 & exit 0", temp_log("orphan")).ok());
  ASSERT_TRUE(wait_exit(p, milliseconds(5000)));
  ASSERT_TRUE(p.group_alive()) << "the background sleep should outlive its shell";
  p.stop(milliseconds(100));
  EXPECT_FALSE(p.group_alive());
}

TEST(ClientProcess, DeathBySignalIsNamedAlsoUnderAShell) {
  ClientProcess direct;
  ASSERT_TRUE(direct.start("kill -SEGV $$", temp_log("segv")).ok());
  ASSERT_TRUE(wait_exit(direct, milliseconds(5000)));
  EXPECT_TRUE(direct.crashed());
  EXPECT_EQ(direct.exit_description().value_or(""), "killed by SIGSEGV");

  ClientProcess nested;
  ASSERT_TRUE(nested.start("sh -c 'kill -SEGV $$'; exit $?", temp_log("nested")).ok());
  ASSERT_TRUE(wait_exit(nested, milliseconds(5000)));
  EXPECT_TRUE(nested.crashed());
  EXPECT_NE(nested.exit_description().value_or("").find("killed by SIGSEGV"), std::string::npos)
      << nested.exit_description().value_or("");

  ClientProcess plain;
  ASSERT_TRUE(plain.start("exit 3", temp_log("exit3")).ok());
  ASSERT_TRUE(wait_exit(plain, milliseconds(5000)));
  EXPECT_EQ(plain.exit_description().value_or(""), "exited with status 3");
}

TEST(ClientProcess, LogTailReadsOnlyTheTail) {
  ClientProcess p;
  const std::string log = temp_log("tail");
  ASSERT_TRUE(p.start("head -c 4000000 /dev/zero | tr '\\0' x; echo END", log).ok());
  ASSERT_TRUE(wait_exit(p, milliseconds(10000)));
  EXPECT_EQ(std::filesystem::file_size(log), 4000004u);
  const std::string tail = p.log_tail(100);
  ASSERT_EQ(tail.size(), 100u);
  EXPECT_EQ(tail.substr(96), "END\n");
  EXPECT_EQ(tail.substr(0, 96), std::string(96, 'x'));
}

TEST(ClientProcess, LogIsRemovedUnlessKept) {
  const std::string removed = temp_log("removed"), kept = temp_log("kept");
  {
    ClientProcess p;
    ASSERT_TRUE(p.start("echo hello", removed).ok());
    ASSERT_TRUE(wait_exit(p, milliseconds(5000)));
    EXPECT_TRUE(std::filesystem::exists(removed));
  }
  EXPECT_FALSE(std::filesystem::exists(removed));
  {
    ClientProcess p;
    p.keep_log(true);
    ASSERT_TRUE(p.start("echo hello", kept).ok());
    ASSERT_TRUE(wait_exit(p, milliseconds(5000)));
  }
  EXPECT_TRUE(std::filesystem::exists(kept));
  std::filesystem::remove(kept);
}

// When the process running a client is itself sent SIGTERM or SIGINT, the client's whole group
// is killed too, and the process ends with that signal.
// A signal this process was started ignoring (a script's background job ignores SIGINT) is
// respected, as nohup's SIGHUP is, so there is nothing to deliver: that signal is left out and
// said so; SIGTERM is never ignored that way.
TEST(ClientProcess, ClientGroupDiesWithItsSupervisor) {
  for (int sig : {SIGTERM, SIGINT}) {
    struct sigaction now {};
    ASSERT_EQ(::sigaction(sig, nullptr, &now), 0);
    if (now.sa_handler == SIG_IGN) {
      ASSERT_NE(sig, SIGTERM) << "SIGTERM ignored by this test process: nothing is checked";
      std::cout << "[ NOTE     ] " << signal_name(sig)
                << " is ignored by this process (started so by its parent): not checked\n";
      continue;
    }
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(fds[0]);
      ClientProcess p;
      if (!p.start("trap '' TERM INT; sleep 30; sleep 30", temp_log("supervised")).ok()) ::_exit(90);
      std::this_thread::sleep_for(milliseconds(100));
      // The group id is the leader's pid, and the leader is this process's only child.
      pid_t leader = 0;
      for (int tries = 0; tries < 100 && leader == 0; ++tries) {
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", ::getpid(), ::getpid());
        std::ifstream in(path);
        in >> leader;
        if (leader == 0) std::this_thread::sleep_for(milliseconds(10));
      }
      if (::write(fds[1], &leader, sizeof leader) != sizeof leader) ::_exit(91);
      ::raise(sig);
      ::_exit(92);  // not reached: the handler re-raises the signal
    }
    ::close(fds[1]);
    pid_t leader = 0;
    ASSERT_EQ(::read(fds[0], &leader, sizeof leader), static_cast<ssize_t>(sizeof leader));
    ::close(fds[0]);
    ASSERT_GT(leader, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    // The supervisor's handler sent SIGKILL to the group; the orphans end at once.
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
      gone = live_members(leader) == 0;
      if (!gone) std::this_thread::sleep_for(milliseconds(10));
    }
    EXPECT_TRUE(gone) << "client group " << leader << " outlived its supervisor (signal " << sig << ")";
  }
}

}  // namespace
}  // namespace permitcheck::conformance::internal
