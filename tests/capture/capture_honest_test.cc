// Captures that used to pass without having been seen whole (issue 33, the capture part): each
// situation is built here as a pcap by the capture generator (tests/capture/capture_testing.h)
// from a correct and a violating run, and read back through libpcap. A connection whose
// addresses are reused after a close with one FIN, SYN-only entries and a full connection
// table, two copies of the same bytes that differ, an IP-fragmented segment, a FIN that
// overtakes the last data, a classic-pcap clock crossing 2038-01-19, pending bytes past the
// memory limit: each is judged (its verdict kept) or INCOMPLETE naming what was not seen, never
// PASS on what was not seen.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "capture/capture_file.h"
#include "capture/checker.h"
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
  WireChecker checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, nullptr);
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
                 std::size_t mss = 1400, bool fin = true) {
  Conversation c(client(port), server(), t0);
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

// The pcap (Ethernet) of `packets`, the one at `fragmented` sent as two IPv4 fragments.
std::string with_fragmented(const std::vector<Packet>& packets, std::size_t fragmented) {
  std::string out = testing::le32(0xA1B2C3D4) + testing::le16(2) + testing::le16(4) +
                    testing::le32(0) + testing::le32(0) + testing::le32(262144) + testing::le32(1);
  auto record = [&](double time, const std::string& frame) {
    const auto secs = static_cast<std::uint32_t>(time);
    const auto usecs = static_cast<std::uint32_t>((time - secs) * 1e6 + 0.5);
    out += testing::le32(secs) + testing::le32(std::min<std::uint32_t>(usecs, 999999)) +
           testing::le32(static_cast<std::uint32_t>(frame.size())) +
           testing::le32(static_cast<std::uint32_t>(frame.size()));
    out += frame;
  };
  const std::string ether("\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
  for (std::size_t i = 0; i < packets.size(); ++i) {
    if (i != fragmented) {
      record(packets[i].time, testing::link_frame(LinkKind::kEthernet, packets[i]));
      continue;
    }
    const std::string ip = testing::ip_packet(packets[i]);
    const std::string header = ip.substr(0, 20), body = ip.substr(20);
    const std::size_t cut = 24;  // the TCP header and 4 payload bytes; a multiple of 8
    for (int part = 0; part < 2; ++part) {
      const std::string piece = part == 0 ? body.substr(0, cut) : body.substr(cut);
      std::string h = header;
      const std::string len = testing::be16(static_cast<std::uint16_t>(20 + piece.size()));
      h.replace(2, 2, len);
      const std::uint16_t frag = part == 0 ? 0x2000 : static_cast<std::uint16_t>(cut / 8);
      h.replace(6, 2, testing::be16(frag));
      record(packets[i].time, ether + h + piece);
    }
  }
  return out;
}

// A data segment carried in two IP fragments: reassembled or reported, never a silent PASS
// (before: its bytes were missing without a word about fragments).
TEST(CaptureHonest, AnIpFragmentedSegmentIsIncompleteSayingSo) {
  for (bool correct : {true, false}) {
    const std::vector<Packet> p = run(correct).packets();
    const std::size_t i = first_with(p, server(), frames::success(1));
    ASSERT_LT(i, p.size());
    const Judged j = judge_bytes(with_fragmented(p, i));
    EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules << reasons(j);
    EXPECT_NE(reasons(j).find("IP-fragmented"), std::string::npos) << reasons(j);
    EXPECT_TRUE(j.rules.empty()) << j.rules;
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
