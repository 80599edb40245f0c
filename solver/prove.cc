#include "solver/prove.h"

#include <array>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "solver/internal/checks.h"
#include "spec/monitor.h"

namespace permitcheck::solver {
namespace {

constexpr std::array kAllChecks = {Check::kConservation, Check::kFinalization, Check::kIsolation,
                                   Check::kInduction, Check::kConservationAll,
                                   Check::kFinalizationAll, Check::kIsolationAll,
                                   Check::kInductionAll};

// Debian's abseil keeps its own absl::string_view, which absl::StrCat needs.
std::string str(std::string_view s) { return std::string(s); }

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string result_cell(const Result& r) {
  if (const auto* c = std::get_if<Counterexample>(&r.outcome)) {
    return absl::StrCat("counterexample (", c->witnesses.size(), ")");
  }
  return str(outcome_name(r.outcome));
}

}  // namespace

std::string_view scope_name(const Result& r) {
  return r.bounded ? "bounded" : "all parameters";
}

std::span<const Check> all_checks() { return kAllChecks; }

std::string_view check_name(Check check) {
  switch (check) {
    case Check::kConservation:
      return "conservation";
    case Check::kFinalization:
      return "finalization";
    case Check::kIsolation:
      return "isolation";
    case Check::kInduction:
      return "induction";
    case Check::kConservationAll:
      return "conservation-all";
    case Check::kFinalizationAll:
      return "finalization-all";
    case Check::kInductionAll:
      return "induction-all";
    case Check::kIsolationAll:
      return "isolation-all";
  }
  return "conservation";
}

std::optional<Check> parse_check(std::string_view name) {
  for (Check c : kAllChecks) {
    if (check_name(c) == name) return c;
  }
  return std::nullopt;
}

std::string_view check_rules(Check check) {
  switch (check) {
    case Check::kConservation:
      return "E1 E2 K5 K6 K7 K8";
    case Check::kFinalization:
      return "B1 B2 B3 B4 B5 B6 B7 B8 E4";
    case Check::kIsolation:
      return "E3 N2 N3 N4 N5 N6";
    case Check::kInduction:
      return "E5 E6";
    case Check::kConservationAll:
      return "E1 E2 K1 K2 K3 K4 K5 K6 K7 K8 C1 C2 C3 C4 C5 C6 C7";
    case Check::kFinalizationAll:
      return "B1 B2 B3 B4 B5 B6 B7 B8 E4";
    case Check::kInductionAll:
      return "E5 E6";
    case Check::kIsolationAll:
      return "E3 N2 N3 N4 N5 N6";
  }
  return "";
}

Result prove(Check check, const spec::Ruleset& rules, const Bounds& bounds) {
  const auto start = std::chrono::steady_clock::now();
  internal::CheckRun run;
  if (bounds.bmax < 8 || bounds.bmax > 65535 || bounds.kmax < 1 || bounds.kmax > 64 ||
      bounds.depth < 1 || bounds.induction_k < 1 || bounds.induction_bmax < 8 ||
      bounds.induction_bmax > 65535 || bounds.timeout.count() < 1) {
    return Result{.check = check,
                  .ruleset = rules.id,
                  .bound = "invalid",
                  .outcome = Unknown{absl::StrCat(
                      "invalid bounds: bmax ", bounds.bmax, " (8..65535), kmax ", bounds.kmax,
                      " (1..64), depth ", bounds.depth, " (>= 1), induction k ",
                      bounds.induction_k, " (>= 1), induction bound ", bounds.induction_bmax,
                      " (8..65535), timeout ", bounds.timeout.count(), " ms (>= 1)")}};
  }
  try {
  switch (check) {
    case Check::kConservation:
      run = internal::run_conservation(rules, bounds);
      break;
    case Check::kFinalization:
      run = internal::run_finalization(rules, bounds);
      break;
    case Check::kIsolation:
      run = internal::run_isolation(rules, bounds);
      break;
    case Check::kInduction:
      run = internal::run_induction(rules, bounds);
      break;
    case Check::kConservationAll:
      run = internal::run_conservation_all(rules, bounds);
      break;
    case Check::kFinalizationAll:
      run = internal::run_finalization_all(rules, bounds);
      break;
    case Check::kInductionAll:
      run = internal::run_induction_all(rules, bounds);
      break;
    case Check::kIsolationAll:
      run = internal::run_isolation_all(rules, bounds);
      break;
  }
  } catch (const z3::exception& e) {  // Z3 errors stay inside the solver module
    run.outcome = Unknown{internal::queries_interrupted() ? "interrupted"
                                                           : absl::StrCat("Z3: ", e.msg())};
  }
  Result r{.check = check,
           .ruleset = rules.id,
           .bound = std::move(run.bound),
           .bounded = run.bounded,
           .outcome = std::move(run.outcome),
           .queries = run.queries};
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

bool VacuityReport::ok() const {
  if (items.empty()) return false;
  for (const VacuityItem& i : items) {
    if (!i.ok) return false;
  }
  return true;
}

VacuityReport check_vacuity(Check check, const spec::Ruleset& rules, const Bounds& bounds) {
  VacuityReport r{.check = check};
  switch (check) {
    case Check::kConservation:
      r.items = internal::vacuity_conservation(rules, bounds);
      break;
    case Check::kFinalization:
      r.items = internal::vacuity_finalization(rules, bounds);
      break;
    case Check::kIsolation:
      r.items = internal::vacuity_isolation(rules, bounds);
      break;
    case Check::kInduction:
      r.items = internal::vacuity_induction(rules, bounds);
      break;
    case Check::kConservationAll:
      r.items = internal::vacuity_conservation_all(rules, bounds);
      break;
    case Check::kFinalizationAll:
      r.items = internal::vacuity_finalization_all(rules, bounds);
      break;
    case Check::kInductionAll:
      r.items = internal::vacuity_induction_all(rules, bounds);
      break;
    case Check::kIsolationAll:
      r.items = internal::vacuity_isolation_all(rules, bounds);
      break;
  }
  return r;
}

bool as_expected(const Result& r) {
  if (r.ruleset == spec::RulesetId::kRevD) return std::holds_alternative<Proved>(r.outcome);
  if (r.ruleset == spec::RulesetId::kLegacy) return std::holds_alternative<Counterexample>(r.outcome);
  // Revisions A-C break some checks and pass others (rulebook 11; `permitcheck review`).
  return !std::holds_alternative<Unknown>(r.outcome) ||
         (r.ruleset == spec::RulesetId::kRevA &&
          (r.check == Check::kInduction || r.check == Check::kInductionAll));
}

std::string_view outcome_name(const Outcome& outcome) {
  if (std::holds_alternative<Proved>(outcome)) return "proved";
  if (std::holds_alternative<Counterexample>(outcome)) return "counterexample";
  return "unknown";
}

std::string format_table(const std::vector<Result>& results) {
  std::string out = absl::StrFormat("%-16s %-7s %-15s %-52s %-19s %8s  %s\n", "check",
                                    "ruleset", "scope", "bound", "result", "seconds", "expected");
  for (const Result& r : results) {
    absl::StrAppendFormat(&out, "%-16s %-7s %-15s %-52s %-19s %8.2f  %s\n",
                          str(check_name(r.check)), str(spec::ruleset(r.ruleset).name),
                          scope_name(r), r.bound, result_cell(r), r.seconds,
                          as_expected(r) ? "yes" : "NO");
  }
  for (const Result& r : results) {
    if (const auto* u = std::get_if<Unknown>(&r.outcome)) {
      absl::StrAppend(&out, "\n", str(check_name(r.check)), " / ",
                      str(spec::ruleset(r.ruleset).name), ": unknown: ", u->reason, "\n");
    }
    const auto* c = std::get_if<Counterexample>(&r.outcome);
    if (c == nullptr) continue;
    absl::StrAppend(&out, "\n", str(check_name(r.check)), " / ",
                    str(spec::ruleset(r.ruleset).name), " counterexamples (checked against rev-d):\n");
    for (const Witness& w : c->witnesses) {
      absl::StrAppendFormat(&out, "  %-4s %-4s %-42s %s%s\n", w.id.empty() ? "-" : w.id,
                            str(spec::rule_name(w.rule)), w.situation, w.words,
                            w.minimal ? "" : " [not minimized]");
    }
    if (!c->note.empty()) absl::StrAppend(&out, "  note: ", c->note, "\n");
  }
  return out;
}

std::string format_json(const std::vector<Result>& results) {
  std::string out = "{\"results\": [";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "  {\"check\": ", json_string(check_name(r.check)),
                    ", \"ruleset\": ", json_string(spec::ruleset(r.ruleset).name),
                    ", \"outcome\": ", json_string(outcome_name(r.outcome)),
                    ", \"bounded\": ", r.bounded ? "true" : "false",
                    ", \"bound\": ", json_string(r.bound),
                    ", \"result\": ", json_string(outcome_name(r.outcome)),
                    ", \"seconds\": ", absl::StrFormat("%.3f", r.seconds),
                    ", \"queries\": ", r.queries,
                    ", \"expected\": ", as_expected(r) ? "true" : "false");
    if (const auto* p = std::get_if<Proved>(&r.outcome)) {
      absl::StrAppend(&out, ", \"statement\": ", json_string(p->statement));
    } else if (const auto* u = std::get_if<Unknown>(&r.outcome)) {
      absl::StrAppend(&out, ", \"reason\": ", json_string(u->reason));
    } else if (const auto* c = std::get_if<Counterexample>(&r.outcome)) {
      absl::StrAppend(&out, ", \"counterexamples\": [");
      for (std::size_t j = 0; j < c->witnesses.size(); ++j) {
        const Witness& w = c->witnesses[j];
        absl::StrAppend(&out, j == 0 ? "" : ", ", "{\"id\": ", json_string(w.id),
                        ", \"rule\": ", json_string(spec::rule_name(w.rule)),
                        ", \"situation\": ", json_string(w.situation),
                        ", \"words\": ", json_string(w.words),
                        ", \"finding\": ", json_string(w.finding),
                        ", \"events\": ", w.events.size(),
                        ", \"minimal\": ", w.minimal ? "true" : "false", "}");
      }
      absl::StrAppend(&out, "]");
    }
    absl::StrAppend(&out, "}");
  }
  absl::StrAppend(&out, "\n]}\n");
  return out;
}

namespace internal {

Limits limits_of(const Bounds& bounds) { return Limits{bounds.timeout, bounds.rlimit}; }

PopcountEncoding popcount_of(const Bounds& bounds) {
  return bounds.bit_sum_popcount ? PopcountEncoding::kBitSum : PopcountEncoding::kAdderTree;
}

// Rev-d's decisions, written out from the rulebook (sections 2-9) rather than read from
// spec::ruleset(kRevD), the object being checked: a wrong decision value there is then refuted
// by the checks instead of being the reference too.
constexpr spec::Ruleset kReferenceRevD{
    .id = spec::RulesetId::kRevD,
    .name = "rev-d",
    .summary = "the solver's reference: rev-d's decisions as the rulebook states them",
    .broker_sends_message_permits = true,                         // W3
    .consumer_debit = spec::DebitSource::kFinalized,              // B1, B4
    .finalized_dispatchers = spec::DispatcherCoverage::kAllSix,   // B6
    .client_reads_message_permits = true,                         // C1
    .early_failure = spec::EarlyFailureReturn::kResolvedP,        // C2, C7
    .batch_failure = spec::BatchFailureReturn::kRemainingBudget,  // K5, C7
    .direct_returns = spec::DirectReturns::kFromBudget,           // K6
    .before_start = spec::BeforeStartReturn::kCommandOwned,       // K4
    .return_scope = spec::ReturnScope::kIncarnation,              // M1, N3
    .flow_recheck = spec::FlowRecheck::kIdentity,                 // N5
    .inconsistent = spec::InconsistentHandling::kCorruptedData,   // C5, C6: never close
    .skipped_release = spec::SkippedRelease::kDuplicateOnly,      // S5, S6
    .budget_tracked = true,                                       // K1-K8
};

const spec::Ruleset& reference_rules() { return kReferenceRevD; }

bool judge(Witness& w) {
  const spec::MonitorReport report = spec::check_trace(w.header, w.events);
  if (report.violations.empty()) {
    w.finding = "no violation";
    return false;
  }
  w.rule = report.violations.front().rule;
  w.finding = spec::format_finding(report.violations.front());
  return true;
}

VacuityItem vacuity_item(std::string what, const Answer& a, bool want_sat) {
  VacuityItem item{.what = std::move(what)};
  if (a.verdict == Verdict::kUnknown) {
    item.note = absl::StrCat("unknown: ", a.reason);
    return item;
  }
  item.ok = (a.verdict == Verdict::kSat) == want_sat;
  if (!item.ok) item.note = want_sat ? "unsatisfiable" : "satisfiable";
  return item;
}

}  // namespace internal
}  // namespace permitcheck::solver
