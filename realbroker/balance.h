// The broker's own permit accounting checked against the wire: the available permits each
// consumer should have, derived from the wire trace the tap writes (the Flows the client sent
// minus the permits the broker debited for the MESSAGEs it sent, B2's P of each: the batch
// size, or the set bits of its ack_set below it), compared with the `availablePermits` the
// broker reports in its topic stats. Over-credit (the broker thinks the consumer has more
// permits than the wire gave it) and under-credit (fewer) are both B4 findings (the available
// permits fall by exactly the P of each send; B10: a Flow adds its count).
//
//   WireBalance wire;
//   for (const spec::Event& e : trace.events) wire.on_event(e);
//   std::vector<StatsFinding> f = compare_with_stats(wire.live_total(), wire.live_consumers(),
//                                                   subscription_stats);
//
// Guarantees: O(1) per event, memory O(consumers). What the stats cannot show is said in
// docs/real-broker.md: a dispatcher's aggregate permits (B6, E4) are not in them.
#ifndef PERMITCHECK_REALBROKER_BALANCE_H_
#define PERMITCHECK_REALBROKER_BALANCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "realbroker/admin.h"
#include "spec/events.h"

namespace permitcheck::realbroker {

// Per consumer on the wire: (connection, consumer id).
struct WireConsumer {
  std::string connection;
  std::uint64_t consumer = 0;
  std::int64_t flowed = 0;    // sum of its Flows
  std::int64_t debited = 0;   // sum of the P of the MESSAGEs sent to it
  std::int64_t messages = 0;  // MESSAGE commands
  bool live = false;          // subscribed, not closed or disconnected
  std::int64_t available() const { return flowed - debited; }
};

class WireBalance {
 public:
  void on_event(const spec::Event& event);
  // The consumers subscribed and not closed, in the order they subscribed.
  std::vector<WireConsumer> live_consumers() const;
  std::int64_t live_total() const;
  // The largest available balance any consumer had after a Flow (the client's over-return
  // shows as a balance above Q).
  std::int64_t peak_available() const { return peak_; }

 private:
  WireConsumer* find(const spec::Id& cnx, std::uint64_t consumer);
  std::vector<WireConsumer> consumers_;
  absl::flat_hash_map<std::string, std::size_t> index_;
  std::int64_t peak_ = 0;
};

// One comparison of the broker's stats with the wire at a settle point.
struct StatsComparison {
  std::string when;            // "after the first drain", ...
  std::int64_t wire_available = 0;    // sum over the live wire consumers
  std::int64_t broker_available = 0;  // sum of the subscription's consumers' availablePermits
  std::int64_t broker_unacked = 0;    // sum of their unackedMessages
  std::int64_t wire_consumers = 0, broker_consumers = 0;
  bool matches() const {
    return wire_available == broker_available && wire_consumers == broker_consumers;
  }
  // "B4: over-credit: the broker reports availablePermits 19, the wire gives 10 ..." or "".
  std::string finding() const;
};

StatsComparison compare_with_stats(const std::string& when, const WireBalance& wire,
                                   const SubscriptionStats& broker);

}  // namespace permitcheck::realbroker

#endif  // PERMITCHECK_REALBROKER_BALANCE_H_
