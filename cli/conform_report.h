// The report of a `permitcheck conform` run: text (each scenario's line, the legacy rows, each
// failing scenario's minimal counterexample), JSON, JUnit, and the --trace-dir files. Filled from
// the conformance runner's ConformReport; the command (cli/conform.cc) only chooses and writes.
//
//   const std::string text = format_text(report, client, settings, /*full=*/true);
//   if (!write_counterexamples(report, dir, out, err)) return spec::kExitBadInput;
//
// Guarantees: pure functions of their arguments except write_counterexamples (files in `dir`);
// O(size of the report and its counterexamples' traces).
#ifndef PERMITCHECK_CLI_CONFORM_REPORT_H_
#define PERMITCHECK_CLI_CONFORM_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/options.h"
#include "conformance/conform.h"

namespace permitcheck::cli {

// The options a run's cases depend on, printed in every report so that the run can be repeated
// from its output alone (the same client, these options, the same scenarios).
struct RunSettings {
  std::uint64_t seed = kDefaultSeed;
  double idle_s = kDefaultIdleSeconds;
  int cases = 0;
  std::int64_t q = 0, threshold = 0;
};

// The text report; `full` adds each counterexample's explanation, diagram, trace and client
// output (the short form goes to stderr beside a JSON or JUnit report).
std::string format_text(const conformance::ConformReport& r, const std::string& command,
                        const RunSettings& settings, bool full);

// The JSON report (one document, settings and every scenario).
std::string format_json(const conformance::ConformReport& r, const std::string& command,
                        const RunSettings& settings);

// --trace-dir: each failing scenario's minimal counterexample as DIR/SCENARIO.jsonl, .mmd and
// .txt; false when one could not be written (the reason on `err`).
bool write_counterexamples(const conformance::ConformReport& report, const std::string& dir,
                           std::ostream& out, std::ostream& err);

// The JUnit report: a case per scenario.
std::string conform_junit(const conformance::ConformReport& r);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_CONFORM_REPORT_H_
