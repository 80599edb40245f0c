#include "cli/replay_command.h"

#include <optional>
#include <utility>
#include <vector>

#include "cli/replay.h"
#include "report/output.h"
#include "spec/outcome.h"
#include "validate/report.h"

namespace permitcheck::cli {

std::string_view ReplayCommand::description() const {
  return "Re-run a counterexample trace against the specification under legacy, rev-d and the "
      "trace's own ruleset (every ruleset with --all-rulesets), and say whether the reference "
      "implementation could replay it. Exit 1 when the trace's own ruleset reports a violation, "
      "0 otherwise, 2 unreadable input.";
}

std::string_view ReplayCommand::examples() const {
  return "  permitcheck replay counterexample.jsonl                  # legacy, rev-d, its own\n"
         "  permitcheck replay --all-rulesets counterexample.jsonl   # and the drafts rev-a..rev-c";
}

void ReplayCommand::add_options(CLI::App& sub) {
  sub.add_option("cex", cex_, "Counterexample trace file; - reads standard input")->required();
  sub.add_option("--format", format_, "Report format")
      ->check(CLI::IsMember(std::vector<std::string>{"text", "json", "junit"}))
      ->capture_default_str();
  sub.add_option("-o,--output", output_, "Write the report to this file instead of stdout");
  sub.add_flag("--all-rulesets", all_rulesets_,
               "Also run the draft revisions rev-a, rev-b and rev-c (protocol review)");
}

int ReplayCommand::run(std::istream& in, std::ostream& out, std::ostream& err) {
  std::optional<trace::Trace> t = read_counterexample(cex_, in, "replay", err);
  if (!t) return spec::kExitBadInput;
  const Replayed r = replay(*std::move(t), all_rulesets_);
  if (!report::write_report(output_, out, format_replay(r, cex_ == "-" ? "<stdin>" : cex_,
                                            *validate::parse_report_format(format_)),
                    "replay", err)) {
    return spec::kExitBadInput;
  }
  return replay_exit_code(r);
}

}  // namespace permitcheck::cli
