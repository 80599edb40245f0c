// The catalogue of real permit bugs in released Pulsar clients (docs/bug-catalogue.md): each
// row names a public bug, the client preset, the release that has it and the first release
// with the fix, and the scenario that exposes it. `permitcheck conform --catalogue` runs every
// row both ways: the bug must be found (one of the row's rules violated) in the affected
// release and the same scenario must pass in the fixed one.
//
//   for (const BugRow& row : bug_catalogue()) {
//     RowResult r = run_bug_row(row, presets_root());
//     // r.holds(): found in row.affected, passes in row.fixed
//   }
#ifndef PERMITCHECK_CONFORMANCE_BUG_CATALOGUE_H_
#define PERMITCHECK_CONFORMANCE_BUG_CATALOGUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/scenario.h"
#include "spec/rule_id.h"

namespace permitcheck::conformance {

struct BugRow {
  std::string id;        // "go-833"
  std::string client;    // preset name (client_presets.h)
  std::string bug;       // "apache/pulsar-client-go#833 (fixed by #835)"
  std::string summary;   // the bug in one line
  std::string affected;  // a release that has it (an installed version of the preset)
  std::string fixed;     // the first release with the fix
  ScenarioParams scenario;
  std::vector<spec::RuleId> rules;  // found when any of these is violated
  std::int64_t q = 10;     // the receiver queue the client is told ({q}) and judged with
  // Environment for the client's command ("PERMITCHECK_CPP_MODE=zero-queue": a mode of the
  // shipped consumer, clients/cpp/consumer.py); empty: none.
  std::string client_env;
};

// Every row, data: add a row here (and to docs/bug-catalogue.md) to catalogue a bug.
const std::vector<BugRow>& bug_catalogue();

struct VersionRun {
  std::string version;
  bool client_started = false;
  std::vector<std::string> rules;  // rule IDs violated (sorted, unique)
  std::string numbers;             // "debited 5, granted 10, available 5"
  std::string client_failure;      // empty when the client ran normally
  // Start attempts before the judged one whose client never subscribed ("attempt 1: ...").
  std::vector<std::string> failed_starts;
  double seconds = 0;
};

struct RowResult {
  const BugRow* row = nullptr;
  VersionRun affected, fixed;
  bool found = false;    // a row rule violated in the affected release
  bool passes = false;   // no violation at all in the fixed release
  std::string error;     // a preset or version that does not resolve
  bool holds() const { return error.empty() && found && passes; }
};

// Runs the row's scenario against the affected and the fixed release (presets under ROOT).
RowResult run_bug_row(const BugRow& row, std::string_view root);

// The catalogue report: a table (text) or one JSON object per row and line (json).
std::string format_catalogue_text(const std::vector<RowResult>& results);
std::string format_catalogue_json(const std::vector<RowResult>& results);

}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_BUG_CATALOGUE_H_
