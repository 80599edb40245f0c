// tap_client_bench: the latency `permitcheck tap` adds and the message rate it sustains, with a
// shipped client: the official Go client (clients/go/bench, built against
// github.com/apache/pulsar-client-go from the Go module proxy by ci/install-go-client.sh)
// consumes from the conformance broker's bench mode (conformance/throughput_broker.h), once
// directly and once through `permitcheck tap` in front of the same broker, alternating, R runs.
//
//   cmake --build build --target tap_client_bench && build/bench/tap_client_bench [--runs R]
//       [--latency N] [--messages M] [--q Q] [--timeout SECONDS]
//
// Latency, per message, on the broker's clock (no skew): from writing the MESSAGE frame to
// reading the client's ACK of it, with one message in flight (N messages, each sent when the
// previous one is acked). That is the client's round trip; through the tap both legs (MESSAGE
// to the client, ACK back) cross it, so the difference is the round-trip latency the tap adds.
// Rate: M more messages sent as fast as the client's Flow permits allow, counted from writing
// the first to reading the last ACK (consumed and acknowledged per second).
//
// Exit 0 after the runs with the tap reporting no finding; 1 when a run fails or the tap
// reports a violation, a deviation or a connection it did not understand; 2 on usage; 77
// (SKIP, said on stdout) when the Go client's bench consumer is not built.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "conformance/throughput_broker.h"

namespace {

using permitcheck::conformance::ThroughputBroker;
using permitcheck::conformance::ThroughputSession;

constexpr int kSkip = 77;

// A child process in its own process group, stdout and stderr to a log file; stopped with
// SIGTERM to the group, then SIGKILL after `grace`. Every wait is bounded.
class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { stop(std::chrono::seconds(1)); }

  bool start(const std::vector<std::string>& argv, const std::string& log) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    if (pid_ > 0) ::setpgid(pid_, pid_);
    return pid_ > 0;
  }

  bool running() {
    if (pid_ <= 0 || done_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) done_ = true;
    return !done_;
  }

  // CPU time (user + system, clock ticks) of the leader so far; -1 when unknown.
  long cpu_ticks() const {
    std::ifstream in(absl::StrCat("/proc/", pid_, "/stat"));
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream fields(stat.substr(close + 2));
    std::string skip;
    for (int i = 0; i < 11; ++i) fields >> skip;  // state ... cmajflt (fields 3-13)
    long utime = 0, stime = 0;
    fields >> utime >> stime;
    return fields ? utime + stime : -1;
  }

  void stop(std::chrono::milliseconds grace) {
    if (pid_ <= 0) return;
    if (running()) ::kill(-pid_, SIGTERM);
    for (auto end = std::chrono::steady_clock::now() + grace;
         running() && std::chrono::steady_clock::now() < end;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(-pid_, SIGKILL);  // the group, whether its leader is gone or not
    if (!done_) ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  bool done_ = false;
};

struct Stats {
  double p50 = 0, p99 = 0, loaded_p50 = 0, loaded_p99 = 0, rate = 0;
};

double percentile(std::vector<double> v, int p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, v.size() * static_cast<std::size_t>(p) / 100)];
}

double median(std::vector<double> v) { return percentile(std::move(v), 50); }

Stats stats_of(const ThroughputSession& s) {
  return {percentile(s.latency_us, 50), percentile(s.latency_us, 99), percentile(s.loaded_us, 50),
          percentile(s.loaded_us, 99), s.messages_per_second};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string load_average() {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) != 3) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", l[0], l[1], l[2]);
  return buf;
}

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// The tap's port from its "listening on 127.0.0.1:PORT" line, waiting up to 10 s.
int wait_listening(Child& tap, const std::string& log) {
  for (int i = 0; i < 200; ++i) {
    const std::string text = read_file(log);
    const std::size_t at = text.find("listening on 127.0.0.1:");
    if (at != std::string::npos) return std::atoi(text.c_str() + at + 23);
    if (!tap.running()) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// Seconds until the tap has checked what it forwarded: its CPU time stops growing (no tick in
// 200 ms), waiting up to 30 s. The tap checks on a second thread behind the forwarding one, so
// each run starts with no backlog of checking from the one before.
double wait_checked(const Child& tap) {
  const auto start = std::chrono::steady_clock::now();
  long last = tap.cpu_ticks();
  auto still_since = start;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const long now = tap.cpu_ticks();
    if (now != last) {
      last = now;
      still_since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - still_since >= std::chrono::milliseconds(200)) {
      break;
    }
  }
  return std::chrono::duration<double>(still_since - start).count();
}

// The Go client release the bench consumer is built against: go.mod's require line.
std::string go_client_release() {
  const std::string go_mod = read_file(PERMITCHECK_SOURCE_DIR "/clients/go/go.mod");
  const std::string module = "github.com/apache/pulsar-client-go ";
  const std::size_t v = go_mod.find(module);
  if (v == std::string::npos) return "?";
  return go_mod.substr(v + module.size(), go_mod.find('\n', v) - v - module.size());
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// What one run measured: the broker's numbers, and the tap's catching up and CPU.
struct Run {
  Stats stats;
  double checking_seconds = 0;  // wait_checked after the run
  double tap_cpu_us = 0;        // the tap's CPU time (both threads) per message of the run
};

struct Config {
  std::string client, dir;
  int q = 0, messages_per_run = 0;
  int timeout_s = 0;
};

// One session of the Go client on `port` (the broker's or the tap's), subscription
// bench-`name`; the client is stopped once the broker has every ack, or on failure (the
// error then ends with the client's log).
absl::StatusOr<Run> run_once(const Config& config, int port, const std::string& name,
                             ThroughputBroker& broker, const Child& tap) {
  const long tap_ticks = tap.cpu_ticks();
  Child consumer;
  const std::string log = absl::StrCat(config.dir, "/client-", name, ".log");
  absl::StatusOr<ThroughputSession> s =
      consumer.start({config.client, absl::StrCat("pulsar://127.0.0.1:", port),
                      "persistent://public/default/permitcheck-bench",
                      absl::StrCat("bench-", name), std::to_string(config.q)},
                     log)
          ? broker.wait_session(std::chrono::seconds(config.timeout_s))
          : absl::InternalError("the client did not start");
  consumer.stop(std::chrono::milliseconds(1000));
  Run run;
  run.checking_seconds = wait_checked(tap);
  run.tap_cpu_us = static_cast<double>(tap.cpu_ticks() - tap_ticks) * 1e6 /
                   static_cast<double>(::sysconf(_SC_CLK_TCK)) / config.messages_per_run;
  std::string client_log = read_file(log);
  if (client_log.size() > 2000) client_log.erase(0, client_log.size() - 2000);
  std::remove(log.c_str());
  if (!s.ok()) {
    return absl::Status(s.status().code(),
                        absl::StrCat(s.status().message(), "\nclient log:\n", client_log));
  }
  run.stats = stats_of(*s);
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5, latency = 2000, messages = 200000, q = 1000, timeout_s = 120;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const int v = i + 1 < argc ? std::atoi(argv[i + 1]) : 0;
    if (a == "--runs") runs = v;
    else if (a == "--latency") latency = v;
    else if (a == "--messages") messages = v;
    else if (a == "--q") q = v;
    else if (a == "--timeout") timeout_s = v;
    else runs = 0;  // usage
    ++i;
    if (runs < 1 || latency < 1 || messages < 1 || q < 2 || timeout_s < 1) {
      std::fprintf(stderr, "usage: tap_client_bench [--runs R>=1] [--latency N>=1] "
                           "[--messages M>=1] [--q Q>=2] [--timeout SECONDS]\n");
      return 2;
    }
  }
  const std::string client = PERMITCHECK_SOURCE_DIR "/clients/go/permitcheck-go-bench";
  const std::string permitcheck = PERMITCHECK_CLI;
  if (!executable(client)) {
    std::printf("tap_client_bench: SKIP: the Go client's bench consumer %s is not built (run "
                "ci/install-go-client.sh; it needs Go 1.25 or newer and the Go module proxy)\n",
                client.c_str());
    return kSkip;
  }
  if (!executable(permitcheck)) {
    std::fprintf(stderr, "tap_client_bench: %s is not built\n", permitcheck.c_str());
    return 2;
  }

  ThroughputBroker broker({.latency_messages = latency, .rate_messages = messages});
  if (absl::Status s = broker.start(); !s.ok()) {
    std::fprintf(stderr, "tap_client_bench: broker: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  char dir_template[] = "/tmp/tap_client_bench.XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) {
    std::fprintf(stderr, "tap_client_bench: cannot create a directory in /tmp\n");
    return 1;
  }
  const std::string tap_log = absl::StrCat(dir, "/tap.log");
  // Removes the tap's log and the directory at exit (after `tap` below has stopped), unless
  // the tap reported findings: then its log is kept for reading.
  struct Cleanup {
    std::string log, dir;
    bool keep = false;
    ~Cleanup() {
      if (keep) return;
      std::remove(log.c_str());
      ::rmdir(dir.c_str());
    }
  } cleanup{tap_log, dir};
  Child tap;
  // The Go client's Flow threshold is Q/2 (consumer_partition.go flowIfNeed).
  const int tap_port =
      tap.start({permitcheck, "tap", "--listen", "127.0.0.1:0", "--upstream",
                 absl::StrCat("127.0.0.1:", broker.port()), "--format", "json", "--q",
                 std::to_string(q), "--threshold", std::to_string(q / 2)},
                tap_log)
          ? wait_listening(tap, tap_log)
          : 0;
  if (tap_port == 0) {
    std::fprintf(stderr, "tap_client_bench: the tap did not start: %s\n",
                 read_file(tap_log).c_str());
    return 1;
  }

  std::printf("tap_client_bench: official Go client github.com/apache/pulsar-client-go %s, "
              "Shared, receiver queue %d, acks sent at once; %d messages one at a time "
              "(latency), then %d as permits allow (rate); %d runs, direct and through "
              "`permitcheck tap` alternating; load average %s\n",
              go_client_release().c_str(), q, latency, messages, runs, load_average().c_str());
  std::printf("latency: MESSAGE written to its ACK read, at the broker; loaded: the same in the "
              "rate phase (receiver-queue wait included); tap busy: seconds after the run until "
              "the tap's CPU time stops growing (its checking caught up; each run waits for it); tap CPU: "
              "its user + system microseconds per message of the run\n");
  std::printf("%-4s %-12s %9s %9s %11s %11s %12s %10s %9s\n", "run", "path", "p50 us",
              "p99 us", "loaded p50", "loaded p99", "messages/s", "tap busy s", "tap CPU");
  const Config config{.client = client, .dir = dir, .q = q, .messages_per_run = latency + messages,
                      .timeout_s = timeout_s};
  std::vector<double> d50, d99, drate, t50, t99, trate, tcpu, tbusy;
  for (int r = 1; r <= runs; ++r) {
    for (int k = 0; k < 2; ++k) {
      const bool through_tap = (r % 2 == 1) == (k == 1);  // odd runs direct first
      const char* path = through_tap ? "through tap" : "direct";
      absl::StatusOr<Run> run =
          run_once(config, through_tap ? tap_port : broker.port(), absl::StrCat(r, "-", k),
                   broker, tap);
      if (!run.ok()) {
        std::fprintf(stderr, "tap_client_bench: run %d %s: %s\n", r, path,
                     std::string(run.status().message()).c_str());
        return 1;
      }
      const Stats& st = run->stats;
      const double checking = run->checking_seconds, tap_cpu_us = run->tap_cpu_us;
      std::printf("%-4d %-12s %9.1f %9.1f %11.1f %11.1f %12.0f %10.2f %9.2f\n", r, path,
                  st.p50, st.p99, st.loaded_p50, st.loaded_p99, st.rate, checking, tap_cpu_us);
      std::fflush(stdout);
      (through_tap ? t50 : d50).push_back(st.p50);
      (through_tap ? t99 : d99).push_back(st.p99);
      (through_tap ? trate : drate).push_back(st.rate);
      if (through_tap) tcpu.push_back(tap_cpu_us), tbusy.push_back(checking);
    }
  }
  tap.stop(std::chrono::seconds(10));  // SIGTERM: the tap prints its summary
  broker.stop();
  const std::string tap_out = read_file(tap_log);
  const std::size_t at = tap_out.find("{\"summary\":");
  const std::string summary =
      at == std::string::npos ? "" : tap_out.substr(at, tap_out.find('\n', at) - at);
  const int findings = count(tap_out, "{\"finding\":");
  const int not_understood = count(tap_out, "{\"not_understood\":");

  std::printf("median: direct p50 %.1f us p99 %.1f us, %.0f messages/s; through the tap p50 "
              "%.1f us p99 %.1f us, %.0f messages/s\n",
              median(d50), median(d99), median(drate), median(t50), median(t99), median(trate));
  std::printf("the tap adds (round trip, both legs through it) p50 %.1f us, p99 %.1f us "
              "(target p99 < 1000 us); ratios through/direct: p50 %.2f, p99 %.2f, rate %.2f; "
              "rate through the tap %.0f messages/s consumed and acked (target >= 50000)\n",
              median(t50) - median(d50), median(t99) - median(d99), median(t50) / median(d50),
              median(t99) / median(d99), median(trate) / median(drate), median(trate));
  std::printf("tap: %.2f us of CPU per message (median), checking done at most %.2f s after a "
              "run; %d %s, %d not understood; %s; load average %s\n",
              median(tcpu), *std::max_element(tbusy.begin(), tbusy.end()), findings,
              findings == 1 ? "finding" : "findings",
              not_understood, summary.empty() ? "no summary" : summary.c_str(),
              load_average().c_str());
  if (summary.empty() || findings > 0 || not_understood > 0) {
    cleanup.keep = true;
    std::printf("tap_client_bench: FAIL: the tap %s (log %s)\n",
                summary.empty() ? "printed no summary" : "reported findings", tap_log.c_str());
    return 1;
  }
  return 0;
}
