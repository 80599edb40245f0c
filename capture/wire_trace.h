// WireTraceBuilder: TCP segments in capture order in, the wire trace of every Pulsar
// connection out. Connections are told apart by their address pairs; each direction is
// reassembled (capture/reassembly.h), split into frames (capture/pulsar_connection.h) and each
// frame turned into wire events by the wire observer (wire/observer.h). A connection is
// Pulsar when its client's first frame is a CONNECT, on any port (`port` restricts). A gap in
// either direction makes the connection "not understood from here on": nothing more of it is
// reported, so a lost segment never becomes a false violation. While one direction waits for
// a missing segment, the other's events wait too, so events keep their order.
// Whatever is not followed is said (WireSink::not_understood), never dropped without a word:
// a connection the full table cannot follow, IP fragments that cannot be reassembled,
// conflicting copies, the memory limit. IP fragments are reassembled (capture/ip_fragments.h),
// their bytes counted in options.max_memory. A SYN with a new sequence number on the addresses of an ended connection starts a new
// one. Bounds: options.max_connections entries (SYN-only ones expire after kExpirySeconds),
// options.max_memory bytes held for all connections together (plus one segment).
//
//   WireTraceBuilder b(CaptureOptions{.idle_seconds = 1}, sink);
//   for (each packet) if (auto s = parse_packet(link, bytes, len)) b.on_segment(time, *s);
//   b.finish();   // the end of the capture: last quiescence checks, open holes are gaps
#ifndef PERMITCHECK_CAPTURE_WIRE_TRACE_H_
#define PERMITCHECK_CAPTURE_WIRE_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "capture/ip_fragments.h"
#include "capture/packet.h"
#include "capture/pulsar_connection.h"
#include "capture/reassembly.h"

namespace permitcheck::capture {

struct CaptureOptions {
  std::optional<std::uint16_t> port;  // only connections with this port on either side
  double idle_seconds = 1.0;          // silence that, with everything acked, is quiescence
  std::size_t max_pending_bytes = std::size_t{1} << 20;  // out-of-order bytes per direction
  std::size_t max_held_events = 4096;  // events held per connection while a hole is open
  std::size_t max_connections = 65536;  // connections followed at once
  // Bytes held for all connections together (waiting behind holes, inside frames kept whole,
  // probes, events held, bytes kept to compare copies): past it the connection that grew is
  // not understood from there on (--max-memory).
  std::size_t max_memory = std::size_t{1} << 30;
  // Compare copies of the same bytes (StreamReassembler). Off for a tap: its copies come from
  // the sockets, each byte once. Off by itself on a side whose TCP checksums are believed (a
  // corrupted copy is skipped by its checksum).
  bool compare_copies = true;
};

// Where the builder reports. `connection` is "client-address:port>server-address:port".
struct WireSink {
  // The event is handed over (a sink may keep it).
  std::function<void(const std::string& connection, TimedEvent&& event)> event;
  // A connection (or a stream) that cannot be followed from `time` on, and why.
  std::function<void(const std::string& connection, double time, const std::string& reason)>
      not_understood;
  // A LOOKUP_RESPONSE the broker sent on the connection (optional; not a wire event).
  std::function<void(const std::string& connection, const LookupAnswer& answer)> lookup;
};

struct CaptureStats {
  std::uint64_t packets = 0;        // TCP segments seen
  std::uint64_t connections = 0;    // TCP connections seen
  std::uint64_t pulsar = 0;         // of them, Pulsar connections followed
  std::uint64_t not_understood = 0;
  std::uint64_t ignored = 0;        // not Pulsar (or filtered out by the port)
  std::uint64_t events = 0;
  double first_time = 0, last_time = 0;
  // Times that stepped back (a clock anomaly, classic pcap past 2038): the capture is taken in
  // capture order and its clock made monotonic (later times shifted by each step), so a step
  // never disables a quiescence check (E5/E6).
  std::uint64_t clock_steps_back = 0;
  double clock_shift = 0;  // seconds added to the times after the steps
  std::uint64_t expired = 0;     // entries dropped after kExpirySeconds with no byte seen
  std::uint64_t overflowed = 0;  // segments of connections the full table could not follow
  std::uint64_t fragments = 0;   // IP fragments of TCP datagrams
  std::uint64_t reassembled = 0;  // TCP segments reassembled from them (capture/ip_fragments.h)
  // Copies of bytes older than those kept to compare (StreamReassembler::kCompareBytes): a
  // retransmission from far back, believed identical to the first without a comparison.
  std::uint64_t uncompared_copies = 0;
  // Segments skipped for a bad TCP checksum, on a side whose checksums are otherwise good,
  // and copies dropped because they differ from one whose checksum verifies while theirs
  // fails (StreamReassembler::take_resolved; also counted in bad_checksums).
  std::uint64_t bad_checksums = 0;
  std::uint64_t checksum_resolved = 0;
  std::size_t memory = 0, peak_memory = 0;  // bytes held (CaptureOptions::max_memory)
};

class WireTraceBuilder {
 public:
  WireTraceBuilder(CaptureOptions options, WireSink sink);
  ~WireTraceBuilder();

  // A segment, in capture order; `time` may step back (it is made monotonic, CaptureStats).
  void on_segment(double time, const TcpSegment& segment);
  // Where the payloads of segments with an origin (TcpSegment::origin) can be read again:
  // the bytes kept to compare copies are then kept by reference (capture/reassembly.h), not
  // copied. REQUIRES: set before the first segment, and left until finish().
  void set_payload_source(PayloadSource source) { payload_source_ = std::move(source); }
  // Time passes without packets (a live tap): quiescence checks as of `now`.
  void tick(double now);
  // End of capture, a quiescence point (docs/cli.md): every connection not waiting on a
  // missing segment or inside a frame is checked as quiescent as of the last packet, however
  // short the silence before it; open holes and frames the capture cut are not understood.
  void finish();
  // The caller lost bytes of the connection between `a` and `b` (a live tap whose checker
  // fell behind): it is not understood from `time` on, with `reason`. No-op for a connection
  // not followed or not Pulsar.
  void abandon(const Endpoint& a, const Endpoint& b, double time, const std::string& reason);

  const CaptureStats& stats() const { return stats_; }

  // An entry that only saw a SYN (or a handshake) is dropped after this long without a
  // segment (a SYN's retries take about 2 minutes on Linux); one that ended (closed, given up,
  // not Pulsar) after as long, when the table is full.
  static constexpr double kExpirySeconds = 150;
  // Connections a full table could not follow are each reported, up to this many.
  static constexpr std::size_t kMaxOverflowReports = 4096;

 private:
  struct Connection;
  // What the TCP checksums of one side of a connection have shown.
  struct ChecksumSide {
    std::uint32_t sampled = 0, good = 0;
    bool decided = false, believed = false;
  };
  static constexpr std::uint32_t kChecksumSample = 32;
  static constexpr std::uint32_t kChecksumGood = 8;
  // Whether `s` (checksum_known) has a bad checksum on a side whose checksums are believed:
  // a segment its receiver dropped. Updates what the side has shown; *check says what the
  // checksum showed when it was verified (for the reassembly to tell copies apart by it).
  static bool bad_checksum(ChecksumSide& k, const TcpSegment& s, CopyCheck* check);
  using Table = absl::flat_hash_map<std::pair<Endpoint, Endpoint>, std::unique_ptr<Connection>>;
  // Whether `s` opens a new connection on the addresses of `c`, which ended: a SYN with
  // another sequence number than the side's first.
  bool starts_anew(const Connection& c, const TcpSegment& s) const;
  void release(Table::iterator it);
  // Counts what `c` holds in the memory of all connections; past the limit, gives it up.
  void account(Connection& c, double time);
  // Drops entries that only saw a SYN for kExpirySeconds (and, with `ended_too`, ended ones).
  void sweep(double now, bool ended_too);
  // An IP fragment of a TCP datagram: reassembled, the segment once whole fed as any other.
  void on_fragment(double time, const TcpSegment& s);
  // Datagrams that could not be reassembled: their connections are not understood.
  void report_fragments(std::vector<FragmentProblem>& problems);
  // A whole segment (captured so, or reassembled), at a monotonic `time`.
  void on_whole_segment(double time, const TcpSegment& s);
  // Feeds `s` to the connection at `key`, released once it has ended.
  void feed_and_release(Connection* c, const std::pair<Endpoint, Endpoint>& key, double time,
                        const TcpSegment& s);
  void feed(Connection& c, int from, double time, const TcpSegment& s, CopyCheck check);
  void deliver(Connection& c, int from, std::vector<StreamChunk>& chunks);
  void decide(Connection& c);
  void emit(Connection& c, std::vector<TimedEvent>& events, int from);
  void give_up(Connection& c, double time, const std::string& reason);
  void report_lookups(Connection& c);
  void check_quiet(Connection& c, double now);
  void close(Connection& c, double time);
  // The capture's clock, made monotonic: `time` plus the steps back seen so far.
  double monotonic(double time);
  // The segment shows that bytes sent during the connection's silence were never captured.
  bool reveals_loss(const Connection& c, int from, const TcpSegment& s) const;
  // The connections followed, in the order they were first seen (the hash table's order
  // changes from run to run: checks over all of them go by this one, so reports do not).
  std::vector<Connection*> in_order();

  CaptureOptions options_;
  WireSink sink_;
  PayloadSource payload_source_;
  CaptureStats stats_;
  std::uint64_t next_cmd_ = 1;
  bool clock_started_ = false;
  double clock_last_ = 0;
  absl::flat_hash_map<std::string, int> label_uses_;
  // Keyed by the endpoint pair in a canonical order.
  Table table_;
  double last_sweep_ = 0, last_full_sweep_ = 0;
  absl::flat_hash_set<std::pair<Endpoint, Endpoint>> overflow_reported_;
  IpDefragmenter fragments_;
  std::size_t fragments_accounted_ = 0;  // fragments_.memory() counted in stats_.memory
  std::vector<FragmentProblem> fragment_problems_;
  // The last segment's connection (null when it was erased): the next segment is usually of
  // the same one (a write in several segments, the peer's ack), found without hashing.
  std::pair<Endpoint, Endpoint> last_key_;
  Connection* last_ = nullptr;
};

}  // namespace permitcheck::capture

#endif  // PERMITCHECK_CAPTURE_WIRE_TRACE_H_
