// The legacy catalogue: rulebook section 10 (L1-L11) as event sequences.
//
// Each entry holds the trace legacy Pulsar produces for the situation, the trace of the same
// situation done right, the rulebook's numbers, and the rule the monitor must report when the
// legacy trace is checked against rev-d. The sequences are produced by the specification's own
// client and broker functions under each ruleset (client_command.h, finalize.h), not written by
// hand, so a change to a decision point shows up here.
//
//   for (const CatalogueEntry& e : legacy_catalogue()) {
//     MonitorReport r = check_trace(e.header_for(RulesetId::kRevD), e.legacy);
//     // r.violations (or r.deviations for L10) names e.rev_d_rule
//   }
#ifndef PERMITCHECK_SPEC_LEGACY_CATALOGUE_H_
#define PERMITCHECK_SPEC_LEGACY_CATALOGUE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "spec/events.h"
#include "spec/rule_id.h"

namespace permitcheck::spec {

struct CatalogueEntry {
  std::string_view id;         // "L1"
  std::string_view situation;  // the rulebook's situation, in short
  TraceHeader header;          // q, t and source; ruleset set by header_for()
  std::vector<Event> legacy;   // what legacy Pulsar does
  std::vector<Event> correct;  // the same situation under rev-d
  RuleId rev_d_rule;           // reported when `legacy` is checked against rev-d
  bool rev_d_deviation;        // true when that report is a known deviation (L10: X2)
  std::int64_t legacy_value;   // the rulebook's "legacy return" (permits returned or debited)
  std::int64_t correct_value;  // the rulebook's "correct" value
  std::string_view effect;     // "99 permits lost; repeat -> stall"

  TraceHeader header_for(RulesetId ruleset) const {
    TraceHeader h = header;
    h.ruleset = ruleset;
    return h;
  }
};

// L1..L11 in rulebook order.
std::vector<CatalogueEntry> legacy_catalogue();

// The rule a legacy row's trace breaks under rev-d (its entry's rev_d_rule: L1-L4 C7, L5 K7,
// L6/L7 E3, L8 B4, L9 K4, L10 X2, L11 N6), or nullopt for an id that is no row.
std::optional<RuleId> legacy_row_rule(std::string_view id);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_LEGACY_CATALOGUE_H_
