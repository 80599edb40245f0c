// One Pulsar connection seen on the wire: the frames of both directions, decoded with the
// project's codec (protocol/frame.h), become wire events of the trace format, as the
// conformance broker records them (subscribe, subscribe_ok, flow, message, ack, close_consumer,
// disconnect, x-redeliver), plus `quiescent` when a consumer has every delivered entry
// acknowledged. Memory: one partial frame head per direction and the entries in flight. Frames
// are decoded where the bytes are (FrameSplitter::split, decode_frame_into): no copy per frame,
// and a large payload spanning segments is checksummed as it passes, not buffered.
//
//   std::uint64_t next_cmd = 1;
//   PulsarConnection c(spec::Id::text("10.0.0.1:40000>10.0.0.2:6650"), &next_cmd);
//   std::vector<TimedEvent> out;
//   if (auto why = c.on_bytes(Direction::kToServer, t, bytes, &out)) not_understood(*why);
//   if (c.settled()) c.quiescent(t, &out);
#ifndef PERMITCHECK_CAPTURE_PULSAR_CONNECTION_H_
#define PERMITCHECK_CAPTURE_PULSAR_CONNECTION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/inlined_vector.h"
#include "protocol/frame.h"
#include "spec/events.h"

namespace permitcheck::capture {

enum class Direction { kToServer = 0, kToClient = 1 };

struct TimedEvent {
  double time = 0;  // capture time, seconds since the epoch
  spec::Event event;
};

// A LOOKUP_RESPONSE the broker sent: where it tells the client to go for the topic.
struct LookupAnswer {
  double time = 0;
  std::string broker_url;  // brokerServiceUrl (or, without it, brokerServiceUrlTls)
  bool proxy_through = false;  // proxy_through_service_url: stay on the address looked up
};

// What the first whole frame of a stream is: a CONNECT (a Pulsar client speaking first),
// another Pulsar command (a stream seen mid-way), garbage, or not known yet (too few bytes).
enum class FirstFrame { kNeedMore, kConnect, kOtherCommand, kNotPulsar };
FirstFrame classify_first_frame(std::string_view stream_start);

class PulsarConnection {
 public:
  // `next_cmd` numbers the messages (`cmd`), shared by every connection of one trace.
  // REQUIRES: next_cmd outlives this object.
  PulsarConnection(spec::Id cnx, std::uint64_t* next_cmd)
      : cnx_(std::move(cnx)), next_cmd_(next_cmd) {
    // Only a MESSAGE's metadata is read: a payload over 1 KiB that spans segments (most of
    // them: a segment holds at most 1448 bytes) is checksummed as it passes, never copied.
    for (conformance::FrameSplitter& s : splitter_) s.stream_payloads_above(1024);
    frame_.decode_hot = true;  // MESSAGE, ACK and FLOW by hand (protocol/hot_command.h)
  }

  // Decodes the next bytes of one direction, captured at `time`; appends the events of every
  // frame they complete. Returns the reason when the stream cannot be decoded from here on (a
  // frame over the size limit, a command that does not parse): nothing more is decoded then.
  std::optional<std::string> on_bytes(Direction direction, double time, std::string_view bytes,
                                      std::vector<TimedEvent>* out);

  // The connection closed (FIN or RST): `disconnect`, ending every incarnation on it.
  void on_close(double time, std::vector<TimedEvent>* out);

  // `quiescent` for every subscribed consumer that has had a Flow and has every delivered
  // entry acknowledged (or asked to be redelivered), as `permitcheck conform` decides it; the
  // caller decides the connection has been silent long enough.
  void quiescent(double time, std::vector<TimedEvent>* out);

  // The LOOKUP_RESPONSEs decoded since the last call (not wire events: no rule reads them).
  std::vector<LookupAnswer> take_lookups() { return std::exchange(lookups_, {}); }

  const spec::Id& cnx() const { return cnx_; }
  std::int64_t frames() const { return frames_; }
  std::size_t buffered() const;
  // The direction (0 to the server, 1 to the client) stopped inside a frame: part of a frame
  // came and the rest did not (yet).
  bool in_frame(Direction direction) const;

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
  void client_frame(double time, const conformance::FrameView& frame, std::vector<TimedEvent>* out);
  void server_frame(double time, const conformance::FrameView& frame, std::vector<TimedEvent>* out);
  // MESSAGE, ACK and FLOW, however they were decoded.
  void on_message(double time, const conformance::HotCommand& m,
                  const conformance::FrameView& frame, std::vector<TimedEvent>* out);
  void on_ack(double time, const conformance::HotCommand& ack, std::vector<TimedEvent>* out);
  void on_flow(double time, const conformance::HotCommand& flow, std::vector<TimedEvent>* out);

  spec::Id cnx_;
  conformance::FrameSplitter splitter_[2];
  // Reused for every frame: decoding allocates nothing once these have grown.
  conformance::FrameView frame_;
  wire::MessageMetadata metadata_;
  bool broken_[2] = {false, false};
  std::map<std::uint64_t, std::uint64_t> pending_subscribes_;  // request id -> consumer id
  std::map<std::uint64_t, Consumer> consumers_;
  std::uint64_t* next_cmd_;
  std::vector<LookupAnswer> lookups_;
  std::int64_t frames_ = 0;
  bool closed_ = false;
};

}  // namespace permitcheck::capture

#endif  // PERMITCHECK_CAPTURE_PULSAR_CONNECTION_H_
