// The broker: a topic with one subscription, a dispatcher of one of the seven kinds, and the
// consumers of each incarnation with signed permit balances. Structured like Pulsar's broker:
// Consumer.sendMessages finalizes P after pending-ack admission and serializes the command;
// each dispatcher has its own send loop(s) and its own totalAvailablePermits aggregate.
#ifndef PERMITCHECK_IMPL_INTERNAL_BROKER_H_
#define PERMITCHECK_IMPL_INTERNAL_BROKER_H_

#include <cstdint>
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "impl/config.h"
#include "impl/internal/network.h"
#include "impl/internal/recorder.h"
#include "impl/observer.h"
#include "impl/scheduler.h"
#include "impl/wire.h"

namespace permitcheck::impl::internal {

// One stored entry and its acknowledgement state at the subscription.
struct StoredEntry {
  std::int64_t id = 0;
  std::shared_ptr<const Payload> payload;
  std::vector<bool> acked;  // per batch index
  std::vector<std::int64_t> stray_bits;  // ack_set bits at or beyond B (EntrySpec)
  int redelivery_count = 0;
  int pending_owner = -1;   // serial of the consumer it is pending at, -1 if none
  bool done = false;        // every index acknowledged (or dropped, non-persistent)
};

// Services every broker part shares.
struct BrokerContext {
  const WorldConfig& config;
  Scheduler& scheduler;
  Network& network;
  Recorder& recorder;
  BrokerObserver* observer;
  int topic_queue;                 // the topic's ordered executor
  std::uint64_t next_cmd = 1;      // CommandMessage ids (trace `cmd`)
  std::optional<std::uint64_t> corrupt_next_field;  // fault: next serialized value
  std::set<std::uint64_t> corrupted_cmds;
  std::map<std::uint64_t, std::shared_ptr<const Payload>> sent_payloads;  // for inspection
  Mutant mutant_;

  bool legacy() const { return config.mode == Mode::kLegacy; }
  // Revision B (F2): only the persistent Shared dispatchers debit their aggregate with the
  // finalized sum; the sticky-key ones keep the pre-admission count.
  bool sticky_key_pre_admission() const {
    return behaviour_of(config.mode).dispatchers == spec::DispatcherCoverage::kPersistentSharedOnly;
  }
};

// The broker-side ack state of the subscription (persistent kinds).
class Subscription {
 public:
  std::deque<StoredEntry>& entries() { return entries_; }
  StoredEntry* entry(std::int64_t id);
  void append(const EntrySpec& spec);

  // Entries to redeliver first, then new ones; at most `max`, never pending or done ones.
  std::vector<StoredEntry*> read_replay(int max);
  std::vector<StoredEntry*> read_new(int max);
  // An entry back to the replay set: after a rejection (no count), or a redelivery (counted).
  void release(StoredEntry* e);
  void redeliver(StoredEntry* e);
  bool has_backlog() const;

 private:
  std::deque<StoredEntry> entries_;
  std::int64_t read_position_ = 0;
  std::set<std::int64_t> replay_;
};

class Dispatcher;

// The broker consumer of one incarnation (Pulsar's org.apache.pulsar.broker.service.Consumer).
class BrokerConsumer {
 public:
  // `consumer_epoch`: the epoch the client subscribed with (its redeliveries so far).
  BrokerConsumer(BrokerContext& ctx, int serial, std::uint64_t consumer_id, int cnx,
                 std::int64_t consumer_epoch);

  struct SendOutcome {
    spec::Send send;                        // entries with admission verdicts and finalized P
    std::int64_t finalized_sum = 0;         // sum of P over the commands written
    std::int64_t messages_before_admission = 0;
    std::vector<StoredEntry*> rejected;     // back to the dispatcher
    int commands = 0;                       // commands written
  };

  // Consumer.sendMessages: candidate P per entry, pending-ack admission, finalization,
  // debits (B1-B9) and serialization (B7). The caller debits its own aggregate and records.
  SendOutcome send_messages(const std::vector<StoredEntry*>& entries, Dispatcher& dispatcher);

  // B10: Flow adds.
  void flow(std::int64_t permits);

  int serial() const { return serial_; }
  std::uint64_t consumer_id() const { return consumer_id_; }
  int cnx() const { return cnx_; }
  const std::string& inc() const { return inc_; }
  std::int64_t permits() const { return permits_; }
  std::int64_t unacked() const { return unacked_; }
  std::int64_t unacked_total() const { return unacked_total_; }
  std::set<std::int64_t>& pending() { return pending_; }
  const std::set<std::int64_t>& pending() const { return pending_; }
  bool closing = false;
  bool removed = false;
  std::int64_t epoch = 0;
  void acked(std::int64_t n) { unacked_ = unacked_ > n ? unacked_ - n : 0; }
  void clear_unacked() { unacked_ = 0; }

 private:
  BrokerContext& ctx_;
  [[maybe_unused]] Mutant mutant_;
  int serial_;
  std::uint64_t consumer_id_;
  int cnx_;
  std::string inc_;
  std::int64_t permits_ = 0;  // signed: batch debt (B9)
  std::int64_t unacked_ = 0;
  std::int64_t unacked_total_ = 0;  // every unacked increase (B5), for inspection
  std::set<std::int64_t> pending_;
};

// B2, computed by the broker from the entry's ack state: the deliverable indexes.
std::int64_t broker_candidate(const StoredEntry& e);
std::vector<std::int64_t> broker_ack_set(const StoredEntry& e);

// A dispatcher: chooses consumers for entries in its own send loop(s) and keeps the
// totalAvailablePermits aggregate (none for single-active).
class Dispatcher {
 public:
  Dispatcher(BrokerContext& ctx, Subscription& sub) : ctx_(ctx), sub_(sub), mutant_(ctx.mutant_) {}
  virtual ~Dispatcher() = default;

  virtual spec::DispatcherKind kind() const = 0;
  virtual bool has_aggregate() const { return true; }
  virtual bool persistent() const { return true; }

  virtual void add_consumer(BrokerConsumer* c);
  virtual void remove_consumer(BrokerConsumer* c);
  virtual void consumer_flow(BrokerConsumer* c, std::int64_t permits);
  // Reads entries and sends them (one read batch); re-posts itself while work remains.
  virtual void read_more_entries() = 0;
  // Non-persistent kinds dispatch on publish.
  virtual void on_publish(std::vector<StoredEntry*> entries);
  // Pending-ack admission beyond the consumer's own checks (Key_Shared draining).
  virtual bool admits(const BrokerConsumer& c, const StoredEntry& e) const;

  void schedule_read();
  std::int64_t total_available_permits() const { return total_available_permits_; }
  const std::vector<BrokerConsumer*>& consumers() const { return consumers_; }

 protected:
  // Finishes a send: records the broker `send` event with the aggregate debit.
  void record(BrokerConsumer::SendOutcome& outcome, std::optional<std::int64_t> aggregate_debit);
  BrokerConsumer* next_consumer_with_permits();
  std::vector<StoredEntry*> read_batch(bool* replay);

  BrokerContext& ctx_;
  Subscription& sub_;
  [[maybe_unused]] Mutant mutant_;
  std::vector<BrokerConsumer*> consumers_;
  std::int64_t total_available_permits_ = 0;
  std::size_t round_robin_ = 0;
  bool read_scheduled_ = false;
};

std::unique_ptr<Dispatcher> make_dispatcher(spec::DispatcherKind kind, BrokerContext& ctx,
                                            Subscription& sub);

class Broker {
 public:
  Broker(const WorldConfig& config, Scheduler& scheduler, Network& network, Recorder& recorder,
         BrokerObserver* observer);

  void publish(const std::vector<EntrySpec>& entries);
  void on_frame(int cnx, const Frame& frame);
  // Broker-initiated close (unload, kick). Graceful: the consumer is closing now and removed
  // by a later task, so an in-flight dispatch races with it; else removed at once.
  void close_consumer(std::uint64_t consumer_id, bool graceful);
  void connection_lost(int cnx);
  void fail_next_subscribe() { fail_next_subscribe_ = true; }
  void corrupt_next_field(std::uint64_t value) { ctx_.corrupt_next_field = value; }

  std::vector<const BrokerConsumer*> live_consumers() const;
  std::optional<std::int64_t> aggregate() const;
  bool has_backlog() const { return sub_.has_backlog(); }
  // For inspection (B13): a stored entry not finished and not pending at a live consumer
  // that holds it in its pending set, whatever the subscription's own read position and
  // replay set say (an entry they lost, or one left pending at nobody, counts).
  bool holds_undispatched_entry() {
    const std::deque<StoredEntry>& entries = sub_.entries();
    return std::any_of(entries.begin(), entries.end(), [this](const StoredEntry& e) {
      if (e.done) return false;
      if (e.pending_owner < 1 || e.pending_owner > static_cast<int>(consumers_.size())) return true;
      const BrokerConsumer& owner = *consumers_[static_cast<std::size_t>(e.pending_owner - 1)];
      return owner.removed || !owner.pending().contains(e.id);
    });
  }
  // For inspection (B13): stored entries not finished that the subscription has pending at
  // the consumer of `serial`, by each entry's own owner (not the consumer's pending set).
  std::int64_t pending_entries_at(int serial) {
    const std::deque<StoredEntry>& entries = sub_.entries();
    return std::count_if(entries.begin(), entries.end(),
                         [serial](const StoredEntry& e) { return !e.done && e.pending_owner == serial; });
  }
  bool corrupted(std::uint64_t cmd) const { return ctx_.corrupted_cmds.contains(cmd); }
  std::shared_ptr<const Payload> payload_of(std::uint64_t cmd) const {
    auto it = ctx_.sent_payloads.find(cmd);
    return it == ctx_.sent_payloads.end() ? nullptr : it->second;
  }

 private:
  BrokerConsumer* find(int cnx, std::uint64_t consumer_id);
  void remove(BrokerConsumer* c);
  void on_ack(BrokerConsumer* c, const CommandAck& ack);

  BrokerContext ctx_;
  Subscription sub_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::vector<std::unique_ptr<BrokerConsumer>> consumers_;
  bool fail_next_subscribe_ = false;
  [[maybe_unused]] Mutant mutant_;  // read by PC_MUTANT in the mutant build only
};

}  // namespace permitcheck::impl::internal

#endif  // PERMITCHECK_IMPL_INTERNAL_BROKER_H_
