// ConformanceBroker: a PIP-491 broker on 127.0.0.1 that speaks the Pulsar binary protocol
// well enough for unmodified clients to connect, look up, subscribe and consume, and records
// what crosses the wire in the trace format (trace-format.md) for the Monitor.
//
// The protocol side (CONNECT, LOOKUP, PARTITIONED_METADATA, SUBSCRIBE, FLOW, ACK,
// REDELIVER_UNACKNOWLEDGED_MESSAGES, PING/PONG, CLOSE_CONSUMER, CONSUMER_STATS) runs on its
// own thread. A scenario driver decides what to deliver: it waits on the broker's state with
// bounded waits and asks for deliveries, consumer closes and connection drops.
//
//   ConformanceBroker broker({.send_message_permits = true});
//   broker.start();                                  // binds 127.0.0.1:0
//   broker.wait_until([](const BrokerView& v) { return v.available > 0; }, 5s);
//   broker.deliver({.entry = 1, .batch_size = 8, .ack_set = AckSet::from_indexes({0, 2})});
//   std::vector<spec::Event> trace = broker.trace();
#ifndef PERMITCHECK_CONFORMANCE_BROKER_H_
#define PERMITCHECK_CONFORMANCE_BROKER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "spec/ack_set.h"
#include "spec/events.h"

namespace permitcheck::conformance {

// What can be wrong with a delivered entry (the scenario's fault injection).
enum class EntryFault {
  kNone,
  kChecksum,        // crc32c flipped (C7)
  kMetadata,        // MessageMetadata bytes do not parse (C7)
  kTruncatedBatch,  // the batch payload ends inside message `truncate_at` (C7, K5)
  kExtraMessages,   // the payload holds more messages than the metadata's B says (K8, C5)
  kDecompression,   // compressed (LZ4) with a payload that does not decompress; B known (C7)
};
std::string_view entry_fault_name(EntryFault fault);

// Where a kTruncatedBatch payload ends, relative to message `truncate_at` (each batch message
// is [4-byte size][SingleMessageMetadata][payload]): the position classes a client's batch
// parser may fail in by different paths. Every class leaves the messages before `truncate_at`
// whole.
enum class Cut {
  kSizeField3,  // 3 bytes into its size field (the default)
  kSizeField1,  // 1 byte into its size field
  kSizeField2,  // 2 bytes into its size field
  kBoundary,    // right before it: the payload ends at a message boundary
  kMetadata,    // inside its SingleMessageMetadata (the size field whole)
  kPayload,     // inside its payload (size field and metadata whole)
};
std::string_view cut_name(Cut cut);
inline constexpr Cut kAllCuts[] = {Cut::kSizeField1, Cut::kSizeField2, Cut::kSizeField3,
                                   Cut::kBoundary,   Cut::kMetadata,   Cut::kPayload};

// One entry the broker delivers as one CommandMessage.
struct Delivery {
  std::uint64_t entry = 0;           // entry id (ledger id is fixed)
  std::int64_t batch_size = 1;       // B; 1 with batched = false is a non-batched message
  bool batched = false;
  spec::AckSet ack_set;              // absent: a complete batch
  EntryFault fault = EntryFault::kNone;
  int truncate_at = 0;               // kTruncatedBatch: index whose bytes are cut
  Cut cut = Cut::kSizeField3;        // kTruncatedBatch: where in that message
  int extra_messages = 0;            // kExtraMessages
  std::optional<std::uint64_t> consumer;  // default: the live consumer; else any id (E3)
  std::uint32_t redelivery_count = 0;
  // A duplicate of an entry the subscription already acknowledged: nothing to acknowledge
  // again (the client may skip it without an ack), but its P is debited like any other.
  bool already_acked = false;
};

// A snapshot of the broker's state, for the scenario driver's waits.
struct BrokerView {
  int connections_opened = 0;
  int live_connections = 0;
  int subscribes = 0;               // successful subscribes so far (incarnations)
  int repeated_subscribes = 0;      // SUBSCRIBEs of the live consumer id on its connection:
                                    // SUCCESS, the consumer kept (as Pulsar does)
  bool subscribed = false;          // a live consumer exists
  std::uint64_t consumer = 0;       // its consumer id
  int connection = 0;               // its connection's number (the trace's cN)
  // Redelivery after a connection the client closed (a real broker puts the closed consumer's
  // unacknowledged entries back): entries written again to the replacement, those still
  // waiting for its Flow, and the entries the client closed on every time (each written at
  // most 3 times after a close, then noted here: the client loops on it).
  int redelivered_after_client_close = 0;
  int pending_redeliveries = 0;
  std::vector<std::uint64_t> redelivery_loops;
  // The live incarnation's numbers, or the last ended one's when none is live.
  std::int64_t granted = 0;         // Flow sum
  std::int64_t debited = 0;         // P sum
  std::int64_t available = 0;       // granted - debited (signed, B9)
  int flows = 0;                    // Flow commands of the live incarnation
  std::int64_t frames_in = 0;       // every frame received
  std::chrono::steady_clock::time_point last_activity;  // last frame in or out
  int outstanding = 0;              // delivered entries of the live incarnation not fully acked
  // The longest the client took, over the whole run, to finish an entry it could work on:
  // from the entry's MESSAGE, or from the previous entry's last acknowledgement when that came
  // later (time queued behind other entries is not counted). How slow this client is here (a
  // busy machine, an application delay); the scenarios' silences scale with it, so a starved
  // client is not judged before it could act.
  std::chrono::milliseconds slowest_ack{0};
  // The longest the client took to write a Flow after its previous command, over the whole
  // run, counting only gaps with no MESSAGE written between the two (an acknowledgement, then
  // the Flow it made due). The silences in which a due Flow must come scale with it.
  std::chrono::milliseconds slowest_flow{0};
  std::vector<std::uint64_t> redeliver_requests;  // entry ids the client asked to redeliver
  int redeliver_all_requests = 0;   // REDELIVER without ids (Java's Exclusive/Failover nack)
  std::vector<std::uint64_t> unacked_entries;  // entries of the live incarnation not yet acked
  std::vector<std::string> protocol_errors;  // garbage the client sent
  // Scenario bookkeeping of the live incarnation.
  std::optional<std::uint64_t> start_entry;  // its Subscribe's start_message_id entry, if any
  std::int64_t held_units = 0;      // deliverable messages delivered and not yet acked
  std::map<std::uint64_t, std::vector<std::int64_t>> acked_indexes;  // per unfinished entry
  std::int64_t acked_messages = 0;  // messages (indexes, singles) acked, validation errors not
  std::int64_t pings = 0;           // client keep-alives (not counted as activity)
  // Consumer epoch (M2): the live consumer's, from its Subscribe or its last REDELIVER that
  // named one; MESSAGE commands carry it. None: the client never named an epoch.
  std::optional<std::uint64_t> epoch;
  int epoch_requests = 0;           // REDELIVERs of the live consumer that raised its epoch
  // The incarnation before the live one (a window that holds messages across the
  // replacement): its messages not yet acknowledged, and those of its messages acknowledged
  // by the live consumer after its Subscribe (they finished after the replacement subscribed).
  std::int64_t previous_held_units = 0;
  std::int64_t previous_acked_late = 0;
  // The live consumer's subscription type as its Subscribe named it (wire SubType: 0
  // Exclusive, 1 Shared, 2 Failover, 3 Key_Shared), and the ACTIVE_CONSUMER_CHANGE commands
  // written to it (on a Failover Subscribe, and by notify_active_consumer()).
  int subscription_type = 0;
  int active_consumer_changes = 0;
};

// "Exclusive", "Shared", "Failover", "Key_Shared" for a wire SubType; "SubType N" otherwise.
std::string subscription_type_name(int subtype);

struct BrokerOptions {
  bool send_message_permits = true;  // W3: a new broker sends the field; false: an old one
  std::string topic_hint;            // informational
  // What a LOOKUP is answered with (pulsar://HOST:PORT); empty: url(), the broker itself.
  std::string advertised_url;
};

class ConformanceBroker {
 public:
  explicit ConformanceBroker(BrokerOptions options);
  ~ConformanceBroker();
  ConformanceBroker(const ConformanceBroker&) = delete;
  ConformanceBroker& operator=(const ConformanceBroker&) = delete;

  // Binds 127.0.0.1 on an ephemeral port and starts the protocol thread.
  absl::Status start();
  std::uint16_t port() const { return port_; }
  std::string url() const;  // pulsar://127.0.0.1:PORT

  // Waits until `pred` holds on the state (checked on every change) or `timeout` passes.
  bool wait_until(const std::function<bool(const BrokerView&)>& pred,
                  std::chrono::milliseconds timeout);
  BrokerView view() const;

  // Finalizes P for the entry (spec::finalize_permits), debits the live incarnation, records
  // the send and the message, and writes the frame. FailedPrecondition without a live
  // consumer (unless `consumer` names one explicitly).
  absl::Status deliver(const Delivery& delivery);

  // Broker-side CLOSE_CONSUMER of the live consumer (ends its incarnation, B11).
  absl::Status close_consumer();
  // Closes the live consumer's connection (B11), once the frames already queued on it were
  // written (at most 2 s): a drop right after a delivery drops a connection whose client has
  // the message, never one that loses it on the way. Returns once closed (at most 5 s).
  absl::Status drop_connection();
  // Writes ACTIVE_CONSUMER_CHANGE (is_active) to the live consumer, as a broker does for a
  // Failover subscription on every membership change; a non-message command, so nothing is
  // debited. Recorded as `x-active-consumer-change`. A Failover Subscribe gets one on its own.
  absl::Status notify_active_consumer(bool is_active);
  // Appends an `x-` extension event, e.g. an "x-client-exit ..." fact (spec/client_exit.h).
  // REQUIRES: ev starts with "x-".
  void record_extension(std::string ev);
  // Appends `quiescent` for the live consumer: the driver asserts nothing is in flight.
  void mark_quiescent();
  // Stops accepting, closes every connection, records their disconnects, joins the thread.
  void stop();

  std::vector<spec::Event> trace() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  BrokerOptions options_;
  std::uint16_t port_ = 0;
};

}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_BROKER_H_
