#include "cli/check.h"

#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "nlohmann/json.hpp"
#include "base/absl_view.h"
#include "spec/outcome.h"
#include "spec/plain_text.h"
#include "spec/ruleset.h"
#include "validate/junit.h"
#include "validate/report.h"

#ifdef PERMITCHECK_HAVE_PROPERTIES
#include "properties/options.h"
#include "properties/runner.h"
#endif

namespace permitcheck::cli {
namespace {

const std::vector<std::string> kCheckFormats = {"text", "json", "junit"};

// Parses --ruleset or --against; prints the error and returns nullptr on failure.
const spec::Ruleset* ruleset_or_error(const std::string& name, std::ostream& err) {
  absl::StatusOr<const spec::Ruleset*> r = spec::parse_ruleset(name);
  if (!r.ok()) {
    err << "permitcheck check: --ruleset: " << r.status().message() << "\n";
    return nullptr;
  }
  return *r;
}

// Without the properties library: say so, exit 2.
[[maybe_unused]] int not_built(std::ostream& err) {
  err << "permitcheck check: not built in this configuration (the properties library, "
         "properties/, was not part of this build)\n";
  return spec::kExitBadInput;
}

}  // namespace

struct CheckCommand::Suite {
#ifdef PERMITCHECK_HAVE_PROPERTIES
  // permitcheck-properties' defaults (1000 cases; PERMITCHECK_PROPERTY_* override them), the
  // counterexamples in ./counterexamples unless --out says otherwise.
  properties::SuiteOptions options{.params = properties::PropertyParams::from_env(1000),
                                   .out_dir = "counterexamples"};
#endif
};

CheckCommand::CheckCommand() : suite_options_(std::make_unique<Suite>()) {}

std::string_view CheckCommand::description() const {
  return "Run the model-based properties (reference implementation checked by the specification). "
      "Exit 0 holds, 1 counterexample, 2 usage. With --suite: the whole report of "
      "permitcheck-properties (rev-d passes, legacy fails, L1-L11 found and written to --out, "
      "the mutation table).";
}

std::string_view CheckCommand::examples() const {
  return "  permitcheck check --cases 1000 --seed 491\n"
      "  permitcheck check --ruleset legacy --counterexample cex.jsonl";
}

void CheckCommand::add_options(CLI::App& sub) {
  sub_ = &sub;
  CLI::Option* ruleset =
      sub_->add_option("--ruleset", options_.ruleset,
                       "Behaviour the reference implementation runs (legacy, rev-a, rev-b, rev-c, rev-d)")
          ->capture_default_str();
  CLI::Option* against =
      sub_->add_option("--against", options_.against,
                       "Rules the monitor and the model check it by (default rev-d: the PIP-491 "
                       "invariant; legacy with --ruleset legacy checks fidelity)")
          ->capture_default_str();
  CLI::Option* counterexample =
      sub_->add_option("--counterexample", options_.counterexample,
                       "On failure, write the shrunk counterexample as a trace file here");
  // The ranges are those of permitcheck-properties' --cases and --steps (properties/options.h).
  sub_->add_option("--cases", options_.cases,
                   "Cases in all (split across shards); with --suite: cases of the rev-d and "
                   "legacy property (default 1000)")
      ->check(IntRange(1, 1000000000))
      ->capture_default_str();
  sub_->add_option("--seed", options_.seed, "Seed (shard i uses seed + i)")->capture_default_str();
  sub_->add_option("--steps", options_.steps, "Steps per case")
      ->check(IntRange(1, 100000))
      ->capture_default_str();
  CLI::Option* shard = sub_->add_option("--shard", shard_, "Run shard i of n (i/n, 0-based), to split a sweep")
                           ->capture_default_str();
  CLI::Option* coverage =
      sub_->add_flag("--coverage", options_.coverage,
                     "Also report what the cases reached: each ruleset decision point (taken which "
                     "way) and rule, and the generators' distributions; exit 1 when a decision "
                     "point or rule was never reached");
  CLI::Option* progress =
      sub_->add_flag("--progress", options_.progress,
                     "Progress line on stderr (cases done, elapsed, left) even when it is no terminal");
  CLI::Option* no_progress =
      sub_->add_flag("--no-progress", options_.no_progress, "No progress line")->excludes(progress);
  CLI::Option* format = sub_->add_option("--format", options_.format, "Report format")
                            ->check(CLI::IsMember(kCheckFormats))
                            ->capture_default_str();
  CLI::Option* suite =
      sub_->add_flag("--suite", suite_,
                     "Run the whole report of permitcheck-properties instead of one property "
                     "(text only); the options below are its own");
  for (CLI::Option* single :
       {ruleset, against, counterexample, shard, coverage, format, progress, no_progress}) {
    suite->excludes(single);
  }
#ifdef PERMITCHECK_HAVE_PROPERTIES
  for (CLI::Option* o : properties::add_suite_options(*sub_, suite_options_->options)) o->needs(suite);
#endif
}

CheckCommand::~CheckCommand() = default;

int CheckCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
  if (suite_) {
#ifndef PERMITCHECK_HAVE_PROPERTIES
    (void)out;
    return not_built(err);
#else
    properties::SuiteOptions o = suite_options_->options;
    if (sub_->get_option("--cases")->count() > 0) o.params.cases = options_.cases;
    if (sub_->get_option("--seed")->count() > 0) o.params.seed = options_.seed;
    if (sub_->get_option("--steps")->count() > 0) o.params.max_steps = options_.steps;
    return properties::run_suite(o, out) == 0 ? spec::kExitPass : spec::kExitViolation;
#endif
  }
  const std::size_t slash = shard_.find('/');
  int i = 0, n = 0;
  if (slash == std::string::npos || !absl::SimpleAtoi(shard_.substr(0, slash), &i) ||
      !absl::SimpleAtoi(shard_.substr(slash + 1), &n) || n < 1 || i < 0 || i >= n) {
    err << "permitcheck check: --shard \"" << shard_ << "\": expected i/n with 0 <= i < n\n";
    return spec::kExitBadInput;
  }
  options_.shard_index = i;
  options_.shard_count = n;
  return run_check(options_, out, err);
}

int run_check(const CheckOptions& o, std::ostream& out, std::ostream& err) {
  const spec::Ruleset* rules = ruleset_or_error(o.ruleset, err);
  if (rules == nullptr) return spec::kExitBadInput;
  const spec::Ruleset* against = ruleset_or_error(o.against, err);
  if (against == nullptr) return spec::kExitBadInput;
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count) {
    err << "permitcheck check: --shard " << o.shard_index << "/" << o.shard_count
        << ": need 0 <= i < n\n";
    return spec::kExitBadInput;
  }
  if (o.cases < 1 || o.steps < 1) {
    err << "permitcheck check: --cases and --steps must be at least 1\n";
    return spec::kExitBadInput;
  }
#ifndef PERMITCHECK_HAVE_PROPERTIES
  (void)out;
  return not_built(err);
#else
  properties::PropertyParams params;
  params.seed = o.seed + static_cast<std::uint64_t>(o.shard_index);
  params.cases = o.cases / o.shard_count + (o.shard_index < o.cases % o.shard_count ? 1 : 0);
  params.max_steps = o.steps;
  if (params.cases == 0) {
    out << "shard " << o.shard_index << "/" << o.shard_count << ": no cases (cases < shards)\n";
    return spec::kExitPass;
  }
  properties::PropertySpec spec;
  spec.name = absl::StrCat(std::string(to_absl(rules->name)), " implementation against ",
                           std::string(to_absl(against->name)));
  spec.mode = impl::mode_of(rules->id);  // every ruleset has an implementation mode
  spec.rules = against->id;
  spec.goal = properties::Goal::conform();
  properties::Coverage coverage;
  if (o.coverage) spec.coverage = &coverage;
  ProgressLine line(err, "check", "cases",
                    progress_wanted(o.progress, o.no_progress, stderr_is_terminal()));
  spec.on_case_passed = [&line, total = params.cases](int passed) { line.update(passed, total); };
  const properties::PropertyResult r = properties::run_property(spec, params);
  line.finish();
  const std::vector<std::string> unreached = o.coverage ? coverage.unreached() : std::vector<std::string>{};
  if (!r.passed && r.counterexample && !o.counterexample.empty()) {
    std::string recheck;
    const properties::Problem& p = r.counterexample->problem;
    if (!p.rule ||
        !properties::write_and_recheck(*r.counterexample, o.counterexample, *p.rule, p.deviation, &recheck)) {
      err << "permitcheck check: wrote " << o.counterexample
          << ", but the monitor did not re-check it to the same rule: " << recheck << "\n";
    } else {
      err << "permitcheck check: counterexample written to " << o.counterexample
          << " (re-checked: " << spec::rule_name(*p.rule) << ")\n";
    }
  }
  const std::string shard = absl::StrCat(o.shard_index, "/", o.shard_count);
  if (o.format == "json") {
    nlohmann::ordered_json j = {{"tool", "permitcheck check"},
                                {"property", r.name},
                                {"ruleset", std::string(to_absl(rules->name))},
                                {"against", std::string(to_absl(against->name))},
                                {"shard", shard},
                                {"seed", r.seed},
                                {"cases", r.cases},
                                {"steps", r.max_steps},
                                {"passed", r.passed}};
    if (o.coverage) {
      j["coverage"] = coverage.format(coverage.cases());
      j["unreached"] = unreached.size();
    }
    j["findings"] = nlohmann::ordered_json::array();
    if (!r.passed && r.counterexample && r.counterexample->problem.rule) {
      const properties::Problem& p = r.counterexample->problem;
      j["findings"].push_back(validate::finding_object(*p.rule, p.line.value_or(0), p.text));
    }
    if (!r.passed) j["failure"] = properties::format_failure(r);
    out << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  } else if (o.format == "junit") {
    validate::JunitSuite suite{.name = "permitcheck check", .suite = "check"};
    validate::JunitCase c{.classname = "permitcheck.check",
                .name = absl::StrCat(r.name, " shard ", shard, " seed ", r.seed)};
    if (!r.passed) {
      c.failure = validate::JunitCase::Failure{"counterexample", "property failed", properties::format_failure(r)};
    }
    suite.cases.push_back(std::move(c));
    out << validate::format_junit(suite);
  } else {
    if (r.passed) {
      out << "property \"" << r.name << "\" holds: " << r.cases << " cases, up to " << r.max_steps
          << " steps each, seed " << r.seed << ", shard " << shard << "\n";
    } else {
      out << properties::format_failure(r);
    }
    if (o.coverage) out << "\n" << coverage.format(coverage.cases());
  }
  if (o.coverage && !unreached.empty()) {
    err << "permitcheck check: coverage: "
        << spec::count_noun(unreached.size(), "decision point or rule", "decision points or rules")
        << " never reached in " << spec::count_noun(coverage.cases(), "case") << "\n";
    return spec::kExitViolation;
  }
  return r.passed ? spec::kExitPass : spec::kExitViolation;
#endif
}

}  // namespace permitcheck::cli
