// validate throughput against simdjson merely parsing the same file, measured side by side in
// one run (the target: validate >= 0.6 of the raw parse rate on one thread and more on two,
// constant memory). Each contender runs once per round, in turn, for --runs rounds; the table
// gives the medians (wall clock, and CPU time, fairer when other jobs share the cores).
//
//   validate_bench [--events 10000000] [--runs 5] [--file /tmp/permitcheck-bench.jsonl] [--keep]
//                  [--block-events 8192]   (validate-2's read-ahead block, ValidateOptions)
//
// It writes a passing client-accounting trace of about `events` events (batches of B = 4:
// recv, metadata, resolve, 4 claims, settle, 4 message returns, and a Flow whenever the
// accumulator reaches T), warms the page cache, then runs each contender in a child process
// so that each one's peak resident memory (getrusage of the child) is its own:
//   parse     simdjson DOM parse of every line (parse_many over the file, every document
//             visited), no checking at all
//   read      permitcheck's TraceReader alone, every event read into a spec::Event, no checks
//   validate  permitcheck's validate_path: reader + Monitor (retain_ledger = false), as
//             `permitcheck validate` runs it (validate-2: reading on a second thread while
//             the first checks) and all on one thread (validate-1)
// The generated file goes to /tmp (never into the repository) and is removed unless --keep.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "validate/validate.h"
#include "trace/reader.h"
#include "simdjson.h"

namespace {

std::uint64_t generate(const std::string& path, std::uint64_t target_events) {
  std::ofstream out(path, std::ios::binary);
  constexpr int kQ = 1000, kT = 500, kB = 4;
  out << R"({"trace":"pip491-permits","version":1,"source":"client","ruleset":"rev-d","q":1000,"t":500})" "\n";
  out << R"({"ev":"inc_open","inc":1,"cnx":"c1","consumer":0})" "\n";
  out << R"({"ev":"inc_flow_enabled","inc":1})" "\n";
  out << R"({"ev":"flow","cnx":"c1","consumer":0,"inc":1,"permits":)" << kQ << "}\n";
  std::uint64_t events = 3;
  std::int64_t accumulator = 0;
  std::string buf;
  buf.reserve(1 << 20);
  for (std::uint64_t cmd = 1; events < target_events; ++cmd) {
    buf += R"({"ev":"recv","inc":1,"cmd":)" + std::to_string(cmd) + R"(,"message_permits":4})" "\n";
    buf += R"({"ev":"metadata","cmd":)" + std::to_string(cmd) + R"(,"batch_size":4})" "\n";
    buf += R"({"ev":"resolve","cmd":)" + std::to_string(cmd) + R"(,"p":4,"source":"explicit"})" "\n";
    for (int i = 0; i < kB; ++i) {
      buf += R"({"ev":"claim","cmd":)" + std::to_string(cmd) + R"(,"msg":)" +
             std::to_string(cmd * 8 + i) + R"(,"index":)" + std::to_string(i) + "}\n";
    }
    buf += R"({"ev":"settle","cmd":)" + std::to_string(cmd) + R"(,"n":0})" "\n";
    for (int i = 0; i < kB; ++i) {
      buf += R"({"ev":"msg_return","msg":)" + std::to_string(cmd * 8 + i) + "}\n";
    }
    events += 4 + 2 * kB;
    accumulator += kB;
    if (accumulator >= kT) {
      buf += R"({"ev":"flow","cnx":"c1","consumer":0,"inc":1,"permits":)" + std::to_string(accumulator) + "}\n";
      accumulator = 0;
      ++events;
    }
    if (buf.size() > (1 << 20) - 4096) {
      out << buf;
      buf.clear();
    }
  }
  out << buf;
  return events;
}

struct Measured {
  double seconds = 0;      // wall clock
  double cpu_seconds = 0;  // user + system of the child: fair when other jobs share the CPU
  long max_rss_kib = 0;
  int status = 0;
  std::string note;
};

// Runs `body` in a child; its wall time and peak RSS. `body` returns an exit status and writes
// a one-line note to the pipe.
template <typename F>
Measured in_child(F body) {
  int fds[2];
  if (pipe(fds) != 0) std::abort();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string note;
    const int status = body(&note);
    if (write(fds[1], note.data(), note.size()) < 0) _exit(99);
    _exit(status);
  }
  close(fds[1]);
  std::string note;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) note.append(buf, n);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  Measured m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.max_rss_kib = usage.ru_maxrss;
  m.cpu_seconds = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
                  usage.ru_stime.tv_usec / 1e6;
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  m.note = note;
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t target = 10'000'000;
  std::string path = "/tmp/permitcheck-validate-bench.jsonl";
  bool keep = false;
  int runs = 5;
  std::size_t block_events = permitcheck::validate::ValidateOptions{}.block_events;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--events" && i + 1 < argc) target = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--file" && i + 1 < argc) path = argv[++i];
    else if (a == "--keep") keep = true;
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--block-events" && i + 1 < argc) block_events = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::cerr << "usage: validate_bench [--events N] [--runs N] [--file PATH] [--keep] "
                   "[--block-events N]\n";
      return 2;
    }
  }
  const std::uint64_t events = generate(path, target);
  std::uint64_t bytes = 0;
  {  // Warm the page cache so neither contender pays for the disk.
    std::ifstream in(path, std::ios::binary);
    std::string chunk(1 << 20, '\0');
    while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) bytes += in.gcount();
  }
  std::cout << "trace: " << path << ", " << events << " events, " << bytes / (1 << 20)
            << " MiB; " << runs << " rounds, each contender once per round in turn\n";

  const auto parse = [&] {
    return in_child([&](std::string* note) {
      simdjson::dom::parser parser;
      simdjson::dom::document_stream docs;
      if (parser.load_many(path).get(docs)) return 3;
      std::uint64_t n = 0;
      for (auto doc : docs) {
        simdjson::dom::element e;
        if (doc.get(e)) return 4;
        ++n;
      }
      *note = std::to_string(n) + " documents";
      return 0;
    });
  };
  // The reader alone (no Monitor): how validate's time splits between reading and checking.
  const auto read = [&] {
    return in_child([&](std::string* note) {
      std::ifstream in(path, std::ios::binary);
      absl::StatusOr<permitcheck::trace::TraceReader> reader =
          permitcheck::trace::TraceReader::open(in);
      if (!reader.ok()) return 6;
      permitcheck::spec::Event event;
      std::uint64_t n = 0;
      for (absl::StatusOr<bool> more; (more = reader->next(&event)).ok() && *more;) ++n;
      *note = std::to_string(n) + " events read";
      return 0;
    });
  };
  const auto validate_with = [&](int threads) {
    return in_child([&, threads](std::string* note) {
      std::istringstream unused;
      permitcheck::validate::ValidateOptions options;
      options.threads = threads;
      options.block_events = block_events;
      permitcheck::validate::FileResult r =
          permitcheck::validate::validate_path(path, unused, options);
      *note = std::to_string(r.events) + " events, " + std::to_string(r.violations.size()) +
              " violations" + (r.error ? ", error: " + *r.error : "");
      return r.ok() ? 0 : 5;
    });
  };
  constexpr int kContenders = 4;
  const char* const names[kContenders] = {"parse", "read", "validate-1", "validate-2"};
  std::vector<Measured> all[kContenders];
  for (int r = 0; r < runs; ++r) {
    all[0].push_back(parse());
    all[1].push_back(read());
    all[2].push_back(validate_with(1));
    all[3].push_back(validate_with(2));
  }
  if (!keep) std::remove(path.c_str());

  struct Summary {
    double wall, cpu, rss_mib;
    int status;
    std::string note;
  };
  Summary med[kContenders];
  for (int c = 0; c < kContenders; ++c) {
    std::vector<double> wall, cpu;
    long rss = 0;
    int status = 0;
    for (const Measured& m : all[c]) {
      wall.push_back(m.seconds);
      cpu.push_back(m.cpu_seconds);
      rss = std::max(rss, m.max_rss_kib);
      if (m.status != 0) status = m.status;
    }
    med[c] = {median(wall), median(cpu), rss / 1024.0, status, all[c].back().note};
  }
  const double mib = static_cast<double>(bytes) / (1 << 20);
  std::printf("medians of %d runs (peak RSS: the largest of the runs)\n", runs);
  std::printf("%-11s %8s %8s %14s %14s %10s %14s\n", "", "wall s", "cpu s", "events/wall-s",
              "events/cpu-s", "MiB/wall-s", "peak RSS MiB");
  for (int c = 0; c < kContenders; ++c) {
    const Summary& m = med[c];
    std::printf("%-11s %8.2f %8.2f %14.0f %14.0f %10.1f %14.1f  %s (exit %d)\n", names[c], m.wall,
                m.cpu, events / m.wall, events / m.cpu, mib / m.wall, m.rss_mib, m.note.c_str(),
                m.status);
  }
  std::printf("ratio to simdjson's parse rate (target >= 0.6 on one thread, more on two):\n");
  std::printf("  read alone:            wall %.3f  cpu %.3f\n", med[0].wall / med[1].wall,
              med[0].cpu / med[1].cpu);
  std::printf("  validate on 1 thread:  wall %.3f  cpu %.3f\n", med[0].wall / med[2].wall,
              med[0].cpu / med[2].cpu);
  std::printf("  validate on 2 threads: wall %.3f  (cpu %.3f: both threads' time summed)\n",
              med[0].wall / med[3].wall, med[0].cpu / med[3].cpu);
  return med[0].status == 0 && med[1].status == 0 && med[2].status == 0 && med[3].status == 0
             ? 0
             : 1;
}
