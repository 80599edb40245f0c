// Shared by the matrix tests: a fixed matrix (two client rows x three scenarios, one cell of
// each outcome, a failing cell with its trace and findings), files, and running commands.
#ifndef PERMITCHECK_TESTS_MATRIX_MATRIX_TESTING_H_
#define PERMITCHECK_TESTS_MATRIX_MATRIX_TESTING_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "matrix/matrix.h"

namespace permitcheck::matrix::testing {

// A wire trace whose line 9 is the quiescent event a finding points at.
inline constexpr char kFailingTrace[] =
    R"({"trace":"pip491-permits","version":1,"source":"wire","ruleset":"rev-d","q":10,"t":5}
{"ev":"connect","cnx":1}
{"ev":"subscribe","cnx":1,"consumer":0}
{"ev":"subscribe_ok","cnx":1,"consumer":0}
{"ev":"flow","cnx":1,"consumer":0,"permits":10}
{"ev":"message","cnx":1,"consumer":0,"cmd":1,"message_permits":4,"ack_set":[10],"batch_size":4}
{"ev":"ack","cnx":1,"consumer":0,"cmd":1}
{"ev":"flow","cnx":1,"consumer":0,"permits":4}
{"ev":"quiescent","cnx":1,"consumer":0}
)";

inline Cell cell(std::string client, std::string version, std::string scenario, Outcome o) {
  Cell c;
  c.key = {"conformance", std::move(client), std::move(version), std::move(scenario)};
  c.outcome = o;
  c.seconds = 1.5;
  c.runs = 2;
  c.cases_passed = o == Outcome::kPass ? 2 : 0;
  c.capture_note = "conform writes no pcap of its runs";
  c.logs = {"cells/" + c.key.id() + "/client-run-1.log"};
  return c;
}

// Rows: reference rev-d (conforms) and go v0.21.0; columns: complete_batches,
// partial_batches, stale_epoch.
inline Matrix sample_matrix() {
  Matrix m;
  m.scenarios = {{"complete_batches", "B2", "complete batches and single messages"},
                 {"partial_batches", "B2", "partial redeliveries: sparse and dense ack_sets"},
                 {"stale_epoch", "M2", "held across a drop, then a newer consumer epoch"}};
  m.clients = {{"reference", "rev-d", "permitcheck-reference-client", true, "T = 5 at Q = 10"},
               {"go", "v0.21.0", "pulsar-client-go", false, "T = 5 at Q = 10"}};
  for (const ClientRow& r : m.clients) {
    for (const ScenarioColumn& s : m.scenarios) m.plan.push_back({"conformance", r.client, r.version, s.name});
  }
  m.cells.push_back(cell("reference", "rev-d", "complete_batches", Outcome::kPass));
  m.cells.push_back(cell("reference", "rev-d", "partial_batches", Outcome::kPass));
  m.cells.push_back(cell("reference", "rev-d", "stale_epoch", Outcome::kPass));
  m.cells.push_back(cell("go", "v0.21.0", "complete_batches", Outcome::kPass));
  Cell fail = cell("go", "v0.21.0", "partial_batches", Outcome::kFail);
  fail.rules = {"E2", "E5"};
  fail.findings = {{"E2", 8, "command 1 returned 4 permits but its P is 1 (over-return by 3)"},
                   {"E5", 9, "at quiescence available 13 > Q = 10"}};
  fail.reason = fail.findings.front().explanation;
  fail.original = "partial_batches new-broker delay=0ms entries=[b4 acknowledged {0,1,3}, single]";
  fail.minimal = "partial_batches new-broker delay=0ms entries=[b4 acknowledged {0,1,3}]";
  fail.shrink_steps = 1;
  fail.prose = "Counterexample trace.jsonl: wire trace, 8 events.\n";
  fail.trace = kFailingTrace;
  m.cells.push_back(fail);
  Cell incomplete = cell("go", "v0.21.0", "stale_epoch", Outcome::kIncomplete);
  incomplete.reason = "no run opened the scenario's window: the client held 0 messages";
  m.cells.push_back(incomplete);
  m.wall_seconds = 12.25;
  m.jobs = 4;
  m.seed = 491;
  m.idle_seconds = 1.5;
  m.notes = {"not installed, not run: java 4.2.4 (Maven)"};
  return m;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void spit(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

struct Ran {
  int code = -1;
  std::string output;  // stdout and stderr
};

// Runs `command` with sh, its output captured.
inline Ran run(const std::string& command) {
  Ran r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace permitcheck::matrix::testing

#endif  // PERMITCHECK_TESTS_MATRIX_MATRIX_TESTING_H_
