// Captures that used to pass without having been seen whole (issue 33, the capture part): each
// situation is built here as a pcap by the capture generator (tests/capture/capture_testing.h)
// from a correct and a violating run, and read back through libpcap. A connection whose
// addresses are reused after a close with one FIN, SYN-only entries and a full connection
// table, two copies of the same bytes that differ, IP-fragmented segments, a FIN that
// overtakes the last data, a classic-pcap clock crossing 2038-01-19, pending bytes past the
// memory limit: each is judged (its verdict kept) or INCOMPLETE naming what was not seen, never
// PASS on what was not seen.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "capture/capture_file.h"
#include "capture/wire_monitor.h"
#include "capture/ip_fragments.h"
#include "spec/outcome.h"
#include "spec/rule_id.h"
#include "tests/capture/capture_testing.h"

namespace permitcheck::capture {
namespace capture_honest {

using testing::Conversation;
using testing::LinkKind;
using testing::Packet;
namespace frames = testing::frames;

struct Judged {
  spec::Outcome outcome = spec::Outcome::kPass;
  std::string rules;
  std::vector<NotUnderstood> not_understood;
  std::uint64_t quiescent = 0;
  CaptureStats stats;
};

// What `permitcheck validate` decides (cli/capture.cc, capture_outcome) on the pcap `bytes`.
Judged judge_bytes(const std::string& bytes, CaptureOptions options = {}) {
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, nullptr);
  WireTraceBuilder builder(options, checker.sink());
  const absl::Status read = read_capture_bytes(bytes, &builder);
  checker.finish();
  Judged j;
  EXPECT_TRUE(read.ok()) << read;
  for (const spec::Finding& f : checker.violations()) {
    if (!j.rules.empty()) j.rules += ",";
    j.rules += std::string(spec::rule_name(f.rule));
  }
  j.not_understood = checker.not_understood();
  j.quiescent = checker.quiescent();
  j.stats = builder.stats();
  j.outcome = !checker.violations().empty() ? spec::Outcome::kFail
              : !j.not_understood.empty()   ? spec::Outcome::kIncomplete
                                            : spec::Outcome::kPass;
  return j;
}

Judged judge(const std::vector<Packet>& packets, CaptureOptions options = {}) {
  return judge_bytes(testing::pcap_bytes(LinkKind::kEthernet, packets), options);
}

std::string reasons(const Judged& j) {
  std::string out;
  for (const NotUnderstood& n : j.not_understood) out += n.connection + ": " + n.reason + "\n";
  return out;
}

Endpoint client(std::uint16_t port = 40000) { return testing::endpoint4(1, port); }
Endpoint server() { return testing::endpoint4(2, 6650); }

// One consumer: connect, subscribe, Flow 10, five entries acknowledged, then the Flow
// returning 5 (correct) or nothing (violating: E5 at quiescence). `fin`: a 1.5 s silence and
// the client's FIN (only that one: the broker's is not captured).
Conversation run(bool correct, double t0 = 1764600000.0, std::uint16_t port = 40000,
                 std::size_t mss = 1400, bool fin = true, bool v6 = false) {
  Conversation c(v6 ? testing::endpoint6(1, port) : client(port),
                 v6 ? testing::endpoint6(2, 6650) : server(), t0);
  c.handshake();
  c.client_sends(frames::connect(), mss);
  c.server_sends(frames::connected(), mss);
  c.client_sends(frames::subscribe(0, 1), mss);
  c.server_sends(frames::success(1), mss);
  c.client_sends(frames::flow(0, 10), mss);
  std::string messages, acks;
  for (std::uint64_t e = 1; e <= 5; ++e) {
    messages += frames::message(0, e, 1, {}, 1);
    acks += frames::ack(0, e);
  }
  c.server_sends(messages, mss);
  c.client_sends(acks, mss);
  if (correct) c.client_sends(frames::flow(0, 5), mss);
  if (fin) {
    c.pause(1.5);
    c.client_fin();
  }
  return c;
}

// The same conversation with both initial sequence numbers moved by `by` (a new connection's).
std::vector<Packet> shifted_isn(std::vector<Packet> p, std::uint32_t by) {
  for (Packet& k : p) {
    k.seq += by;
    k.ack += by;
  }
  return p;
}

std::size_t first_with(const std::vector<Packet>& p, const Endpoint& from, const std::string& bytes) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].src == from && p[i].payload.find(bytes) != std::string::npos) return i;
  }
  return p.size();
}

// --- addresses reused after a close of which one FIN was captured -----------------------------

// The first connection closes with the client's FIN only (the broker's was not captured); the
// same addresses and ports then carry a new connection (new SYN, new sequence numbers). Before
// the fix the new one was dropped with the old (PASS on a violating second run).
TEST(CaptureHonest, E5_AddressesReusedAfterAOneFinCloseAreJudgedAsANewConnection) {
  for (bool second_correct : {true, false}) {
    std::vector<Packet> p = run(true).packets();
    const std::vector<Packet> second =
        shifted_isn(run(second_correct, 1764600010.0).packets(), 7000000);
    p.insert(p.end(), second.begin(), second.end());
    const Judged j = judge(p);
    EXPECT_EQ(j.stats.pulsar, 2u) << reasons(j);
    EXPECT_EQ(j.quiescent, 2u);
    EXPECT_EQ(j.outcome, second_correct ? spec::Outcome::kPass : spec::Outcome::kFail)
        << j.rules << reasons(j);
    EXPECT_EQ(j.rules, second_correct ? "" : "E5");
  }
}

// --- the connection table ---------------------------------------------------------------------

// Connections that only ever sent a SYN expire: a table of 2 filled by two such entries still
// follows a Pulsar connection that starts well after them.
TEST(CaptureHonest, E5_SynOnlyEntriesExpireAndLeaveRoomForALaterConnection) {
  CaptureOptions o;
  o.max_connections = 2;
  for (bool correct : {true, false}) {
    std::vector<Packet> p;
    for (std::uint16_t port : {41000, 41001}) {
      Conversation syn_only(client(port), server(), 1764600000.0);
      syn_only.handshake();
      p.push_back(syn_only.packets()[0]);
    }
    const std::vector<Packet> later = run(correct, 1764600000.0 + 300).packets();
    p.insert(p.end(), later.begin(), later.end());
    const Judged j = judge(p, o);
    EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
        << j.rules << reasons(j);
    EXPECT_EQ(j.rules, correct ? "" : "E5");
    EXPECT_EQ(j.stats.expired, 2u);
  }
}

// More live connections than the table holds: the one not followed makes the verdict
// INCOMPLETE, naming it and the table's size, never ignored (before: PASS).
TEST(CaptureHonest, ATableOverflowIsIncompleteNamingTheConnectionNotFollowed) {
  CaptureOptions o;
  o.max_connections = 1;
  std::vector<Packet> p = run(true, 1764600000.0, 40000).packets();
  std::vector<Packet> other = run(false, 1764600000.0005, 40001).packets();
  p.insert(p.end(), other.begin(), other.end());
  std::stable_sort(p.begin(), p.end(), [](const Packet& x, const Packet& y) { return x.time < y.time; });
  const Judged j = judge(p, o);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules << reasons(j);
  EXPECT_NE(reasons(j).find("10.0.0.1:40001"), std::string::npos) << reasons(j);
  EXPECT_NE(reasons(j).find("connection table full (1 connection"), std::string::npos)
      << reasons(j);
  EXPECT_GT(j.stats.overflowed, 0u);
}

// --- two copies of the same bytes that differ -------------------------------------------------

// The client's last Flow is sent twice: one copy has a corrupted permit count (a segment with a
// bad TCP checksum, which the receiver dropped). Before, the first copy was believed without a
// word: a false violation (E2) when the corrupted one came first, PASS when it came second.
//
// With checksums in the capture the corrupted copy is skipped, as the receiver did, in either
// order: the run keeps its verdict.
TEST(CaptureHonest, E2_ACopyWithABadChecksumIsSkippedWhenTheSideHasGoodChecksums) {
  for (bool bad_first : {true, false}) {
    std::vector<Packet> p = run(true).packets();
    for (Packet& k : p) k.checksum = true;
    const std::size_t i = first_with(p, client(), frames::flow(0, 5));
    ASSERT_LT(i, p.size());
    Packet bad = p[i];
    const std::string good_flow = frames::flow(0, 5);
    const std::string bad_flow = frames::flow(0, 9);  // the same length
    ASSERT_EQ(good_flow.size(), bad_flow.size());
    bad.payload.replace(bad.payload.find(good_flow), good_flow.size(), bad_flow);
    bad.checksum = true;
    std::vector<Packet> with_bad = p;
    with_bad.insert(with_bad.begin() + static_cast<long>(bad_first ? i : i + 1), bad);
    // The corrupted copy believed is a violation: what a good checksum on it would give.
    if (bad_first) {
      EXPECT_EQ(judge(with_bad).rules, "E2");
    }
    bad.checksum = false;  // as corrupted on the way: its checksum no longer matches
    p.insert(p.begin() + static_cast<long>(bad_first ? i : i + 1), bad);
    const Judged j = judge(p);
    EXPECT_EQ(j.outcome, spec::Outcome::kPass) << bad_first << " " << j.rules << reasons(j);
    EXPECT_EQ(j.stats.bad_checksums, 1u);
  }
}

// A side whose checksums are not filled in (a capture on the sender, with checksum offload) has
// one good by chance (1 in 65536 segments): its checksums are still not believed, and none of
// its segments is skipped (before the sampling, a chance match lost the rest of the stream).
TEST(CaptureHonest, E5_AChanceGoodChecksumOnAnOffloadedSideSkipsNothing) {
  for (bool correct : {true, false}) {
    std::vector<Packet> p = run(correct).packets();
    p[3].checksum = true;  // the client's CONNECT: the one good checksum of its side
    const Judged j = judge(p);
    EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
        << j.rules << reasons(j);
    EXPECT_EQ(j.rules, correct ? "" : "E5");
    EXPECT_EQ(j.stats.bad_checksums, 0u);
  }
}

// The checksum is verified over IPv4 and IPv6 (pseudo-headers of either), odd payload lengths
// included; a flipped payload byte makes it bad.
TEST(CaptureHonest, TcpChecksumsAreVerifiedOverIpv4AndIpv6) {
  for (bool v6 : {false, true}) {
    for (std::size_t len : {0, 1, 7, 8, 1400}) {
      Packet k;
      k.src = v6 ? testing::endpoint6(1, 40000) : testing::endpoint4(1, 40000);
      k.dst = v6 ? testing::endpoint6(2, 6650) : testing::endpoint4(2, 6650);
      k.seq = 12345;
      k.ack = 678;
      k.payload = std::string(len, 'p');
      for (std::size_t i = 0; i < len; ++i) k.payload[i] = static_cast<char>(i * 7 + 1);
      k.checksum = true;
      std::string frame = testing::link_frame(LinkKind::kRaw, k);
      std::optional<TcpSegment> s = parse_packet(LinkType::kRaw, frame, static_cast<std::uint32_t>(frame.size()));
      ASSERT_TRUE(s && s->checksum_known) << v6 << " " << len;
      EXPECT_TRUE(tcp_checksum_good(*s)) << v6 << " " << len;
      if (len == 0) continue;
      frame.back() = static_cast<char>(frame.back() ^ 0x10);
      s = parse_packet(LinkType::kRaw, frame, static_cast<std::uint32_t>(frame.size()));
      ASSERT_TRUE(s);
      EXPECT_FALSE(tcp_checksum_good(*s)) << v6 << " " << len;
    }
  }
}

// Without checksums to go by (zero, as a sender's own capture with checksum offload has
// them), copies that differ are reported: INCOMPLETE naming the offset, whichever comes
// second. When the corrupted copy comes first, what it showed (here an over-grant, E2) was
// already judged: the report has both, the finding and the conflict that puts it in doubt.
TEST(CaptureHonest, E2_ConflictingCopiesWithoutChecksumsAreReportedWhicheverComesFirst) {
  for (bool bad_first : {true, false}) {
    std::vector<Packet> p = run(true).packets();
    const std::size_t i = first_with(p, client(), frames::flow(0, 5));
    ASSERT_LT(i, p.size());
    Packet bad = p[i];
    const std::string good_flow = frames::flow(0, 5);
    bad.payload.replace(bad.payload.find(good_flow), good_flow.size(), frames::flow(0, 9));
    p.insert(p.begin() + static_cast<long>(bad_first ? i : i + 1), bad);
    const Judged j = judge(p);
    EXPECT_EQ(j.outcome, bad_first ? spec::Outcome::kFail : spec::Outcome::kIncomplete)
        << bad_first << " " << j.rules << reasons(j);
    EXPECT_EQ(j.rules, bad_first ? "E2" : "");
    ASSERT_EQ(j.not_understood.size(), 1u) << reasons(j);
    EXPECT_NE(reasons(j).find("client stream: two copies of stream offset"), std::string::npos)
        << reasons(j);
  }
  // Copies that agree (a plain retransmission) keep the verdict.
  std::vector<Packet> p = run(true).packets();
  const std::size_t i = first_with(p, client(), frames::flow(0, 5));
  p.insert(p.begin() + static_cast<long>(i + 1), p[i]);
  EXPECT_EQ(judge(p).outcome, spec::Outcome::kPass);
}

// --- IP fragments -----------------------------------------------------------------------------

// The pcap of `frames` (link type `k`), judged.
Judged judge_frames(const std::vector<testing::Frame>& frames, CaptureOptions options = {},
                    LinkKind k = LinkKind::kEthernet) {
  return judge_bytes(testing::pcap_of_frames(k, frames), options);
}

// The frames of `p` whose IP datagrams (a fragmented segment's) have identification `id`:
// their indices in `frames`.
std::vector<std::size_t> fragments_of(const std::vector<testing::Frame>& frames, bool v6,
                                      std::uint16_t id, LinkKind k = LinkKind::kEthernet) {
  const std::size_t link = testing::link_header(k, v6).size();
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const std::string& f = frames[i].bytes;
    if (!v6 && f.size() >= link + 20 && testing::be16(id) == f.substr(link + 4, 2) &&
        (f.substr(link + 6, 2) != testing::be16(0x4000))) {
      out.push_back(i);
    }
    if (v6 && f.size() >= link + 48 && f[link + 6] == 44 &&
        f.substr(link + 44, 4) == testing::be32(id)) {
      out.push_back(i);
    }
  }
  return out;
}

// A correct and a violating run, every segment longer than 32 bytes sent as IP fragments of at
// most 32 bytes (IPv4 and IPv6 with a Fragment header, on Ethernet and raw IP): reassembled,
// the verdict is the unfragmented one's (before: INCOMPLETE, "fragments are not reassembled").
// With TCP checksums filled in, those of the reassembled segments verify.
TEST(CaptureHonest, E5_IpFragmentedSegmentsAreReassembledAndKeepTheVerdict) {
  for (bool v6 : {false, true}) {
    for (LinkKind k : {LinkKind::kEthernet, LinkKind::kRaw}) {
      for (bool correct : {true, false}) {
        std::vector<Packet> p = run(correct, 1764600000.0, 40000, 1400, true, v6).packets();
        for (Packet& x : p) x.checksum = true;
        const Judged whole = judge_bytes(testing::pcap_bytes(k, p));
        const Judged j = judge_frames(testing::frames_of(k, p, 32), {}, k);
        EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
            << v6 << " " << j.rules << reasons(j);
        EXPECT_EQ(j.rules, correct ? "" : "E5");
        EXPECT_EQ(j.rules, whole.rules);
        EXPECT_EQ(j.stats.events, whole.stats.events);
        EXPECT_TRUE(j.not_understood.empty()) << reasons(j);
        EXPECT_GE(j.stats.reassembled, 7u);
        EXPECT_GT(j.stats.fragments, 2 * j.stats.reassembled);
        EXPECT_EQ(j.stats.bad_checksums, 0u);
        EXPECT_EQ(j.stats.memory, 0u);
      }
    }
  }
}

// Fragments reordered (each datagram's backwards), one of them duplicated, and overlapping
// copies with the same bytes: reassembled all the same.
TEST(CaptureHonest, IpFragmentsOutOfOrderOrDuplicatedAreReassembled) {
  for (bool v6 : {false, true}) {
    const std::vector<Packet> p = run(true, 1764600000.0, 40000, 1400, true, v6).packets();
    std::vector<testing::Frame> f = testing::frames_of(LinkKind::kEthernet, p, 48);
    const std::vector<std::size_t> first = fragments_of(f, v6, 1);
    ASSERT_GE(first.size(), 2u);
    std::reverse(f.begin() + static_cast<long>(first.front()),
                 f.begin() + static_cast<long>(first.back()) + 1);
    const std::vector<std::size_t> second = fragments_of(f, v6, 2);
    ASSERT_GE(second.size(), 2u);
    f.insert(f.begin() + static_cast<long>(second.back()) + 1, f[second[1]]);
    const Judged j = judge_frames(f);
    EXPECT_EQ(j.outcome, spec::Outcome::kPass) << v6 << " " << reasons(j);
    EXPECT_TRUE(j.not_understood.empty()) << reasons(j);
  }
}

// A fragment never captured: never PASS. The connection is INCOMPLETE, the reason naming the
// fragmented segment (the first fragment missing: the ports are unknown, every connection
// between the two addresses is reported). A violating run is never PASS either.
TEST(CaptureHonest, AMissingIpFragmentIsNeverPass) {
  for (bool v6 : {false, true}) {
    for (bool drop_first : {false, true}) {
      for (bool correct : {true, false}) {
        const std::vector<Packet> p = run(correct, 1764600000.0, 40000, 1400, true, v6).packets();
        std::vector<testing::Frame> f = testing::frames_of(LinkKind::kEthernet, p, 64);
        const std::vector<std::size_t> frags = fragments_of(f, v6, 3);
        ASSERT_GE(frags.size(), 2u);
        f.erase(f.begin() + static_cast<long>(drop_first ? frags.front() : frags.back()));
        const Judged j = judge_frames(f);
        EXPECT_NE(j.outcome, spec::Outcome::kPass) << v6 << drop_first << correct << reasons(j);
        if (correct) {
          EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules << reasons(j);
        }
        EXPECT_NE(reasons(j).find("IP-fragmented segment"), std::string::npos) << reasons(j);
        EXPECT_NE(reasons(j).find("IP datagram id 3"), std::string::npos) << reasons(j);
        EXPECT_EQ(j.stats.memory, 0u);
      }
    }
  }
}

// Two fragments of one datagram that overlap with different bytes: which the receiver took is
// unknown: reported (INCOMPLETE), naming the datagram and the offset; overlapping with the
// same bytes is a plain duplicate.
TEST(CaptureHonest, OverlappingIpFragmentsWithDifferentBytesAreReported) {
  for (bool v6 : {false, true}) {
    for (bool differ : {true, false}) {
      const std::vector<Packet> p = run(true, 1764600000.0, 40000, 1400, true, v6).packets();
      std::vector<testing::Frame> f = testing::frames_of(LinkKind::kEthernet, p, 64);
      const std::vector<std::size_t> frags = fragments_of(f, v6, 2);
      ASSERT_GE(frags.size(), 2u);
      // A copy of the second fragment shifted 8 bytes back: it overlaps the first's tail.
      testing::Frame extra = f[frags[1]];
      const std::size_t data = 14 + (v6 ? 48 : 20);  // where the fragment's data starts
      const std::size_t off_at = 14 + (v6 ? 42 : 6);
      const auto field = static_cast<std::uint16_t>(
          (static_cast<unsigned char>(extra.bytes[off_at]) << 8) |
          static_cast<unsigned char>(extra.bytes[off_at + 1]));
      const std::uint16_t offset = v6 ? (field & 0xFFF8) : static_cast<std::uint16_t>((field & 0x1FFF) * 8);
      const std::uint16_t back = static_cast<std::uint16_t>(offset - 8);
      extra.bytes.replace(off_at, 2, testing::be16(static_cast<std::uint16_t>(
                                         v6 ? (back | (field & 1)) : ((field & 0xE000) | back / 8))));
      // Its first 8 bytes: those of the first fragment's tail, or different ones.
      const std::string& first = f[frags[0]].bytes;
      std::string tail = first.substr(first.size() - 8);
      if (differ) tail[3] = static_cast<char>(tail[3] ^ 0x55);
      extra.bytes.insert(data, tail);
      if (!v6) {
        extra.bytes.replace(14 + 2, 2, testing::be16(static_cast<std::uint16_t>(extra.bytes.size() - 14)));
      } else {
        extra.bytes.replace(14 + 4, 2, testing::be16(static_cast<std::uint16_t>(extra.bytes.size() - 14 - 40)));
      }
      f.insert(f.begin() + static_cast<long>(frags[1]), extra);
      const Judged j = judge_frames(f);
      if (differ) {
        EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << v6 << " " << j.rules << reasons(j);
        EXPECT_NE(reasons(j).find("fragments of IP datagram id 2 overlap with different bytes"),
                  std::string::npos)
            << reasons(j);
      } else {
        EXPECT_EQ(j.outcome, spec::Outcome::kPass) << v6 << " " << reasons(j);
      }
    }
  }
}

// The defragmenter's bounds: a datagram whose fragment never comes is given up after
// kTimeoutSeconds (reported, its bytes released); past the per-flow limit the datagram is
// given up; a fragment cut by the snap length is reported; the bytes held are counted.
TEST(CaptureHonest, IpFragmentBuffersAreBoundedAndReportWhatTheyGiveUp) {
  Packet k;
  k.src = testing::endpoint4(1, 40000);
  k.dst = testing::endpoint4(2, 6650);
  k.payload = std::string(300, 'p');
  auto fragment = [&](const std::string& ip, std::uint32_t id) {
    std::optional<TcpSegment> s =
        parse_packet(LinkType::kRaw, ip, static_cast<std::uint32_t>(ip.size()));
    EXPECT_TRUE(s && s->ip_fragment && s->fragment_id == id);
    return *s;
  };
  std::vector<FragmentProblem> problems;
  TcpSegment whole;
  {
    IpDefragmenter d(IpDefragmenter::Limits{});
    const std::vector<std::string> f = testing::ip_fragments(k, 64, 9);
    ASSERT_GE(f.size(), 3u);
    for (std::size_t i = 0; i + 1 < f.size(); ++i) {
      EXPECT_FALSE(d.add(10, fragment(f[i], 9), &whole, &problems));
    }
    EXPECT_EQ(d.memory(), 64 * (f.size() - 1));
    EXPECT_TRUE(problems.empty());
    d.expire(10 + IpDefragmenter::kTimeoutSeconds - 1, &problems);
    EXPECT_TRUE(problems.empty());
    d.expire(10 + IpDefragmenter::kTimeoutSeconds, &problems);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_TRUE(problems[0].ports_known);
    EXPECT_EQ(problems[0].src.port, 40000);
    EXPECT_NE(problems[0].reason.find("never captured within 30 s"), std::string::npos)
        << problems[0].reason;
    EXPECT_EQ(d.memory(), 0u);
    // The last fragment alone then waits again, and completes nothing.
    EXPECT_FALSE(d.add(50, fragment(f.back(), 9), &whole, &problems));
    d.finish(51, &problems);
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_FALSE(problems[1].ports_known);
    EXPECT_NE(problems[1].reason.find("the capture ends before every fragment"), std::string::npos);
  }
  {
    problems.clear();
    IpDefragmenter d(IpDefragmenter::Limits{.max_bytes_per_flow = 100});
    const std::vector<std::string> f = testing::ip_fragments(k, 64, 4);
    EXPECT_FALSE(d.add(1, fragment(f[0], 4), &whole, &problems));
    EXPECT_FALSE(d.add(1, fragment(f[1], 4), &whole, &problems));
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].reason.find("past 100 bytes held"), std::string::npos);
    EXPECT_EQ(d.memory(), 0u);
  }
  {
    problems.clear();
    IpDefragmenter d(IpDefragmenter::Limits{});
    const std::vector<std::string> f = testing::ip_fragments(k, 64, 5);
    const std::string cut = f[1].substr(0, f[1].size() - 10);
    std::optional<TcpSegment> s =
        parse_packet(LinkType::kRaw, cut, static_cast<std::uint32_t>(f[1].size()));
    ASSERT_TRUE(s && s->ip_fragment);
    EXPECT_EQ(s->missing, 10u);
    EXPECT_FALSE(d.add(1, *s, &whole, &problems));
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].reason.find("snap length too short"), std::string::npos);
  }
  {
    // Whole again: every fragment, in any order, gives the segment.
    problems.clear();
    IpDefragmenter d(IpDefragmenter::Limits{});
    const std::vector<std::string> f = testing::ip_fragments(k, 64, 6);
    for (std::size_t i = f.size(); i-- > 1;) EXPECT_FALSE(d.add(1, fragment(f[i], 6), &whole, &problems));
    ASSERT_TRUE(d.add(1, fragment(f[0], 6), &whole, &problems));
    EXPECT_EQ(whole.payload, k.payload);
    EXPECT_EQ(whole.src.port, 40000);
    EXPECT_FALSE(whole.ip_fragment);
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(d.memory(), 0u);
  }
}

// Fragments count in the memory of all connections (--max-memory): first fragments of
// datagrams whose rest never comes pile up; past the limit the datagrams held are given up,
// reported for their connection, and what is held stays bounded.
TEST(CaptureHonest, IpFragmentsPastTheMemoryLimitAreReported) {
  CaptureOptions o;
  o.max_memory = 20000;
  const std::vector<Packet> p = run(true).packets();
  std::vector<testing::Frame> f = testing::frames_of(LinkKind::kEthernet, p);
  Packet big = p[3];  // the client's CONNECT, made 2000 bytes long
  big.payload.resize(2000, 'b');
  std::vector<testing::Frame> orphans;
  for (std::uint32_t id = 100; id < 120; ++id) {
    orphans.push_back(testing::Frame{
        p[3].time, testing::link_header(LinkKind::kEthernet, false) + testing::ip_fragments(big, 1000, id)[0]});
  }
  f.insert(f.begin() + 4, orphans.begin(), orphans.end());
  const Judged j = judge_frames(f, o);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << reasons(j);
  EXPECT_NE(reasons(j).find("IP-fragmented segment: IP datagram id 1"), std::string::npos)
      << reasons(j);
  EXPECT_NE(reasons(j).find("given up (memory limit of 20000 bytes (--max-memory) reached)"),
            std::string::npos)
      << reasons(j);
  EXPECT_LE(j.stats.peak_memory, o.max_memory + 1000);
  EXPECT_GT(j.stats.peak_memory, 15000u);
}

// --- conflicting copies told apart by their TCP checksums ------------------------------------

// The frames (Ethernet) of `p`, checksums filled in, with a copy of the client's first Flow
// (`flow(0, 10)`) turned into `flow(0, 1)` inserted before or after it. `recompute`: the copy's
// checksum is computed for its own bytes (it verifies); else it is the original's (corrupted
// on the way: it fails). `checksums`: false leaves every checksum zero (offloaded).
std::vector<testing::Frame> flow_copies(bool v6, bool bad_first, bool recompute,
                                        bool checksums = true) {
  std::vector<Packet> p = run(true, 1764600000.0, 40000, 1400, true, v6).packets();
  for (Packet& k : p) k.checksum = checksums;
  const Endpoint from = v6 ? testing::endpoint6(1, 40000) : client();
  const std::size_t i = first_with(p, from, frames::flow(0, 10));
  EXPECT_LT(i, p.size());
  std::vector<testing::Frame> f = testing::frames_of(LinkKind::kEthernet, p);
  testing::Frame copy = f[i];
  const std::string good = frames::flow(0, 10), bad = frames::flow(0, 1);
  EXPECT_EQ(good.size(), bad.size());
  if (recompute) {
    Packet q = p[i];
    q.payload.replace(q.payload.find(good), good.size(), bad);
    copy.bytes = testing::link_frame(LinkKind::kEthernet, q);
  } else {
    copy.bytes.replace(copy.bytes.find(good), good.size(), bad);
  }
  f.insert(f.begin() + static_cast<long>(bad_first ? i : i + 1), copy);
  return f;
}

// The client's first Flow (10 permits) is captured twice, early in the connection (before
// its side has shown enough good checksums to skip bad ones by itself), one copy corrupted to
// 1 permit on the way: its checksum fails. Whichever comes first, the copy that verifies is
// believed and the other dropped, said in the stats (checksum_resolved, bad_checksums): the
// run keeps its verdict, over IPv4 and IPv6. The corrupted bytes believed would be a violation
// (B12: the broker delivers 5 entries on 1 permit), so dropping them is what makes this pass.
TEST(CaptureHonest, B12_OfTwoDifferingCopiesTheOneWhoseChecksumVerifiesIsBelieved) {
  for (bool v6 : {false, true}) {
    // The corrupted copy alone, with a checksum that verifies: what believing it gives.
    std::vector<testing::Frame> alone = flow_copies(v6, true, /*recompute=*/true);
    alone.erase(alone.begin() + static_cast<long>(
                                    std::find_if(alone.begin(), alone.end(),
                                                 [&](const testing::Frame& x) {
                                                   return x.bytes.find(frames::flow(0, 10)) !=
                                                          std::string::npos;
                                                 }) -
                                    alone.begin()));
    const Judged believed = judge_frames(alone);
    EXPECT_EQ(believed.outcome, spec::Outcome::kFail) << believed.rules << reasons(believed);
    EXPECT_NE(believed.rules.find("B12"), std::string::npos) << believed.rules;
    for (bool bad_first : {true, false}) {
      const Judged j = judge_frames(flow_copies(v6, bad_first, /*recompute=*/false));
      EXPECT_EQ(j.outcome, spec::Outcome::kPass) << v6 << bad_first << j.rules << reasons(j);
      EXPECT_EQ(j.stats.checksum_resolved, 1u) << v6 << bad_first;
      EXPECT_EQ(j.stats.bad_checksums, 1u);
      EXPECT_TRUE(j.not_understood.empty()) << reasons(j);
    }
  }
}

// Two differing copies whose checksums both verify, or neither can be verified (zero, as with
// checksum offload): which the receiver took is unknown: the conflict is reported and the
// connection is INCOMPLETE (FAIL when the copy read first already showed a violation), never
// PASS, the reason saying why the checksums did not decide.
TEST(CaptureHonest, DifferingCopiesTheChecksumsCannotTellApartAreReported) {
  for (bool v6 : {false, true}) {
    for (bool bad_first : {true, false}) {
      for (bool checksums : {true, false}) {
        const Judged j = judge_frames(flow_copies(v6, bad_first, /*recompute=*/true, checksums));
        EXPECT_NE(j.outcome, spec::Outcome::kPass) << v6 << bad_first << checksums << reasons(j);
        if (!bad_first) {
          EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules << reasons(j);
        }
        ASSERT_EQ(j.not_understood.size(), 1u) << reasons(j);
        EXPECT_NE(reasons(j).find("client stream: two copies of stream offset"), std::string::npos)
            << reasons(j);
        EXPECT_NE(reasons(j).find(checksums ? "both copies' TCP checksums verify"
                                            : "their TCP checksums cannot be verified"),
                  std::string::npos)
            << reasons(j);
        EXPECT_EQ(j.stats.checksum_resolved, 0u);
      }
    }
  }
}

// The only copy of a segment captured fails its checksum and nothing acknowledges it (its
// receiver dropped it; the capture stops before the retransmission): a gap saying so,
// INCOMPLETE, never its bytes believed. The same copy acknowledged by the peer was taken by
// it: the capture's checksums of that side are not the receiver's, and its bytes are read
// (here the B12 they show).
TEST(CaptureHonest, B12_AnOnlyCopyWithAFailingChecksumIsAGapUnlessAcknowledged) {
  std::vector<testing::Frame> f = flow_copies(false, true, /*recompute=*/false);
  f.erase(std::find_if(f.begin(), f.end(), [](const testing::Frame& x) {
    return x.bytes.find(frames::flow(0, 10)) != std::string::npos;
  }));
  const auto bad = std::find_if(f.begin(), f.end(), [](const testing::Frame& x) {
    return x.bytes.find(frames::flow(0, 1)) != std::string::npos;
  });
  ASSERT_NE(bad, f.end());
  const Judged acked = judge_frames(f);
  EXPECT_EQ(acked.outcome, spec::Outcome::kFail) << acked.rules << reasons(acked);
  EXPECT_NE(acked.rules.find("B12"), std::string::npos) << acked.rules;
  f.erase(bad + 1, f.end());
  const Judged j = judge_frames(f);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules << reasons(j);
  EXPECT_NE(reasons(j).find("the only copy captured there fails its TCP checksum"),
            std::string::npos)
      << reasons(j);
}

// A side whose checksums all fail without looking offloaded (filled in by something we do not
// recognise), on one side or both: a copy the peer acknowledged, or a few such copies, and
// its checksums are not believed: its copies are read as they come; a correct run stays
// PASS, a violating one keeps its rule, and the end of the capture is still a quiescence.
TEST(CaptureHonest, E5_ASideWhoseChecksumsAllFailIsReadWithoutThem) {
  for (bool correct : {true, false}) {
    for (int sides : {1, 2, 3}) {  // the client's, the broker's, both
      std::vector<testing::Frame> f =
          testing::frames_of(LinkKind::kEthernet, run(correct).packets());
      for (testing::Frame& x : f) {
        const bool from_client = x.bytes[14 + 12 + 3] == 1;  // 10.0.0.1
        if ((sides & (from_client ? 1 : 2)) != 0) {
          x.bytes.replace(14 + 20 + 16, 2, testing::be16(0xBEEF));
        }
      }
      const Judged j = judge_frames(f);
      EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
          << sides << " " << j.rules << reasons(j);
      EXPECT_EQ(j.rules, correct ? "" : "E5");
      EXPECT_EQ(j.quiescent, 1u);
      EXPECT_TRUE(j.not_understood.empty()) << reasons(j);
    }
  }
}

// --- a FIN that overtakes the last data segment -----------------------------------------------

// The client's FIN is captured before its last data segment (a Flow returning 5, or over-granting
// 50 in the violating run): the data is still delivered and the run keeps the verdict it has
// in capture order (before: INCOMPLETE, "lost segment").
TEST(CaptureHonest, E2_AFinOvertakingTheLastDataSegmentStillDeliversIt) {
  for (bool correct : {true, false}) {
    Conversation c = run(true, 1764600000.0, 40000, 1400, /*fin=*/false);
    if (!correct) c.client_sends(frames::flow(0, 50));
    c.client_fin();
    const std::vector<Packet> in_order = c.packets();
    std::vector<Packet> p = in_order;
    std::size_t last = p.size() - 1;
    while (last > 0 && !(p[last].src == client() && !p[last].payload.empty())) --last;
    // FIN, then the last data segment and its ack.
    Packet fin = p.back();
    p.pop_back();
    fin.time = p[last].time;
    p.insert(p.begin() + static_cast<long>(last), fin);
    const Judged expected = judge(in_order);
    const Judged j = judge(p);
    EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
        << correct << " " << j.rules << reasons(j);
    EXPECT_EQ(j.rules, expected.rules);
    EXPECT_EQ(j.rules.find("E2") != std::string::npos, !correct) << j.rules;
    EXPECT_EQ(j.stats.events, expected.stats.events);
    EXPECT_TRUE(j.not_understood.empty()) << reasons(j);
  }
}

// A FIN whose data before it never comes: INCOMPLETE, as a lost segment.
TEST(CaptureHonest, AFinAfterDataNeverCapturedIsIncomplete) {
  Conversation c = run(true, 1764600000.0, 40000, 1400, /*fin=*/false);
  c.client_fin();
  std::vector<Packet> p = c.packets();
  std::size_t last = p.size() - 1;
  while (last > 0 && !(p[last].src == client() && !p[last].payload.empty())) --last;
  p.erase(p.begin() + static_cast<long>(last), p.begin() + static_cast<long>(last) + 2);
  const Judged j = judge(p);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules << reasons(j);
  EXPECT_NE(reasons(j).find("client stream: lost segment"), std::string::npos) << reasons(j);
}

// --- clocks -----------------------------------------------------------------------------------

// A classic pcap's seconds are unsigned 32-bit; libpcap reads them signed, so from
// 2038-01-19T03:14:08Z on they come back negative. A capture across that instant, and one
// wholly after it, keep their verdicts, and times are reported past 2038, not in 1901.
TEST(CaptureHonest, E5_ClassicPcapTimesFrom2038OnKeepTheVerdictAndTheirDates) {
  const double y2038 = 2147483648.0;  // 2^31 s: 2038-01-19T03:14:08Z
  for (double t0 : {y2038 - 0.02, y2038 + 10}) {
    for (bool correct : {true, false}) {
      const Judged j = judge(run(correct, t0).packets());
      EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
          << t0 << " " << j.rules << reasons(j);
      EXPECT_EQ(j.rules, correct ? "" : "E5");
      EXPECT_EQ(j.quiescent, 1u);
      EXPECT_EQ(j.stats.clock_steps_back, 0u) << t0;
      EXPECT_GT(j.stats.last_time, y2038);
    }
  }
}

// --- memory -----------------------------------------------------------------------------------

// A frame kept whole while it comes (a command frame, not a streamed payload) of `size`
// bytes, of which `sent` are sent.
std::string partial_frame(std::uint32_t size, std::size_t sent) {
  std::string f = testing::be32(size - 4) + testing::be32(size - 8);
  f.resize(sent, 'z');
  return f;
}

// Connections each holding an incomplete 1 MB frame, with a memory limit of 2.5 MB: past it
// the connection that grew is INCOMPLETE, named with the limit, and what is held stays under
// the limit (plus one segment), never connections x frame size.
// Six connections, each sending 1 MB of a 5 MB command frame, a second apart.
std::vector<Packet> partial_frames() {
  std::vector<Packet> p;
  for (std::uint16_t k = 0; k < 6; ++k) {
    Conversation c(client(static_cast<std::uint16_t>(42000 + k)), server(), 1764600000.0 + k);
    c.handshake();
    c.client_sends(frames::connect());
    c.server_sends(frames::connected());
    c.client_sends(partial_frame(5 << 20, 1 << 20));
    p.insert(p.end(), c.packets().begin(), c.packets().end());
  }
  std::stable_sort(p.begin(), p.end(), [](const Packet& x, const Packet& y) { return x.time < y.time; });
  return p;
}

TEST(CaptureHonest, PendingBytesPastTheMemoryLimitMakeTheConnectionIncomplete) {
  CaptureOptions o;
  o.max_memory = 2'500'000;
  const std::vector<Packet> p = partial_frames();
  const Judged j = judge(p, o);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete);
  std::size_t over = 0;
  for (const NotUnderstood& n : j.not_understood) {
    over += n.reason.find("memory limit of 2500000 bytes (--max-memory)") != std::string::npos;
  }
  EXPECT_GE(over, 4u) << reasons(j);
  EXPECT_LE(j.stats.peak_memory, o.max_memory + 1400);
  EXPECT_GT(j.stats.peak_memory, std::size_t{1} << 20);
}

#ifdef PERMITCHECK_BIN
// `permitcheck validate --max-memory` applies to a capture: past it, exit 3 (INCOMPLETE) naming
// the limit and the connection on stderr.
TEST(CaptureHonest, ValidateMaxMemoryAppliesToCaptures) {
  const std::string path = ::testing::TempDir() + "/capture-honest-memory.pcap";
  const std::string err = ::testing::TempDir() + "/capture-honest-memory.err";
  testing::write_file(path, testing::pcap_bytes(LinkKind::kEthernet, partial_frames()));
  auto validate = [&](const std::string& args, std::string* text) {
    const int rc = std::system((std::string(PERMITCHECK_BIN) + " validate --no-progress " + args +
                                " " + path + " >/dev/null 2>" + err).c_str());
    std::ifstream f(err);
    *text = std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  std::string text;
  EXPECT_EQ(validate("--max-memory 2500000", &text), 3) << text;
  EXPECT_NE(text.find("connection 10.0.0.1:4200"), std::string::npos) << text;
  EXPECT_NE(text.find("memory limit of 2500000 bytes (--max-memory) reached"), std::string::npos)
      << text;
  EXPECT_EQ(validate("", &text), 3) << text;  // every frame cut by the end of the capture
  EXPECT_EQ(text.find("--max-memory"), std::string::npos) << text;
}

// `permitcheck validate` of a capture whose segments are IP-fragmented: exit 0 for the correct
// run whole; a fragment missing: exit 3 (INCOMPLETE) naming the fragmented segment.
TEST(CaptureHonest, ValidateOfAFragmentedCaptureExitsPassOrIncomplete) {
  const std::string path = ::testing::TempDir() + "/capture-honest-fragments.pcap";
  const std::string err = ::testing::TempDir() + "/capture-honest-fragments.err";
  auto validate = [&](const std::vector<testing::Frame>& frames, std::string* text) {
    testing::write_file(path, testing::pcap_of_frames(LinkKind::kEthernet, frames));
    const int rc = std::system((std::string(PERMITCHECK_BIN) + " validate --no-progress " + path +
                                " >/dev/null 2>" + err).c_str());
    std::ifstream f(err);
    *text = std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  std::vector<testing::Frame> f = testing::frames_of(LinkKind::kEthernet, run(true).packets(), 32);
  std::string text;
  EXPECT_EQ(validate(f, &text), 0) << text;
  const std::vector<std::size_t> frags = fragments_of(f, false, 2);
  ASSERT_GE(frags.size(), 2u);
  f.erase(f.begin() + static_cast<long>(frags[1]));
  EXPECT_EQ(validate(f, &text), 3) << text;
  EXPECT_NE(text.find("IP-fragmented segment"), std::string::npos) << text;
}
#endif

}  // namespace capture_honest
}  // namespace permitcheck::capture

namespace permitcheck::capture {
namespace capture_honest {

// Copies are compared with the last kCompareBytes delivered: a differing copy inside them is a
// gap naming its offset; one from further back is compared where it overlaps them, and said
// (take_uncompared), never a gap by its age alone.
TEST(CaptureHonest, CopiesAreComparedWithTheBytesKeptAndOlderOnesAreSaid) {
  StreamReassembler r(1 << 20);
  r.start(0);
  std::string stream(3 * StreamReassembler::kCompareBytes, '\0');
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<char>(i * 31 + i / 7);
  std::vector<StreamChunk> out;
  for (std::size_t at = 0; at < stream.size(); at += 1000) {
    ASSERT_FALSE(r.add(1, static_cast<std::uint32_t>(at), std::string_view(stream).substr(at, 1000), 0, &out));
  }
  EXPECT_FALSE(r.take_uncompared());
  // From far back, even differing: not compared, said.
  EXPECT_FALSE(r.add(2, 0, std::string(1000, 'x'), 0, &out));
  EXPECT_TRUE(r.take_uncompared());
  EXPECT_FALSE(r.take_uncompared());
  // The same bytes again, inside what is kept: nothing.
  const std::size_t recent = stream.size() - 5000;
  EXPECT_FALSE(r.add(3, static_cast<std::uint32_t>(recent), std::string_view(stream).substr(recent, 1000), 0, &out));
  EXPECT_FALSE(r.take_uncompared());
  // Differing bytes inside what is kept: a gap at the first differing byte.
  std::string changed = stream.substr(recent, 1000);
  changed[10] = static_cast<char>(changed[10] ^ 1);
  const std::optional<std::string> gap = r.add(4, static_cast<std::uint32_t>(recent), changed, 0, &out);
  ASSERT_TRUE(gap);
  EXPECT_NE(gap->find("two copies of stream offset " + std::to_string(recent + 10) + " differ"),
            std::string::npos)
      << *gap;
}

}  // namespace capture_honest
}  // namespace permitcheck::capture
