// Broker accounting events (B1-B11, E4): send, consumer_removed and write_failed.
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "spec/finalize.h"
#include "spec/internal/monitor_state.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {

void Monitor::State::on(const Send& e) {
  if (removed_broker_consumers.contains(removed_key(e.consumer, e.inc)) ||
      removed_broker_consumers.contains(removed_key(e.consumer, std::nullopt))) {
    violation(RuleId::kB11, absl::StrCat("send to consumer ", e.consumer,
                                         " after it was removed"));
  } else if (!failed_writes.empty()) {
    auto failed = failed_writes.find(removed_key(e.consumer, e.inc));
    if (failed == failed_writes.end()) {
      failed = failed_writes.find(removed_key(e.consumer, std::nullopt));
    }
    if (failed != failed_writes.end()) {
      violation(RuleId::kB11,
                absl::StrCat("send to consumer ", e.consumer, " debited ", e.consumer_debit,
                             " after a write to it failed on line ", failed->second,
                             " (a failed write is connection loss: the broker closes and removes "
                             "the consumer, decision 10)"));
    }
  }
  std::vector<SendEntry> entries;
  entries.reserve(e.entries.size());
  for (const SentEntry& s : e.entries) entries.push_back(s.entry);
  const DispatcherKind kind = e.dispatcher.value_or(DispatcherKind::kSingleActive);
  const SendResult expected = finalize_permits(*rules, kind, entries);
  // B8: an entry that would overflow stops the send there; the entries before it stay
  // finalized and debited (rulebook section 12, item 11), so the debits below are held to the
  // finalized sum of those entries, under B8.
  const std::optional<SendOverflow>& overflow = expected.overflow;
  // B12: the send starts while the consumer's wire-derived available is positive; its MESSAGE
  // frames follow and may overdraw (B9).
  if (!expected.commands.empty()) {
    if (auto key = wire_of_consumer.find(e.consumer); key != wire_of_consumer.end()) {
      if (WireIncarnation* w = live_wire(key->second); w != nullptr && w->subscribed_ok) {
        check_back_pressure(*w, key->second, absl::StrCat("send to consumer ", e.consumer));
        for (const FinalizedCommand& f : expected.commands) {
          command(e.entries[f.entry].cmd).send_judged = true;
        }
      }
    }
  }
  std::vector<std::optional<std::int64_t>> finalized(e.entries.size());
  for (const FinalizedCommand& f : expected.commands) finalized[f.entry] = f.p;
  for (std::size_t i = 0; i < e.entries.size(); ++i) {
    const SentEntry& s = e.entries[i];
    if (!s.p) {
      if (finalized[i]) command(s.cmd).broker_p = finalized[i];
      continue;
    }
    if (!s.entry.admitted) {
      violation(RuleId::kB1, absl::StrCat("rejected entry ", s.cmd.to_string(),
                                          " was finalized with P = ", *s.p,
                                          " (only admitted entries become commands)"));
    } else if (overflow && i >= overflow->entry) {
      violation(RuleId::kB8,
                absl::StrCat("entry ", s.cmd.to_string(), " was finalized with P = ", *s.p,
                             " but the send stops at entry ",
                             e.entries[overflow->entry].cmd.to_string(), ": ", overflow->reason,
                             " (the overflowing entry and every later one are neither sent "
                             "nor debited)"));
    } else if (!finalized[i]) {
      violation(RuleId::kB3, absl::StrCat("entry ", s.cmd.to_string(), " has nothing to "
                                          "deliver but was finalized with P = ", *s.p));
    } else if (*s.p != *finalized[i]) {
      violation(RuleId::kB2, absl::StrCat("entry ", s.cmd.to_string(), " finalized P = ", *s.p,
                                          " but B = ", s.entry.batch_size,
                                          s.entry.ack_set.absent()
                                              ? std::string(" (no ack_set)")
                                              : absl::StrCat(", ", acknowledged_text(
                                                                       s.entry.ack_set,
                                                                       s.entry.batch_size)),
                                          " give ", *finalized[i]));
    }
    command(s.cmd).broker_p = *s.p;
  }
  // Under B8 when the send overflowed: what the entries before the overflowing one debit.
  const std::string stopped =
      overflow ? absl::StrCat(" of the entries before entry ",
                              e.entries[overflow->entry].cmd.to_string(), " (", overflow->reason,
                              "; the entries before it stay finalized and debited)")
               : std::string();
  if (e.consumer_debit != expected.consumer_debit) {
    violation(overflow ? RuleId::kB8 : RuleId::kB4,
              absl::StrCat("consumer ", e.consumer, " debited ", e.consumer_debit,
                           " but the finalized sum", stopped, " is ", expected.consumer_debit,
                           " (",
                           count_noun(monitor_internal::distance(e.consumer_debit,
                                                                 expected.consumer_debit),
                                      "permit"),
                           e.consumer_debit > expected.consumer_debit ? " lost)"
                                                                      : " over-granted)"));
  }
  if (e.dispatcher && !has_aggregate(*e.dispatcher) && e.dispatcher_debit) {
    violation(RuleId::kB6, absl::StrCat(to_absl(dispatcher_name(*e.dispatcher)),
                                        " dispatcher has no "
                                        "aggregate but debited ", *e.dispatcher_debit));
  } else if (e.dispatcher_debit && expected.dispatcher_debit &&
             *e.dispatcher_debit != *expected.dispatcher_debit) {
    violation(overflow ? RuleId::kB8 : RuleId::kB6,
              absl::StrCat(to_absl(dispatcher_name(kind)), " aggregate debited ",
                           *e.dispatcher_debit,
                           " but the finalized sum", stopped, " is ",
                           *expected.dispatcher_debit));
  }
}

void Monitor::State::on(const ConsumerRemoved& e) {
  removed_broker_consumers.insert(removed_key(e.consumer, e.inc));
  if (!failed_writes.empty()) {
    failed_writes.erase(removed_key(e.consumer, e.inc));
    failed_writes.erase(removed_key(e.consumer, std::nullopt));
  }
}

// B11, decision 10: a failed write is connection loss. The consumer must go: no later send to
// that incarnation, and no MESSAGE on its wire incarnation, until it is removed or replaced.
void Monitor::State::on(const WriteFailed& e) {
  failed_writes.insert_or_assign(removed_key(e.consumer, e.inc), line);
  if (auto key = wire_of_consumer.find(e.consumer); key != wire_of_consumer.end()) {
    if (WireIncarnation* w = live_wire(key->second)) {
      w->write_failed_line = line;
      wire_write_failed = true;
    }
  }
}

void Monitor::State::check_after_write_failure(const Message& e) {
  const WireIncarnation* w = live_wire(ConsumerKey{e.cnx, e.consumer});
  if (w == nullptr || w->write_failed_line == 0) return;
  violation(RuleId::kB11,
            absl::StrCat("MESSAGE command ", e.cmd.to_string(), " to ",
                         describe(ConsumerKey{e.cnx, e.consumer}),
                         " after a write to it failed on line ", w->write_failed_line,
                         " (a failed write is connection loss: the consumer is gone, decision "
                         "10)"));
}

}  // namespace permitcheck::spec
