// The interop matrix as data: one cell per (broker, client, version, scenario) with its
// outcome (PASS, FAIL, INCOMPLETE, NOT-APPLICABLE), rule IDs, numbers and seconds; the plan of
// every cell and its deterministic shards; the merge of shards. Rendering is render.h, the JSON
// form json.h, the expectations expectations.h. No I/O here.
//
//   Matrix m;  m.plan = {{"conformance", "go", "v0.21.0", "reconnect"}};
//   std::vector<CellKey> mine = shard_cells(m.plan, Shard{1, 2});   // cells 0, 2, 4, ...
//   absl::StatusOr<Matrix> all = merge({shard1, shard2});          // cells in plan order
//
// Guarantees: shard_cells is a partition of the plan (every cell in exactly one of the n
// shards, in plan order); merge puts cells in plan order and refuses shards of different
// plans, a cell twice or a cell missing. Linear in the number of cells (plus a sort).
#ifndef PERMITCHECK_MATRIX_MATRIX_H_
#define PERMITCHECK_MATRIX_MATRIX_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spec/outcome.h"

namespace permitcheck::matrix {

// A cell's outcome is the suite's one vocabulary of outcomes (spec/outcome.h).
using spec::Outcome;
using spec::outcome_name;  // "PASS", "FAIL", "INCOMPLETE", "NOT-APPLICABLE"
std::optional<Outcome> parse_outcome(std::string_view name);

struct CellKey {
  std::string broker;    // "conformance": permitcheck's own broker
  std::string client;    // the preset's name, "go"
  std::string version;   // the release, "v0.21.0"
  std::string scenario;  // the scenario's name, "reconnect"
  friend auto operator<=>(const CellKey&, const CellKey&) = default;
  friend bool operator==(const CellKey&, const CellKey&) = default;
  // "conformance/go@v0.21.0/reconnect": also the cell's folder under the output directory
  // (every part with characters outside [A-Za-z0-9._-] replaced by '_').
  std::string id() const;
};

// Written in matrix.json as every report's finding (validate::finding_object: line, rule,
// text, message; docs/schemas/finding.schema.json).
struct CellFinding {
  std::string rule;          // "E5"
  std::uint64_t line = 0;    // line of the trace (trace.jsonl) that exposed it; 0: the run
  std::string explanation;   // with its numbers ("text" in the JSON)
};

// How the cell compares with its client's expectations (expectations.h).
enum class Verdict { kAsExpected, kAsPinned, kUnexpected };
const char* verdict_name(Verdict v);  // "as expected", "as pinned", "unexpected"

struct Cell {
  CellKey key;
  Outcome outcome = Outcome::kIncomplete;
  std::vector<std::string> rules;     // sorted, distinct rule IDs of the findings
  std::vector<CellFinding> findings;  // of the minimal counterexample
  double seconds = 0;
  int runs = 0;                       // client runs, shrinking included
  int cases_passed = 0;
  std::string reason;                 // one line: why this outcome
  std::string original;               // first failing parameters
  std::string minimal;                // the shrunk ones
  int shrink_steps = 0;
  std::string client_failure;         // "crashed: ...", "hang: ..."; empty: none
  std::vector<std::string> windows;   // windows the runs opened
  std::vector<std::string> deviations;  // known deviations, "X1: ..."
  std::string prose;                  // the counterexample explained
  std::string trace;                  // the counterexample's trace, JSON Lines
  std::string trace_file;             // the run's whole wire trace as a file, relative path
                                      // (a real-broker cell: the tap's); empty: none
  std::vector<std::string> logs;      // the client's logs, paths relative to the output
  std::string capture;                // a pcap of the run, relative path; empty: none
  std::string capture_note;           // why there is none
  // Filled by apply_expectations (expectations.h).
  std::string expected;               // "pass", "fail E5", "pass or not-applicable", ...
  Verdict verdict = Verdict::kAsExpected;
};

struct ScenarioColumn {
  std::string name;     // "reconnect"
  std::string rule;     // rule a crash or hang is reported under
  std::string summary;  // one line
};

struct ClientRow {
  std::string client;
  std::string version;
  std::string library;  // what it runs on
  bool knows_message_permits = false;
  std::string threshold;  // "T = 5 at Q = 10 (source line)"
};

enum class Conformance { kConforms, kDeviatesAsPinned, kUnexpected };

struct ClientSummary {
  std::string client;
  std::string version;
  Conformance conformance = Conformance::kConforms;
  int pinned_findings = 0;              // (scenario, rule) pairs failing as pinned
  int incomplete = 0;                   // INCOMPLETE cells allowed by the expectations
  std::vector<std::string> unexpected;  // "reconnect: expected pass, got FAIL (E5)"
  std::string expectations;             // the file judged against; empty: none (all must pass)
  // "conforms", "deviates as pinned (3 findings)", "unexpected (2 cells)"; an allowed
  // INCOMPLETE is said: "conforms, 1 cell INCOMPLETE" (no verdict is not a pass).
  std::string text() const;
};

struct Shard {
  int index = 1;  // 1-based
  int count = 1;
  friend bool operator==(const Shard&, const Shard&) = default;
};
// "2/3" -> {2, 3}; InvalidArgument unless 1 <= i <= n.
absl::StatusOr<Shard> parse_shard(std::string_view text);

struct Matrix {
  std::vector<ScenarioColumn> scenarios;  // columns, catalogue order
  std::vector<ClientRow> clients;         // rows, preset order
  std::vector<CellKey> plan;              // every cell of the whole matrix, in order
  std::vector<Cell> cells;                // the cells run (a shard: its slice), plan order
  std::optional<Shard> shard;             // set in a shard's output
  std::vector<std::string> notes;         // "not installed: java 4.2.4 (...)"
  std::vector<ClientSummary> summaries;   // per client row (apply_expectations)
  double wall_seconds = 0;                // of the run (merge: the longest shard)
  int jobs = 0;                           // cells run side by side
  // The settings the cells' runs depend on, printed so that the run can be repeated (0: not
  // known); every shard of one run has the same.
  std::uint64_t seed = 0;
  double idle_seconds = 0;
};

// The cells of `plan` in shard i of n: plan positions p with p % n == i - 1, in plan order.
std::vector<CellKey> shard_cells(const std::vector<CellKey>& plan, Shard shard);

// The shards' cells in one matrix, in plan order. InvalidArgument when their plans differ,
// a cell comes twice, or a cell of the plan is in no shard (the message names it).
absl::StatusOr<Matrix> merge(std::vector<Matrix> shards);

}  // namespace permitcheck::matrix

#endif  // PERMITCHECK_MATRIX_MATRIX_H_
