#include "capture/packet.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace permitcheck::capture {
namespace {

// libpcap's DLT_ numbers (pcap/dlt.h), spelled out so this file needs no libpcap header.
constexpr int kDltNull = 0;
constexpr int kDltEn10mb = 1;
constexpr int kDltRawBsd = 12;  // DLT_RAW on most systems, DLT_LOOP on OpenBSD
constexpr int kDltRawOpenBsd = 14;
constexpr int kDltLoop = 108;
constexpr int kDltLinuxSll = 113;
constexpr int kLinktypeRaw = 101;
constexpr int kDltIpv4 = 228;
constexpr int kDltIpv6 = 229;
constexpr int kDltLinuxSll2 = 276;

constexpr std::uint16_t kEtherIpv4 = 0x0800;
constexpr std::uint16_t kEtherIpv6 = 0x86DD;
constexpr std::uint8_t kIpProtoTcp = 6;

std::uint16_t be16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(b[at]) << 8) |
                                    static_cast<unsigned char>(b[at + 1]));
}
std::uint32_t be32(std::string_view b, std::size_t at) {
  return (std::uint32_t{be16(b, at)} << 16) | be16(b, at + 2);
}

// The one's-complement sum (RFC 1071) of `b` as 16-bit words in host order, added to `sum`,
// not folded; bytes summed in host order fold to the byte-swapped network-order sum.
std::uint64_t ones_sum(std::string_view b, std::uint64_t sum) {
  const char* p = b.data();
  std::size_t n = b.size();
  // 32 bytes a step into four sums that do not wait on each other (a payload is summed whole
  // on a side whose checksums are believed).
  std::uint64_t s1 = 0, s2 = 0, s3 = 0;
  for (; n >= 32; p += 32, n -= 32) {
    std::uint64_t w[4];
    std::memcpy(w, p, 32);
    sum += (w[0] & 0xFFFFFFFFu) + (w[0] >> 32);
    s1 += (w[1] & 0xFFFFFFFFu) + (w[1] >> 32);
    s2 += (w[2] & 0xFFFFFFFFu) + (w[2] >> 32);
    s3 += (w[3] & 0xFFFFFFFFu) + (w[3] >> 32);
  }
  sum += s1 + s2 + s3;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    sum += (w & 0xFFFFFFFFu) + (w >> 32);  // below 2^33 each: no overflow under 2^31 words
  }
  for (; n >= 2; p += 2, n -= 2) {
    std::uint16_t w;
    std::memcpy(&w, p, 2);
    sum += w;
  }
  if (n == 1) {  // the last byte, padded with a zero byte after it
    const char last[2] = {*p, 0};
    std::uint16_t w;
    std::memcpy(&w, last, 2);
    sum += w;
  }
  return sum;
}

// The one's-complement sum of the pseudo-header of a TCP segment of `len` bytes between `src`
// and `dst` (4 or 16 bytes each) and of its header `header`, not folded.
std::uint64_t header_sum(std::string_view src, std::string_view dst, std::size_t len,
                         std::string_view header) {
  char pseudo[8] = {};  // zeroes, protocol and length, after the two addresses
  std::size_t at = 0;
  if (src.size() == 4) {
    pseudo[1] = static_cast<char>(kIpProtoTcp);
    pseudo[2] = static_cast<char>(len >> 8);
    pseudo[3] = static_cast<char>(len);
    at = 4;
  } else {
    pseudo[0] = static_cast<char>(len >> 24);
    pseudo[1] = static_cast<char>(len >> 16);
    pseudo[2] = static_cast<char>(len >> 8);
    pseudo[3] = static_cast<char>(len);
    pseudo[7] = static_cast<char>(kIpProtoTcp);
    at = 8;
  }
  std::uint64_t sum = ones_sum(src, 0);
  sum = ones_sum(dst, sum);
  sum = ones_sum(std::string_view(pseudo, at), sum);
  return ones_sum(header, sum);
}

// The TCP header at the start of `ip_payload`; `announced` is the IP payload length the IP
// header gives (the capture may hold less).
bool parse_tcp(std::string_view ip_payload, std::size_t announced, TcpSegment* out) {
  TcpSegment& seg = *out;
  if (ip_payload.size() < 20 || announced < 20) return false;
  const std::size_t header = static_cast<std::size_t>(static_cast<unsigned char>(ip_payload[12]) >> 4) * 4;
  if (header < 20 || header > announced || header > ip_payload.size()) return false;
  seg.src.port = be16(ip_payload, 0);
  seg.dst.port = be16(ip_payload, 2);
  seg.seq = be32(ip_payload, 4);
  seg.ack = be32(ip_payload, 8);
  const auto flags = static_cast<unsigned char>(ip_payload[13]);
  seg.fin = flags & 0x01;
  seg.syn = flags & 0x02;
  seg.rst = flags & 0x04;
  seg.has_ack = flags & 0x10;
  const std::size_t payload_len = announced - header;
  const std::size_t held = std::min(payload_len, ip_payload.size() - header);
  seg.payload = ip_payload.substr(header, held);
  seg.missing = static_cast<std::uint32_t>(payload_len - held);
  return true;
}

bool parse_ipv4(std::string_view b, TcpSegment* seg) {
  if (b.size() < 20 || (static_cast<unsigned char>(b[0]) >> 4) != 4) return false;
  const std::size_t ihl = static_cast<std::size_t>(static_cast<unsigned char>(b[0]) & 0x0F) * 4;
  const std::size_t total = be16(b, 2);
  if (ihl < 20 || total < ihl || b.size() < ihl) return false;
  if (static_cast<std::uint8_t>(b[9]) != kIpProtoTcp) return false;
  std::memcpy(seg->src.addr.data(), b.data() + 12, 4);
  std::memcpy(seg->dst.addr.data(), b.data() + 16, 4);
  const std::uint16_t frag = be16(b, 6);
  if ((frag & 0x2000) != 0 || (frag & 0x1FFF) != 0) {  // a fragment: to be reassembled
    seg->ip_fragment = true;
    seg->fragment_id = be16(b, 4);
    seg->fragment_offset = std::uint32_t{frag & 0x1FFFu} * 8;
    seg->more_fragments = (frag & 0x2000) != 0;
    const std::size_t data = total - ihl;
    seg->payload = b.substr(ihl, std::min(b.size(), total) - ihl);
    seg->missing = static_cast<std::uint32_t>(data - seg->payload.size());
    if ((frag & 0x1FFF) == 0 && seg->payload.size() >= 4) {
      seg->src.port = be16(b, ihl);
      seg->dst.port = be16(b, ihl + 2);
    }
    return true;
  }
  // Ethernet pads short frames: the IP total length, not the frame, ends the packet.
  const std::string_view payload = b.substr(ihl, std::min(b.size(), total) - ihl);
  if (!parse_tcp(payload, total - ihl, seg)) return false;
  if (seg->missing == 0) {
    seg->checksum_known = true;
    seg->tcp_header = payload.substr(0, payload.size() - seg->payload.size());
  }
  return true;
}

bool parse_ipv6(std::string_view b, TcpSegment* seg) {
  if (b.size() < 40 || (static_cast<unsigned char>(b[0]) >> 4) != 6) return false;
  std::size_t announced = be16(b, 4);
  std::uint8_t next = static_cast<std::uint8_t>(b[6]);
  seg->src.v6 = seg->dst.v6 = true;
  std::memcpy(seg->src.addr.data(), b.data() + 8, 16);
  std::memcpy(seg->dst.addr.data(), b.data() + 24, 16);
  std::string_view rest = b.substr(40, std::min(b.size() - 40, announced));
  // Extension headers: hop-by-hop, routing, destination options. A fragment is not ours.
  for (int i = 0; i < 8 && (next == 0 || next == 43 || next == 60); ++i) {
    if (rest.size() < 8) return false;
    const std::size_t len = (std::size_t{static_cast<unsigned char>(rest[1])} + 1) * 8;
    if (len > rest.size() || len > announced) return false;
    next = static_cast<std::uint8_t>(rest[0]);
    rest.remove_prefix(len);
    announced -= len;
  }
  if (next == 44 && rest.size() >= 8 && announced >= 8 &&
      static_cast<std::uint8_t>(rest[0]) == kIpProtoTcp) {
    // A fragment of a TCP datagram: to be reassembled (the first one names the ports).
    seg->ip_fragment = true;
    seg->fragment_offset = be16(rest, 2) & 0xFFF8u;
    seg->more_fragments = (be16(rest, 2) & 1) != 0;
    seg->fragment_id = be32(rest, 4);
    seg->payload = rest.substr(8);
    seg->missing = static_cast<std::uint32_t>(announced - 8 - seg->payload.size());
    if (seg->fragment_offset == 0 && seg->payload.size() >= 4) {
      seg->src.port = be16(rest, 8);
      seg->dst.port = be16(rest, 10);
    }
    return true;
  }
  if (next != kIpProtoTcp) return false;
  if (!parse_tcp(rest, announced, seg)) return false;
  if (seg->missing == 0) {
    seg->checksum_known = true;
    seg->tcp_header = rest.substr(0, announced - seg->payload.size());
  }
  return true;
}

bool parse_ip(std::string_view b, TcpSegment* seg) {
  if (b.empty()) return false;
  switch (static_cast<unsigned char>(b[0]) >> 4) {
    case 4: return parse_ipv4(b, seg);
    case 6: return parse_ipv6(b, seg);
    default: return false;
  }
}

bool parse_ethertype(std::uint16_t type, std::string_view b, TcpSegment* seg) {
  if (type == kEtherIpv4) return parse_ipv4(b, seg);
  if (type == kEtherIpv6) return parse_ipv6(b, seg);
  return false;
}

}  // namespace

std::optional<LinkType> link_type_from_dlt(int dlt) {
  switch (dlt) {
    case kDltNull: return LinkType::kNull;
    case kDltEn10mb: return LinkType::kEthernet;
    case kDltRawBsd:
    case kDltRawOpenBsd:
    case kLinktypeRaw: return LinkType::kRaw;
    case kDltLoop: return LinkType::kLoop;
    case kDltLinuxSll: return LinkType::kLinuxSll;
    case kDltLinuxSll2: return LinkType::kLinuxSll2;
    case kDltIpv4: return LinkType::kIpv4;
    case kDltIpv6: return LinkType::kIpv6;
    default: return std::nullopt;
  }
}

std::string_view link_type_name(LinkType link) {
  switch (link) {
    case LinkType::kEthernet: return "Ethernet";
    case LinkType::kLinuxSll: return "Linux cooked (SLL)";
    case LinkType::kLinuxSll2: return "Linux cooked (SLL2)";
    case LinkType::kNull: return "BSD loopback (null)";
    case LinkType::kLoop: return "OpenBSD loopback";
    case LinkType::kRaw: return "raw IP";
    case LinkType::kIpv4: return "raw IPv4";
    case LinkType::kIpv6: return "raw IPv6";
  }
  return "?";
}

std::string Endpoint::to_string() const {
  if (!v6) return absl::StrCat(addr[0], ".", addr[1], ".", addr[2], ".", addr[3], ":", port);
  std::string out = "[";
  for (int i = 0; i < 16; i += 2) {
    if (i > 0) out += ':';
    absl::StrAppendFormat(&out, "%x", (addr[i] << 8) | addr[i + 1]);
  }
  return absl::StrCat(out, "]:", port);
}

bool parse_packet_into(LinkType link, std::string_view b, std::uint32_t /*wire_length*/,
                       TcpSegment* out) {
  *out = TcpSegment{};
  switch (link) {
    case LinkType::kEthernet: {
      if (b.size() < 14) return false;
      std::size_t at = 12;
      std::uint16_t type = be16(b, at);
      for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88A8); ++tags) {
        at += 4;
        if (b.size() < at + 2) return false;
        type = be16(b, at);
      }
      return parse_ethertype(type, b.substr(at + 2), out);
    }
    case LinkType::kLinuxSll:
      if (b.size() < 16) return false;
      return parse_ethertype(be16(b, 14), b.substr(16), out);
    case LinkType::kLinuxSll2:
      if (b.size() < 20) return false;
      return parse_ethertype(be16(b, 0), b.substr(20), out);
    case LinkType::kNull:
    case LinkType::kLoop:
      // A 4-byte address family, host order for null, network order for loop; either way the
      // IP version nibble that follows says which.
      if (b.size() < 4) return false;
      return parse_ip(b.substr(4), out);
    case LinkType::kRaw:
    case LinkType::kIpv4:
    case LinkType::kIpv6:
      return parse_ip(b, out);
  }
  return false;
}

bool tcp_checksum_good(const TcpSegment& s) {
  const std::size_t n = s.src.v6 ? 16 : 4;
  auto addr = [n](const Endpoint& e) {
    return std::string_view(reinterpret_cast<const char*>(e.addr.data()), n);
  };
  std::uint64_t sum = header_sum(addr(s.src), addr(s.dst), s.tcp_header.size() + s.payload.size(),
                                 s.tcp_header);
  sum = ones_sum(s.payload, sum);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum == 0xFFFF;  // the same in either byte order
}

bool tcp_checksum_offloaded(const TcpSegment& s) {
  if (s.tcp_header.size() < 18) return false;
  const std::uint16_t field = be16(s.tcp_header, 16);
  if (field == 0) return true;
  // The stack leaves the pseudo-header's sum (with the segment's length; some leave the length
  // out), not complemented, for the card to add the segment's sum to; either byte order.
  const std::size_t n = s.src.v6 ? 16 : 4;
  auto addr = [n](const Endpoint& e) {
    return std::string_view(reinterpret_cast<const char*>(e.addr.data()), n);
  };
  for (std::size_t len : {s.tcp_header.size() + s.payload.size(), std::size_t{0}}) {
    std::uint64_t sum = header_sum(addr(s.src), addr(s.dst), len, {});
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    const auto host = static_cast<std::uint16_t>(sum);
    const auto swapped = static_cast<std::uint16_t>((host >> 8) | (host << 8));
    for (std::uint16_t v : {host, swapped}) {
      if (field == v || field == static_cast<std::uint16_t>(~v)) return true;
    }
  }
  return false;
}

bool parse_tcp_datagram(std::string_view tcp, TcpSegment* seg) {
  if (!parse_tcp(tcp, tcp.size(), seg)) return false;
  seg->checksum_known = true;
  seg->tcp_header = tcp.substr(0, tcp.size() - seg->payload.size());
  return true;
}

std::optional<TcpSegment> parse_packet(LinkType link, std::string_view b,
                                       std::uint32_t wire_length) {
  TcpSegment seg;
  if (!parse_packet_into(link, b, wire_length, &seg)) return std::nullopt;
  return seg;
}

std::string encode_ip_packet(const TcpSegment& seg) {
  auto put16 = [](std::string* o, std::uint32_t v) {
    o->push_back(static_cast<char>(v >> 8));
    o->push_back(static_cast<char>(v));
  };
  auto put32 = [&](std::string* o, std::uint32_t v) {
    put16(o, v >> 16);
    put16(o, v & 0xFFFF);
  };
  const std::size_t ip_header = seg.src.v6 ? 40 : 20;
  const std::string_view payload = seg.payload.substr(0, 65535 - 20 - 40);
  std::string tcp;
  put16(&tcp, seg.src.port);
  put16(&tcp, seg.dst.port);
  put32(&tcp, seg.seq);
  put32(&tcp, seg.ack);
  tcp.push_back(static_cast<char>(5 << 4));
  tcp.push_back(static_cast<char>((seg.fin ? 0x01 : 0) | (seg.syn ? 0x02 : 0) |
                                  (seg.rst ? 0x04 : 0) | (payload.empty() ? 0 : 0x08) |
                                  (seg.has_ack ? 0x10 : 0)));
  put16(&tcp, 65535);
  put32(&tcp, 0);
  std::string out;
  out.reserve(ip_header + tcp.size() + payload.size());
  if (!seg.src.v6) {
    out.push_back(0x45);
    out.push_back(0);
    put16(&out, static_cast<std::uint32_t>(20 + tcp.size() + payload.size()));
    put32(&out, 0x00004000);  // id 0, don't fragment
    out.push_back(64);
    out.push_back(6);
    put16(&out, 0);
    out.append(reinterpret_cast<const char*>(seg.src.addr.data()), 4);
    out.append(reinterpret_cast<const char*>(seg.dst.addr.data()), 4);
  } else {
    put32(&out, 0x60000000u);
    put16(&out, static_cast<std::uint32_t>(tcp.size() + payload.size()));
    out.push_back(6);
    out.push_back(64);
    out.append(reinterpret_cast<const char*>(seg.src.addr.data()), 16);
    out.append(reinterpret_cast<const char*>(seg.dst.addr.data()), 16);
  }
  out += tcp;
  out.append(payload);
  return out;
}

}  // namespace permitcheck::capture
