// The client: a connection pool whose connections each have an event loop shared by every
// consumer on them, and consumers structured like the Java ConsumerImpl (receive pipeline,
// receiver queue, permit accounting) and ClientCnx (frame routing).
#ifndef PERMITCHECK_IMPL_INTERNAL_CLIENT_H_
#define PERMITCHECK_IMPL_INTERNAL_CLIENT_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "impl/config.h"
#include "impl/internal/network.h"
#include "impl/internal/recorder.h"
#include "impl/scheduler.h"
#include "impl/wire.h"

namespace permitcheck::impl::internal {

// The permit state of one incarnation (rev-d): its identity is the incarnation (N1).
struct PermitState {
  std::uint64_t inc = 0;  // trace id
  int cnx = -1;           // source connection
  std::int64_t accumulator = 0;
  bool current = true;
  bool flow_enabled = false;
};

// The command budget (rev-d, K1-K8): what one command still owns.
class CommandBudget {
 public:
  CommandBudget(std::int64_t p, Mutant mutant) : mutant_(mutant), p_(p), remaining_(p) {}
  bool can_claim() const { return !terminal_ && !transferred_ && remaining_ > 0; }
  void claim() { --remaining_; }
  void restore() { ++remaining_; }
  // Units leaving without a return (only mutants do this).
  void forfeit(std::int64_t n) { remaining_ -= n; }
  void transfer() { transferred_ = true; }  // S1
  std::int64_t finish();                    // K5
  std::int64_t p() const { return p_; }

 private:
  [[maybe_unused]] Mutant mutant_;  // read by PC_MUTANT in the mutant build only
  std::int64_t p_;
  std::int64_t remaining_;
  bool terminal_ = false;
  bool transferred_ = false;
};

// A message in the receiver queue (or handed to the listener).
struct ClientMessage {
  std::string msg_id;  // trace id: "m<cmd>.<index>"
  std::uint64_t cmd = 0;
  MessagePosition pos;
  std::vector<std::int64_t> chunk_entries;  // an assembled chunked message acks all of them
  std::int64_t epoch = 0;
  std::shared_ptr<PermitState> state;  // rev-d: the state retained at hand-off (M1)
  int cnx = -1;                        // legacy: the connection it came from (msgCnx)
  std::int64_t bytes = 0;
  bool processor_owned = false;        // output of a payload processor: no unit of its own
};

class Client;

class ConsumerImpl {
 public:
  ConsumerImpl(Client& client, int index);

  // Lifecycle.
  void connect();                  // grabCnx(): pooled connection, then connectionOpened
  void connection_opened(int cnx);
  void on_subscribe_success(int cnx);
  void on_subscribe_error(int cnx);
  void on_close_consumer(int cnx);  // CommandCloseConsumer (N2)
  void connection_closed(int cnx, spec::CloseReason reason);

  // messageReceived: the receive pipeline for one CommandMessage.
  void message_received(int cnx, const CommandMessage& m);

  // Application.
  bool receive();        // synchronous receive(): dequeue, process, acknowledge
  bool receive_async();  // MessageListener: dequeued now, processed on the listener executor
  void redeliver_unacknowledged_messages();

  // Inspection.
  std::uint64_t id() const { return id_; }
  int cnx() const { return cnx_; }
  bool ready() const { return ready_; }
  bool closed() const { return closed_; }
  std::optional<std::uint64_t> current_inc() const;
  bool flow_enabled() const;
  std::int64_t accumulator() const;
  std::size_t queued() const { return incoming_.size(); }
  std::int64_t prefetched() const { return prefetched_count_; }
  std::int64_t in_listener() const { return in_listener_; }
  bool holding() const { return crypto_debt_ || chunk_gap_; }
  const std::map<std::uint64_t, std::int64_t>& returned_by_command() const { return returned_; }

 private:
  class Handling;  // one command through the pipeline (consumer.cc)
  friend class Handling;

  bool legacy() const;
  const Behaviour& behaviour() const;
  bool single_active() const;
  spec::Id cnx_id(int cnx) const;
  void record(spec::Event e);

  // rev-d: the unit(s) reach `state` only while it is current (N3); a Flow is queued at T.
  void credit(const std::shared_ptr<PermitState>& state, std::int64_t n);
  void send_flow(const std::shared_ptr<PermitState>& state, std::int64_t n);
  void return_message(const ClientMessage& msg, const std::shared_ptr<PermitState>& target);
  // legacy: ConsumerImpl.increaseAvailablePermits(cnx, n).
  void increase_available_permits(int cnx, std::int64_t n);

  void process(const ClientMessage& msg);
  void acknowledge(const ClientMessage& msg);
  // Acknowledges the message at `pos`, or every chunk's entry of an assembled chunked message.
  void send_acks(std::uint64_t cmd, MessagePosition pos, const std::vector<std::int64_t>& chunk_entries);
  void send_ack(std::uint64_t cmd, CommandAck ack);
  void enqueue(ClientMessage msg);
  void close_gauges(const ClientMessage& msg);
  void end_incarnation(spec::CloseReason reason);
  bool zero_queue() const;

  Client& client_;
  [[maybe_unused]] Mutant mutant_;
  std::uint64_t id_;
  int slot_;
  int cnx_ = -1;
  bool ready_ = false;
  bool closed_ = false;  // closed by the client itself (S7): no reconnection
  std::int64_t epoch_ = 0;

  // rev-d.
  std::shared_ptr<PermitState> permits_;
  // legacy: one counter for the consumer object, whatever the incarnation.
  std::int64_t available_permits_ = 0;
  std::uint64_t legacy_inc_ = 0;  // trace id of the current incarnation
  bool legacy_current_ = false;

  std::deque<ClientMessage> incoming_;
  std::int64_t prefetched_count_ = 0;  // prefetch gauges (M2)
  std::int64_t prefetched_bytes_ = 0;
  std::int64_t in_listener_ = 0;
  // Zero-queue: the incarnation whose receive() granted a permit and still waits for its
  // message (a blocked receive() grants once, not again on every poll).
  std::optional<std::uint64_t> zero_queue_waiting_;
  std::set<MessagePosition> acked_;  // duplicate tracker
  struct ChunkContext {
    int next_chunk = 0;
    std::vector<std::int64_t> entries;
  };
  std::map<std::int64_t, ChunkContext> chunks_;
  std::set<std::uint64_t> held_;  // crypto FAIL: held for redelivery (S4, X3)
  bool crypto_debt_ = false;      // X3: a crypto FAIL debt stays until the incarnation ends
  bool chunk_gap_ = false;        // an X4 chunk branch held units in this incarnation
  std::int64_t dead_lettered_ = 0;  // message objects held by dead-letter handling (S5)
  std::int64_t released_while_held_ = 0;  // of those, released at skip time (F3)
  std::map<std::uint64_t, std::int64_t> returned_;  // per command: direct + terminal returns
};

class Client {
 public:
  Client(const WorldConfig& config, Scheduler& scheduler, Network& network, Recorder& recorder);

  void start();  // every consumer subscribes
  void on_frame(int cnx, const Frame& frame);
  // The connection is gone (loss or closed by us): every consumer on it ends its incarnation.
  void connection_closed(int cnx, spec::CloseReason reason);
  // The pooled connection of `slot`, opened when it has none.
  int get_connection(int slot);
  // The connection `slot` currently holds (-1 before its first use).
  int pooled(int slot) const { return pool_[static_cast<std::size_t>(slot)]; }
  // Runs `task` on the connection's event loop: at once when already on it (Netty), queued
  // otherwise. Nothing runs for a closed connection.
  void execute(int cnx, std::function<void()> task);
  bool open(int cnx) const { return network_.connection(cnx).open; }
  void send(int cnx, Frame frame) { network_.to_broker(cnx, std::move(frame)); }

  ConsumerImpl& consumer(int k) { return *consumers_[static_cast<std::size_t>(k)]; }
  const ConsumerImpl& consumer(int k) const { return *consumers_[static_cast<std::size_t>(k)]; }
  int consumer_count() const { return static_cast<int>(consumers_.size()); }

  const WorldConfig& config() const { return config_; }
  const Behaviour& behaviour() const { return behaviour_; }
  Scheduler& scheduler() { return scheduler_; }
  Network& network() { return network_; }
  Recorder& recorder() { return recorder_; }
  int timer_queue() const { return timer_queue_; }
  int listener_queue() const { return listener_queue_; }
  std::uint64_t next_inc() { return next_inc_++; }

  // Set by the world: closes a connection from the client side (C4, N7).
  std::function<void(int cnx, spec::CloseReason reason)> close_connection;

 private:
  const WorldConfig& config_;
  Behaviour behaviour_;
  Scheduler& scheduler_;
  Network& network_;
  Recorder& recorder_;
  int timer_queue_;
  int listener_queue_;
  std::uint64_t next_inc_ = 1;
  std::vector<int> pool_;
  std::vector<std::unique_ptr<ConsumerImpl>> consumers_;
};

}  // namespace permitcheck::impl::internal

#endif  // PERMITCHECK_IMPL_INTERNAL_CLIENT_H_
