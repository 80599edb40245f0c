// The seven dispatcher kinds. Each multi-consumer kind debits its totalAvailablePermits
// aggregate in its own send loop(s), as Pulsar's dispatchers do (B6): the review counted six
// sites (two loops each in both persistent Shared dispatchers). Single-active dispatchers have
// no aggregate (B4 only).
#include <algorithm>
#include <map>

#include "impl/internal/broker.h"
#include "impl/internal/mutant_point.h"

namespace permitcheck::impl::internal {
namespace {

using spec::DispatcherKind;

// Takes entries for a consumer while its balance is positive: whole entries, so the last one
// may overdraw it (B9). Returns how many messages the loop itself counted (pre-admission).
std::int64_t take_for(const BrokerConsumer& c, const std::vector<StoredEntry*>& entries,
                      std::size_t* next, std::vector<StoredEntry*>* out) {
  std::int64_t left = c.permits();
  std::int64_t messages = 0;
  while (*next < entries.size() && left > 0) {
    const std::int64_t n = broker_candidate(*entries[*next]);
    out->push_back(entries[(*next)++]);
    left -= n;
    messages += n;
  }
  return messages;
}

// PersistentDispatcherMultipleConsumers: round robin over consumers with permits, a normal
// loop for new entries and a replay loop for redeliveries.
class PersistentShared : public Dispatcher {
 public:
  using Dispatcher::Dispatcher;
  DispatcherKind kind() const override { return DispatcherKind::kPersistentShared; }

  void read_more_entries() override {
    if (consumers_.empty() || total_available_permits_ <= 0) return;
    bool replay = false;
    const std::vector<StoredEntry*> entries = read_batch(&replay);
    if (entries.empty()) return;
    const bool sent = replay ? send_replay(entries) : send_normal(entries);
    if (sent && sub_.has_backlog() && total_available_permits_ > 0) schedule_read();
  }

 private:
  bool send_normal(const std::vector<StoredEntry*>& entries) {
    std::size_t i = 0;
    bool any = false;
    while (i < entries.size()) {
      BrokerConsumer* c = next_consumer_with_permits();
      if (c == nullptr) break;
      std::vector<StoredEntry*> batch;
      const std::int64_t messages_for_c = take_for(*c, entries, &i, &batch);
      BrokerConsumer::SendOutcome out = c->send_messages(batch, *this);
      for (StoredEntry* e : out.rejected) sub_.release(e);
      const std::int64_t sent =
          ctx_.legacy() ? messages_for_c
                        : PC_MUTANT(kSharedNormalLoopPreAdmission, messages_for_c,
                                    out.finalized_sum);
      total_available_permits_ -= sent;
      record(out, sent);
      any = any || out.commands > 0;
    }
    for (; i < entries.size(); ++i) sub_.release(entries[i]);
    return any;
  }

  bool send_replay(const std::vector<StoredEntry*>& entries) {
    std::size_t i = 0;
    bool any = false;
    while (i < entries.size()) {
      BrokerConsumer* c = next_consumer_with_permits();
      if (c == nullptr) break;
      std::vector<StoredEntry*> batch;
      const std::int64_t messages_for_c = take_for(*c, entries, &i, &batch);
      BrokerConsumer::SendOutcome out = c->send_messages(batch, *this);
      for (StoredEntry* e : out.rejected) sub_.release(e);
      const std::int64_t sent = ctx_.legacy() ? messages_for_c : out.finalized_sum;
      total_available_permits_ -= sent;
      record(out, sent);
      any = any || out.commands > 0;
    }
    for (; i < entries.size(); ++i) sub_.release(entries[i]);
    return any;
  }
};

// PersistentDispatcherMultipleConsumersClassic: serves the consumer with the most permits
// first; its own two loops.
class PersistentSharedClassic : public Dispatcher {
 public:
  using Dispatcher::Dispatcher;
  DispatcherKind kind() const override { return DispatcherKind::kPersistentSharedClassic; }

  void read_more_entries() override {
    if (consumers_.empty() || total_available_permits_ <= 0) return;
    bool replay = false;
    const std::vector<StoredEntry*> entries = read_batch(&replay);
    if (entries.empty()) return;
    bool any = false;
    std::size_t i = 0;
    while (i < entries.size()) {
      BrokerConsumer* c = richest();
      if (c == nullptr) break;
      std::vector<StoredEntry*> batch;
      const std::int64_t messages_for_c = take_for(*c, entries, &i, &batch);
      BrokerConsumer::SendOutcome out = c->send_messages(batch, *this);
      for (StoredEntry* e : out.rejected) sub_.release(e);
      std::int64_t sent = 0;
      if (replay) {  // replay loop
        sent = ctx_.legacy() ? messages_for_c
                             : PC_MUTANT(kSharedClassicReplayPreAdmission, messages_for_c,
                                         out.finalized_sum);
      } else {  // normal loop
        sent = ctx_.legacy() ? messages_for_c : out.finalized_sum;
      }
      total_available_permits_ -= sent;
      record(out, sent);
      any = any || out.commands > 0;
    }
    for (; i < entries.size(); ++i) sub_.release(entries[i]);
    if (any && sub_.has_backlog() && total_available_permits_ > 0) schedule_read();
  }

 private:
  BrokerConsumer* richest() {
    BrokerConsumer* best = nullptr;
    for (BrokerConsumer* c : consumers_) {
      if (c->permits() > 0 && (best == nullptr || c->permits() > best->permits())) best = c;
    }
    return best;
  }
};

// The sticky-key dispatchers route by key and override the send loop. Pending-ack admission
// refuses a key still pending at another consumer (the draining of a moved key).
class StickyKeyBase : public Dispatcher {
 public:
  using Dispatcher::Dispatcher;

  bool admits(const BrokerConsumer& c, const StoredEntry& e) const override {
    if (!persistent()) return true;
    for (const BrokerConsumer* other : consumers_) {
      if (other == &c) continue;
      for (std::int64_t id : other->pending()) {
        const StoredEntry* p = sub_.entry(id);
        if (p != nullptr && p->payload->key == e.payload->key) return false;
      }
    }
    return true;
  }

 protected:
  virtual std::size_t owner(int key) const = 0;
  virtual std::int64_t aggregate_debit(std::int64_t messages, std::int64_t finalized) = 0;

  // Sends each owner its entries; entries of owners without permits go back to replay.
  bool send_by_key(const std::vector<StoredEntry*>& entries) {
    std::map<std::size_t, std::vector<StoredEntry*>> groups;
    for (StoredEntry* e : entries) groups[owner(e->payload->key)].push_back(e);
    bool any = false;
    for (auto& [index, group] : groups) {
      BrokerConsumer* c = consumers_[index];
      std::size_t i = 0;
      std::vector<StoredEntry*> batch;
      const std::int64_t messages_for_c = take_for(*c, group, &i, &batch);
      for (std::size_t j = i; j < group.size(); ++j) {
        if (persistent()) {
          sub_.release(group[j]);
        } else {
          group[j]->done = true;  // non-persistent: dropped
        }
      }
      if (batch.empty()) continue;
      BrokerConsumer::SendOutcome out = c->send_messages(batch, *this);
      for (StoredEntry* e : out.rejected) {
        if (persistent()) {
          sub_.release(e);
        } else {
          e->done = true;  // non-persistent: dropped
        }
      }
      const std::int64_t sent = aggregate_debit(messages_for_c, out.finalized_sum);
      total_available_permits_ -= sent;
      record(out, sent);
      any = any || out.commands > 0;
    }
    return any;
  }
};

// PersistentStickyKeyDispatcherMultipleConsumers.
class PersistentKeyShared : public StickyKeyBase {
 public:
  using StickyKeyBase::StickyKeyBase;
  DispatcherKind kind() const override { return DispatcherKind::kPersistentKeyShared; }

  void read_more_entries() override {
    if (consumers_.empty() || total_available_permits_ <= 0) return;
    bool replay = false;
    const std::vector<StoredEntry*> entries = read_batch(&replay);
    if (entries.empty()) return;
    if (send_by_key(entries) && sub_.has_backlog() && total_available_permits_ > 0) {
      if (PC_MUTANT(kKeySharedNoNextRead, true, false)) return;
      schedule_read();
    }
  }

 protected:
  std::size_t owner(int key) const override {
    return static_cast<std::size_t>(key) % consumers_.size();
  }
  std::int64_t aggregate_debit(std::int64_t messages, std::int64_t finalized) override {
    if (ctx_.sticky_key_pre_admission()) return messages;  // F2
    return ctx_.legacy() ? messages
                         : PC_MUTANT(kStickyKeyAggregatePreAdmission, messages, finalized);
  }
};

// PersistentStickyKeyDispatcherMultipleConsumersClassic: hash ranges instead of key % n.
class PersistentKeySharedClassic : public StickyKeyBase {
 public:
  using StickyKeyBase::StickyKeyBase;
  DispatcherKind kind() const override { return DispatcherKind::kPersistentKeySharedClassic; }

  void read_more_entries() override {
    if (consumers_.empty() || total_available_permits_ <= 0) return;
    bool replay = false;
    const std::vector<StoredEntry*> entries = read_batch(&replay);
    if (entries.empty()) return;
    if (send_by_key(entries) && sub_.has_backlog() && total_available_permits_ > 0) {
      if (PC_MUTANT(kKeySharedNoNextRead, true, false)) return;
      schedule_read();
    }
  }

 protected:
  std::size_t owner(int key) const override {
    const std::size_t range = 65536 / consumers_.size() + 1;
    return (static_cast<std::size_t>(key) * 21845 % 65536) / range;
  }
  std::int64_t aggregate_debit(std::int64_t messages, std::int64_t finalized) override {
    if (ctx_.sticky_key_pre_admission()) return messages;  // F2
    return ctx_.legacy() ? messages : finalized;
  }
};

// NonPersistentDispatcherMultipleConsumers: nothing is stored; an entry no consumer can take
// now is dropped.
class NonPersistentShared : public Dispatcher {
 public:
  using Dispatcher::Dispatcher;
  DispatcherKind kind() const override { return DispatcherKind::kNonPersistentShared; }
  bool persistent() const override { return false; }
  void read_more_entries() override {}

  void on_publish(std::vector<StoredEntry*> entries) override {
    ctx_.scheduler.post(ctx_.topic_queue, [this, entries] {
      for (StoredEntry* e : entries) {
        BrokerConsumer* c = next_consumer_with_permits();
        if (c == nullptr) {
          e->done = true;
          continue;
        }
        BrokerConsumer::SendOutcome out = c->send_messages({e}, *this);
        for (StoredEntry* r : out.rejected) r->done = true;
        const std::int64_t sent = ctx_.legacy() ? broker_candidate(*e) : out.finalized_sum;
        total_available_permits_ -= sent;
        record(out, sent);
      }
    });
  }
};

// NonPersistentStickyKeyDispatcherMultipleConsumers.
class NonPersistentKeyShared : public StickyKeyBase {
 public:
  using StickyKeyBase::StickyKeyBase;
  DispatcherKind kind() const override { return DispatcherKind::kNonPersistentKeyShared; }
  bool persistent() const override { return false; }
  void read_more_entries() override {}

  void on_publish(std::vector<StoredEntry*> entries) override {
    ctx_.scheduler.post(ctx_.topic_queue, [this, entries] {
      if (consumers_.empty()) {
        for (StoredEntry* e : entries) e->done = true;
        return;
      }
      std::vector<StoredEntry*> deliverable;
      for (StoredEntry* e : entries) {
        if (consumers_[owner(e->payload->key)]->permits() > 0) {
          deliverable.push_back(e);
        } else {
          e->done = true;  // dropped: its owner has no permits
        }
      }
      send_by_key(deliverable);
    });
  }

 protected:
  std::size_t owner(int key) const override {
    return static_cast<std::size_t>(key) % consumers_.size();
  }
  std::int64_t aggregate_debit(std::int64_t messages, std::int64_t finalized) override {
    if (ctx_.sticky_key_pre_admission()) return messages;  // F2
    return ctx_.legacy() ? messages
                         : PC_MUTANT(kNonPersistentKeySharedPreAdmission, messages, finalized);
  }
};

// PersistentDispatcherSingleActiveConsumer (Exclusive, Failover): the first consumer is
// active; there is no aggregate.
class SingleActive : public Dispatcher {
 public:
  using Dispatcher::Dispatcher;
  DispatcherKind kind() const override { return DispatcherKind::kSingleActive; }
  bool has_aggregate() const override { return false; }

  void read_more_entries() override {
    if (consumers_.empty()) return;
    BrokerConsumer* active = consumers_.front();
    if (active->permits() <= PC_MUTANT(kSendAtZeroPermits, -1, 0)) return;  // B12
    bool replay = false;
    const std::vector<StoredEntry*> entries = read_batch(&replay);
    if (entries.empty()) return;
    std::size_t i = 0;
    std::vector<StoredEntry*> batch;
    take_for(*active, entries, &i, &batch);
    if (PC_MUTANT(kSendAtZeroPermits, batch.empty(), false)) batch.push_back(entries[i++]);
    for (std::size_t j = i; j < entries.size(); ++j) sub_.release(entries[j]);
    BrokerConsumer::SendOutcome out = active->send_messages(batch, *this);
    for (StoredEntry* e : out.rejected) sub_.release(e);
    const bool sent = out.commands > 0;
    record(out, std::nullopt);
    if (sent && sub_.has_backlog() && active->permits() > 0) schedule_read();
  }
};

}  // namespace

std::unique_ptr<Dispatcher> make_dispatcher(spec::DispatcherKind kind, BrokerContext& ctx,
                                            Subscription& sub) {
  switch (kind) {
    case DispatcherKind::kPersistentShared:
      return std::make_unique<PersistentShared>(ctx, sub);
    case DispatcherKind::kPersistentSharedClassic:
      return std::make_unique<PersistentSharedClassic>(ctx, sub);
    case DispatcherKind::kPersistentKeyShared:
      return std::make_unique<PersistentKeyShared>(ctx, sub);
    case DispatcherKind::kPersistentKeySharedClassic:
      return std::make_unique<PersistentKeySharedClassic>(ctx, sub);
    case DispatcherKind::kNonPersistentShared:
      return std::make_unique<NonPersistentShared>(ctx, sub);
    case DispatcherKind::kNonPersistentKeyShared:
      return std::make_unique<NonPersistentKeyShared>(ctx, sub);
    case DispatcherKind::kSingleActive:
      return std::make_unique<SingleActive>(ctx, sub);
  }
  return std::make_unique<SingleActive>(ctx, sub);
}

}  // namespace permitcheck::impl::internal
