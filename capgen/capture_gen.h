// capgen: synthetic captures for the capture tests and benchmarks. Pulsar frames built with
// the project's encoder (protocol/frame.h), carried by a synthetic TCP conversation (handshake,
// segments of at most `mss` bytes with consistent acks, FIN), then altered by the caller
// (reordered, duplicated, dropped, cut by a snap length, overlapping, started mid-stream,
// IP-fragmented: frames_of) and written as a pcap file of any link type we read, over IPv4 or
// IPv6. Header-only; the bytes written are exactly those asked for (no randomness here:
// callers seed their own).
//
//   Conversation c(endpoint("10.0.0.1", 40000), endpoint("10.0.0.2", 6650));
//   c.handshake();
//   c.client_sends(frames::connect() + frames::subscribe(0, 1));
//   c.server_sends(frames::success(1));
//   write_pcap(path, LinkKind::kEthernet, c.packets());
#ifndef PERMITCHECK_CAPGEN_CAPTURE_GEN_H_
#define PERMITCHECK_CAPGEN_CAPTURE_GEN_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "capture/packet.h"
#include "protocol/frame.h"

namespace permitcheck::capgen {

using capture::Endpoint;

namespace wire = ::permitcheck::wire;

inline Endpoint endpoint4(std::uint8_t last, std::uint16_t port) {
  Endpoint e;
  e.addr = {10, 0, 0, last};
  e.port = port;
  return e;
}
inline Endpoint endpoint6(std::uint8_t last, std::uint16_t port) {
  Endpoint e;
  e.v6 = true;
  e.addr = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last};
  e.port = port;
  return e;
}

// Pulsar frames, encoded with protocol/frame.h.
namespace frames {
inline std::string command(const wire::BaseCommand& c) { return protocol::encode_command(c); }
inline std::string connect() {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::CONNECT);
  c.mutable_connect()->set_client_version("capture-test");
  c.mutable_connect()->set_protocol_version(21);
  return command(c);
}
inline std::string connected() {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::CONNECTED);
  c.mutable_connected()->set_server_version("capture-test");
  c.mutable_connected()->set_protocol_version(21);
  return command(c);
}
inline std::string subscribe(std::uint64_t consumer, std::uint64_t request) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::SUBSCRIBE);
  auto* s = c.mutable_subscribe();
  s->set_topic("persistent://public/default/t");
  s->set_subscription("sub");
  s->set_subtype(1);  // Shared
  s->set_consumer_id(consumer);
  s->set_request_id(request);
  return command(c);
}
inline std::string success(std::uint64_t request) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::SUCCESS);
  c.mutable_success()->set_request_id(request);
  return command(c);
}
inline std::string flow(std::uint64_t consumer, std::uint32_t permits) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::FLOW);
  c.mutable_flow()->set_consumer_id(consumer);
  c.mutable_flow()->set_messagepermits(permits);
  return command(c);
}
// A MESSAGE of entry `entry`: a batch of `b` messages when b > 1, with `ack_set` words and
// the message_permits field when given.
inline std::string message(std::uint64_t consumer, std::uint64_t entry, int b,
                           std::vector<std::int64_t> ack_set = {},
                           std::optional<std::uint32_t> permits = std::nullopt) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::MESSAGE);
  auto* m = c.mutable_message();
  m->set_consumer_id(consumer);
  m->mutable_message_id()->set_ledgerid(7);
  m->mutable_message_id()->set_entryid(entry);
  for (std::int64_t w : ack_set) m->add_ack_set(w);
  if (permits) m->set_message_permits(*permits);
  wire::MessageMetadata meta;
  meta.set_producer_name("gen");
  meta.set_sequence_id(entry);
  meta.set_publish_time(1700000000000ULL);
  std::string payload = "m";
  if (b > 1) {
    meta.set_num_messages_in_batch(b);
    std::vector<protocol::BatchMessage> msgs(static_cast<std::size_t>(b));
    for (auto& x : msgs) {
      x.payload = "x";
      x.metadata.set_payload_size(1);
    }
    payload = protocol::encode_batch(msgs);
  }
  return protocol::encode_message(c, meta.SerializeAsString(), payload);
}
inline std::string ack(std::uint64_t consumer, std::uint64_t entry) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::ACK);
  auto* a = c.mutable_ack();
  a->set_consumer_id(consumer);
  a->set_ack_type(wire::CommandAck::Individual);
  a->add_message_id()->set_ledgerid(7);
  a->mutable_message_id(0)->set_entryid(entry);
  return command(c);
}
}  // namespace frames

struct Packet {
  double time = 0;
  Endpoint src, dst;
  std::uint32_t seq = 0, ack = 0;
  bool syn = false, fin = false, has_ack = true;
  std::string payload;
  std::optional<std::size_t> snap;  // payload bytes captured (default: all)
  bool checksum = false;  // a correct TCP checksum (default: zero, as with checksum offload)
};

// A TCP conversation between a client and a server, 1 ms between segments.
class Conversation {
 public:
  Conversation(Endpoint client, Endpoint server, double t0 = 1764600000.0)
      : client_(client), server_(server), t_(t0) {}

  void handshake() {
    add(true, "", /*syn=*/true, false, /*has_ack=*/false);
    add(false, "", true, false, true);
    add(true, "", false, false, true);
  }
  void client_sends(const std::string& bytes, std::size_t mss = 1400) { send(true, bytes, mss); }
  void server_sends(const std::string& bytes, std::size_t mss = 1400) { send(false, bytes, mss); }
  void pause(double seconds) { t_ += seconds; }
  void client_fin() { add(true, "", false, true, true); }
  std::vector<Packet>& packets() { return packets_; }

 private:
  void send(bool from_client, const std::string& bytes, std::size_t mss) {
    for (std::size_t at = 0; at < bytes.size(); at += mss) {
      add(from_client, bytes.substr(at, mss), false, false, true);
      add(!from_client, "", false, false, true);  // the receiver's ack
    }
  }
  void add(bool from_client, std::string payload, bool syn, bool fin, bool has_ack) {
    Packet p;
    p.time = t_;
    t_ += 0.001;
    p.src = from_client ? client_ : server_;
    p.dst = from_client ? server_ : client_;
    std::uint32_t& seq = from_client ? cseq_ : sseq_;
    p.seq = seq;
    p.ack = from_client ? sseq_ : cseq_;
    p.syn = syn;
    p.fin = fin;
    p.has_ack = has_ack;
    seq += static_cast<std::uint32_t>(payload.size()) + (syn || fin ? 1 : 0);
    p.payload = std::move(payload);
    packets_.push_back(std::move(p));
  }
  Endpoint client_, server_;
  double t_;
  std::uint32_t cseq_ = 1000, sseq_ = 0xFFFFFF00u;  // the server's wraps around 2^32
  std::vector<Packet> packets_;
};

enum class LinkKind { kEthernet, kSll, kSll2, kNull, kRaw };

inline std::string be16(std::uint16_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v)}; }
inline std::string be32(std::uint32_t v) { return be16(static_cast<std::uint16_t>(v >> 16)) + be16(static_cast<std::uint16_t>(v)); }
inline std::string le16(std::uint16_t v) { return {static_cast<char>(v), static_cast<char>(v >> 8)}; }
inline std::string le32(std::uint32_t v) { return le16(static_cast<std::uint16_t>(v)) + le16(static_cast<std::uint16_t>(v >> 16)); }

// The IP packet (IPv4 or IPv6 after the endpoints) holding `p`.
inline std::string ip_packet(const Packet& p) {
  std::string tcp = be16(p.src.port) + be16(p.dst.port) + be32(p.seq) + be32(p.ack);
  tcp += static_cast<char>(5 << 4);
  tcp += static_cast<char>((p.fin ? 0x01 : 0) | (p.syn ? 0x02 : 0) | (p.has_ack ? 0x10 : 0) |
                           (p.payload.empty() ? 0 : 0x08));
  tcp += be16(65535) + be16(0) + be16(0);
  tcp += p.payload;
  if (p.checksum) {  // RFC 1071 over the pseudo-header and the segment
    const std::size_t n = p.src.v6 ? 16 : 4;
    std::string sum_over(reinterpret_cast<const char*>(p.src.addr.data()), n);
    sum_over.append(reinterpret_cast<const char*>(p.dst.addr.data()), n);
    sum_over += be16(6) + be16(static_cast<std::uint16_t>(tcp.size())) + tcp;
    if (sum_over.size() % 2) sum_over += '\0';
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < sum_over.size(); i += 2) {
      sum += (static_cast<unsigned char>(sum_over[i]) << 8) | static_cast<unsigned char>(sum_over[i + 1]);
    }
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    tcp.replace(16, 2, be16(static_cast<std::uint16_t>(~sum)));
  }
  std::string ip;
  if (!p.src.v6) {
    ip = std::string("\x45\x00", 2) + be16(static_cast<std::uint16_t>(20 + tcp.size())) +
         be16(1) + be16(0x4000) + std::string("\x40\x06", 2) + be16(0);
    ip.append(reinterpret_cast<const char*>(p.src.addr.data()), 4);
    ip.append(reinterpret_cast<const char*>(p.dst.addr.data()), 4);
  } else {
    ip = std::string("\x60\x00\x00\x00", 4) + be16(static_cast<std::uint16_t>(tcp.size())) +
         std::string("\x06\x40", 2);
    ip.append(reinterpret_cast<const char*>(p.src.addr.data()), 16);
    ip.append(reinterpret_cast<const char*>(p.dst.addr.data()), 16);
  }
  return ip + tcp;
}

inline std::uint32_t linktype(LinkKind k) {
  switch (k) {
    case LinkKind::kEthernet: return 1;
    case LinkKind::kSll: return 113;
    case LinkKind::kSll2: return 276;
    case LinkKind::kNull: return 0;
    case LinkKind::kRaw: return 101;
  }
  return 1;
}

// The link-layer header of link type `k` before an IPv4 (or, `v6`, IPv6) packet.
inline std::string link_header(LinkKind k, bool v6) {
  const std::uint16_t type = v6 ? 0x86DD : 0x0800;
  switch (k) {
    case LinkKind::kEthernet:
      return std::string("\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12) + be16(type);
    case LinkKind::kSll:
      return be16(0) + be16(1) + be16(6) + std::string("\x02\x00\x00\x00\x00\x01\x00\x00", 8) +
             be16(type);
    case LinkKind::kSll2:
      return be16(type) + be16(0) + be32(1) + be16(1) + std::string("\x00\x06", 2) +
             std::string("\x02\x00\x00\x00\x00\x01\x00\x00", 8);
    case LinkKind::kNull: return le32(v6 ? 10 : 2);
    case LinkKind::kRaw: return "";
  }
  return "";
}

inline std::string link_frame(LinkKind k, const Packet& p) {
  return link_header(k, p.src.v6) + ip_packet(p);
}

// The IP fragments carrying `p` (its IP packet's payload: the TCP header and data), each with
// at most `max_data` bytes of it (rounded down to a multiple of 8, at least 8), identification
// `id`: IPv4 fragments, or IPv6 packets with a Fragment header. One fragment when it fits.
inline std::vector<std::string> ip_fragments(const Packet& p, std::size_t max_data,
                                             std::uint32_t id) {
  const std::string whole = ip_packet(p);
  const std::size_t header = p.src.v6 ? 40 : 20;
  const std::string body = whole.substr(header);
  const std::size_t step = std::max<std::size_t>(8, max_data / 8 * 8);
  std::vector<std::string> out;
  for (std::size_t at = 0; at == 0 || at < body.size(); at += step) {
    const std::string piece = body.substr(at, step);
    const bool more = at + step < body.size();
    std::string h = whole.substr(0, header);
    if (!p.src.v6) {
      h.replace(2, 2, be16(static_cast<std::uint16_t>(20 + piece.size())));
      h.replace(4, 2, be16(static_cast<std::uint16_t>(id)));
      h.replace(6, 2, be16(static_cast<std::uint16_t>((more ? 0x2000 : 0) | (at / 8))));
      out.push_back(h + piece);
    } else {
      h.replace(4, 2, be16(static_cast<std::uint16_t>(8 + piece.size())));
      h[6] = 44;  // a Fragment header follows
      const std::string frag = std::string("\x06\x00", 2) +
                               be16(static_cast<std::uint16_t>(at | (more ? 1 : 0))) + be32(id);
      out.push_back(h + frag + piece);
    }
  }
  return out;
}

// A captured link-layer frame: what pcap_of_frames writes.
struct Frame {
  double time = 0;
  std::string bytes;
};

// The frames of `packets` on link type `k`; with `fragment_data` > 0, every packet whose IP
// payload is longer than that is sent as IP fragments of at most that many bytes each
// (ip_fragments; identifications counting up from 1), in order.
inline std::vector<Frame> frames_of(LinkKind k, const std::vector<Packet>& packets,
                                    std::size_t fragment_data = 0) {
  std::vector<Frame> out;
  std::uint32_t id = 1;
  for (const Packet& p : packets) {
    if (fragment_data == 0 || 20 + p.payload.size() <= fragment_data) {
      out.push_back(Frame{p.time, link_frame(k, p)});
      continue;
    }
    for (std::string& f : ip_fragments(p, fragment_data, id++)) {
      out.push_back(Frame{p.time, link_header(k, p.src.v6) + f});
    }
  }
  return out;
}

// The pcap file (little-endian, microseconds) of `frames` of link type `k`, each captured whole.
inline std::string pcap_of_frames(LinkKind k, const std::vector<Frame>& frames) {
  std::string out = le32(0xA1B2C3D4) + le16(2) + le16(4) + le32(0) + le32(0) + le32(262144) +
                    le32(linktype(k));
  for (const Frame& f : frames) {
    const auto secs = static_cast<std::uint32_t>(f.time);
    const auto usecs = static_cast<std::uint32_t>((f.time - secs) * 1e6 + 0.5);
    out += le32(secs) + le32(std::min<std::uint32_t>(usecs, 999999)) +
           le32(static_cast<std::uint32_t>(f.bytes.size())) +
           le32(static_cast<std::uint32_t>(f.bytes.size()));
    out += f.bytes;
  }
  return out;
}

// The pcap file (little-endian, microseconds) of `packets` as frames of link type `k`.
inline std::string pcap_bytes(LinkKind k, const std::vector<Packet>& packets) {
  std::string out = le32(0xA1B2C3D4) + le16(2) + le16(4) + le32(0) + le32(0) + le32(262144) +
                    le32(linktype(k));
  for (const Packet& p : packets) {
    const std::string frame = link_frame(k, p);
    std::size_t captured = frame.size();
    if (p.snap) captured = frame.size() - p.payload.size() + std::min(*p.snap, p.payload.size());
    const auto secs = static_cast<std::uint32_t>(p.time);
    const auto usecs = static_cast<std::uint32_t>((p.time - secs) * 1e6 + 0.5);
    out += le32(secs) + le32(std::min<std::uint32_t>(usecs, 999999)) +
           le32(static_cast<std::uint32_t>(captured)) + le32(static_cast<std::uint32_t>(frame.size()));
    out += frame.substr(0, captured);
  }
  return out;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

}  // namespace permitcheck::capgen

#endif  // PERMITCHECK_CAPGEN_CAPTURE_GEN_H_
