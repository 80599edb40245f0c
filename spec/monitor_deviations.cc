// Known deviations X1-X6 (docs/rules.md, "Accepted inexactness (X)"): when one excuses a finding,
// and by how much.
#include "absl/strings/str_cat.h"
#include "spec/internal/monitor_state.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {

// Whether the known deviations of `inc` account for `excess` units above (or, negative,
// below) the exact balance. Deviations that net to an over-return of d account for a balance
// up to d above it, never for one below it (a loss is not explained by returning too much);
// deviations that net to withholding account for exactly what they withhold.
bool Monitor::State::explained(const ClientIncarnation& inc, std::int64_t excess) {
  if (!inc.deviation_delta_known) return true;
  return inc.deviation_delta > 0 ? excess > 0 && excess <= inc.deviation_delta
                                 : excess == inc.deviation_delta;
}

// X1/X6: with the field absent, an early failure settles the fallback value.
void Monitor::State::early_failure_deviations(Command& c) {
  // Only checksum and metadata failures come before B is known; decompression knows B.
  if (c.failure != FailureStage::kChecksum && c.failure != FailureStage::kMetadata) return;
  if (!invariants()) return;
  if (c.message_permits && rules->client_reads_message_permits) return;
  std::optional<std::int64_t> debited = c.broker_p;
  if (!debited && c.wire_batch_size) {
    debited = candidate_permits(*c.wire_batch_size, c.ack_set);
  }
  ClientIncarnation* inc = inc_of(c);
  if (c.ack_set.absent()) {
    deviation(RuleId::kX1,
              absl::StrCat(cmd_name(c), " field absent (old broker) and ",
                           to_absl(failure_stage_name(*c.failure)),
                           " failure: returned the fallback ",
                           c.budget_p, debited ? absl::StrCat(" for a debit of ", *debited) : "",
                           "; exactness needs an upgraded broker"));
    if (inc && debited && *debited != c.budget_p) {
      inc->deviation = RuleId::kX1;
      inc->deviation_delta_known = false;
    }
  } else if (debited && *debited != c.budget_p) {
    deviation(RuleId::kX6, absl::StrCat(cmd_name(c), " field absent and ",
                                        to_absl(failure_stage_name(*c.failure)),
                                        " failure: counted ",
                                        count_noun(c.budget_p, "ack_set bit"),
                                        ", bits beyond B included, for a debit of ", *debited));
    if (inc) {
      inc->deviation = RuleId::kX6;
      inc->deviation_delta_known = false;
    }
  }
}

// S4/X3, X4, X5: a command whose units moved to a specialised path, at completion.
void Monitor::State::transferred_deviations(Command& c, ClientIncarnation* inc) {
  if (c.path && c.returned() == 0 && c.dropped == 0) {
    // S4/X3: crypto FAIL holds P until the incarnation ends; X4: chunk failure branches.
    const bool crypto = c.path == TransferPath::kCrypto;
    deviation(crypto ? RuleId::kX3 : RuleId::kX4,
              absl::StrCat(cmd_name(c), crypto ? " (crypto FAIL) holds P = "
                                               : " (chunk failure branch) returned nothing for "
                                                 "P = ",
                           c.budget_p, crypto ? " until its incarnation ends" : ""));
    if (inc) {
      inc->deviation = crypto ? RuleId::kX3 : RuleId::kX4;
      inc->deviation_delta = sat_sub(inc->deviation_delta, c.budget_p);  // held (X3) or never returned (X4)
    }
  } else if (c.path == TransferPath::kProcessor && c.returned() != c.budget_p) {
    deviation(RuleId::kX5, absl::StrCat(cmd_name(c), " custom processor returned ",
                                        c.returned(), " for P = ", c.budget_p));
    if (inc) {
      inc->deviation = RuleId::kX5;
      inc->deviation_delta = sat_add(inc->deviation_delta, sat_sub(c.returned(), c.budget_p));
    }
  }
}

}  // namespace permitcheck::spec
