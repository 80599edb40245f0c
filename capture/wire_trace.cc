#include "capture/wire_trace.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "spec/plain_text.h"

namespace permitcheck::capture {
namespace {

// Bytes a first frame may take before a stream is judged not Pulsar.
// (kExpirySeconds, kMaxOverflowReports: wire_trace.h.)
constexpr std::size_t kMaxProbeBytes = 64 * 1024;

// Any total order does (it only makes the key of an endpoint pair canonical): by words.
bool before(const Endpoint& x, const Endpoint& y) {
  return std::make_tuple(x.word(0), x.word(1), x.v6, x.port) <
         std::make_tuple(y.word(0), y.word(1), y.v6, y.port);
}

}  // namespace

struct WireTraceBuilder::Connection {
  enum class State { kProbing, kPulsar, kIgnored, kBroken };
  explicit Connection(std::size_t max_pending)
      : dir{StreamReassembler(max_pending), StreamReassembler(max_pending)} {}

  std::uint64_t order = 0;  // when it was first seen: what the end-of-capture checks go by
  Endpoint side[2];  // side[0] sent the SYN, or the first segment seen
  State state = State::kProbing;
  bool syn_seen = false;
  int client = -1;   // index of the client's side, once known
  std::array<StreamReassembler, 2> dir;
  std::array<std::string, 2> probe;
  std::array<double, 2> probe_time{};
  std::unique_ptr<PulsarConnection> pulsar;
  std::string label;
  std::vector<TimedEvent> held;
  // Scratch, reused for every segment: the path of a packet allocates nothing once warm.
  std::vector<StreamChunk> chunks;
  std::vector<TimedEvent> events;
  double last_activity = 0;
  double last_seen = 0;      // its last segment: what expiry goes by
  bool bytes_seen = false;   // a payload byte (or a missing one) in either direction
  std::size_t accounted = 0;  // its bytes counted in CaptureStats::memory
  std::optional<std::uint32_t> syn_seq[2];  // each side's SYN, once seen
  ChecksumSide checksums[2];
  bool quiet_reported = true;
  bool fin[2] = {false, false};

  bool ended() const { return state == State::kIgnored || state == State::kBroken; }
  // What it holds: bytes waiting or kept by the reassembly, inside a frame, probed, held events.
  std::size_t memory() const {
    return dir[0].memory() + dir[1].memory() + probe[0].size() + probe[1].size() +
           (pulsar ? pulsar->buffered() : 0) + held.size() * sizeof(TimedEvent);
  }

  std::string pair_label() const {
    return absl::StrCat(side[0].to_string(), "<>", side[1].to_string());
  }
  bool any_hole() const { return dir[0].has_hole() || dir[1].has_hole(); }
};

WireTraceBuilder::WireTraceBuilder(CaptureOptions options, WireSink sink)
    : options_(options),
      sink_(std::move(sink)),
      fragments_(IpDefragmenter::Limits{.max_bytes_per_flow = options.max_pending_bytes,
                                        .max_bytes = options.max_memory,
                                        .max_datagrams = 4096}) {}

WireTraceBuilder::~WireTraceBuilder() = default;

double WireTraceBuilder::monotonic(double time) {
  double t = time + stats_.clock_shift;
  if (clock_started_ && t < clock_last_) {
    ++stats_.clock_steps_back;
    stats_.clock_shift += clock_last_ - t;
    t = clock_last_;
  }
  clock_started_ = true;
  clock_last_ = t;
  return t;
}

void WireTraceBuilder::on_segment(double capture_time, const TcpSegment& s) {
  const double time = monotonic(capture_time);
  ++stats_.packets;
  if (stats_.packets == 1) stats_.first_time = time;
  stats_.last_time = time;  // monotonic: never below the last
  if (s.ip_fragment) return on_fragment(time, s);
  if (fragments_.expiry_due(time)) {
    fragments_.expire(time, &fragment_problems_);
    report_fragments(fragment_problems_);
  }
  on_whole_segment(time, s);
}

void WireTraceBuilder::on_whole_segment(double time, const TcpSegment& s) {
  if (options_.port && s.src.port != *options_.port && s.dst.port != *options_.port) return;
  if (time - last_sweep_ >= kExpirySeconds) sweep(time, /*ended_too=*/false);
  const auto key = before(s.src, s.dst) ? std::make_pair(s.src, s.dst) : std::make_pair(s.dst, s.src);
  if (last_ != nullptr && key == last_key_ && !starts_anew(*last_, s)) {
    feed_and_release(last_, key, time, s);
    return;
  }
  auto it = table_.find(key);
  if (it != table_.end() && starts_anew(*it->second, s)) {
    // The addresses and ports carry a new connection (a new SYN after the old one ended, one
    // of its FINs perhaps never captured): the old entry goes, the new one is followed.
    if (last_ == it->second.get()) last_ = nullptr;
    release(it);
    it = table_.end();
  }
  if (it == table_.end()) {
    // Only a SYN or data opens a connection: a stray ACK, FIN or RST of one we never followed
    // leaves nothing behind.
    if (!s.syn && s.payload.empty() && s.missing == 0) return;
    if (table_.size() >= options_.max_connections &&
        (time - last_full_sweep_ >= 1.0 || table_.size() > options_.max_connections)) {
      last_full_sweep_ = time;
      sweep(time, /*ended_too=*/true);
    }
    if (table_.size() >= options_.max_connections) {
      // Not followed, and said so: the verdict cannot be PASS on a connection never read.
      ++stats_.overflowed;
      if (overflow_reported_.size() < kMaxOverflowReports && overflow_reported_.insert(key).second &&
          sink_.not_understood) {
        ++stats_.not_understood;
        sink_.not_understood(
            absl::StrCat(s.src.to_string(), "<>", s.dst.to_string()), time,
            absl::StrCat("connection table full (",
                         spec::count_noun(options_.max_connections, "connection"),
                         " followed at once): this connection is not followed"));
      }
      return;
    }
    auto c = std::make_unique<Connection>(options_.max_pending_bytes);
    const bool from_server = s.syn && s.has_ack;  // SYN-ACK: the capture missed the SYN
    c->side[0] = from_server ? s.dst : s.src;
    c->side[1] = from_server ? s.src : s.dst;
    c->syn_seen = s.syn;
    if (s.syn) c->client = 0;
    if (!options_.compare_copies) {
      c->dir[0].stop_comparing();
      c->dir[1].stop_comparing();
    }
    c->dir[0].use_source(&payload_source_);
    c->dir[1].use_source(&payload_source_);
    c->order = stats_.connections++;
    c->last_seen = time;
    it = table_.emplace(key, std::move(c)).first;
  }
  last_key_ = key;
  last_ = it->second.get();
  feed_and_release(last_, key, time, s);
}

void WireTraceBuilder::feed_and_release(Connection* conn, const std::pair<Endpoint, Endpoint>& key,
                                        double time, const TcpSegment& s) {
  Connection& c = *conn;
  const int from = s.src == c.side[0] ? 0 : 1;
  c.last_seen = time;
  c.bytes_seen = c.bytes_seen || !s.payload.empty() || s.missing > 0;
  if (s.syn && !c.syn_seq[from]) c.syn_seq[from] = s.seq;
  CopyCheck check = CopyCheck::kUnknown;
  if (s.checksum_known) {
    const bool bad = bad_checksum(c.checksums[from], s, &check);
    if (c.checksums[from].believed && c.dir[from].comparing()) c.dir[from].stop_comparing();
    if (bad) {
      ++stats_.bad_checksums;  // a segment its receiver dropped: skipped as it did
      return;
    }
  }
  feed(c, from, time, s, check);
  account(c, time);
  const bool done = c.ended() && (s.rst || (c.fin[0] && c.fin[1]));
  if (done) {
    if (last_ == conn) last_ = nullptr;
    release(table_.find(key));
  }
}

bool WireTraceBuilder::bad_checksum(ChecksumSide& k, const TcpSegment& s, CopyCheck* check) {
  // A side's checksums are believed when they are good (a capture between the hosts, or on the
  // receiver): learnt from its first kChecksumSample segments that have one, the bad ones among
  // them skipped once kChecksumGood were good and at most one in 8 bad. A side whose checksums
  // are not good (a capture on the sender, with checksum offload: good only by chance) is not
  // judged by them, and no longer summed: copies that differ are reported by the reassembly.
  if (k.decided && !k.believed) return false;
  const bool good = tcp_checksum_good(s);
  *check = good                        ? CopyCheck::kGood
           : tcp_checksum_offloaded(s) ? CopyCheck::kUnknown
                                       : CopyCheck::kBad;
  if (k.decided) return !good;
  ++k.sampled;
  k.good += good ? 1 : 0;
  const std::uint32_t bad = k.sampled - k.good;
  if (k.sampled == kChecksumSample) {
    k.decided = true;
    k.believed = k.good >= kChecksumGood && bad * 8 <= k.good;
  }
  return !good && k.good >= kChecksumGood && bad * 8 <= k.good;
}

bool WireTraceBuilder::starts_anew(const Connection& c, const TcpSegment& s) const {
  if (!s.syn || !c.ended()) return false;
  const int from = s.src == c.side[0] ? 0 : 1;
  return !c.syn_seq[from] || *c.syn_seq[from] != s.seq;
}

void WireTraceBuilder::release(
    absl::flat_hash_map<std::pair<Endpoint, Endpoint>, std::unique_ptr<Connection>>::iterator it) {
  stats_.memory -= it->second->accounted;
  table_.erase(it);
}

void WireTraceBuilder::account(Connection& c, double time) {
  const std::size_t now = c.memory();
  stats_.memory = stats_.memory - c.accounted + now;
  c.accounted = now;
  stats_.peak_memory = std::max(stats_.peak_memory, stats_.memory);
  if (stats_.memory <= options_.max_memory || c.ended()) return;
  give_up(c, time,
          absl::StrCat("memory limit of ", options_.max_memory, " bytes (--max-memory) reached: "
                       "this connection held ", now, " of the ", stats_.memory,
                       " bytes held for all connections (bytes waiting behind a hole, a frame "
                       "kept whole while it comes); not followed from here on"));
  const std::size_t after = c.memory();
  stats_.memory = stats_.memory - c.accounted + after;
  c.accounted = after;
}

void WireTraceBuilder::sweep(double now, bool ended_too) {
  last_sweep_ = now;
  for (auto it = table_.begin(); it != table_.end();) {
    Connection& c = *it->second;
    const bool idle = now - c.last_seen >= kExpirySeconds;
    // Only a SYN (or a handshake) and no byte for that long: nothing in it is lost by letting
    // it go (data that comes later opens it again, from its first byte).
    const bool syn_only = c.state == Connection::State::kProbing && !c.bytes_seen && idle;
    // Ended (closed with one FIN seen, given up, not Pulsar): kept only to absorb what follows.
    const bool ended = ended_too && c.ended() && idle;
    if (syn_only || ended) {
      if (syn_only) ++stats_.expired;
      if (last_ == &c) last_ = nullptr;
      stats_.memory -= c.accounted;
      table_.erase(it++);
    } else {
      ++it;
    }
  }
}

void WireTraceBuilder::on_fragment(double time, const TcpSegment& s) {
  ++stats_.fragments;
  TcpSegment whole;
  const bool done = fragments_.add(time, s, &whole, &fragment_problems_);
  // The fragments held count in the memory of all connections (--max-memory).
  stats_.memory = stats_.memory - fragments_accounted_ + fragments_.memory();
  fragments_accounted_ = fragments_.memory();
  stats_.peak_memory = std::max(stats_.peak_memory, stats_.memory);
  if (stats_.memory > options_.max_memory && fragments_.memory() > 0) {
    fragments_.drop_all(time,
                        absl::StrCat("memory limit of ", options_.max_memory,
                                     " bytes (--max-memory) reached"),
                        &fragment_problems_);
    stats_.memory -= fragments_accounted_;
    fragments_accounted_ = 0;
  }
  report_fragments(fragment_problems_);
  if (done) {
    ++stats_.reassembled;
    on_whole_segment(time, whole);
  }
}

void WireTraceBuilder::report_fragments(std::vector<FragmentProblem>& problems) {
  if (problems.empty()) return;
  stats_.memory = stats_.memory - fragments_accounted_ + fragments_.memory();
  fragments_accounted_ = fragments_.memory();
  auto same_hosts = [](const Endpoint& x, const Endpoint& y) {
    return x.v6 == y.v6 && x.word(0) == y.word(0) && x.word(1) == y.word(1);
  };
  for (const FragmentProblem& p : problems) {
    // With the ports (the first fragment came): its connection; without: every connection
    // between the two addresses that is still being read may have lost these bytes.
    if (p.ports_known) {
      if (options_.port && p.src.port != *options_.port && p.dst.port != *options_.port) continue;
      auto it = table_.find(before(p.src, p.dst) ? std::make_pair(p.src, p.dst)
                                                  : std::make_pair(p.dst, p.src));
      if (it != table_.end() && !it->second->ended()) give_up(*it->second, p.time, p.reason);
      continue;
    }
    for (Connection* c : in_order()) {
      if (c->ended()) continue;
      if ((same_hosts(c->side[0], p.src) && same_hosts(c->side[1], p.dst)) ||
          (same_hosts(c->side[0], p.dst) && same_hosts(c->side[1], p.src))) {
        give_up(*c, p.time, p.reason);
      }
    }
  }
  problems.clear();
}

void WireTraceBuilder::feed(Connection& c, int from, double time, const TcpSegment& s,
                            CopyCheck check) {
  using State = Connection::State;
  if (c.state == State::kIgnored || c.state == State::kBroken) {
    c.fin[from] = c.fin[from] || s.fin;
    return;
  }
  // Bytes sent during the silence and never captured: that silence was no quiescence.
  if (reveals_loss(c, from, s)) c.quiet_reported = true;
  check_quiet(c, time);
  if (s.syn) {
    // A SYN starts its direction once. Inside a live stream it is never a restart: a copy of
    // the first (same sequence number) is a duplicate; another is a new connection on the same
    // addresses whose start the capture does not show apart from this one.
    if (!c.dir[from].started()) {
      c.dir[from].start(s.seq + 1);
    } else if (s.seq + 1 != c.dir[from].first_seq()) {
      give_up(c, time, absl::StrCat(c.client == -1 || from == c.client ? "client" : "broker",
                                    " stream: a SYN with a new sequence number inside the live "
                                    "stream (the addresses reused by a new connection?)"));
    }
    return;
  }
  // The ack first: bytes of the peer it acknowledges come before this segment's own.
  if (s.has_ack) {
    // (Bytes the ack shows were taken, waiting on a checksum the capture got wrong, come out.)
    std::vector<StreamChunk>& taken = c.chunks;
    taken.clear();
    std::optional<std::string> gap = c.dir[1 - from].acknowledged(time, s.ack, &taken);
    deliver(c, 1 - from, taken);
    taken.clear();
    if (c.state == State::kBroken || c.state == State::kIgnored) return;
    if (gap) {
      give_up(c, time, absl::StrCat(c.client == -1 || 1 - from == c.client ? "client" : "broker",
                                    " stream: ", *gap));
      return;
    }
  }
  if (!s.payload.empty() || s.missing > 0) {
    c.last_activity = std::max(c.last_activity, time);
    c.quiet_reported = false;
    std::vector<StreamChunk>& chunks = c.chunks;
    chunks.clear();
    std::optional<std::string> gap =
        c.dir[from].add(time, s.seq, s.payload, s.missing, &chunks, s.origin, check);
    if (c.dir[from].take_uncompared()) ++stats_.uncompared_copies;
    if (const std::uint64_t resolved = c.dir[from].take_resolved()) {
      stats_.checksum_resolved += resolved;  // the copy that verifies believed
      stats_.bad_checksums += resolved;
    }
    deliver(c, from, chunks);
    chunks.clear();
    if (gap && c.state != State::kBroken && c.state != State::kIgnored) {
      give_up(c, time, absl::StrCat(c.client == -1 || from == c.client ? "client" : "broker",
                                    " stream: ", *gap));
      return;
    }
  }
  if (c.state == State::kBroken || c.state == State::kIgnored) return;
  if (s.rst) return close(c, time);
  if (s.fin) {
    c.fin[from] = true;
    const auto end = s.seq + static_cast<std::uint32_t>(s.payload.size() + s.missing);
    if (std::optional<std::string> gap = c.dir[from].ends_at(end)) {
      give_up(c, time, absl::StrCat(c.client == -1 || from == c.client ? "client" : "broker",
                                    " stream: ", *gap));
      return;
    }
  }
  // A FIN closes once its direction has every byte before it (it may overtake a segment).
  for (int i = 0; i < 2; ++i) {
    if (c.fin[i] && !c.dir[i].has_hole()) return close(c, time);
  }
}

void WireTraceBuilder::deliver(Connection& c, int from, std::vector<StreamChunk>& chunks) {
  using State = Connection::State;
  if (chunks.empty()) return;
  if (c.state == State::kProbing) {
    // Decided chunk by chunk: bytes that come together (released by a hole filled) after the
    // first frame keep their own times instead of the probe's.
    std::size_t used = 0;
    while (used < chunks.size() && c.state == State::kProbing) {
      if (c.probe[from].empty()) c.probe_time[from] = chunks[used].time;
      if (c.probe[from].size() <= kMaxProbeBytes) c.probe[from] += chunks[used].bytes();
      ++used;
      decide(c);
    }
    if (c.state != State::kPulsar || used == chunks.size()) return;
    chunks.erase(chunks.begin(), chunks.begin() + static_cast<std::ptrdiff_t>(used));
  }
  if (c.state != State::kPulsar) return;
  const Direction d = from == c.client ? Direction::kToServer : Direction::kToClient;
  std::vector<TimedEvent>& events = c.events;
  events.clear();
  for (const StreamChunk& chunk : chunks) {
    if (std::optional<std::string> why = c.pulsar->on_bytes(d, chunk.time, chunk.bytes(), &events)) {
      emit(c, events, from);
      report_lookups(c);
      give_up(c, chunk.time, *why);
      return;
    }
  }
  emit(c, events, from);
  report_lookups(c);
}

void WireTraceBuilder::report_lookups(Connection& c) {
  if (!c.pulsar) return;
  std::vector<LookupAnswer> answers = c.pulsar->take_lookups();
  if (!sink_.lookup) return;
  for (const LookupAnswer& a : answers) sink_.lookup(c.label, a);
}

void WireTraceBuilder::decide(Connection& c) {
  using State = Connection::State;
  const std::array<FirstFrame, 2> first = {classify_first_frame(c.probe[0]),
                                           classify_first_frame(c.probe[1])};
  auto gives_up = [&](std::string reason) {
    if (options_.port) {
      give_up(c, std::max(c.probe_time[0], c.probe_time[1]), reason);
    } else {
      c.state = State::kIgnored;  // not Pulsar, as far as anyone asked
      ++stats_.ignored;
    }
    c.probe[0].clear();
    c.probe[1].clear();
  };
  int client = -1;
  for (int i = 0; i < 2; ++i) {
    if (first[i] == FirstFrame::kConnect && (c.client == -1 || c.client == i)) client = i;
  }
  if (client == -1) {
    for (int i = 0; i < 2; ++i) {
      if (first[i] == FirstFrame::kOtherCommand) {
        // Pulsar seen mid-stream: in scope whatever --port says, and not seen from its start.
        if (!c.syn_seen) {
          give_up(c, std::max(c.probe_time[0], c.probe_time[1]),
                  "capture started mid-stream: the first Pulsar frame seen is not the "
                  "client's CONNECT");
          c.probe[0].clear();
          c.probe[1].clear();
          return;
        }
        return gives_up("the client's first frame is not a CONNECT");
      }
      if (first[i] == FirstFrame::kNotPulsar || c.probe[i].size() > kMaxProbeBytes) {
        return gives_up(c.syn_seen ? "the stream does not start with a Pulsar frame"
                                   : "capture started mid-stream: the stream does not start "
                                     "at a Pulsar frame");
      }
    }
    return;  // more bytes needed
  }
  c.client = client;
  c.state = State::kPulsar;
  ++stats_.pulsar;
  const std::string base =
      absl::StrCat(c.side[client].to_string(), ">", c.side[1 - client].to_string());
  const int use = ++label_uses_[base];
  c.label = use == 1 ? base : absl::StrCat(base, "#", use);
  c.pulsar = std::make_unique<PulsarConnection>(spec::Id::text(c.label), &next_cmd_);
  std::array<std::string, 2> probe = {std::move(c.probe[0]), std::move(c.probe[1])};
  for (int i : {client, 1 - client}) {
    if (probe[i].empty()) continue;
    std::vector<StreamChunk> chunk;
    chunk.push_back(StreamChunk{.time = c.probe_time[i], .owned = std::move(probe[i]), .borrowed = {}});
    deliver(c, i, chunk);
    if (c.state != State::kPulsar) return;
  }
}

void WireTraceBuilder::emit(Connection& c, std::vector<TimedEvent>& events, int /*from*/) {
  if (events.empty() && c.held.empty()) return;
  std::vector<TimedEvent>* batch = &events;  // the common case: nothing held, no copy
  if (!c.held.empty() || c.any_hole()) {
    c.held.insert(c.held.end(), std::make_move_iterator(events.begin()),
                  std::make_move_iterator(events.end()));
    events.clear();
    if (c.any_hole()) {
      // A missing segment of one direction may hold events before these: wait for it.
      if (c.held.size() > options_.max_held_events) {
        give_up(c, c.held.back().time,
                absl::StrCat("a missing segment kept ", c.held.size(), " events waiting"));
      }
      return;
    }
    batch = &c.held;
  }
  auto by_time = [](const TimedEvent& x, const TimedEvent& y) { return x.time < y.time; };
  if (!std::is_sorted(batch->begin(), batch->end(), by_time)) {
    std::stable_sort(batch->begin(), batch->end(), by_time);
  }
  for (TimedEvent& e : *batch) {
    ++stats_.events;
    if (sink_.event) sink_.event(c.label, std::move(e));
  }
  batch->clear();
}

void WireTraceBuilder::give_up(Connection& c, double time, const std::string& reason) {
  using State = Connection::State;
  if (c.state == State::kBroken) return;
  c.held.clear();  // not known to be in order: dropped, never reported
  ++stats_.not_understood;
  if (sink_.not_understood) {
    // A gap may be a fragment the capture lacks: said with it.
    const std::string fragment =
        fragments_.datagrams() > 0 ? fragments_.incomplete_between(c.side[0], c.side[1]) : "";
    sink_.not_understood(c.label.empty() ? c.pair_label() : c.label, time,
                         fragment.empty() ? reason : absl::StrCat(reason, "; ", fragment));
  }
  c.state = State::kBroken;
  c.pulsar.reset();
  c.probe[0].clear();
  c.probe[1].clear();
  c.dir[0] = StreamReassembler(1);
  c.dir[1] = StreamReassembler(1);
}

void WireTraceBuilder::check_quiet(Connection& c, double now) {
  if (c.state != Connection::State::kPulsar || c.quiet_reported) return;
  if (now - c.last_activity < options_.idle_seconds) return;
  c.quiet_reported = true;
  std::vector<TimedEvent> events;
  c.pulsar->quiescent(c.last_activity + options_.idle_seconds, options_.idle_seconds,
                      wire::Patience{.settled = options_.idle_seconds}, &events);
  emit(c, events, 0);
}

void WireTraceBuilder::close(Connection& c, double time) {
  using State = Connection::State;
  if (c.state == State::kPulsar) {
    std::vector<TimedEvent> events;
    c.pulsar->on_close(time, &events);
    emit(c, events, 0);
  }
  if (c.state == State::kProbing || c.state == State::kPulsar) {
    if (c.state == State::kProbing) ++stats_.ignored;
    c.state = State::kIgnored;  // finished: later segments of it are only counted
    c.pulsar.reset();
  }
}

void WireTraceBuilder::abandon(const Endpoint& a, const Endpoint& b, double time,
                               const std::string& reason) {
  auto it = table_.find(before(a, b) ? std::make_pair(a, b) : std::make_pair(b, a));
  if (it == table_.end()) return;
  Connection& c = *it->second;
  if (c.state == Connection::State::kProbing || c.state == Connection::State::kPulsar) {
    give_up(c, time, reason);
  }
}

std::vector<WireTraceBuilder::Connection*> WireTraceBuilder::in_order() {
  std::vector<Connection*> all;
  all.reserve(table_.size());
  for (auto& [key, conn] : table_) all.push_back(conn.get());
  std::sort(all.begin(), all.end(),
            [](const Connection* x, const Connection* y) { return x->order < y->order; });
  return all;
}

bool WireTraceBuilder::reveals_loss(const Connection& c, int from, const TcpSegment& s) const {
  if (c.quiet_reported) return false;
  if ((!s.payload.empty() || s.missing > 0 || s.fin) && c.dir[from].would_skip(s.seq)) return true;
  // An ack past a byte the capture lacks (one past: a FIN's sequence number).
  return s.has_ack && c.dir[1 - from].would_skip(s.ack - 1);
}

void WireTraceBuilder::tick(double wall_time) {
  const double now = wall_time + stats_.clock_shift;
  stats_.last_time = std::max(stats_.last_time, now);
  for (Connection* c : in_order()) check_quiet(*c, now);
}

void WireTraceBuilder::finish() {
  // Datagrams still incomplete: their connections lose those bytes before being judged.
  fragments_.finish(stats_.last_time, &fragment_problems_);
  report_fragments(fragment_problems_);
  for (Connection* conn : in_order()) {
    Connection& c = *conn;
    if (c.state == Connection::State::kPulsar) {
      for (int i = 0; i < 2; ++i) {
        if (std::optional<std::string> gap = c.dir[i].finish()) {
          give_up(c, stats_.last_time,
                  absl::StrCat(i == c.client ? "client" : "broker", " stream: ", *gap));
          break;
        }
      }
      for (int i = 0; i < 2 && c.state == Connection::State::kPulsar; ++i) {
        const Direction d = i == c.client ? Direction::kToServer : Direction::kToClient;
        if (c.pulsar->in_frame(d)) {
          give_up(c, stats_.last_time,
                  absl::StrCat(i == c.client ? "client" : "broker",
                               " stream: the capture ends inside a frame (its rest never "
                               "captured)"));
        }
      }
      // The end of the capture is a quiescence point, however short the silence before it.
      if (c.state == Connection::State::kPulsar && !c.quiet_reported) {
        c.quiet_reported = true;
        std::vector<TimedEvent> events;
        c.pulsar->quiescent(std::max(c.last_activity, stats_.last_time),
                            std::max(0.0, stats_.last_time - c.last_activity),
                            wire::Patience{.settled = 0}, &events);
        emit(c, events, 0);
      }
    } else if (c.state == Connection::State::kProbing && options_.port &&
               !(c.probe[0].empty() && c.probe[1].empty())) {
      give_up(c, stats_.last_time, "the capture ends before the first whole frame");
    }
  }
  last_ = nullptr;
  table_.clear();
  stats_.memory = 0;
}

}  // namespace permitcheck::capture
