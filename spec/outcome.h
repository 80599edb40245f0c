// The outcomes every judging command reports (validate, tap, conform, check, prove, and any
// report across them), their exit codes, and the one way outcomes combine. The one definition:
// docs/cli.md, "Outcomes and exit codes", documents it for users.
//
//   Outcome run = Outcome::kNotApplicable;
//   for (const Scenario& s : scenarios) run = combine(run, s.outcome);
//   return exit_code(run);   // 0 PASS, 1 FAIL, 3 INCOMPLETE
//
// Guarantees: combine() is commutative and associative, kNotApplicable is its identity (a
// NOT-APPLICABLE scenario never makes a run fail or pass on its own), and FAIL beats
// INCOMPLETE beats PASS. O(1), no allocation.
#ifndef PERMITCHECK_SPEC_OUTCOME_H_
#define PERMITCHECK_SPEC_OUTCOME_H_

#include <string_view>

namespace permitcheck::spec {

enum class Outcome {
  // Everything in scope was seen and checked (at least one consumer), and no rule broke.
  kPass,
  // A rule was broken; the finding names its rule ID.
  kFail,
  // Nothing broken in what was seen, but something in scope could not be seen or understood
  // (a gap in a capture, a scenario that could not finish); the report says what, where, when.
  kIncomplete,
  // The check does not apply to this subject (a scenario whose window this client cannot
  // open), with the reason. Listed, never a failure or a pass.
  kNotApplicable,
};

// The exit status of every permitcheck command.
enum ExitCode : int {
  kExitPass = 0,        // PASS
  kExitViolation = 1,   // FAIL: a rule was broken
  kExitBadInput = 2,    // bad input or usage, or nothing checked: the reason goes to stderr
  kExitIncomplete = 3,  // INCOMPLETE: nothing broken in what was seen, but not all was seen
};

// "PASS", "FAIL", "INCOMPLETE", "NOT-APPLICABLE": as reports print them.
constexpr std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "PASS";
    case Outcome::kFail: return "FAIL";
    case Outcome::kIncomplete: return "INCOMPLETE";
    case Outcome::kNotApplicable: return "NOT-APPLICABLE";
  }
  return "INCOMPLETE";
}

// The outcome of a run made of two parts: FAIL if either failed, else INCOMPLETE if either is,
// else PASS if either passed; NOT-APPLICABLE only when both are.
constexpr Outcome combine(Outcome a, Outcome b) {
  auto rank = [](Outcome o) {
    switch (o) {
      case Outcome::kNotApplicable: return 0;
      case Outcome::kPass: return 1;
      case Outcome::kIncomplete: return 2;
      case Outcome::kFail: return 3;
    }
    return 2;
  };
  return rank(a) >= rank(b) ? a : b;
}

// The exit status of a run with this outcome. A run in which nothing applied checked nothing:
// kExitBadInput, as a run that exercised nothing ("nothing checked").
constexpr ExitCode exit_code(Outcome o) {
  switch (o) {
    case Outcome::kPass: return kExitPass;
    case Outcome::kFail: return kExitViolation;
    case Outcome::kIncomplete: return kExitIncomplete;
    case Outcome::kNotApplicable: return kExitBadInput;
  }
  return kExitIncomplete;
}

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_OUTCOME_H_
