// Broker accounting events (B1-B11, E4): send and consumer_removed.
#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "spec/finalize.h"
#include "spec/internal/monitor_state.h"

namespace permitcheck::spec {

void Monitor::State::on(const Send& e) {
  if (removed_broker_consumers.contains(removed_key(e.consumer, e.inc)) ||
      removed_broker_consumers.contains(removed_key(e.consumer, std::nullopt))) {
    violation(RuleId::kB11, absl::StrCat("send to consumer ", e.consumer,
                                         " after it was removed"));
  }
  std::vector<SendEntry> entries;
  entries.reserve(e.entries.size());
  for (const SentEntry& s : e.entries) entries.push_back(s.entry);
  const DispatcherKind kind = e.dispatcher.value_or(DispatcherKind::kSingleActive);
  absl::StatusOr<SendResult> expected = finalize_permits(*rules, kind, entries);
  if (!expected.ok()) {
    // B8: an overflowing send finalizes nothing and debits nothing.
    const bool finalized_some =
        std::any_of(e.entries.begin(), e.entries.end(), [](const SentEntry& s) { return s.p; });
    if (finalized_some || e.consumer_debit != 0 || e.dispatcher_debit.value_or(0) != 0) {
      violation(RuleId::kB8, absl::StrCat("send to consumer ", e.consumer, " debited ",
                                          e.consumer_debit, " although it overflows: ",
                                          expected.status().message(),
                                          " (an overflowing send finalizes nothing)"));
    }
    return;
  }
  // B12: the send starts while the consumer's wire-derived available is positive; its MESSAGE
  // frames follow and may overdraw (B9).
  if (!expected->commands.empty()) {
    if (auto key = wire_of_consumer.find(e.consumer); key != wire_of_consumer.end()) {
      if (WireIncarnation* w = live_wire(key->second); w != nullptr && w->subscribed_ok) {
        check_back_pressure(*w, key->second, absl::StrCat("send to consumer ", e.consumer));
        for (const FinalizedCommand& f : expected->commands) {
          command(e.entries[f.entry].cmd).send_judged = true;
        }
      }
    }
  }
  std::vector<std::optional<std::int64_t>> finalized(e.entries.size());
  for (const FinalizedCommand& f : expected->commands) finalized[f.entry] = f.p;
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
    } else if (!finalized[i]) {
      violation(RuleId::kB3, absl::StrCat("entry ", s.cmd.to_string(), " has nothing to "
                                          "deliver but was finalized with P = ", *s.p));
    } else if (*s.p != *finalized[i]) {
      violation(RuleId::kB2, absl::StrCat("entry ", s.cmd.to_string(), " finalized P = ", *s.p,
                                          " but B = ", s.entry.batch_size,
                                          " and its ack_set give ", *finalized[i]));
    }
    command(s.cmd).broker_p = *s.p;
  }
  if (e.consumer_debit != expected->consumer_debit) {
    violation(RuleId::kB4,
              absl::StrCat("consumer ", e.consumer, " debited ", e.consumer_debit,
                           " but the finalized sum is ", expected->consumer_debit, " (",
                           monitor_internal::distance(e.consumer_debit, expected->consumer_debit),
                           e.consumer_debit > expected->consumer_debit
                               ? " permit(s) lost)"
                               : " permit(s) over-granted)"));
  }
  if (e.dispatcher && !has_aggregate(*e.dispatcher) && e.dispatcher_debit) {
    violation(RuleId::kB6, absl::StrCat(av(dispatcher_name(*e.dispatcher)), " dispatcher has no "
                                        "aggregate but debited ", *e.dispatcher_debit));
  } else if (e.dispatcher_debit && expected->dispatcher_debit &&
             *e.dispatcher_debit != *expected->dispatcher_debit) {
    violation(RuleId::kB6,
              absl::StrCat(av(dispatcher_name(kind)), " aggregate debited ", *e.dispatcher_debit,
                           " but the finalized sum is ", *expected->dispatcher_debit));
  }
}

void Monitor::State::on(const ConsumerRemoved& e) { removed_broker_consumers.insert(removed_key(e.consumer, e.inc)); }

}  // namespace permitcheck::spec
