// Packet decoding for the capture reader: one captured frame of a given link type (Ethernet,
// Linux cooked SLL and SLL2, BSD loopback/null, raw IP) down to its TCP segment, over IPv4 or
// IPv6. Pure functions on bytes: no I/O, never trusts its input.
//
//   std::optional<LinkType> link = link_type_from_dlt(pcap_datalink(handle));
//   std::optional<TcpSegment> s = parse_packet(*link, captured_bytes, original_length);
//   if (s) use(s->src, s->dst, s->seq, s->payload, s->missing);
#ifndef PERMITCHECK_CAPTURE_PACKET_H_
#define PERMITCHECK_CAPTURE_PACKET_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace permitcheck::capture {

// A segment's payload with no origin (TcpSegment::origin): the capture cannot give it again.
inline constexpr std::uint64_t kNoOrigin = ~std::uint64_t{0};

enum class LinkType { kEthernet, kLinuxSll, kLinuxSll2, kNull, kLoop, kRaw, kIpv4, kIpv6 };

// The link type of a libpcap DLT_ value; nullopt for one we do not decode.
std::optional<LinkType> link_type_from_dlt(int dlt);
// "Ethernet", "Linux cooked (SLL2)", ...
std::string_view link_type_name(LinkType link);

// One side of a TCP connection.
struct Endpoint {
  std::array<std::uint8_t, 16> addr{};  // IPv4 in the first 4 bytes
  bool v6 = false;
  std::uint16_t port = 0;
  // Compared and hashed as two words (every segment looks its connection up).
  friend bool operator==(const Endpoint& x, const Endpoint& y) {
    return x.port == y.port && x.v6 == y.v6 && x.word(0) == y.word(0) && x.word(1) == y.word(1);
  }
  // 10.0.0.1:6650 or [::1]:6650
  std::string to_string() const;
  template <typename H>
  friend H AbslHashValue(H h, const Endpoint& e) {
    return H::combine(std::move(h), e.word(0), e.word(1), e.v6, e.port);
  }
  std::uint64_t word(int i) const {
    std::uint64_t w;
    std::memcpy(&w, addr.data() + 8 * i, 8);
    return w;
  }
};

// A TCP segment as captured. `payload` points into the captured bytes; `missing` counts the
// payload bytes the IP header announces but the capture does not hold (snap length too short).
struct TcpSegment {
  Endpoint src, dst;
  std::uint32_t seq = 0, ack = 0;
  bool syn = false, fin = false, rst = false, has_ack = false;
  std::string_view payload;
  std::uint32_t missing = 0;
  // An IP fragment of a TCP datagram (IPv4, or IPv6 with a Fragment header), to reassemble
  // (capture/ip_fragments.h): the addresses, the ports when it is the first fragment (else 0),
  // the datagram's identification, this fragment's byte offset in the datagram and whether
  // more follow; `payload` is the fragment's data as captured, `missing` its bytes the
  // capture does not hold. Nothing else is set.
  bool ip_fragment = false;
  std::uint32_t fragment_id = 0;
  std::uint32_t fragment_offset = 0;
  bool more_fragments = false;
  // When the capture holds the whole segment: its checksum can be verified
  // (tcp_checksum_good), from its addresses, its TCP header (`tcp_header`, in the captured
  // bytes like `payload`) and payload, summed only when asked: a side whose checksums are
  // never good costs nothing.
  bool checksum_known = false;
  std::string_view tcp_header;
  // Where the capture holds `payload`, for the reader to read it again (PayloadSource in
  // capture/reassembly.h): its offset in the file or bytes read; kNoOrigin when it cannot.
  std::uint64_t origin = kNoOrigin;
};

// Whether the TCP checksum of `s` (checksum_known) holds: false for a corrupted segment, or one
// never filled in (a sender's own capture with checksum offload). O(payload).
bool tcp_checksum_good(const TcpSegment& s);

// Whether the checksum field of `s` (checksum_known) looks left for the network card to fill
// in (checksum offload on the capturing sender): zero, or the pseudo-header's sum as the
// stack leaves it. A bad checksum that looks so says nothing about the bytes. O(header).
bool tcp_checksum_offloaded(const TcpSegment& s);

// The TCP segment in one captured frame, or nullopt when it holds none we can attribute
// (another protocol, headers cut short by the snap length, garbage). An IP fragment of a TCP
// datagram is returned as such (TcpSegment::ip_fragment), to be reassembled.
// `wire_length` is the frame's original length (pcap's len), `captured` its first caplen bytes.
std::optional<TcpSegment> parse_packet(LinkType link, std::string_view captured,
                                       std::uint32_t wire_length);
// The same into *out (a reader's one segment, reused for every packet); false for nullopt.
bool parse_packet_into(LinkType link, std::string_view captured, std::uint32_t wire_length,
                       TcpSegment* out);

// The TCP segment in `tcp` (a reassembled IP datagram's payload, all of it) into *out, whose
// addresses are already set: ports, sequence numbers, flags, payload and header as views of
// `tcp`, checksum_known. False when `tcp` holds no valid TCP header.
bool parse_tcp_datagram(std::string_view tcp, TcpSegment* out);

// The IP packet (IPv4 or IPv6, as the endpoints are) carrying `segment`: what a raw-IP
// capture holds. The payload is cut to what fits one IP packet. Checksums are left zero.
std::string encode_ip_packet(const TcpSegment& segment);

}  // namespace permitcheck::capture

#endif  // PERMITCHECK_CAPTURE_PACKET_H_
