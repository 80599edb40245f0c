// Which known bug a finding is an instance of: a legacy row of rulebook section 10 (L1-L11)
// for a run of legacy Pulsar, a review finding of section 11 (F1-F5) for a run of a revision
// A-D, both checked against rev-d. The properties' searches ("find L5") stop at a case whose
// finding carries the row. Decided from the finding, its event and what the driver knows
// (spec/driver_facts.h).
//
//   const DriverFacts d{.legacy_implementation = true, .before_start = true};
//   legacy_signature(Finding{RuleId::kK4, 12, "..."}, false, Settle{.cmd = Id::number(3)}, d);
//   // "L9"
//
// Guarantees: pure functions of their arguments; O(1) apart from the send's entries.
#ifndef PERMITCHECK_SPEC_BUG_SIGNATURE_H_
#define PERMITCHECK_SPEC_BUG_SIGNATURE_H_

#include <optional>
#include <string>

#include "spec/driver_facts.h"
#include "spec/events.h"
#include "spec/monitor.h"

namespace permitcheck::spec {

// Section 11: the review finding (F1-F5) a violation `f` at event `e` of a revision's run is
// an instance of, or nullopt.
//   F1 (K5, K6, K7, E1, E2): a direct return beside a budget that drains as well;
//   F2 (B6): a sticky-key aggregate debited with the pre-admission count;
//   F3 (S5): a dead-letter message object released while dead-letter handling holds it;
//   F4 (C5, C6): the pooled connection closed over inconsistent data, ending incarnations;
//   F5 (E3): connection-scoped credit crossing into a same-connection replacement.
std::optional<std::string> review_signature(const Finding& f, const Event& e,
                                            const DriverFacts& d);

// Section 10: the legacy row (L1-L11) a finding `f` at event `e` is an instance of (a known
// deviation when `deviation`), or nullopt. A run of a revision gets its review finding
// (review_signature) instead.
//   L1-L4 (C7): a payload failure at checksum, metadata, decompression or batch parse;
//   L5 (K7, E2): a partial batch whose parse fails;
//   L6, L7 (E3): a return after a stale-epoch discard, else credit crossing to a replacement;
//   L8 (B4, B6): a debit with the pre-admission count;  L9 (K4): before startMessageId;
//   L10 (X2, a deviation): a direct return of a crypto discard;  L11 (N6): a queued Flow.
std::optional<std::string> legacy_signature(const Finding& f, bool deviation, const Event& e,
                                            const DriverFacts& d);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_BUG_SIGNATURE_H_
