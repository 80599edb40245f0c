// The wire observer: the one place where Pulsar frames become wire events of the trace format
// (docs/trace-format.md). Whoever sees the bytes of a Pulsar connection (the capture reader,
// the live tap through it, the conformance broker) hands each whole frame to the connection's
// Observer with its direction and time; the observer decodes it with the project's codec
// (protocol/frame.h, MESSAGE, ACK and FLOW by hand: protocol/hot_command.h) and appends what it
// means: connect, subscribe, subscribe_ok/subscribe_fail, flow, message, ack, close_consumer,
// x-redeliver, and on close disconnect; `quiescent` when the caller asks and quiescence.h says
// so. What the observer cannot follow is a fact it returns (FrameFacts), never silence.
//
//   std::uint64_t next_cmd = 1;  std::vector<TimedEvent> out;
//   Observer o(spec::Id::text("10.0.0.1:40000>10.0.0.2:6650"), &next_cmd);
//   FrameFacts f = o.on_frame(Direction::kToServer, t, frame, nullptr, &out);  // f.not_understood?
//
// Guarantees: never crashes on any frame (a malformed one is a not_understood fact). Memory is
// bounded by what the connection has in flight: one entry per delivered, unsettled message
// (at most 65536 batch indexes each), at most 4096 subscribes awaiting an answer, at most 64
// lookup answers between take_lookups() calls. A frame costs O(its size) plus O(log n) per
// acknowledged id for n entries in flight (a cumulative ack: O(k log n) for the k it settles);
// a MESSAGE, ACK or FLOW of a shape the hand decoder takes allocates nothing once the
// observer's buffers have grown.
#ifndef PERMITCHECK_WIRE_OBSERVER_H_
#define PERMITCHECK_WIRE_OBSERVER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/inlined_vector.h"
#include "protocol/frame.h"
#include "protocol/hot_command.h"
#include "spec/events.h"
#include "wire/quiescence.h"

namespace permitcheck::wire {

enum class Direction { kToServer = 0, kToClient = 1 };

struct TimedEvent {
  double time = 0;  // seconds (a capture's: since the epoch)
  spec::Event event;
};

// A LOOKUP_RESPONSE the broker sent: where it tells the client to go for the topic.
struct LookupAnswer {
  double time = 0;
  std::string broker_url;  // brokerServiceUrl (or, without it, brokerServiceUrlTls)
  bool proxy_through = false;  // proxy_through_service_url: stay on the address looked up
};

// The trace's name of an ack's validation error (docs/trace-format.md, `ack` `error`): the
// one spelling every producer of traces uses. nullopt for a value outside the enum.
std::optional<std::string> validation_error_name(CommandAck::ValidationError error);

// What a frame told the observer besides its events.
struct FrameFacts {
  // The frame does not decode ("client frame 7: ..."): the observer cannot follow this
  // direction from here on, and the caller stops feeding it (a capture reports the
  // connection not understood; the broker closes it).
  std::optional<std::string> not_understood;
  // The command type of a frame whose type our protocol subset does not know (a producer's,
  // an admin's command): no permits move, no event, and the direction is still followed. (A
  // server that answers it finds the request id with protocol::unknown_command.)
  std::optional<std::uint64_t> unsupported_type;
};

// What only the server knows about a frame: for an ACK, the MESSAGE each acknowledged id
// names (its `cmd`), in the ack's order; an id without one is named "e<entry>". The
// conformance broker gives it (it knows every entry it delivered, done or not); a capture
// reader does not, and the observer names acks from the MESSAGEs it saw.
struct ServerKnowledge {
  std::span<const std::optional<spec::Id>> acked_cmds;
};

class Observer {
 public:
  // `next_cmd` numbers the MESSAGEs (`cmd`), shared by every connection of one trace.
  // REQUIRES: next_cmd outlives this object.
  Observer(spec::Id cnx, std::uint64_t* next_cmd) : cnx_(std::move(cnx)), next_cmd_(next_cmd) {
    frame_.decode_hot = true;  // MESSAGE, ACK and FLOW by hand (protocol/hot_command.h)
  }

  // One whole frame (with its size prefix) of `direction`, seen at `time`: appends its events
  // to *out. `streamed`: the frame is the head of a streamed payload frame
  // (protocol::FrameSplitter::stream_payloads_above). Frames after the connection closed are
  // ignored.
  FrameFacts on_frame(Direction direction, double time, std::string_view frame,
                      const protocol::StreamedPayload* streamed, std::vector<TimedEvent>* out,
                      const ServerKnowledge* server = nullptr);

  // The connection closed: `disconnect`, ending every consumer on it (once).
  void on_close(double time, std::vector<TimedEvent>* out);

  // `quiescent` for every subscribed consumer that has had a Flow and is at rest
  // (wire::quiescent) after `silence` seconds without traffic, given `patience`; the
  // caller measures the silence.
  void quiescent(double time, double silence, const Patience& patience,
                 std::vector<TimedEvent>* out);

  // The LOOKUP_RESPONSEs decoded since the last call (not wire events: no rule reads them).
  std::vector<LookupAnswer> take_lookups() { return std::exchange(lookups_, {}); }

  const spec::Id& cnx() const { return cnx_; }
  std::int64_t frames() const { return frames_; }
  bool closed() const { return closed_; }

 private:
  // An entry delivered and not yet settled: bit i of `unacked` is batch index i, delivered
  // and not acknowledged (the AckSet's layout); settled when no bit is left.
  struct Entry {
    spec::Id cmd;
    absl::InlinedVector<std::uint64_t, 1> unacked;
    bool any_ack_settles = false;  // B unknown (metadata unreadable): any ack settles it
    bool settled() const;
  };
  struct Consumer {
    bool subscribed = false;
    int flows = 0;
    absl::btree_map<std::pair<std::uint64_t, std::uint64_t>, Entry> entries;  // (ledger, entry)
  };

  // The commands other than MESSAGE, ACK and FLOW, parsed by protobuf.
  void client_frame(double time, const protocol::FrameView& frame, std::vector<TimedEvent>* out);
  void server_frame(double time, const protocol::FrameView& frame, std::vector<TimedEvent>* out);
  // MESSAGE, ACK and FLOW, however they were decoded.
  void on_message(double time, const protocol::HotCommand& m, const protocol::FrameView& frame,
                  std::vector<TimedEvent>* out);
  void on_ack(double time, const protocol::HotCommand& ack, const ServerKnowledge* server,
              std::vector<TimedEvent>* out);
  void on_flow(double time, const protocol::HotCommand& flow, std::vector<TimedEvent>* out);

  spec::Id cnx_;
  // Reused for every frame: decoding allocates nothing once these have grown.
  protocol::FrameView frame_;
  MessageMetadata metadata_;
  std::map<std::uint64_t, std::uint64_t> pending_subscribes_;  // request id -> consumer id
  std::map<std::uint64_t, Consumer> consumers_;
  std::uint64_t* next_cmd_;
  std::vector<LookupAnswer> lookups_;
  std::int64_t frames_ = 0;
  bool closed_ = false;
};

}  // namespace permitcheck::wire

#endif  // PERMITCHECK_WIRE_OBSERVER_H_
