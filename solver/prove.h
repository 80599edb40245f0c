// Z3 proofs of the PIP-491 permit invariants, with counterexamples as traces.
//
// Four checks, each encoded once against the spec::Ruleset decision points, so rev-d and legacy
// come from the same encoder:
//   conservation  per command, every B <= bmax: returns exactly P, never more (E1 E2 K5-K8)
//   finalization  every send of k <= kmax entries, every dispatcher: one finalized ΣP (B1-B8 E4)
//   isolation     bounded model checking to `depth`: incarnations stay apart (E3 N2-N6)
//   induction     k-induction: available + accumulator + held + in flight = Q, unbounded (E5)
// A check answers Proved, Counterexample (minimal traces the spec::Monitor re-checks against
// rev-d, with the numbers in words) or Unknown (a query hit its limit: never a false Proved).
//
//   Result r = prove(Check::kConservation, spec::ruleset(spec::RulesetId::kLegacy));
//   for (const Witness& w : std::get<Counterexample>(r.outcome).witnesses)
//     std::cout << w.id << " " << spec::rule_name(w.rule) << ": " << w.words << "\n";
#ifndef PERMITCHECK_SOLVER_PROVE_H_
#define PERMITCHECK_SOLVER_PROVE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spec/events.h"
#include "spec/rule_id.h"
#include "spec/ruleset.h"

namespace permitcheck::solver {

// The first four are bounded where the comment in Bounds says; the *All checks hold for every
// parameter (solver/NOTES.md, "Proofs for every parameter").
enum class Check {
  kConservation,
  kFinalization,
  kIsolation,
  kInduction,
  kConservationAll,  // "conservation-all": the command summary, every B and P; bit-level refinement
  kFinalizationAll,  // "finalization-all": induction over the entries of a send
  kInductionAll,     // "induction-all": E5/E6 with commands abstracted by their summary
  kIsolationAll,     // "isolation-all": an inductive invariant over incarnation tokens
};

std::span<const Check> all_checks();
std::string_view check_name(Check check);  // "conservation", "finalization", ...
std::optional<Check> parse_check(std::string_view name);

// The rules each check covers, as the rulebook names them ("E1 E2 K5 K6 K7 K8").
std::string_view check_rules(Check check);

struct Bounds {
  int bmax = 64;            // conservation: B <= bmax, ack_set of bmax bits. REQUIRES 8..65535
  int kmax = 4;             // finalization: entries per send, each ack_set of bmax bits
  int depth = 12;           // isolation: unrolling depth; induction: depth of its counterexamples
  int induction_k = 1;      // induction: k of k-induction (>= 1)
  int induction_bmax = 8;   // induction: B of the commands inside the transition system
  std::chrono::milliseconds timeout{60000};  // per solver query
  std::optional<unsigned> rlimit;            // per solver query, deterministic
  bool minimize = true;     // shrink counterexamples (B, P, counts, depth)
  bool bit_sum_popcount = false;  // encode popcount as a sum of bits instead of an adder tree
};

// One counterexample: a trace-format trace (header ruleset rev-d, so `validate` reports the rule
// the failing ruleset breaks) and its numbers in words.
struct Witness {
  std::string id;         // legacy catalogue row ("L1") when the situation is one, else ""
  std::string situation;  // the class of situation the solver was asked about
  spec::TraceHeader header;
  std::vector<spec::Event> events;
  spec::RuleId rule = spec::RuleId::kE1;  // the first violation the monitor reports
  std::string finding;    // that violation, formatted ("line 7: C7 ...")
  std::string words;      // "B=2 (batch), message_permits=2, ..., checksum fails, returned 1, P=2"
  bool minimal = true;    // minimization finished within the limits
};

struct Proved {
  std::string statement;  // what was proved, with its bound
};
struct Counterexample {
  std::vector<Witness> witnesses;  // one per class of situation that fails; at least one
  std::string note;                // what the search of further classes left open, if anything
};
struct Unknown {
  std::string reason;
};
using Outcome = std::variant<Proved, Counterexample, Unknown>;

struct Result {
  Check check = Check::kConservation;
  spec::RulesetId ruleset = spec::RulesetId::kRevD;
  std::string bound;      // "B<=64", "k<=4, B<=64, 7 dispatchers", "depth 12", "k=1"
  bool bounded = true;    // false: proved (or refuted) for every parameter; `bound` says which
                          // part, if any, is still bounded
  Outcome outcome;
  double seconds = 0;
  int queries = 0;        // solver queries made
};

// Runs one check for one ruleset. Bounds outside their ranges give Unknown("invalid bounds").
Result prove(Check check, const spec::Ruleset& rules, const Bounds& bounds = {});

// Trust in a proof: its assumptions are satisfiable (every class of situation it quantifies
// over is reachable) and a deliberately false variant of each property is refuted.
struct VacuityItem {
  std::string what;   // "assumptions: batch parse failure reachable", "false: total == P + 1"
  bool ok = false;    // satisfiable assumption / refuted false variant
  std::string note;   // Z3's reason when the query was unknown
};
struct VacuityReport {
  Check check = Check::kConservation;
  std::vector<VacuityItem> items;
  bool ok() const;
};
VacuityReport check_vacuity(Check check, const spec::Ruleset& rules, const Bounds& bounds = {});

// The expected outcome for the main job: rev-d proved, every other ruleset a counterexample.
bool as_expected(const Result& result);

std::string_view outcome_name(const Outcome& outcome);  // "proved", "counterexample", "unknown"
// "bounded" (by what: Result::bound) or "all parameters".
std::string_view scope_name(const Result& result);

// The table of the main job: check, ruleset, scope (bounded or all parameters), bound, result,
// seconds (and witnesses below it). The JSON gives each result "check", "ruleset", "outcome",
// "bounded" (true or false) and "bound", with "result" (= outcome) kept for older readers.
std::string format_table(const std::vector<Result>& results);
std::string format_json(const std::vector<Result>& results);

}  // namespace permitcheck::solver

#endif  // PERMITCHECK_SOLVER_PROVE_H_
