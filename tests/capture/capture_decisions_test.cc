// Where the capture path decides a verdict (issue 33: mutants there survived every test): a
// batch acknowledged index by index (as the reference client does) settles its entry, so
// quiescence comes and E5 is checked; a retransmit of a longer copy behind a hole fills the
// hole and keeps the verdict; a lost 1-byte last segment before a FIN is never PASS. Each is
// shown on a correct run (PASS, no false alarm) and a violating one (the rule still found).
#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "capture/capture_file.h"
#include "capture/wire_monitor.h"
#include "capture/ip_fragments.h"
#include "capture/packet.h"
#include "capture/pulsar_connection.h"
#include "capture/reassembly.h"
#include "spec/outcome.h"
#include "spec/rule_id.h"
#include "tests/capture/capture_testing.h"

namespace permitcheck::capture {
namespace capture_decisions {

using testing::Conversation;
using testing::LinkKind;
using testing::Packet;
namespace frames = testing::frames;

struct Judged {
  spec::Outcome outcome = spec::Outcome::kPass;
  std::string rules;
  std::string reasons;
  std::uint64_t quiescent = 0;
};

// As `permitcheck validate` decides on a capture: FAIL on a violation, else INCOMPLETE when a
// connection was not understood to its end, else PASS.
Judged judge(const std::vector<Packet>& packets) {
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, nullptr);
  WireTraceBuilder builder(CaptureOptions{}, checker.sink());
  const absl::Status read =
      read_capture_bytes(testing::pcap_bytes(LinkKind::kEthernet, packets), &builder);
  checker.finish();
  EXPECT_TRUE(read.ok()) << read;
  Judged j;
  for (const spec::Finding& f : checker.violations()) {
    if (!j.rules.empty()) j.rules += ",";
    j.rules += std::string(spec::rule_name(f.rule));
  }
  for (const NotUnderstood& n : checker.not_understood()) {
    j.reasons += n.connection + ": " + n.reason + "\n";
  }
  j.quiescent = checker.quiescent();
  j.outcome = !checker.violations().empty()      ? spec::Outcome::kFail
              : !checker.not_understood().empty() ? spec::Outcome::kIncomplete
                                                  : spec::Outcome::kPass;
  return j;
}

Endpoint client() { return testing::endpoint4(1, 40000); }
Endpoint server() { return testing::endpoint4(2, 6650); }

// An ACK of batch index `index` of entry `entry`: by the ack set of the indexes still
// unacknowledged after it (words), or by the batch_index field.
std::string index_ack(std::uint64_t entry, std::optional<std::int64_t> index,
                      std::vector<std::int64_t> remaining) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::ACK);
  auto* a = c.mutable_ack();
  a->set_consumer_id(0);
  a->set_ack_type(wire::CommandAck::Individual);
  auto* id = a->add_message_id();
  id->set_ledgerid(7);
  id->set_entryid(entry);
  if (index) {
    id->set_batch_index(static_cast<std::int32_t>(*index));
    id->set_batch_size(6);
  }
  for (std::int64_t w : remaining) id->add_ack_set(w);
  return frames::command(c);
}

Conversation connected_consumer() {
  Conversation c(client(), server());
  c.handshake();
  c.client_sends(frames::connect());
  c.server_sends(frames::connected());
  c.client_sends(frames::subscribe(0, 1));
  c.server_sends(frames::success(1));
  c.client_sends(frames::flow(0, 10));
  return c;
}

// One batch of 6 messages, acknowledged one index at a time (`by_ack_set`: each ack carries
// the indexes still unacknowledged, down to none; else each names its batch_index), then the
// Flow returning 6 (correct) or nothing (6 short, over T - 1 = 4: E5), a pause, the FIN.
// `skip_index`: that index is never acknowledged, so the entry never settles.
std::vector<Packet> batch_run(bool correct, bool by_ack_set, std::optional<int> skip_index = {}) {
  Conversation c = connected_consumer();
  c.server_sends(frames::message(0, 1, 6, {}, 6));
  std::int64_t remaining = 0x3F;
  for (int i = 0; i < 6; ++i) {
    if (skip_index && *skip_index == i) continue;
    remaining &= ~(std::int64_t{1} << i);
    c.client_sends(by_ack_set ? index_ack(1, std::nullopt, {remaining}) : index_ack(1, i, {}));
  }
  if (correct) c.client_sends(frames::flow(0, 6));
  c.pause(1.5);
  c.client_fin();
  return c.packets();
}

// The reference client acknowledges a batch index by index. Each ack clears its index; the
// last one settles the entry, quiescence comes and the permit account is checked: the correct
// run passes, the violating one is E5. (Were that path broken, the entry would never settle,
// quiescence never come and E5 go unchecked: a PASS on a violating run.)
TEST(CaptureDecisions, E5_ABatchAcknowledgedIndexByIndexSettlesAndIsChecked) {
  for (bool by_ack_set : {true, false}) {
    const Judged good = judge(batch_run(true, by_ack_set));
    EXPECT_EQ(good.outcome, spec::Outcome::kPass) << by_ack_set << good.rules << good.reasons;
    EXPECT_EQ(good.quiescent, 1u) << by_ack_set;
    const Judged bad = judge(batch_run(false, by_ack_set));
    EXPECT_EQ(bad.outcome, spec::Outcome::kFail) << by_ack_set << bad.reasons;
    EXPECT_EQ(bad.rules, "E5") << by_ack_set;
  }
}

// One index never acknowledged: the entry is still held, so the point is no quiescence (the
// client may hold a message it has not acknowledged): no E5 for the shortfall, and never a
// false alarm for the correct run.
TEST(CaptureDecisions, E5_ABatchWithAnIndexNeverAcknowledgedIsNotQuiescent) {
  for (bool by_ack_set : {true, false}) {
    for (int skip : {0, 5}) {
      const Judged good = judge(batch_run(true, by_ack_set, skip));
      EXPECT_EQ(good.rules, "") << by_ack_set << skip;
      const Judged bad = judge(batch_run(false, by_ack_set, skip));
      EXPECT_EQ(bad.rules.find("E5"), std::string::npos) << by_ack_set << skip << bad.rules;
      EXPECT_EQ(bad.quiescent, 0u) << by_ack_set << skip;
    }
  }
}

// Five single entries acknowledged, the Flow returning 5 (correct) or not (E5), the acks in
// segments of `mss` bytes, a pause and the FIN.
Conversation single_run(bool correct, std::size_t ack_mss, std::size_t flow_mss = 1400) {
  Conversation c = connected_consumer();
  std::string messages, acks;
  for (std::uint64_t e = 1; e <= 5; ++e) {
    messages += frames::message(0, e, 1, {}, 1);
    acks += frames::ack(0, e);
  }
  c.server_sends(messages);
  c.client_sends(acks, ack_mss);
  if (correct) c.client_sends(frames::flow(0, 5), flow_mss);
  c.pause(1.5);
  c.client_fin();
  return c;
}

// The client's data segments (with the receiver's ack after each) holding the acks.
std::vector<std::size_t> client_segments_of(const std::vector<Packet>& p, const std::string& bytes) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].src == client() && !p[i].payload.empty() &&
        bytes.find(p[i].payload) != std::string::npos && p[i].payload.size() < bytes.size()) {
      out.push_back(i);
    }
  }
  return out;
}

// A segment is lost, the next one arrives (out of order, held), then the sender retransmits
// one longer copy covering the hole and the segment after it: the hole is filled, the copy's
// overlap agrees, and the verdict is the run's own (PASS, or E5), with nothing reported.
TEST(CaptureDecisions, E5_ALongerRetransmitBehindAHoleFillsItAndKeepsTheVerdict) {
  std::string acks;
  for (std::uint64_t e = 1; e <= 5; ++e) acks += frames::ack(0, e);
  for (bool correct : {true, false}) {
    std::vector<Packet> p = single_run(correct, 16).packets();
    const std::vector<std::size_t> segs = client_segments_of(p, acks);
    ASSERT_GE(segs.size(), 4u);
    const std::size_t lost = segs[1], next = segs[2];
    ASSERT_EQ(next, lost + 2);  // data, its ack, data, its ack
    Packet retransmit = p[lost];
    retransmit.payload += p[next].payload;
    Packet ack_after = p[next + 1];
    // The receiver acks neither segment before the retransmit: its acks of them are dropped.
    std::vector<Packet> out(p.begin(), p.begin() + static_cast<long>(lost));
    out.push_back(p[next]);
    retransmit.time = p[next].time + 0.0005;
    out.push_back(retransmit);
    ack_after.time = retransmit.time + 0.0001;
    out.push_back(ack_after);
    out.insert(out.end(), p.begin() + static_cast<long>(next) + 2, p.end());
    const Judged j = judge(out);
    EXPECT_EQ(j.reasons, "") << correct;
    EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
        << correct << " " << j.rules;
    EXPECT_EQ(j.rules, correct ? "" : "E5");
    EXPECT_EQ(j.quiescent, 1u) << correct;
  }
}

// The correct run's returning Flow, sent so that its last segment holds its last byte alone,
// and that segment lost (its ack too) before the client's FIN: the FIN's sequence number shows
// the byte was sent. Never PASS (the Flow was never seen whole), never a violation the run did
// not have.
TEST(CaptureDecisions, ALost1ByteLastSegmentBeforeAFinIsNeverPass) {
  const std::string flow = frames::flow(0, 5);
  std::vector<Packet> p = single_run(true, 1400, flow.size() - 1).packets();
  std::size_t last = p.size();
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].src == client() && p[i].payload.size() == 1) last = i;
  }
  ASSERT_LT(last + 1, p.size());
  ASSERT_EQ(p[last].payload, flow.substr(flow.size() - 1));
  p.erase(p.begin() + static_cast<long>(last), p.begin() + static_cast<long>(last) + 2);
  ASSERT_TRUE(p.back().fin && p.back().src == client());
  const Judged j = judge(p);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules << j.reasons;
  EXPECT_EQ(j.rules, "");
  EXPECT_NE(j.reasons.find("client stream"), std::string::npos) << j.reasons;
  // The same capture with the byte kept passes: the loss alone made it INCOMPLETE.
  const Judged whole = judge(single_run(true, 1400, flow.size() - 1).packets());
  EXPECT_EQ(whole.outcome, spec::Outcome::kPass) << whole.rules << whole.reasons;
}

// Forty connections (more than a sort keeps in arrival order by chance), each cut short
// before its first whole frame: every one is counted, and the end-of-capture reports come in
// the order the connections were seen, whatever order the connection table holds them in.
TEST(CaptureDecisions, EveryConnectionIsCountedAndReportedInTheOrderSeen) {
  std::vector<Packet> p;
  std::vector<std::string> expected;
  for (int i = 0; i < 40; ++i) {
    const Endpoint from = testing::endpoint4(static_cast<std::uint8_t>(200 - i),
                                             static_cast<std::uint16_t>(40000 + 7 * i));
    Conversation c(from, server(), 1764600000.0 + 0.01 * i);
    c.handshake();
    c.client_sends(std::string(3, '\0'));
    for (const Packet& q : c.packets()) p.push_back(q);
    expected.push_back(from.to_string() + "<>" + server().to_string());
  }
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, nullptr);
  WireTraceBuilder builder(CaptureOptions{.port = 6650}, checker.sink());
  ASSERT_TRUE(read_capture_bytes(testing::pcap_bytes(LinkKind::kEthernet, p), &builder).ok());
  checker.finish();
  EXPECT_EQ(builder.stats().connections, 40u);
  const std::vector<NotUnderstood>& seen = checker.not_understood();
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(seen[i].connection, expected[i]) << i;
}

// A side's checksums are believed once 8 of its segments verify with at most one in 8 bad:
// right at that bound (8 good, then the bad one) the corrupted copy of the client's last Flow
// (9 permits for 5, sent first) is skipped as its receiver skipped it, and the run passes.
TEST(CaptureDecisions, E2_ABadCopyIsSkippedRightAtTheBoundOfOneBadInEight) {
  std::vector<Packet> p = single_run(true, 1400).packets();
  for (Packet& k : p) k.checksum = true;
  const std::string good_flow = frames::flow(0, 5), bad_flow = frames::flow(0, 9);
  ASSERT_EQ(good_flow.size(), bad_flow.size());
  std::size_t flow = p.size();
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].src == client() && p[i].payload == good_flow) flow = i;
  }
  ASSERT_LT(flow, p.size());
  // Pure acks of the client dropped until 8 of its segments come before the Flow.
  auto client_before = [&] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < flow; ++i) n += p[i].src == client() ? 1 : 0;
    return n;
  };
  for (std::size_t i = flow; i-- > 4 && client_before() > 8;) {
    if (p[i].src == client() && p[i].payload.empty() && !p[i].syn && !p[i].fin) {
      p.erase(p.begin() + static_cast<long>(i));
      --flow;
    }
  }
  ASSERT_EQ(client_before(), 8u);
  Packet bad = p[flow];
  bad.payload = bad_flow;
  bad.checksum = true;
  std::vector<Packet> believed = p;
  believed.insert(believed.begin() + static_cast<long>(flow), bad);
  EXPECT_EQ(judge(believed).rules, "E2");  // what the corrupted copy says, were it believed
  bad.checksum = false;  // corrupted on the way: its checksum fails
  p.insert(p.begin() + static_cast<long>(flow), bad);
  const Judged j = judge(p);
  EXPECT_EQ(j.outcome, spec::Outcome::kPass) << j.rules << j.reasons;
  EXPECT_EQ(j.rules, "");
}

// Past the sample that decides whether a side's checksums are believed (32 of its segments,
// all good here), a corrupted copy of the client's last Flow is still skipped: the side stays
// believed.
TEST(CaptureDecisions, ABadCopyLongAfterTheChecksumSampleIsStillSkipped) {
  std::vector<Packet> p = single_run(true, /*ack_mss=*/2).packets();
  for (Packet& k : p) k.checksum = true;
  const std::string good_flow = frames::flow(0, 5);
  std::size_t flow = p.size(), client_before = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].src == client() && p[i].payload == good_flow) flow = i;
  }
  ASSERT_LT(flow, p.size());
  for (std::size_t i = 0; i < flow; ++i) client_before += p[i].src == client() ? 1 : 0;
  ASSERT_GT(client_before, 40u);
  Packet bad = p[flow];
  bad.payload = frames::flow(0, 9);
  bad.checksum = false;  // corrupted on the way
  p.insert(p.begin() + static_cast<long>(flow), bad);
  const Judged j = judge(p);
  EXPECT_EQ(j.outcome, spec::Outcome::kPass) << j.rules << j.reasons;
  EXPECT_EQ(j.rules, "");
}

// How a stream's first bytes are classified, at each bound: fewer than 4 bytes need more; a
// size outside 4..kMaxFrameSize is not Pulsar as soon as its 4 bytes are there; a frame not
// yet whole needs more; a type 1-199 the codec does not know is another Pulsar command, 200
// and up are not types.
TEST(CaptureDecisions, TheFirstFrameIsClassifiedAtEachOfItsBounds) {
  auto be32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  EXPECT_EQ(classify_first_frame(std::string(3, '\0')), FirstFrame::kNeedMore);
  EXPECT_EQ(classify_first_frame(be32(3)), FirstFrame::kNotPulsar);
  EXPECT_EQ(classify_first_frame(be32(4)), FirstFrame::kNeedMore);
  EXPECT_EQ(classify_first_frame(be32(protocol::kMaxFrameSize)), FirstFrame::kNeedMore);
  EXPECT_EQ(classify_first_frame(be32(protocol::kMaxFrameSize + 1)), FirstFrame::kNotPulsar);
  const std::string connect = frames::connect();
  EXPECT_EQ(classify_first_frame(connect), FirstFrame::kConnect);
  EXPECT_EQ(classify_first_frame(connect.substr(0, connect.size() - 1)), FirstFrame::kNeedMore);
  EXPECT_EQ(classify_first_frame(frames::flow(0, 1)), FirstFrame::kOtherCommand);
  // A command of type 199 or 200 with an empty body: [size][command size][0x08 varint].
  auto typed = [&](std::uint32_t type) {
    std::string command = "\x08";
    for (std::uint32_t v = type;; v >>= 7) {
      command += static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
      if (v <= 0x7F) break;
    }
    return be32(static_cast<std::uint32_t>(command.size() + 4)) +
           be32(static_cast<std::uint32_t>(command.size())) + command;
  };
  EXPECT_EQ(classify_first_frame(typed(199)), FirstFrame::kOtherCommand);
  EXPECT_EQ(classify_first_frame(typed(200)), FirstFrame::kNotPulsar);
  EXPECT_EQ(classify_first_frame(typed(0)), FirstFrame::kNotPulsar);
}

// The bytes each direction keeps to compare a later copy with are read again where the
// capture holds them (by reference), in both directions: about 19 KiB from the broker and
// 8 KiB from the client keep a few hundred bytes of references, not a copy of up to 16 KiB.
TEST(CaptureDecisions, BytesKeptToCompareCopiesAreHeldByReferenceInBothDirections) {
  Conversation c(client(), server());
  c.handshake();
  c.client_sends(frames::connect());
  c.server_sends(frames::connected());
  c.client_sends(frames::subscribe(0, 1));
  c.server_sends(frames::success(1));
  c.client_sends(frames::flow(0, 400));
  std::string messages, acks;
  for (std::uint64_t e = 1; e <= 400; ++e) {
    messages += frames::message(0, e, 1, {}, 1);
    acks += frames::ack(0, e);
  }
  ASSERT_GT(messages.size(), 16u * 1024);
  ASSERT_GT(acks.size(), 4u * 1024);
  c.server_sends(messages);
  c.client_sends(acks);
  c.client_sends(frames::flow(0, 400));
  c.pause(1.5);
  c.client_fin();
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire}, nullptr);
  WireTraceBuilder builder(CaptureOptions{}, checker.sink());
  ASSERT_TRUE(read_capture_bytes(testing::pcap_bytes(LinkKind::kEthernet, c.packets()), &builder).ok());
  checker.finish();
  EXPECT_TRUE(checker.violations().empty());
  EXPECT_TRUE(checker.not_understood().empty());
  EXPECT_LT(builder.stats().peak_memory, std::size_t{4096});
}

// Past the overall limit of the fragment buffer the oldest datagram is given up, reported, and
// the datagram whose fragment crossed the limit goes on: here it completes at once. When the
// one crossing the limit is itself the oldest, it alone is given up.
TEST(CaptureDecisions, PastTheFragmentBufferLimitTheOldestDatagramGoesNotTheOneCompleting) {
  Packet k;
  k.src = testing::endpoint4(1, 40000);
  k.dst = testing::endpoint4(2, 6650);
  k.payload = std::string(100, 'p');
  auto fragment = [&](const std::string& ip) {
    std::optional<TcpSegment> s =
        parse_packet(LinkType::kRaw, ip, static_cast<std::uint32_t>(ip.size()));
    EXPECT_TRUE(s && s->ip_fragment);
    return *s;
  };
  const std::vector<std::string> a = testing::ip_fragments(k, 64, 1);
  const std::vector<std::string> b = testing::ip_fragments(k, 64, 2);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  std::vector<FragmentProblem> problems;
  TcpSegment whole;
  {
    // 64 of A held, 64 of B held: 128 bytes; B's last fragment (56) crosses 150.
    IpDefragmenter d(IpDefragmenter::Limits{.max_bytes = 150});
    EXPECT_FALSE(d.add(1, fragment(a[0]), &whole, &problems));
    EXPECT_FALSE(d.add(1, fragment(b[0]), &whole, &problems));
    ASSERT_TRUE(d.add(1, fragment(b[1]), &whole, &problems));
    EXPECT_EQ(whole.payload, k.payload);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].reason.find("IP datagram id 1 given up"), std::string::npos) << problems[0].reason;
    EXPECT_NE(problems[0].reason.find("fragment buffer of 150 bytes"), std::string::npos);
    EXPECT_EQ(d.memory(), 0u);
  }
  {
    // A alone crosses a limit of 100 with its second fragment: A is given up, nothing else.
    problems.clear();
    IpDefragmenter d(IpDefragmenter::Limits{.max_bytes = 100});
    EXPECT_FALSE(d.add(1, fragment(a[0]), &whole, &problems));
    EXPECT_FALSE(d.add(1, fragment(a[1]), &whole, &problems));
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].reason.find("fragment buffer of 100 bytes"), std::string::npos);
    EXPECT_EQ(d.memory(), 0u);
  }
}

// The first bytes of a stream are probed up to 64 KiB (plus the segment that crossed it): a
// CONNECT not whole by then is not taken for Pulsar (a bound, not a guess: nothing real sends
// one that large), and one just under the bound is.
TEST(CaptureDecisions, AFirstFrameNotWholeWithinTheProbesBoundIsNotFollowed) {
  for (const auto& [version_bytes, followed] :
       {std::pair<std::size_t, bool>{60000, true}, std::pair<std::size_t, bool>{66450, false}}) {
    wire::BaseCommand connect;
    connect.set_type(wire::BaseCommand::CONNECT);
    connect.mutable_connect()->set_client_version(std::string(version_bytes, 'v'));
    connect.mutable_connect()->set_protocol_version(21);
    const std::string frame = frames::command(connect);
    Conversation c(client(), server());
    c.handshake();
    c.client_sends(frame, 1400);
    c.server_sends(frames::connected());
    c.client_sends(frames::subscribe(0, 1));
    c.server_sends(frames::success(1));
    WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire}, nullptr);
    WireTraceBuilder builder(CaptureOptions{}, checker.sink());
    ASSERT_TRUE(read_capture_bytes(testing::pcap_bytes(LinkKind::kEthernet, c.packets()), &builder).ok());
    checker.finish();
    EXPECT_EQ(builder.stats().pulsar, followed ? 1u : 0u) << frame.size();
    EXPECT_EQ(builder.stats().ignored, followed ? 0u : 1u) << frame.size();
  }
}

// An IPv4 datagram holds at most 65535 bytes: a last fragment at the highest offset (65528)
// ending at byte 65535 is taken; one ending at 65536 is malformed, reported, never read.
TEST(CaptureDecisions, AFragmentEndingPastByte65535IsMalformed) {
  for (const auto& [bytes, malformed] :
       {std::pair<std::size_t, bool>{7, false}, std::pair<std::size_t, bool>{8, true}}) {
    std::string ip = std::string("\x45\x00", 2) + testing::be16(static_cast<std::uint16_t>(20 + bytes)) +
                     testing::be16(77) + testing::be16(0x1FFF) + std::string("\x40\x06\x00\x00", 4) +
                     std::string("\x0a\x00\x00\x01\x0a\x00\x00\x02", 8) + std::string(bytes, 'f');
    std::optional<TcpSegment> s =
        parse_packet(LinkType::kRaw, ip, static_cast<std::uint32_t>(ip.size()));
    ASSERT_TRUE(s && s->ip_fragment);
    ASSERT_EQ(s->fragment_offset, 65528u);
    IpDefragmenter d(IpDefragmenter::Limits{});
    std::vector<FragmentProblem> problems;
    TcpSegment whole;
    EXPECT_FALSE(d.add(1, *s, &whole, &problems));
    ASSERT_EQ(problems.size(), malformed ? 1u : 0u) << bytes;
    if (malformed) {
      EXPECT_NE(problems[0].reason.find("malformed (past 65535 bytes)"), std::string::npos)
          << problems[0].reason;
    }
    EXPECT_EQ(d.memory(), malformed ? 0u : bytes);
  }
}

// Without comparing copies (a tap: each byte comes once, from a socket), a retransmitted copy
// of delivered bytes that differs is neither compared nor reported: the bytes first read
// stand. Comparing (the default for a capture), the same copy is reported.
TEST(CaptureDecisions, WithoutComparingCopiesADifferingRetransmitIsNotReported) {
  std::vector<Packet> p = single_run(true, 1400).packets();
  const std::string good_flow = frames::flow(0, 5);
  std::size_t flow = p.size();
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].src == client() && p[i].payload == good_flow) flow = i;
  }
  ASSERT_LT(flow, p.size());
  Packet later = p[flow];
  later.payload = frames::flow(0, 9);
  p.insert(p.begin() + static_cast<long>(flow) + 1, later);
  for (bool compare : {true, false}) {
    WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, nullptr);
    CaptureOptions options;
    options.compare_copies = compare;
    WireTraceBuilder builder(options, checker.sink());
    ASSERT_TRUE(read_capture_bytes(testing::pcap_bytes(LinkKind::kEthernet, p), &builder).ok());
    checker.finish();
    EXPECT_TRUE(checker.violations().empty()) << compare;
    EXPECT_EQ(checker.not_understood().size(), compare ? 1u : 0u) << compare;
  }
}

// The trace a checker writes is the header and one event per line, each line ending in a
// newline: it reads back as a trace.
TEST(CaptureDecisions, TheWrittenTraceHasOneEventPerLine) {
  std::ostringstream trace;
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, &trace);
  WireTraceBuilder builder(CaptureOptions{}, checker.sink());
  ASSERT_TRUE(read_capture_bytes(testing::pcap_bytes(LinkKind::kEthernet, single_run(true, 1400).packets()),
                                 &builder)
                  .ok());
  checker.finish();
  const std::string text = trace.str();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::size_t lines = 0;
  for (char ch : text) lines += ch == '\n' ? 1 : 0;
  EXPECT_EQ(lines, checker.events() + 1);
  EXPECT_EQ(text.find("}{"), std::string::npos);
}

// Addresses used again after a close: the second connection is named with "#2" in what is
// reported of it, the first keeps the plain name. Here the one whose SUCCESS is lost is
// INCOMPLETE under its own name.
TEST(CaptureDecisions, AConnectionOnReusedAddressesIsReportedAsTheSecondUse) {
  const std::string base = client().to_string() + ">" + server().to_string();
  for (int lossy : {0, 1}) {
    std::vector<Packet> p;
    for (int use = 0; use < 2; ++use) {
      Conversation c(client(), server(), 1764600000.0 + 10 * use);
      c.handshake();
      c.client_sends(frames::connect());
      c.server_sends(frames::connected());
      c.client_sends(frames::subscribe(0, 1));
      const std::size_t success = c.packets().size();
      c.server_sends(frames::success(1));
      c.client_sends(frames::flow(0, 10));
      c.pause(1.5);
      c.client_fin();
      std::vector<Packet> q = c.packets();
      if (use == lossy) q.erase(q.begin() + static_cast<long>(success));
      for (Packet& k : q) {
        k.seq += 7000000u * static_cast<std::uint32_t>(use);
        k.ack += 7000000u * static_cast<std::uint32_t>(use);
      }
      p.insert(p.end(), q.begin(), q.end());
    }
    WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, nullptr);
    WireTraceBuilder builder(CaptureOptions{}, checker.sink());
    ASSERT_TRUE(read_capture_bytes(testing::pcap_bytes(LinkKind::kEthernet, p), &builder).ok());
    checker.finish();
    EXPECT_EQ(builder.stats().pulsar, 2u);
    ASSERT_EQ(checker.not_understood().size(), 1u) << lossy;
    EXPECT_EQ(checker.not_understood()[0].connection, lossy == 0 ? base : base + "#2");
  }
}

// Checking on its own thread, the checker takes batches of 4096 events with at most two
// waiting: a capture of some 60,000 events makes the decoding thread wait for room, and the
// checking thread wakes it each time it takes a batch. Same verdict and count as on the
// caller's thread, and no hang.
TEST(CaptureDecisions, E5_ACheckerOnItsOwnThreadTakesManyBatchesAndWakesTheDecoder) {
  Conversation c(client(), server());
  c.handshake();
  c.client_sends(frames::connect());
  c.server_sends(frames::connected());
  c.client_sends(frames::subscribe(0, 1));
  c.server_sends(frames::success(1));
  c.client_sends(frames::flow(0, 30000));
  std::string messages, acks;
  for (std::uint64_t e = 1; e <= 30000; ++e) {
    messages += frames::message(0, e, 1, {}, 1);
    acks += frames::ack(0, e);
  }
  c.server_sends(messages);
  c.client_sends(acks);
  c.pause(1.5);
  c.client_fin();
  const std::string pcap = testing::pcap_bytes(LinkKind::kEthernet, c.packets());
  std::vector<std::uint64_t> events;
  std::vector<std::string> rules;
  for (bool own_thread : {false, true}) {
    WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, nullptr);
    if (own_thread) checker.check_on_own_thread();
    WireTraceBuilder builder(CaptureOptions{}, checker.sink());
    ASSERT_TRUE(read_capture_bytes(pcap, &builder).ok());
    checker.finish();
    events.push_back(checker.events());
    std::string r;
    for (const spec::Finding& f : checker.violations()) r += std::string(spec::rule_name(f.rule)) + ",";
    rules.push_back(r);
  }
  EXPECT_GT(events[0], 60000u);
  EXPECT_EQ(events[1], events[0]);
  EXPECT_EQ(rules[1], rules[0]);
  EXPECT_NE(rules[0].find("E5"), std::string::npos) << rules[0];  // 30000 taken, none returned
}

// Two copies of bytes waiting behind a hole that differ: the gap names the first byte where
// they differ (here the fourth of the copy), whether the copies differ there or from the start.
TEST(CaptureDecisions, DifferingCopiesBehindAHoleAreReportedAtTheirFirstDifferingByte) {
  for (const auto& [later, offset] : {std::pair<std::string, int>{"ghiXkl", 9},
                                      std::pair<std::string, int>{"Xhijkl", 6}}) {
    StreamReassembler r(1 << 20);
    r.start(100);
    std::vector<StreamChunk> out;
    EXPECT_FALSE(r.add(1, 100, "abc", 0, &out));
    EXPECT_FALSE(r.add(2, 106, "ghijkl", 0, &out));  // "def" not yet captured: it waits
    const std::optional<std::string> gap = r.add(3, 106, later, 0, &out);
    ASSERT_TRUE(gap.has_value()) << later;
    EXPECT_NE(gap->find("two copies of stream offset " + std::to_string(offset) + " differ"),
              std::string::npos)
        << *gap;
  }
}

}  // namespace capture_decisions
}  // namespace permitcheck::capture
