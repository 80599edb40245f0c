#include "spec/rule_id.h"

#include <array>

namespace permitcheck::spec {
namespace {

constexpr std::string_view kBroker = "2. Broker rules";
constexpr std::string_view kWire = "3. Wire rules";
constexpr std::string_view kResolve = "4. Resolving and validating P";
constexpr std::string_view kBudget = "5. The command budget";
constexpr std::string_view kPaths = "6. Specialised paths";
constexpr std::string_view kLifecycle = "7. Message lifecycle and incarnations";
constexpr std::string_view kInvariants = "8. End-to-end invariants";
constexpr std::string_view kAccepted = "9. Accepted inexactness";

constexpr std::array kRules = {
    RuleInfo{RuleId::kB1, "B1", "finalize P only after pending-ack admission", kBroker, false},
    RuleInfo{RuleId::kB2, "B2", "P = B without ack_set, else popcount of bits in [0, B)", kBroker, false},
    RuleInfo{RuleId::kB3, "B3", "candidate P = 0: no command, no debit", kBroker, false},
    RuleInfo{RuleId::kB4, "B4", "consumer debit = sum of finalized P", kBroker, false},
    RuleInfo{RuleId::kB5, "B5", "unacked rises by the same sum in individual-ack modes", kBroker, false},
    RuleInfo{RuleId::kB6, "B6", "every dispatcher aggregate debits the finalized sum", kBroker, false},
    RuleInfo{RuleId::kB7, "B7", "serialize message_permits = finalized P on every command", kBroker, false},
    RuleInfo{RuleId::kB8, "B8", "finalized P in 1..2^31-1 and <= B; checked, atomic sum", kBroker, false},
    RuleInfo{RuleId::kB9, "B9", "balances are signed; batch debt is never clamped", kBroker, false},
    RuleInfo{RuleId::kB10, "B10", "Flow is additive", kBroker, false},
    RuleInfo{RuleId::kB11, "B11", "debt ends with the broker consumer incarnation", kBroker, false},
    RuleInfo{RuleId::kB12, "B12", "back-pressure: a send starts only while available > 0", kBroker, false},
    RuleInfo{RuleId::kB13, "B13", "dispatch progress: backlog with available > 0 is sent to", kBroker, false},
    RuleInfo{RuleId::kW1, "W1", "message_permits is optional uint32 field 6; presence matters", kWire, false},
    RuleInfo{RuleId::kW2, "W2", "valid message_permits are 1..2^31-1 read unsigned", kWire, false},
    RuleInfo{RuleId::kW3, "W3", "an upgraded broker always sends message_permits", kWire, false},
    RuleInfo{RuleId::kC1, "C1", "resolution ladder: explicit, ack_set, B, legacy 1", kResolve, false},
    RuleInfo{RuleId::kC2, "C2", "early resolution before checksum", kResolve, false},
    RuleInfo{RuleId::kC3, "C3", "validate explicit P against ack_set/B before hand-off", kResolve, false},
    RuleInfo{RuleId::kC4, "C4", "out-of-range explicit P: protocol error, close connection", kResolve, false},
    RuleInfo{RuleId::kC5, "C5", "inconsistent data: corrupted-data handling, settle exactly P", kResolve, false},
    RuleInfo{RuleId::kC6, "C6", "field absent: best-effort fallback, never close", kResolve, false},
    RuleInfo{RuleId::kC7, "C7", "payload failures settle the resolved P", kResolve, false},
    RuleInfo{RuleId::kK1, "K1", "the command starts owning all P units", kBudget, false},
    RuleInfo{RuleId::kK2, "K2", "claim one unit per hand-off; restore on failed hand-off", kBudget, false},
    RuleInfo{RuleId::kK3, "K3", "indexes cleared in ack_set never touch the budget", kBudget, false},
    RuleInfo{RuleId::kK4, "K4", "a skipped deliverable index leaves its unit command-owned", kBudget, false},
    RuleInfo{RuleId::kK5, "K5", "exactly one terminal transition returns what is left", kBudget, false},
    RuleInfo{RuleId::kK6, "K6", "direct returns come out of the budget atomically", kBudget, false},
    RuleInfo{RuleId::kK7, "K7", "a command never returns more than P", kBudget, false},
    RuleInfo{RuleId::kK8, "K8", "at most P messages handed off", kBudget, false},
    RuleInfo{RuleId::kS1, "S1", "ownership transfer to chunk/crypto/processor paths", kPaths, false},
    RuleInfo{RuleId::kS2, "S2", "non-final chunk returns 1; assembled message 1 on consume", kPaths, false},
    RuleInfo{RuleId::kS3, "S3", "crypto DISCARD returns B", kPaths, false},
    RuleInfo{RuleId::kS4, "S4", "crypto FAIL returns nothing; held for redelivery", kPaths, false},
    RuleInfo{RuleId::kS5, "S5", "dead letter keeps the message object; unit stays command-owned", kPaths, false},
    RuleInfo{RuleId::kS6, "S6", "duplicate in a batch is released; unit stays command-owned", kPaths, false},
    RuleInfo{RuleId::kS7, "S7", "zero-queue consumer given a batch closes the consumer", kPaths, false},
    RuleInfo{RuleId::kM1, "M1", "a claimed unit returns once, to its retained current state", kLifecycle, false},
    RuleInfo{RuleId::kM2, "M2", "stale-epoch discard returns through the retained state", kLifecycle, false},
    RuleInfo{RuleId::kM3, "M3", "a second return of one message is a no-op", kLifecycle, false},
    RuleInfo{RuleId::kN1, "N1", "one permit state per incarnation, created on subscribe", kLifecycle, false},
    RuleInfo{RuleId::kN2, "N2", "replaced on reconnect and CommandCloseConsumer; no copy", kLifecycle, false},
    RuleInfo{RuleId::kN3, "N3", "a return updates only its own, current state", kLifecycle, false},
    RuleInfo{RuleId::kN4, "N4", "no Flow before Subscribe succeeds; initial grant Q", kLifecycle, false},
    RuleInfo{RuleId::kN5, "N5", "Flow at threshold T, identity re-checked before writing", kLifecycle, false},
    RuleInfo{RuleId::kN6, "N6", "old Flow before the replacement's Subscribe, or never", kLifecycle, false},
    RuleInfo{RuleId::kN7, "N7", "checked accumulator; overflow is a protocol error", kLifecycle, false},
    RuleInfo{RuleId::kE1, "E1", "exact return of P per command", kInvariants, false},
    RuleInfo{RuleId::kE2, "E2", "never over-return", kInvariants, false},
    RuleInfo{RuleId::kE3, "E3", "incarnation isolation", kInvariants, false},
    RuleInfo{RuleId::kE4, "E4", "one finalized value per send", kInvariants, false},
    RuleInfo{RuleId::kE5, "E5", "conservation at quiescence: available + accumulator = Q", kInvariants, false},
    RuleInfo{RuleId::kE6, "E6", "no stall: available > 0 at quiescence, nor positive and idle with backlog", kInvariants, false},
    RuleInfo{RuleId::kX1, "X1", "old broker, complete batch, early failure returns 1", kAccepted, true},
    RuleInfo{RuleId::kX2, "X2", "crypto DISCARD of a partial redelivery returns B > P", kAccepted, true},
    RuleInfo{RuleId::kX3, "X3", "crypto FAIL holds P until the incarnation ends", kAccepted, true},
    RuleInfo{RuleId::kX4, "X4", "chunk failure branches return nothing", kAccepted, true},
    RuleInfo{RuleId::kX5, "X5", "custom processor output count may differ from P", kAccepted, true},
    RuleInfo{RuleId::kX6, "X6", "early failure, field absent, counts ack_set bits beyond B", kAccepted, true},
    RuleInfo{RuleId::kX7, "X7", "wire only: a MESSAGE at available <= 0 may be a frame of a send that began positive", kAccepted, true},
};

static_assert(static_cast<std::size_t>(RuleId::kX7) + 1 == kRules.size(),
              "every RuleId has exactly one RuleInfo, in enum order");

}  // namespace

std::span<const RuleInfo> all_rules() { return kRules; }

const RuleInfo& rule_info(RuleId id) { return kRules[static_cast<std::size_t>(id)]; }

std::string_view rule_name(RuleId id) { return rule_info(id).name; }

std::optional<RuleId> parse_rule_id(std::string_view name) {
  for (const RuleInfo& r : kRules) {
    if (r.name == name) return r.id;
  }
  return std::nullopt;
}

}  // namespace permitcheck::spec
