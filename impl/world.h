// World: the reference implementation assembled. A broker (one topic, one subscription, one
// dispatcher), a client (pooled connections with event loops, consumers), the network between
// them and a deterministic scheduler. Every action is explicit, so a test decides the
// interleaving; everything the implementation does is recorded as trace-format events.
//
//   World world(WorldConfig{.mode = Mode::kRevD, .q = 4});
//   world.start();                                     // subscribe, initial grants applied
//   world.publish({EntrySpec{.payload = {.batch_size = 3, .batched = true}}});
//   world.run_all();                                   // dispatch and deliver
//   world.consume(0, 3);                               // the application receives 3
//   world.quiesce();                                   // records `quiescent` events
//   for (const spec::Event& e : world.events()) { ... }
#ifndef PERMITCHECK_IMPL_WORLD_H_
#define PERMITCHECK_IMPL_WORLD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impl/config.h"
#include "impl/observer.h"
#include "impl/wire.h"
#include "spec/events.h"

namespace permitcheck::impl {

class World {
 public:
  // `observer` (may be null) must outlive the world.
  explicit World(const WorldConfig& config, BrokerObserver* observer = nullptr);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Every consumer subscribes; runs until the initial grants are applied.
  void start();

  // ---- Actions (one test step each) ----
  void publish(const std::vector<EntrySpec>& entries);
  // Runs the front task of the (choice % n)-th non-empty queue; false when all are empty.
  bool step(std::uint64_t choice);
  // Runs every queue until all are empty (no application action). Returns the tasks run.
  std::uint64_t run_all();
  // The application's synchronous receive() of up to n messages; returns how many.
  int consume(int consumer, int n);
  // The message listener takes the next message; it is processed by a listener task.
  bool receive_async(int consumer);
  void redeliver(int consumer);  // redeliverUnacknowledgedMessages()
  // The broker closes the consumer: gracefully (closing now, removed by a later task) or at once.
  void close_consumer(int consumer, bool graceful);
  void drop_connection(int slot);  // connection loss of a pooled connection
  void fail_next_subscribe();
  // The next serialized message_permits reaches the client as `value` (a corrupting path).
  void corrupt_next_field(std::uint64_t value);
  // Runs tasks and lets the application consume everything until nothing moves, then records
  // a `quiescent` event for every consumer that is subscribed and holds nothing back (crypto
  // FAIL, X3; a chunk failure branch, X4). False if the system did not settle.
  bool quiesce();
  // The same without declaring anything: the caller decides from the trace which consumers
  // are quiescent and records it with declare_quiescent.
  bool settle();
  void declare_quiescent(std::uint64_t consumer, const spec::Id& cnx);

  // ---- Inspection ----
  struct BrokerConsumerView {
    std::string inc;  // "b3"
    std::uint64_t consumer_id = 0;
    std::int64_t available = 0;
    std::int64_t unacked_total = 0;
    std::int64_t pending = 0;  // stored entries the subscription has pending at it (B13)
  };
  std::vector<BrokerConsumerView> broker_consumers() const;
  // Entries the subscription still has to dispatch (unread, or redeliveries not pending), or
  // a stored entry neither finished nor pending that it lost track of.
  bool broker_backlog() const;
  std::optional<std::int64_t> dispatcher_aggregate() const;

  struct ClientConsumerView {
    std::optional<std::uint64_t> inc;  // current permit state, if any
    bool flow_enabled = false;
    std::int64_t accumulator = 0;
    std::int64_t queued = 0;
    std::int64_t in_listener = 0;
    std::int64_t prefetched = 0;  // prefetch count gauge (M2)
    bool holding = false;
  };
  ClientConsumerView client_consumer(int consumer) const;
  int consumers() const;
  // What command `cmd` returned by itself (direct + terminal), as the client counted it.
  std::optional<std::int64_t> command_returned(std::uint64_t cmd) const;
  // Whether the wire value of `cmd` was rewritten by corrupt_next_field.
  bool corrupted_on_wire(std::uint64_t cmd) const;
  // What the broker stored for the entry command `cmd` carries (null if never sent).
  std::shared_ptr<const Payload> payload_of(std::uint64_t cmd) const;

  const std::vector<spec::Event>& events() const;
  // Appends what an observer read outside the wire (an `x-` fact such as a gauge reading) to
  // the trace, after everything recorded so far.
  void record_fact(spec::Extension fact);
  spec::TraceHeader trace_header(spec::RulesetId ruleset) const;
  const WorldConfig& config() const;
  std::vector<std::string> pending_queues() const;  // names of non-empty queues, run order
  std::uint64_t tasks_run() const;
  bool idle() const;  // no task pending anywhere

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace permitcheck::impl

#endif  // PERMITCHECK_IMPL_WORLD_H_
