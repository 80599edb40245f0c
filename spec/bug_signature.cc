#include "spec/bug_signature.h"

#include <variant>

#include "spec/finalize.h"

namespace permitcheck::spec {
namespace {

// The impl's record of a stale-epoch discard (rulebook section 10, L6).
constexpr std::string_view kStaleEpochDiscardEvent = "x-stale-epoch-discard";

bool has_unadmitted_entry(const Send& s) {
  for (const SentEntry& entry : s.entries) {
    if (!entry.entry.admitted) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> review_signature(const Finding& f, const Event& e,
                                            const DriverFacts& d) {
  switch (f.rule) {
    case RuleId::kK5:
    case RuleId::kK6:
    case RuleId::kK7:
    case RuleId::kE1:
    case RuleId::kE2:
      // F1: a direct return beside a budget that drains as well (no injected fault on it).
      if ((std::holds_alternative<Settle>(e) || std::holds_alternative<DirectReturn>(e)) &&
          d.direct_return && !d.injected_stage && !d.corrupted_on_wire) {
        return "F1";
      }
      return std::nullopt;
    case RuleId::kB6:
      // F2: a sticky-key aggregate debited with the pre-admission count.
      if (const auto* s = std::get_if<Send>(&e);
          s != nullptr && s->dispatcher && is_sticky_key(*s->dispatcher) && has_unadmitted_entry(*s)) {
        return "F2";
      }
      return std::nullopt;
    case RuleId::kS5:
      // F3: a dead-letter message object released while dead-letter handling holds it.
      if (const auto* x = std::get_if<Extension>(&e); x != nullptr && x->ev == kSkipReleaseEvent) {
        return "F3";
      }
      return std::nullopt;
    case RuleId::kC5:
    case RuleId::kC6: {
      // F4: the pooled connection closed over inconsistent data (rev-d keeps it, C5/C6): every
      // incarnation on it ends, the consumer's own and those of unrelated consumers sharing it.
      // One ended incarnation is already the widened disconnect; a plain `check` seldom pools
      // two consumers on the corrupted connection. An N7 overflow closes the connection by the
      // rulebook (section 12, item 6): not F4.
      const auto* pe = std::get_if<ProtocolError>(&e);
      if (pe == nullptr || pe->reason == kAccumulatorOverflowReason) return std::nullopt;
      if (d.consumers_ended_by_close > 0) return "F4";
      return std::nullopt;
    }
    case RuleId::kE3:
      // F5: connection-scoped credit crosses into a same-connection replacement: the message
      // came on the connection the consumer's current incarnation is on.
      if (std::holds_alternative<MsgReturn>(e) && d.returned_on_current_connection) return "F5";
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<std::string> legacy_signature(const Finding& f, bool deviation, const Event& e,
                                            const DriverFacts& d) {
  if (!d.legacy_implementation) return deviation ? std::nullopt : review_signature(f, e, d);
  if (deviation) {
    // L10: X2, a direct return of a crypto discard.
    if (f.rule == RuleId::kX2 && std::holds_alternative<DirectReturn>(e)) return "L10";
    return std::nullopt;
  }
  // A command whose wire value was rewritten by an injected fault is no legacy bug's instance.
  if (std::holds_alternative<Settle>(e) && d.corrupted_on_wire) return std::nullopt;
  switch (f.rule) {
    case RuleId::kC7:
      // L1-L4: the payload failure the run injected into the settled command.
      if (std::holds_alternative<Settle>(e)) {
        switch (d.injected_stage.value_or(FailureStage::kInconsistent)) {
          case FailureStage::kChecksum:
            return "L1";
          case FailureStage::kMetadata:
            return "L2";
          case FailureStage::kDecompress:
            return "L3";
          case FailureStage::kBatch:
            return "L4";
          case FailureStage::kInconsistent:
            return std::nullopt;
        }
      }
      return std::nullopt;
    case RuleId::kK7:
    case RuleId::kE2:
      // L5: a partial batch whose parse fails.
      if (std::holds_alternative<Settle>(e) && d.injected_stage == FailureStage::kBatch) return "L5";
      return std::nullopt;
    case RuleId::kK4:
      // L9: a message before startMessageId.
      if (std::holds_alternative<Settle>(e) && d.before_start) return "L9";
      return std::nullopt;
    case RuleId::kE3:
      // L6 after a stale-epoch discard, else L7 (credit crosses into the replacement).
      if (std::holds_alternative<MsgReturn>(e)) {
        const auto* x = d.previous != nullptr ? std::get_if<Extension>(d.previous) : nullptr;
        return (x != nullptr && x->ev == kStaleEpochDiscardEvent) ? "L6" : "L7";
      }
      return std::nullopt;
    case RuleId::kB4:
    case RuleId::kB6:
      // L8: a debit with the pre-admission count.
      if (const auto* s = std::get_if<Send>(&e); s != nullptr && has_unadmitted_entry(*s)) return "L8";
      return std::nullopt;
    case RuleId::kN6:
      // L11: a queued Flow of a closed incarnation.
      if (std::holds_alternative<Flow>(e)) return "L11";
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace permitcheck::spec
