// validate throughput against simdjson merely parsing the same file, measured side by side in
// one run (the issue's performance target: validate >= 0.5 of the raw parse rate, constant
// memory).
//
//   validate_bench [--events 10000000] [--file /tmp/permitcheck-bench.jsonl] [--keep]
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

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t target = 10'000'000;
  std::string path = "/tmp/permitcheck-validate-bench.jsonl";
  bool keep = false;
  std::size_t block_events = permitcheck::validate::ValidateOptions{}.block_events;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--events" && i + 1 < argc) target = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--file" && i + 1 < argc) path = argv[++i];
    else if (a == "--keep") keep = true;
    else if (a == "--block-events" && i + 1 < argc) block_events = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::cerr << "usage: validate_bench [--events N] [--file PATH] [--keep] [--block-events N]\n";
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
  std::cout << "trace: " << path << ", " << events << " events, " << bytes / (1 << 20) << " MiB\n";

  const Measured parse = in_child([&](std::string* note) {
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
  // The reader alone (no Monitor): how validate's time splits between reading and checking.
  const Measured read = in_child([&](std::string* note) {
    std::ifstream in(path, std::ios::binary);
    absl::StatusOr<permitcheck::trace::TraceReader> reader = permitcheck::trace::TraceReader::open(in);
    if (!reader.ok()) return 6;
    permitcheck::spec::Event event;
    std::uint64_t n = 0;
    for (absl::StatusOr<bool> more; (more = reader->next(&event)).ok() && *more;) ++n;
    *note = std::to_string(n) + " events read";
    return 0;
  });
  const auto validate_with = [&](int threads) {
    return in_child([&, threads](std::string* note) {
      std::istringstream unused;
      permitcheck::validate::ValidateOptions options;
      options.threads = threads;
      options.block_events = block_events;
      permitcheck::validate::FileResult r = permitcheck::validate::validate_path(path, unused, options);
      *note = std::to_string(r.events) + " events, " + std::to_string(r.violations.size()) +
              " violations" + (r.error ? ", error: " + *r.error : "");
      return r.ok() ? 0 : 5;
    });
  };
  const Measured validate1 = validate_with(1);
  const Measured validate2 = validate_with(2);
  if (!keep) std::remove(path.c_str());

  const double mib = static_cast<double>(bytes) / (1 << 20);
  std::printf("%-11s %8s %8s %14s %14s %10s %14s\n", "", "wall s", "cpu s", "events/wall-s",
              "events/cpu-s", "MiB/wall-s", "peak RSS MiB");
  for (const auto& [name, m] : {std::pair{"parse", parse}, std::pair{"read", read},
                                std::pair{"validate-1", validate1},
                                std::pair{"validate-2", validate2}}) {
    std::printf("%-11s %8.2f %8.2f %14.0f %14.0f %10.1f %14.1f  %s (exit %d)\n", name, m.seconds,
                m.cpu_seconds, events / m.seconds, events / m.cpu_seconds, mib / m.seconds,
                m.max_rss_kib / 1024.0, m.note.c_str(), m.status);
  }
  std::printf("ratio validate/parse throughput (target >= 0.5):\n");
  std::printf("  validate (reading on a second thread, the default) by wall time: %.3f\n",
              parse.seconds / validate2.seconds);
  std::printf("  validate on one thread by wall time: %.3f; by CPU time: %.3f\n",
              parse.seconds / validate1.seconds, parse.cpu_seconds / validate1.cpu_seconds);
  return parse.status == 0 && read.status == 0 && validate1.status == 0 && validate2.status == 0
             ? 0
             : 1;
}
