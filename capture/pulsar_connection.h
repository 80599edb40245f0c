// One Pulsar connection seen in a capture: the bytes of both directions are split into frames
// (protocol/frame.h) and each frame is handed to the connection's wire observer
// (wire/observer.h), which turns it into wire events of the trace format, as it does for the
// conformance broker and the tap. Memory: one partial frame head per direction plus the
// observer's entries in flight. Frames are split where the bytes are (FrameSplitter::split):
// no copy per frame, and a large payload spanning segments is checksummed as it passes, not
// buffered.
//
//   std::uint64_t next_cmd = 1;  std::vector<TimedEvent> out;
//   PulsarConnection c(spec::Id::text("10.0.0.1:40000>10.0.0.2:6650"), &next_cmd);
//   if (auto why = c.on_bytes(Direction::kToServer, t, bytes, &out)) not_understood(*why);
#ifndef PERMITCHECK_CAPTURE_PULSAR_CONNECTION_H_
#define PERMITCHECK_CAPTURE_PULSAR_CONNECTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/frame.h"
#include "spec/events.h"
#include "wire/observer.h"

namespace permitcheck::capture {

using wire::Direction;
using wire::LookupAnswer;
using wire::TimedEvent;

// What the first whole frame of a stream is: a CONNECT (a Pulsar client speaking first),
// another Pulsar command (a stream seen mid-way), garbage, or not known yet (too few bytes).
enum class FirstFrame { kNeedMore, kConnect, kOtherCommand, kNotPulsar };
FirstFrame classify_first_frame(std::string_view stream_start);

class PulsarConnection {
 public:
  // `next_cmd` numbers the messages (`cmd`), shared by every connection of one trace.
  // REQUIRES: next_cmd outlives this object.
  PulsarConnection(spec::Id cnx, std::uint64_t* next_cmd) : observer_(std::move(cnx), next_cmd) {
    // Only a MESSAGE's metadata is read: a payload over 1 KiB that spans segments (most of
    // them: a segment holds at most 1448 bytes) is checksummed as it passes, never copied.
    for (protocol::FrameSplitter& s : splitter_) s.stream_payloads_above(1024);
  }

  // Decodes the next bytes of one direction, captured at `time`; appends the events of every
  // frame they complete. Returns the reason when the stream cannot be decoded from here on (a
  // frame over the size limit, a command that does not parse): nothing more is decoded then.
  std::optional<std::string> on_bytes(Direction direction, double time, std::string_view bytes,
                                      std::vector<TimedEvent>* out);

  // The connection closed (FIN or RST): `disconnect`, ending every incarnation on it.
  void on_close(double time, std::vector<TimedEvent>* out) { observer_.on_close(time, out); }

  // `quiescent` for every subscribed consumer that has had a Flow and is at rest after
  // `silence` seconds (wire/quiescence.h decides, as for `permitcheck conform`); the caller
  // measures the silence.
  void quiescent(double time, double silence, const wire::Patience& patience,
                 std::vector<TimedEvent>* out) {
    observer_.quiescent(time, silence, patience, out);
  }

  // The LOOKUP_RESPONSEs decoded since the last call (not wire events: no rule reads them).
  std::vector<LookupAnswer> take_lookups() { return observer_.take_lookups(); }

  const spec::Id& cnx() const { return observer_.cnx(); }
  std::int64_t frames() const { return observer_.frames(); }
  std::size_t buffered() const;
  // The direction (0 to the server, 1 to the client) stopped inside a frame: part of a frame
  // came and the rest did not (yet).
  bool in_frame(Direction direction) const;

 private:
  wire::Observer observer_;
  protocol::FrameSplitter splitter_[2];
  bool broken_[2] = {false, false};
};

}  // namespace permitcheck::capture

#endif  // PERMITCHECK_CAPTURE_PULSAR_CONNECTION_H_
