// Test support for the solver: finding a witness by catalogue row, re-checking a witness through
// the monitor (after a trace-format round trip when the trace module is built), and printing.
// The sources are compiled in unity batches (tests/CMakeLists.txt): a helper two of them need
// lives here, not in each one's anonymous namespace.
#ifndef PERMITCHECK_TESTS_SOLVER_SOLVER_TESTING_H_
#define PERMITCHECK_TESTS_SOLVER_SOLVER_TESTING_H_

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "solver/internal/z3_util.h"
#include "solver/prove.h"
#include "spec/legacy_catalogue.h"
#include "spec/monitor.h"
#include "spec/ruleset.h"
#ifdef PERMITCHECK_SOLVER_HAS_TRACE
#include "solver/trace_output.h"
#include "trace/reader.h"
#endif

namespace permitcheck::solver {

inline const spec::Ruleset& rev_d() { return spec::ruleset(spec::RulesetId::kRevD); }
inline const spec::Ruleset& legacy() { return spec::ruleset(spec::RulesetId::kLegacy); }

inline std::string dump(const Result& r) { return format_table({r}); }
inline std::string dump(const VacuityReport& r) {
  std::string out;
  for (const VacuityItem& i : r.items) {
    out += (i.ok ? "ok   " : "FAIL ") + i.what + (i.note.empty() ? "" : " (" + i.note + ")") + "\n";
  }
  return out;
}

// Bounds for a test that proves something (issue 18): no wall-clock limit that matters (a day
// per query), only Z3's deterministic resource limit per query, `rlimit`, sized from a
// measurement (internal::rlimit_high_water()) with a wide margin, so the verdict never depends
// on how busy the machine is.
inline Bounds proof_bounds(unsigned rlimit) {
  Bounds b;
  b.timeout = std::chrono::hours(24);
  b.rlimit = rlimit;
  return b;
}

// PERMITCHECK_RLIMIT_REPORT=1 prints, after each test, the largest rlimit count one query of it
// used (internal::rlimit_high_water()): the measurement a test's proof_bounds() is sized from.
//   PERMITCHECK_RLIMIT_REPORT=1 build/tests/solver_tests --gtest_filter='SolverIsolation.*'
class RlimitReport : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo&) override { internal::reset_rlimit_high_water(); }
  void OnTestEnd(const ::testing::TestInfo& t) override {
    std::cerr << "rlimit: " << t.test_suite_name() << "." << t.name() << " peak "
              << internal::rlimit_high_water() << " per query\n";
  }
};
inline const bool kRlimitReportRegistered = [] {
  const char* env = std::getenv("PERMITCHECK_RLIMIT_REPORT");
  if (env != nullptr && std::string(env) == "1") {
    ::testing::UnitTest::GetInstance()->listeners().Append(new RlimitReport);
  }
  return true;
}();

inline const Counterexample* counterexample(const Result& r) {
  return std::get_if<Counterexample>(&r.outcome);
}

// The witness for catalogue row `id`, or null.
inline const Witness* witness_for(const Result& r, std::string_view id) {
  const Counterexample* c = counterexample(r);
  if (c == nullptr) return nullptr;
  for (const Witness& w : c->witnesses) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

// The rule the legacy catalogue reports for row `id` against rev-d.
inline spec::RuleId catalogue_rule(std::string_view id) {
  const std::optional<spec::RuleId> rule = spec::legacy_row_rule(id);
  if (!rule) ADD_FAILURE() << "no catalogue row " << id;
  return rule.value_or(spec::RuleId::kE1);
}

// The monitor's report on the witness's trace, read back from its trace-format text when the
// trace module is built (so the file `validate` would read gives the same verdict).
inline spec::MonitorReport recheck(const Witness& w) {
#ifdef PERMITCHECK_SOLVER_HAS_TRACE
  const std::string text = witness_text(w);
  absl::StatusOr<trace::Trace> t = trace::read_trace_text(text);
  if (!t.ok()) {
    ADD_FAILURE() << "witness trace does not read back: " << t.status() << "\n" << text;
    return {};
  }
  EXPECT_EQ(t->header.ruleset, spec::RulesetId::kRevD);
  return spec::check_trace(t->header, t->events);
#else
  return spec::check_trace(w.header, w.events);
#endif
}

// The witness reproduces: the monitor's first violation is `rule` (and what the solver said).
inline void expect_reproduces(const Witness& w, spec::RuleId rule) {
  const spec::MonitorReport r = recheck(w);
  ASSERT_FALSE(r.violations.empty()) << w.id << " " << w.words;
  EXPECT_EQ(r.violations.front().rule, rule)
      << w.id << " " << w.words << "\n" << spec::format_finding(r.violations.front());
  EXPECT_EQ(w.rule, rule) << w.finding;
}

}  // namespace permitcheck::solver

#endif  // PERMITCHECK_TESTS_SOLVER_SOLVER_TESTING_H_
