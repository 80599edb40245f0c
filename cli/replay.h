// replay: re-runs a counterexample trace against the specification under legacy (what clients
// do today), rev-d (what the proposal asks) and the trace's own ruleset, or under every ruleset
// this build knows when drafts are asked for (`permitcheck replay [--all-rulesets] CEX`), so a
// reader sees which rulesets it separates. The text report explains each rule ID once, at its
// end.
//
//   absl::StatusOr<trace::Trace> t = trace::read_trace(file);
//   Replayed r = replay(*t);
//   std::cout << format_replay(r, "cex.jsonl", validate::ReportFormat::kText);
//   return replay_exit_code(r);   // 1 when the header's ruleset reports a violation
//
// The reference implementation (impl/) is driven by actions (publish, deliver, consume,
// faults), which a trace does not record, so it cannot be re-run from a trace; the report
// says so (the properties' printed seed reproduces a failing case in the implementation).
#ifndef PERMITCHECK_CLI_REPLAY_H_
#define PERMITCHECK_CLI_REPLAY_H_

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "spec/monitor.h"
#include "spec/ruleset.h"
#include "trace/reader.h"
#include "validate/report.h"

namespace permitcheck::cli {

struct RulesetRun {
  spec::RulesetId ruleset;
  bool from_header = false;  // the ruleset the trace asks for
  spec::MonitorReport report;
};

struct Replayed {
  trace::Trace trace;
  std::vector<RulesetRun> runs;  // spec::all_rulesets() order, drafts only when asked
  bool implementation_replayed = false;
  std::string implementation_note;
};

// `with_drafts`: also rev-a, rev-b and rev-c (spec::is_draft), unless the trace asks for one
// of them, which always runs.
Replayed replay(trace::Trace trace, bool with_drafts = false);

std::string format_replay(const Replayed& r, std::string_view name, validate::ReportFormat format);

// 1 if the run of the header's ruleset reports a violation, else 0.
int replay_exit_code(const Replayed& r);

// Reads a whole (counterexample) trace from `path` ("-": `in`) for `render` and `replay`; on
// failure prints "permitcheck COMMAND: FILE: line N: reason" on `err` and returns nullopt.
std::optional<trace::Trace> read_counterexample(const std::string& path, std::istream& in,
                                                std::string_view command, std::ostream& err);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_REPLAY_H_
