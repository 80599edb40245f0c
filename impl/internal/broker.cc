#include "impl/internal/broker.h"

#include <algorithm>
#include <utility>

#include "impl/internal/mutant_point.h"

namespace permitcheck::impl::internal {
namespace {

using spec::kMaxPermits;  // B8, W2, N7 (spec/vocabulary.h)

std::int64_t batch_size_of(const StoredEntry& e) { return e.payload->batch_size; }

}  // namespace

// ---- Subscription ----

StoredEntry* Subscription::entry(std::int64_t id) {
  if (id < 0 || id >= static_cast<std::int64_t>(entries_.size())) return nullptr;
  return &entries_[static_cast<std::size_t>(id)];
}

void Subscription::append(const EntrySpec& spec) {
  StoredEntry e;
  e.id = static_cast<std::int64_t>(entries_.size());
  e.payload = std::make_shared<const Payload>(spec.payload);
  const std::int64_t b = std::max<std::int64_t>(1, spec.payload.batch_size);
  e.acked.assign(static_cast<std::size_t>(b), false);
  for (std::int64_t i : spec.pre_acked) {
    if (i >= 0 && i < b) e.acked[static_cast<std::size_t>(i)] = true;
  }
  for (std::int64_t i : spec.stray_ack_bits) {
    if (i >= b && i < b + 4096) e.stray_bits.push_back(i);
  }
  e.done = std::all_of(e.acked.begin(), e.acked.end(), [](bool a) { return a; });
  entries_.push_back(std::move(e));
}

std::vector<StoredEntry*> Subscription::read_replay(int max) {
  std::vector<StoredEntry*> out;
  for (auto it = replay_.begin(); it != replay_.end() && static_cast<int>(out.size()) < max;) {
    StoredEntry* e = entry(*it);
    it = replay_.erase(it);
    if (e == nullptr || e->done || e->pending_owner >= 0) continue;
    out.push_back(e);
  }
  return out;
}

std::vector<StoredEntry*> Subscription::read_new(int max) {
  std::vector<StoredEntry*> out;
  while (read_position_ < static_cast<std::int64_t>(entries_.size()) &&
         static_cast<int>(out.size()) < max) {
    StoredEntry& e = entries_[static_cast<std::size_t>(read_position_++)];
    if (!e.done && e.pending_owner < 0) out.push_back(&e);
  }
  return out;
}

void Subscription::release(StoredEntry* e) {
  e->pending_owner = -1;
  if (!e->done) replay_.insert(e->id);
}

void Subscription::redeliver(StoredEntry* e) {
  e->pending_owner = -1;
  ++e->redelivery_count;
  if (!e->done) replay_.insert(e->id);
}

bool Subscription::has_backlog() const {
  if (read_position_ < static_cast<std::int64_t>(entries_.size())) return true;
  for (std::int64_t id : replay_) {
    const StoredEntry& e = entries_[static_cast<std::size_t>(id)];
    if (!e.done && e.pending_owner < 0) return true;
  }
  return false;
}

// ---- B2 as the broker computes it ----

std::int64_t broker_candidate(const StoredEntry& e) {
  const std::int64_t b = batch_size_of(e);
  if (b <= 0) return 0;
  std::int64_t unacked = 0;
  bool any_acked = false;
  for (std::int64_t i = 0; i < b; ++i) {
    if (e.acked[static_cast<std::size_t>(i)]) {
      any_acked = true;
    } else {
      ++unacked;
    }
  }
  return any_acked ? unacked : b;
}

std::vector<std::int64_t> broker_ack_set(const StoredEntry& e) {
  const std::int64_t b = batch_size_of(e);
  const bool any_acked = std::any_of(e.acked.begin(), e.acked.end(), [](bool a) { return a; });
  if (!any_acked) return {};
  std::int64_t bits = b;
  for (std::int64_t i : e.stray_bits) bits = std::max(bits, i + 1);
  std::vector<std::int64_t> words(static_cast<std::size_t>((bits + 63) / 64), 0);
  const auto set = [&words](std::int64_t i) {
    auto& w = words[static_cast<std::size_t>(i / 64)];
    w = static_cast<std::int64_t>(static_cast<std::uint64_t>(w) | (std::uint64_t{1} << (i % 64)));
  };
  for (std::int64_t i = 0; i < b; ++i) {
    if (!e.acked[static_cast<std::size_t>(i)]) set(i);
  }
  for (std::int64_t i : e.stray_bits) set(i);  // outside [0, B): B2 ignores them
  return words;
}

// ---- BrokerConsumer ----

BrokerConsumer::BrokerConsumer(BrokerContext& ctx, int serial, std::uint64_t consumer_id, int cnx,
                               std::int64_t consumer_epoch)
    : epoch(consumer_epoch),
      ctx_(ctx),
      mutant_(ctx.mutant_),
      serial_(serial),
      consumer_id_(consumer_id),
      cnx_(cnx),
      inc_("b" + std::to_string(serial)) {}

void BrokerConsumer::flow(std::int64_t permits) {
  permits_ = PC_MUTANT(kFlowAbsolute, permits, permits_ + permits);  // B10: additive
}

BrokerConsumer::SendOutcome BrokerConsumer::send_messages(const std::vector<StoredEntry*>& entries,
                                                          Dispatcher& dispatcher) {
  SendOutcome out;
  out.send.consumer = consumer_id_;
  out.send.inc = spec::Id::text(inc_);
  out.send.dispatcher = dispatcher.kind();

  struct Ready {
    StoredEntry* entry;
    std::int64_t p;
    std::uint64_t cmd;
  };
  std::vector<Ready> ready;
  bool overflow = false;
  for (StoredEntry* e : entries) {
    const std::uint64_t cmd = ctx_.next_cmd++;
    const std::int64_t b = batch_size_of(*e);
    // B2: the candidate from B and the ack state.
    const std::int64_t candidate = PC_MUTANT(kCandidateIgnoresAckSet, b, broker_candidate(*e));
    out.messages_before_admission += candidate;
    // B1: pending-ack admission runs before P is final.
    const bool admitted = !closing && dispatcher.admits(*this, *e);
    spec::SentEntry sent{.cmd = spec::Id::number(cmd),
                         .entry = {.batch_size = b,
                                   .ack_set = spec::AckSet(broker_ack_set(*e)),
                                   .admitted = admitted}};
    if ((!admitted && !PC_MUTANT(kSendRejectedEntry, true, false)) || overflow) {
      out.rejected.push_back(e);
      out.send.entries.push_back(std::move(sent));
      continue;
    }
    if (candidate < 1) {  // B3: nothing to deliver, nothing sent
      out.send.entries.push_back(std::move(sent));
      continue;
    }
    // B8: checked values and sum; an overflow finalizes nothing further.
    if (candidate > kMaxPermits || out.finalized_sum > kMaxPermits - candidate) {
      overflow = true;
      out.rejected.push_back(e);
      out.send.entries.push_back(std::move(sent));
      continue;
    }
    sent.p = candidate;
    out.finalized_sum += candidate;
    ready.push_back({e, candidate, cmd});
    out.send.entries.push_back(std::move(sent));
  }

  // B4 (legacy: Pulsar's debit of totalMessages - ackedCount, rejected entries included; L8).
  const std::int64_t debit =
      ctx_.legacy() ? out.messages_before_admission
                    : PC_MUTANT(kConsumerDebitPreAdmission, out.messages_before_admission,
                                out.finalized_sum);
  permits_ -= debit;  // B9: may go negative, never clamped
  permits_ = PC_MUTANT(kClampNegativeBalance, std::max<std::int64_t>(0, permits_), permits_);
  out.send.consumer_debit = debit;

  // B5: individual-ack subscriptions count the admitted messages as unacked.
  if (dispatcher.has_aggregate()) {
    [[maybe_unused]] std::int64_t batch_sum = 0;  // read only by the seeded mutant
    for (const Ready& r : ready) batch_sum += batch_size_of(*r.entry);
    const std::int64_t increase = PC_MUTANT(kUnackedUsesBatchSize, batch_sum, out.finalized_sum);
    unacked_ += increase;
    unacked_total_ += increase;
  }

  // B7: serialize the finalized value.
  for (const Ready& r : ready) {
    StoredEntry* e = r.entry;
    if (dispatcher.persistent()) {
      e->pending_owner = serial_;
      pending_.insert(e->id);
    } else {
      e->done = true;
    }
    CommandMessage m{.consumer_id = consumer_id_,
                     .cmd = r.cmd,
                     .entry = e->id,
                     .ack_set = broker_ack_set(*e),
                     .message_permits = std::nullopt,
                     .redelivery_count = e->redelivery_count,
                     .epoch = epoch,
                     .payload = e->payload};
    ctx_.sent_payloads.emplace(r.cmd, e->payload);
    if (ctx_.config.flavour != BrokerFlavour::kOld) {
      const std::int64_t p = PC_MUTANT(kSerializeBatchSize, batch_size_of(*e), r.p);
      if (!PC_MUTANT(kOmitFieldForOne, r.p == 1, false)) {
        m.message_permits = static_cast<std::uint64_t>(p);
      }
    }
    // A fault of the path to the client: the value on the wire is rewritten.
    if (m.message_permits && ctx_.corrupt_next_field) {
      m.message_permits = *ctx_.corrupt_next_field;
      ctx_.corrupt_next_field.reset();
      ctx_.corrupted_cmds.insert(r.cmd);
    }
    // The stripping proxy sits between broker and client: the field never arrives.
    if (ctx_.config.flavour == BrokerFlavour::kStrippingProxy) m.message_permits.reset();
    ctx_.network.to_client(cnx_, std::move(m));
    ++out.commands;
  }
  return out;
}

// ---- Dispatcher base ----

void Dispatcher::add_consumer(BrokerConsumer* c) {
  consumers_.push_back(c);
  total_available_permits_ += c->permits();
}

void Dispatcher::remove_consumer(BrokerConsumer* c) {
  // B11: the incarnation's balance (debt included) leaves the aggregate with it.
  if (has_aggregate()) {
    total_available_permits_ -= PC_MUTANT(kRemovalKeepsAggregate, 0, c->permits());
  }
  consumers_.erase(std::remove(consumers_.begin(), consumers_.end(), c), consumers_.end());
  if (round_robin_ >= consumers_.size()) round_robin_ = 0;
  for (std::int64_t id : c->pending()) {
    if (StoredEntry* e = sub_.entry(id); e != nullptr && e->pending_owner == c->serial()) {
      sub_.redeliver(e);
    }
  }
  c->pending().clear();
  schedule_read();
}

void Dispatcher::consumer_flow(BrokerConsumer* c, std::int64_t permits) {
  c->flow(permits);
  if (has_aggregate()) total_available_permits_ += permits;
  if (!PC_MUTANT(kFlowWithoutRead, true, false)) schedule_read();  // B13
}

void Dispatcher::on_publish(std::vector<StoredEntry*>) { schedule_read(); }

bool Dispatcher::admits(const BrokerConsumer&, const StoredEntry&) const { return true; }

void Dispatcher::schedule_read() {
  if (read_scheduled_ || !persistent()) return;
  read_scheduled_ = true;
  ctx_.scheduler.post(ctx_.topic_queue, [this] {
    read_scheduled_ = false;
    read_more_entries();
  });
}

void Dispatcher::record(BrokerConsumer::SendOutcome& outcome,
                        std::optional<std::int64_t> aggregate_debit) {
  outcome.send.dispatcher_debit = aggregate_debit;
  ctx_.recorder.record(std::move(outcome.send));
}

BrokerConsumer* Dispatcher::next_consumer_with_permits() {
  const std::size_t n = consumers_.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t idx = (round_robin_ + k) % n;
    if (consumers_[idx]->permits() > 0) {
      round_robin_ = (idx + 1) % n;
      return consumers_[idx];
    }
  }
  return nullptr;
}

std::vector<StoredEntry*> Dispatcher::read_batch(bool* replay) {
  constexpr int kReadBatch = 4;
  std::vector<StoredEntry*> entries = sub_.read_replay(kReadBatch);
  *replay = !entries.empty();
  if (entries.empty()) entries = sub_.read_new(kReadBatch);
  return entries;
}

// ---- Broker ----

Broker::Broker(const WorldConfig& config, Scheduler& scheduler, Network& network,
               Recorder& recorder, BrokerObserver* observer)
    : ctx_{.config = config,
           .scheduler = scheduler,
           .network = network,
           .recorder = recorder,
           .observer = observer,
           .topic_queue = scheduler.add_queue(QueueClass::kBrokerTopic, "broker-topic"),
           .next_cmd = 1,
           .corrupt_next_field = std::nullopt,
           .corrupted_cmds = {},
           .sent_payloads = {},
           .mutant_ = config.mutant},
      mutant_(config.mutant) {
  dispatcher_ = make_dispatcher(config.dispatcher, ctx_, sub_);
}

void Broker::publish(const std::vector<EntrySpec>& entries) {
  std::vector<StoredEntry*> added;
  for (const EntrySpec& spec : entries) {
    sub_.append(spec);
    added.push_back(&sub_.entries().back());
  }
  dispatcher_->on_publish(std::move(added));
}

BrokerConsumer* Broker::find(int cnx, std::uint64_t consumer_id) {
  for (auto& c : consumers_) {
    if (!c->removed && c->cnx() == cnx && c->consumer_id() == consumer_id) return c.get();
  }
  return nullptr;
}

void Broker::on_frame(int cnx, const Frame& frame) {
  if (const auto* sub = std::get_if<CommandSubscribe>(&frame)) {
    if (fail_next_subscribe_ || find(cnx, sub->consumer_id) != nullptr) {
      fail_next_subscribe_ = false;
      ctx_.network.to_client(cnx, CommandError{.consumer_id = sub->consumer_id});
      return;
    }
    const int serial = static_cast<int>(consumers_.size()) + 1;
    consumers_.push_back(std::make_unique<BrokerConsumer>(ctx_, serial, sub->consumer_id, cnx, sub->epoch));
    BrokerConsumer* c = consumers_.back().get();
    if (ctx_.observer) ctx_.observer->consumer_added(c->inc(), c->consumer_id());
    dispatcher_->add_consumer(c);
    ctx_.network.to_client(cnx, CommandSuccess{.consumer_id = sub->consumer_id});
  } else if (const auto* flow = std::get_if<CommandFlow>(&frame)) {
    // A Flow for a consumer id with no live consumer on this connection is ignored.
    if (BrokerConsumer* c = find(cnx, flow->consumer_id)) {
      dispatcher_->consumer_flow(c, flow->permits);
      if (ctx_.observer) ctx_.observer->flow_applied(c->inc(), flow->permits);
    }
  } else if (const auto* close = std::get_if<CommandCloseConsumer>(&frame)) {
    // The client closed its consumer (S7): the incarnation ends (B11).
    if (BrokerConsumer* c = find(cnx, close->consumer_id)) remove(c);
  } else if (const auto* ack = std::get_if<CommandAck>(&frame)) {
    on_ack(find(cnx, ack->consumer_id), *ack);
  } else if (const auto* redeliver = std::get_if<CommandRedeliverUnacknowledgedMessages>(&frame)) {
    if (BrokerConsumer* c = find(cnx, redeliver->consumer_id)) {
      c->epoch = redeliver->epoch;
      for (std::int64_t id : c->pending()) {
        if (StoredEntry* e = sub_.entry(id); e != nullptr && e->pending_owner == c->serial()) {
          sub_.redeliver(e);
        }
      }
      c->pending().clear();
      c->clear_unacked();
      dispatcher_->schedule_read();
    }
  }
}

void Broker::on_ack(BrokerConsumer* c, const CommandAck& ack) {
  if (PC_MUTANT(kAckIgnored, true, false)) return;
  if (!dispatcher_->persistent()) return;
  StoredEntry* e = sub_.entry(ack.entry);
  if (e == nullptr || e->done) return;
  std::int64_t newly = 0;
  auto mark = [&](std::int64_t i) {
    if (i < 0 || i >= static_cast<std::int64_t>(e->acked.size())) return;
    if (!e->acked[static_cast<std::size_t>(i)]) {
      e->acked[static_cast<std::size_t>(i)] = true;
      ++newly;
    }
  };
  if (ack.whole_entry) {
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(e->acked.size()); ++i) mark(i);
  } else {
    for (std::int64_t i : ack.indexes) mark(i);
  }
  if (c != nullptr && dispatcher_->has_aggregate()) c->acked(newly);
  if (std::all_of(e->acked.begin(), e->acked.end(), [](bool a) { return a; })) {
    e->done = true;
    if (e->pending_owner >= 0) {
      consumers_[static_cast<std::size_t>(e->pending_owner - 1)]->pending().erase(e->id);
      e->pending_owner = -1;
    }
  }
  dispatcher_->schedule_read();  // an ack may end Key_Shared draining
}

void Broker::remove(BrokerConsumer* c) {
  c->removed = true;
  dispatcher_->remove_consumer(c);
  if (ctx_.observer) ctx_.observer->consumer_removed(c->inc());
}

void Broker::close_consumer(std::uint64_t consumer_id, bool graceful) {
  BrokerConsumer* c = nullptr;
  for (auto& candidate : consumers_) {
    if (!candidate->removed && candidate->consumer_id() == consumer_id) c = candidate.get();
  }
  if (c == nullptr) return;
  auto finish = [this, c] {
    if (c->removed) return;
    remove(c);
    ctx_.network.to_client(c->cnx(), CommandCloseConsumer{.consumer_id = c->consumer_id()});
  };
  if (!graceful) {
    finish();
    return;
  }
  if (c->closing) return;
  c->closing = true;  // admission refuses it from now on; removal follows on the topic executor
  ctx_.scheduler.post(ctx_.topic_queue, finish);
}

void Broker::connection_lost(int cnx) {
  for (auto& c : consumers_) {
    if (!c->removed && c->cnx() == cnx) remove(c.get());
  }
}

std::vector<const BrokerConsumer*> Broker::live_consumers() const {
  std::vector<const BrokerConsumer*> out;
  for (const auto& c : consumers_) {
    if (!c->removed) out.push_back(c.get());
  }
  return out;
}

std::optional<std::int64_t> Broker::aggregate() const {
  if (!dispatcher_->has_aggregate()) return std::nullopt;
  return dispatcher_->total_available_permits();
}

}  // namespace permitcheck::impl::internal
