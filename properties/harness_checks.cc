// The harness's own checks of what the run was given (properties/harness.h): each judges the
// implementation by what the harness itself knows of the run (the faults it injected, the
// chunks and redeliveries it follows, the idle world), where the trace alone cannot say.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "properties/harness.h"
#include "spec/driver_verdict.h"

namespace permitcheck::properties {

void Harness::check_dead_letter(std::uint64_t cmd, bool dead_lettered, std::size_t step) {
  // S5 from what the run was given: a message goes to dead-letter handling when its redelivery
  // count is past maxRedeliverCount, and only then. The count is how many commands carried its
  // entry before this one (each send makes it pending, and only a pending entry is redelivered).
  const std::optional<int> max = config_.options.max_redeliver_count;
  auto count = redeliveries_of_cmd_.find(cmd);
  if (!max || count == redeliveries_of_cmd_.end()) return;
  add_quiesce(spec::dead_letter_verdict(cmd, count->second, *max, dead_lettered), step);
}

void Harness::check_restore(std::uint64_t cmd, const spec::Id& msg, std::size_t step) {
  // K2 from what the run was given: a hand-off fails only where the run injected a failure
  // (the entry's `handoff_fails_at`); a unit restored elsewhere is a message the application
  // never gets.
  const std::shared_ptr<const impl::Payload> payload = world_->payload_of(cmd);
  if (payload == nullptr || !last_claim_ || !(last_claim_->msg == msg) || !last_claim_->index) return;
  add_quiesce(spec::restored_handoff_verdict(cmd, *last_claim_->index, payload->handoff_fails_at),
              step);
}

void Harness::follow_chunk(std::uint64_t cmd, const impl::Payload& chunk, std::uint64_t inc,
                           std::int64_t settled) {
  // The incarnation's chunk contexts, as the rulebook's chunk path keeps them: a chunk is in
  // order when its id is the next its message's context expects (0 without a context); the
  // final one closes the context, and an out-of-order one without a context opens none.
  std::map<std::int64_t, int>& contexts = chunk_next_[inc];
  auto it = contexts.find(chunk.chunk_uuid);
  const int next = it == contexts.end() ? 0 : it->second;
  const bool in_order = chunk.chunk_id == next;
  if (in_order && chunk.chunk_id + 1 < chunk.num_chunks) {
    contexts[chunk.chunk_uuid] = next + 1;
  } else if (in_order) {
    contexts.erase(chunk.chunk_uuid);
  }
  // S2: an in-order chunk returns 1 (non-final) or is delivered (final); one that returned and
  // delivered nothing took X4's branch for duplicate or out-of-order chunks, which holds its unit.
  add_quiesce(spec::in_order_chunk_verdict({.cmd = cmd,
                                            .chunk_id = chunk.chunk_id,
                                            .num_chunks = chunk.num_chunks,
                                            .in_order = in_order,
                                            .settled = settled,
                                            .progressed = cmds_with_progress_.contains(cmd)}),
              current_step());
}

void Harness::check_drained() {
  // E6: settle() consumed every queued message and the client acknowledges what it consumed,
  // skipped or discarded, so a stored entry still pending at a live broker consumer whose
  // client holds nothing back (X3, X4) is one whose acknowledgement never completed it. It is
  // not redelivered while that consumer lives, so the subscription never drains, and the
  // consumer's unacked count (B5) only grows until the broker's unacked limit stops dispatch.
  // A run in which the client left a message unacknowledged on purpose, or holds chunks of a
  // message not yet complete, is not judged.
  const bool open_chunks = std::any_of(chunk_next_.begin(), chunk_next_.end(),
                                       [](const auto& inc) { return !inc.second.empty(); });
  if (left_unacknowledged_ || open_chunks) return;
  for (const impl::World::BrokerConsumerView& b : world_->broker_consumers()) {
    auto tc = trace_consumers_.find(b.consumer_id);
    if (tc != trace_consumers_.end() && tc->second.holding) continue;
    if (std::optional<spec::Finding> f = spec::undrained_verdict(b.pending, b.inc, b.consumer_id)) {
      add_quiesce(std::move(f), current_step());
      return;
    }
  }
}

void Harness::check_dispatch_progress() {
  if (rules_ == spec::RulesetId::kLegacy ||
      config_.dispatcher == spec::DispatcherKind::kNonPersistentShared ||  // no stored backlog
      config_.dispatcher == spec::DispatcherKind::kNonPersistentKeyShared) {
    return;
  }
  // The backlog: what the broker says it holds, or a published entry no send ever carried
  // (an entry the broker lost track of holds no backlog by its own account).
  const bool never_sent = sends_of_entry_.size() < deliverable_published_;
  const std::optional<std::int64_t> aggregate = world_->dispatcher_aggregate();
  if (!(never_sent || world_->broker_backlog()) || (aggregate && *aggregate <= 0)) return;
  const std::size_t step = current_step();
  const std::vector<impl::World::BrokerConsumerView> live = world_->broker_consumers();
  if (live.empty()) return;
  const bool all_positive = std::all_of(live.begin(), live.end(), [](const auto& b) { return b.available > 0; });
  if (spec::is_sticky_key(config_.dispatcher)) {
    // Key_Shared serves a key only at its owner, and holds a key back while another consumer
    // has it pending (draining). With every consumer's permits positive and no key held back
    // (one consumer, or nothing pending at any: by the stored entries' own account, a batch
    // left partly acknowledged stays pending), backlog is an entry nothing will dispatch.
    const bool none_pending = std::all_of(live.begin(), live.end(), [](const auto& b) { return b.pending == 0; });
    const std::size_t unsent = never_sent ? deliverable_published_ - sends_of_entry_.size() : 0;
    add_quiesce(spec::key_shared_backlog_verdict({.every_consumer_has_permits = all_positive,
                                                  .live_consumers = live.size(),
                                                  .none_pending = none_pending,
                                                  .never_sent = unsent}),
                step);
    return;
  }
  // Single active: only the active consumer is served; which one that is the trace does not
  // say, so judge only when every live consumer has permits.
  const bool single = config_.dispatcher == spec::DispatcherKind::kSingleActive;
  for (const impl::World::BrokerConsumerView& b : live) {
    if (single && !all_positive) continue;
    if (std::optional<spec::Finding> f = spec::backlog_verdict(b.available, b.inc)) {
      add_quiesce(std::move(f), step);
      return;
    }
  }
}

}  // namespace permitcheck::properties
