// Client-side resolution and validation of P for one command (rules W2, C1-C6).
//
// On receipt the client resolves what it can (C2): this early value is what a failure before
// metadata settles. Once metadata gives B, the command is validated (C3) and lands in one of
// three verdicts: valid, protocol error (C4: close the connection) or inconsistent (C5:
// corrupted-data handling that still settles exactly P).
//
//   Resolution early = resolve_early(rev_d, /*message_permits=*/3, AckSet({37}));  // 3, explicit
//   Validation v = validate_permits(rev_d, 3, AckSet({37}), /*batch_size=*/8);
//   // v.verdict == Verdict::kValid, v.resolution.p == 3
#ifndef PERMITCHECK_SPEC_RESOLVE_H_
#define PERMITCHECK_SPEC_RESOLVE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "spec/ack_set.h"
#include "spec/rule_id.h"
#include "spec/ruleset.h"

namespace permitcheck::spec {

// Where a resolved P came from: the C1 ladder's four steps.
enum class PermitSource { kExplicit, kAckSet, kBatch, kLegacy };

std::string_view permit_source_name(PermitSource source);  // "explicit", "ack_set", ...
std::optional<PermitSource> parse_permit_source(std::string_view name);

struct Resolution {
  std::int64_t p = 1;
  PermitSource source = PermitSource::kLegacy;
  friend bool operator==(const Resolution&, const Resolution&) = default;
};

// W2: whether a message_permits value, read unsigned, is valid (1..2^31-1).
bool message_permits_in_range(std::uint64_t value);

// C2 (ladder C1 before B is known): a present in-range explicit value; else the popcount of
// every ack_set bit when some bit is set (X6); else 1. A ruleset that does not read the field
// (legacy) treats it as absent. An out-of-range explicit value falls through the ladder; the
// caller must still apply C4 (see validate_permits).
Resolution resolve_early(const Ruleset& rules, std::optional<std::uint64_t> message_permits,
                         const AckSet& ack_set);

enum class Verdict {
  kValid,          // hand off messages against resolution.p
  kProtocolError,  // C4: no credit for the command, close the source connection
  kInconsistent,   // C5 / decision 2: corrupted-data handling, settle resolution.p
};

struct Validation {
  Verdict verdict = Verdict::kValid;
  Resolution resolution;  // the P the command settles (meaningless for kProtocolError)
  RuleId rule = RuleId::kC3;  // the rule that decided the verdict
  std::string reason;         // the numbers, for diagnostics ("explicit 3 != expected 4")
};

// C3-C6 once metadata is parsed (batch_size = B). Expected P is the ack_set popcount in
// [0, B) when ack_set is present, else B. A present explicit value must be in range (C4) and
// equal the expected value (C5). With the field absent, B <= 0, an all-zero ack_set or bits only
// beyond B are corrupted data settling the early value (decision 2); never a protocol error (C6).
Validation validate_permits(const Ruleset& rules, std::optional<std::uint64_t> message_permits,
                            const AckSet& ack_set, std::int64_t batch_size);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_RESOLVE_H_
