#include "cli/review.h"

#include "absl/status/statusor.h"
#include "cli/options.h"
#include "spec/ruleset.h"

#if PERMITCHECK_HAVE_REVIEW
#include "review/review.h"
#include "spec/outcome.h"
#endif

namespace permitcheck::cli {

std::string_view ReviewCommand::description() const {
  return "Design review of the proposal's revisions: run every engine (properties and solver) on "
      "--from and --to and print what --to breaks and fixes, with minimal counterexamples; "
      "--findings prints the table of review findings F1-F5. Exit 0 nothing unexpected, 1 --to "
      "breaks something --from did not (--findings: a finding not where the rulebook puts it), "
      "2 usage.";
}

std::string_view ReviewCommand::examples() const {
  return "  permitcheck review --findings\n"
      "  permitcheck review --from rev-b --to rev-c";
}

void ReviewCommand::add_options(CLI::App& sub) {
  sub_ = &sub;
  sub_->add_option("--from", from_, "Earlier ruleset (legacy, rev-a, rev-b, rev-c, rev-d)")
      ->capture_default_str();
  sub_->add_option("--to", to_, "Later ruleset")->capture_default_str();
  sub_->add_flag("--findings", findings_,
                 "Print the findings table: F1-F5 x {its revision, rev-d} x {properties, solver}");
  sub_->add_option("--format", format_, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub_->add_option("--seed", seed_, "Seed of the property searches")->capture_default_str();
  sub_->add_option("--cases", cases_, "Cases per property search (default 1500)")
      ->check(IntRange(1, 100000000));
  sub_->add_option("--bound", bound_, "Solver batch size bound B <= bound (8..65535)")
      ->check(CLI::Range(8, 65535))
      ->capture_default_str();
  sub_->add_option("--check", checks_,
                   "Only these solver checks besides the findings' own (conservation, "
                   "finalization, isolation, induction; repeatable; default all)");
  sub_->add_option("--trace-dir", trace_dir_,
                   "Write every counterexample here as a trace file and re-check it");
}

int ReviewCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
#if PERMITCHECK_HAVE_REVIEW
  absl::StatusOr<const spec::Ruleset*> from = spec::parse_ruleset(from_);
  absl::StatusOr<const spec::Ruleset*> to = spec::parse_ruleset(to_);
  if (!from.ok() || !to.ok()) {
    err << "permitcheck review: " << (from.ok() ? to : from).status().message() << "\n";
    return spec::kExitBadInput;
  }
  review::Options o = review::Options::defaults();
  o.params.seed = seed_;
  if (cases_ > 0) o.params.find_cases = cases_;
  o.bounds.bmax = bound_;
  o.trace_dir = trace_dir_;
  if (!checks_.empty()) {
    o.checks.clear();
    for (const std::string& name : checks_) {
      const std::optional<solver::Check> check = solver::parse_check(name);
      if (!check) {
        err << "permitcheck review: --check " << name
            << ": expected conservation, finalization, isolation or induction\n";
        return spec::kExitBadInput;
      }
      o.checks.push_back(*check);
    }
  }
  if (findings_) {
    const std::vector<review::Search> table = review::findings_table(o);
    out << (format_ == "json" ? review::format_findings_json(table)
                              : review::format_findings_table(table));
    return review::findings_as_expected(table) ? spec::kExitPass : spec::kExitViolation;
  }
  const review::Comparison c = review::compare((*from)->id, (*to)->id, o);
  out << (format_ == "json" ? review::format_comparison_json(c) : review::format_comparison(c));
  return c.regressed() ? spec::kExitViolation : spec::kExitPass;
#else
  (void)out;
  err << "permitcheck review: not built in this configuration (needs properties and solver)\n";
  return spec::kExitBadInput;
#endif
}

}  // namespace permitcheck::cli
