// Tests of capture/: generated captures (tests/capture/capture_testing.h) of known-good and
// known-bad Pulsar streams, carried over every link type we read, IPv4 and IPv6, and altered
// (reordered, duplicated, overlapping, dropped and cut segments, a mid-stream start, two
// interleaved connections). A known-bad stream must fail with its rule; a gap must never
// become a violation.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "capture/capture_file.h"
#include "capture/wire_monitor.h"
#include "capture/reassembly.h"
#include "spec/rule_id.h"
#include "tests/capture/capture_testing.h"

namespace permitcheck::capture {
namespace {

using testing::Conversation;
using testing::LinkKind;
using testing::Packet;
namespace frames = testing::frames;

struct Verdict {
  absl::Status read;
  std::vector<spec::Finding> violations;
  std::vector<NotUnderstood> not_understood;
  std::uint64_t events = 0, quiescent = 0;
  CaptureStats stats;
  std::string trace;
  std::string rules() const {
    std::string out;
    for (const spec::Finding& f : violations) {
      if (!out.empty()) out += ",";
      out += std::string(spec::rule_name(f.rule));
    }
    return out;
  }
};

Verdict check(const std::string& pcap, CaptureOptions options = {},
              std::optional<std::int64_t> t = std::nullopt, bool own_thread = false) {
  Verdict v;
  std::ostringstream trace;
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = t}, &trace);
  if (own_thread) checker.check_on_own_thread();
  WireTraceBuilder builder(options, checker.sink());
  v.read = read_capture_bytes(pcap, &builder);
  checker.finish();
  v.violations = checker.violations();
  v.not_understood = checker.not_understood();
  v.events = checker.events();
  v.quiescent = checker.quiescent();
  v.stats = builder.stats();
  v.trace = trace.str();
  return v;
}

Endpoint client4() { return testing::endpoint4(1, 40000); }
Endpoint server4() { return testing::endpoint4(2, 6650); }

enum class Bad { kNone, kOverGrant, kShortfall, kFlowBeforeSubscribed };

// One consumer's conversation: connect, subscribe, Flow 10, three entries (P = 1, 3 and 3 of
// a partial batch), their acks, the Flow returning 7, a silence, FIN. `bad` breaks one rule.
Conversation consumer_stream(Endpoint client, Endpoint server, Bad bad = Bad::kNone,
                             std::size_t mss = 1400, double t0 = 1764600000.0) {
  Conversation c(client, server, t0);
  c.handshake();
  c.client_sends(frames::connect(), mss);
  c.server_sends(frames::connected(), mss);
  c.client_sends(frames::subscribe(0, 1), mss);
  if (bad == Bad::kFlowBeforeSubscribed) c.client_sends(frames::flow(0, 10), mss);
  c.server_sends(frames::success(1), mss);
  c.client_sends(frames::flow(0, 10), mss);
  c.server_sends(frames::message(0, 1, 1, {}, 1) + frames::message(0, 2, 3, {}, 3) +
                     frames::message(0, 3, 4, {0b1110}, 3),
                 mss);
  c.client_sends(frames::ack(0, 1) + frames::ack(0, 2) + frames::ack(0, 3), mss);
  if (bad == Bad::kOverGrant) c.client_sends(frames::flow(0, 12), mss);      // 7 due, 12 sent
  if (bad == Bad::kNone || bad == Bad::kFlowBeforeSubscribed) c.client_sends(frames::flow(0, 7), mss);
  // kShortfall: nothing comes back.
  c.pause(1.5);
  c.client_fin();
  return c;
}

std::string pcap(const std::vector<Packet>& packets, LinkKind k = LinkKind::kEthernet) {
  return testing::pcap_bytes(k, packets);
}

TEST(CaptureLinkTypes, CleanStreamPassesOverEveryLinkTypeAndBothIpVersions) {
  for (LinkKind k : {LinkKind::kEthernet, LinkKind::kSll, LinkKind::kSll2, LinkKind::kNull,
                     LinkKind::kRaw}) {
    for (bool v6 : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "link " << static_cast<int>(k) << " v6 " << v6);
      const Endpoint cl = v6 ? testing::endpoint6(1, 40000) : client4();
      const Endpoint sv = v6 ? testing::endpoint6(2, 6650) : server4();
      const Verdict v = check(pcap(consumer_stream(cl, sv).packets(), k));
      ASSERT_TRUE(v.read.ok()) << v.read;
      EXPECT_EQ(v.rules(), "");
      EXPECT_TRUE(v.not_understood.empty());
      EXPECT_EQ(v.stats.pulsar, 1u);
      // connect, subscribe, subscribe_ok, 2 flows, 3 messages, 3 acks, quiescent, disconnect
      EXPECT_EQ(v.events, 13u);
      EXPECT_EQ(v.quiescent, 1u);
      EXPECT_NE(v.trace.find(v6 ? "\"cnx\":\"[fd00:0:0:0:0:0:0:1]:40000>[fd00:0:0:0:0:0:0:2]:6650\""
                                : "\"cnx\":\"10.0.0.1:40000>10.0.0.2:6650\""),
                std::string::npos)
          << v.trace;
    }
  }
}

TEST(CaptureRules, E2_E5_OverGrantOnTheWireIsFoundWithConnectionAndTime) {
  const Verdict v = check(pcap(consumer_stream(client4(), server4(), Bad::kOverGrant).packets()));
  ASSERT_TRUE(v.read.ok()) << v.read;
  // At the Flow (E2), and at quiescence the available permits are above Q (E5).
  ASSERT_EQ(v.rules(), "E2,E5");
  EXPECT_NE(v.violations[0].explanation.find("[connection 10.0.0.1:40000>10.0.0.2:6650, capture "
                                             "time 2025-12-01T"),
            std::string::npos)
      << v.violations[0].explanation;
}

TEST(CaptureRules, E5_ShortfallAtInferredQuiescence) {
  const std::string p = pcap(consumer_stream(client4(), server4(), Bad::kShortfall).packets());
  EXPECT_EQ(check(p, {}, /*t=*/5).rules(), "E5");
  // The same stream is clean while the silence is shorter than --idle: no quiescence.
  CaptureOptions long_idle;
  long_idle.idle_seconds = 5;
  const Verdict v = check(p, long_idle, 5);
  EXPECT_EQ(v.rules(), "");
  EXPECT_EQ(v.quiescent, 0u);
}

// The early Flow is N4; the broker credits it as well as the initial grant after the
// Subscribe succeeded, so the consumer is over-granted (E2) and the balance is off at
// quiescence (E5).
TEST(CaptureRules, N4_E2_E5_FlowBeforeSubscribeSucceeded) {
  EXPECT_EQ(check(pcap(consumer_stream(client4(), server4(), Bad::kFlowBeforeSubscribed).packets()))
                .rules(),
            "N4,E2,E5");
}

// Alterations of a packet list (data segments only; the handshake stays in front).
std::vector<Packet> reordered(std::vector<Packet> p) {
  for (std::size_t i = 3; i + 1 < p.size(); i += 3) {
    if (p[i].src == p[i + 1].src && !p[i].payload.empty() && !p[i + 1].payload.empty()) {
      std::swap(p[i], p[i + 1]);
    }
  }
  return p;
}
std::vector<Packet> duplicated(const std::vector<Packet>& p) {
  std::vector<Packet> out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    out.push_back(p[i]);
    if (i % 2 == 1 && !p[i].payload.empty()) out.push_back(p[i]);
  }
  return out;
}
// Each data segment is followed by a retransmission overlapping it and the next one.
std::vector<Packet> overlapping(const std::vector<Packet>& p) {
  std::vector<Packet> out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    out.push_back(p[i]);
    if (p[i].payload.size() < 4) continue;
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      if (!(p[j].src == p[i].src) || p[j].payload.empty()) continue;
      Packet o = p[i];
      o.seq += 2;
      o.payload = p[i].payload.substr(2) + p[j].payload.substr(0, p[j].payload.size() / 2);
      out.push_back(o);
      break;
    }
  }
  return out;
}

TEST(CaptureReassembly, E2_E5_FoundThroughReorderedDuplicatedAndOverlappingSegments) {
  for (int alteration = 0; alteration < 3; ++alteration) {
    SCOPED_TRACE(alteration);
    auto alter = [&](const std::vector<Packet>& p) {
      return alteration == 0 ? reordered(p) : alteration == 1 ? duplicated(p) : overlapping(p);
    };
    // Small segments: every frame spans several.
    const Verdict good = check(pcap(alter(consumer_stream(client4(), server4(), Bad::kNone, 7).packets())));
    EXPECT_EQ(good.rules(), "");
    EXPECT_TRUE(good.not_understood.empty()) << good.not_understood[0].reason;
    EXPECT_EQ(good.events, 13u);
    const Verdict bad =
        check(pcap(alter(consumer_stream(client4(), server4(), Bad::kOverGrant, 7).packets())));
    EXPECT_EQ(bad.rules(), "E2,E5");
    EXPECT_TRUE(bad.not_understood.empty());
  }
}

// A large MESSAGE spanning many segments (its payload checksummed as it passes, never
// buffered whole) still yields B from its metadata when the checksum holds, and none when it
// does not; frames after it decode as before.
TEST(CaptureReassembly, LargeMessagesAcrossSegmentsKeepTheirBatchSizeOnlyWithAGoodChecksum) {
  for (const bool corrupt : {false, true}) {
    SCOPED_TRACE(corrupt);
    wire::BaseCommand m;
    m.set_type(wire::BaseCommand::MESSAGE);
    m.mutable_message()->set_consumer_id(0);
    m.mutable_message()->mutable_message_id()->set_ledgerid(7);
    m.mutable_message()->mutable_message_id()->set_entryid(1);
    wire::MessageMetadata meta;
    meta.set_producer_name("big");
    meta.set_sequence_id(1);
    meta.set_publish_time(1700000000000ULL);
    meta.set_num_messages_in_batch(3);
    const std::string big = protocol::encode_message(m, meta.SerializeAsString(),
                                                        std::string(100000, 'b'), corrupt);
    Conversation c(client4(), server4());
    c.handshake();
    c.client_sends(frames::connect() + frames::subscribe(0, 1));
    c.server_sends(frames::connected() + frames::success(1));
    c.client_sends(frames::flow(0, 10));
    c.server_sends(big + frames::message(0, 2, 1));
    c.client_sends(frames::ack(0, 1) + frames::ack(0, 2));
    c.client_fin();
    const Verdict v = check(pcap(c.packets()));
    EXPECT_TRUE(v.not_understood.empty()) << v.not_understood[0].reason;
    // connect, subscribe, subscribe_ok, flow, 2 messages, 2 acks, disconnect
    EXPECT_EQ(v.events, 9u);
    const std::size_t first = v.trace.find("\"message\"");
    ASSERT_NE(first, std::string::npos);
    const std::string first_line = v.trace.substr(first, v.trace.find('\n', first) - first);
    EXPECT_EQ(first_line.find("\"batch_size\":3") != std::string::npos, !corrupt) << first_line;
    EXPECT_NE(v.trace.find("\"batch_size\":1"), std::string::npos) << v.trace;
  }
}

// The index of the first data packet from `from` whose payload holds the bytes of `frame`.
std::size_t segment_with(const std::vector<Packet>& p, const Endpoint& from, const std::string& frame) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].src == from && p[i].payload.find(frame) != std::string::npos) return i;
  }
  return p.size();
}

TEST(CaptureGaps, DroppedSegmentIsNotUnderstoodNeverAViolation) {
  // Without the SUCCESS the client's Flow would look like N4; without the Flow returning
  // permits the quiescence would look like E5: neither may be reported.
  for (const std::string& lost : {frames::success(1), frames::flow(0, 7)}) {
    std::vector<Packet> p = consumer_stream(client4(), server4()).packets();
    const Endpoint from = lost == frames::success(1) ? server4() : client4();
    const std::size_t i = segment_with(p, from, lost);
    ASSERT_LT(i, p.size());
    p.erase(p.begin() + static_cast<long>(i));
    const Verdict v = check(pcap(p), {}, 5);
    EXPECT_EQ(v.rules(), "");
    ASSERT_EQ(v.not_understood.size(), 1u);
    EXPECT_NE(v.not_understood[0].reason.find("lost segment"), std::string::npos)
        << v.not_understood[0].reason;
    EXPECT_EQ(v.not_understood[0].connection, "10.0.0.1:40000>10.0.0.2:6650");
  }
}

// Checking on the checker's own thread (WireMonitor::check_on_own_thread) gives exactly what
// checking on the decoding thread gives: the same findings with their connections, the same
// connections not understood, the same trace; on passing, failing and broken captures, and on
// more events than one hand-over batch.
TEST(CaptureChecker, E2_E5_CheckingOnItsOwnThreadChangesNothing) {
  std::vector<std::string> captures;
  captures.push_back(pcap(consumer_stream(client4(), server4()).packets()));
  captures.push_back(pcap(consumer_stream(client4(), server4(), Bad::kOverGrant).packets()));
  std::vector<Packet> lossy = consumer_stream(client4(), server4(), Bad::kOverGrant).packets();
  lossy.erase(lossy.begin() + static_cast<long>(segment_with(lossy, server4(), frames::success(1))));
  captures.push_back(pcap(lossy));
  std::vector<Packet> many;
  for (int i = 0; i < 1200; ++i) {  // 1200 connections of 13 events: many 4096-event batches
    const Endpoint client = testing::endpoint4(static_cast<std::uint8_t>(1 + i % 200),
                                               static_cast<std::uint16_t>(40000 + i));
    const Bad bad = i % 50 == 7 ? Bad::kOverGrant : Bad::kNone;
    Conversation c = consumer_stream(client, server4(), bad, 1400, 1764600000.0 + i);
    for (Packet& p : c.packets()) many.push_back(std::move(p));
  }
  std::stable_sort(many.begin(), many.end(), [](const Packet& a, const Packet& b) { return a.time < b.time; });
  captures.push_back(pcap(many));
  for (std::size_t i = 0; i < captures.size(); ++i) {
    SCOPED_TRACE(i);
    const Verdict one = check(captures[i], {}, 5);
    const Verdict two = check(captures[i], {}, 5, /*own_thread=*/true);
    EXPECT_EQ(one.rules(), two.rules());
    ASSERT_EQ(one.violations.size(), two.violations.size());
    for (std::size_t k = 0; k < one.violations.size(); ++k) {
      EXPECT_EQ(one.violations[k].explanation, two.violations[k].explanation);
    }
    ASSERT_EQ(one.not_understood.size(), two.not_understood.size());
    for (std::size_t k = 0; k < one.not_understood.size(); ++k) {
      EXPECT_EQ(one.not_understood[k].connection, two.not_understood[k].connection);
      EXPECT_EQ(one.not_understood[k].reason, two.not_understood[k].reason);
    }
    EXPECT_EQ(one.events, two.events);
    EXPECT_EQ(one.trace, two.trace);
  }
  // Reading the file on a second thread (read_capture_file's reader_thread) changes nothing
  // either, over more than one 1 MiB batch.
  const std::string path = ::testing::TempDir() + "/checker-threads.pcap";
  testing::write_file(path, captures[3]);
  ASSERT_GT(captures[3].size(), std::size_t{2} << 20);
  auto from_file = [&](bool reader_thread) {
    std::ostringstream trace;
    WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = 5}, &trace);
    WireTraceBuilder builder(CaptureOptions{}, checker.sink());
    EXPECT_TRUE(read_capture_file(path, &builder, reader_thread).ok());
    checker.finish();
    return std::make_pair(checker.violations().size(), trace.str());
  };
  EXPECT_EQ(from_file(true), from_file(false));
  EXPECT_EQ(from_file(false).second, check(captures[3], {}, 5).trace);
  EXPECT_EQ(check(captures[1], {}, 5, true).rules(), "E2,E5");
  EXPECT_GT(check(captures[3], {}, 5, true).events, 5000u);
  EXPECT_EQ(check(captures[3], {}, 5, true).violations.size() >= 8, true);
}

TEST(CaptureGaps, SnapLengthTooShortIsNotUnderstood) {
  std::vector<Packet> p = consumer_stream(client4(), server4(), Bad::kOverGrant).packets();
  const std::size_t i = segment_with(p, server4(), frames::message(0, 1, 1, {}, 1));
  ASSERT_LT(i, p.size());
  for (std::size_t j = i; j < p.size(); ++j) p[j].snap = 16;  // snaplen from here on
  const Verdict v = check(pcap(p));
  EXPECT_EQ(v.rules(), "");
  ASSERT_EQ(v.not_understood.size(), 1u);
  EXPECT_NE(v.not_understood[0].reason.find("snap length too short"), std::string::npos)
      << v.not_understood[0].reason;
}

// Not understood whatever --port says (issue 33: without it, it was dropped without a word).
TEST(CaptureGaps, MidStreamStartIsNotUnderstoodOnAnyPort) {
  std::vector<Packet> p = consumer_stream(client4(), server4(), Bad::kOverGrant).packets();
  const std::size_t i = segment_with(p, client4(), frames::flow(0, 10));
  ASSERT_LT(i, p.size());
  p.erase(p.begin(), p.begin() + static_cast<long>(i));  // the capture starts at the Flow
  const Verdict any_port = check(pcap(p));
  EXPECT_EQ(any_port.rules(), "");
  EXPECT_EQ(any_port.stats.pulsar, 0u);
  ASSERT_EQ(any_port.not_understood.size(), 1u);
  EXPECT_NE(any_port.not_understood[0].reason.find("mid-stream"), std::string::npos);
  CaptureOptions on_port;
  on_port.port = 6650;
  const Verdict v = check(pcap(p), on_port);
  EXPECT_EQ(v.rules(), "");
  ASSERT_EQ(v.not_understood.size(), 1u);
  EXPECT_NE(v.not_understood[0].reason.find("mid-stream"), std::string::npos);
}

TEST(CaptureConnections, E2_E5_TwoInterleavedConnectionsKeepTheirOwnVerdicts) {
  std::vector<Packet> p = consumer_stream(client4(), server4(), Bad::kNone, 9).packets();
  const Endpoint other = testing::endpoint4(3, 40001);
  Conversation second = consumer_stream(other, server4(), Bad::kOverGrant, 9, 1764600000.0005);
  for (const Packet& q : second.packets()) p.push_back(q);
  std::stable_sort(p.begin(), p.end(), [](const Packet& a, const Packet& b) { return a.time < b.time; });
  const Verdict v = check(pcap(p, LinkKind::kSll2));
  EXPECT_EQ(v.stats.pulsar, 2u);
  ASSERT_EQ(v.rules(), "E2,E5");
  for (const spec::Finding& f : v.violations) {
    EXPECT_NE(f.explanation.find("10.0.0.3:40001>10.0.0.2:6650"), std::string::npos);
  }
  EXPECT_EQ(v.quiescent, 2u);
}

// The end of the capture reports the connections still open in the order they were first
// seen, not in the hash table's (which changes from run to run).
TEST(CaptureConnections, EndOfCaptureReportsGoInTheOrderConnectionsWereSeen) {
  std::vector<Packet> p;
  std::vector<std::string> expected;
  for (int i = 0; i < 12; ++i) {
    const Endpoint client = testing::endpoint4(static_cast<std::uint8_t>(100 - i), 40000);
    Conversation c(client, server4(), 1764600000.0 + 0.01 * i);
    c.handshake();
    c.client_sends(std::string(3, '\0'));  // a first frame cut short by the end
    for (const Packet& q : c.packets()) p.push_back(q);
    expected.push_back(client.to_string() + "<>" + server4().to_string());
  }
  const Verdict v = check(pcap(p), CaptureOptions{.port = 6650});
  ASSERT_EQ(v.not_understood.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(v.not_understood[i].connection, expected[i]) << i;
    EXPECT_NE(v.not_understood[i].reason.find("ends before the first whole frame"), std::string::npos);
  }
}

TEST(CaptureFile, EmptyGarbageAndTruncatedCapturesAreErrors) {
  const std::string good = pcap(consumer_stream(client4(), server4()).packets());
  EXPECT_FALSE(check("").read.ok());
  EXPECT_FALSE(check(good.substr(0, 10)).read.ok());  // a cut file header
  EXPECT_FALSE(check(std::string("\xd4\xc3\xb2\xa1", 4) + std::string(60, '\x7f')).read.ok());
  const Verdict cut = check(good.substr(0, good.size() - 10));
  EXPECT_FALSE(cut.read.ok());
  EXPECT_NE(std::string(cut.read.message()).find("truncated"), std::string::npos) << cut.read;
  EXPECT_TRUE(is_capture_magic(good));
  EXPECT_FALSE(is_capture_magic("{\"trace\""));
}

// Any order of a stream's segments, with duplicates, gives the stream back.
RC_GTEST_PROP(StreamReassembler, AnyOrderWithDuplicatesGivesTheStreamBack, ()) {
  const std::string stream = *rc::gen::container<std::string>(rc::gen::inRange<char>('a', 'z'));
  std::vector<std::pair<std::uint32_t, std::string>> segments;
  const std::uint32_t isn = *rc::gen::arbitrary<std::uint32_t>();
  for (std::size_t at = 0; at < stream.size();) {
    const std::size_t len = *rc::gen::inRange<std::size_t>(1, 9);
    segments.emplace_back(isn + static_cast<std::uint32_t>(at), stream.substr(at, len));
    at += len;
  }
  const auto copies = segments;
  for (const auto& s : copies) {
    if (*rc::gen::inRange(0, 4) == 0) segments.push_back(s);
  }
  segments = *rc::gen::just(segments);
  std::vector<std::size_t> order(segments.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[*rc::gen::inRange<std::size_t>(0, i)]);
  }
  StreamReassembler r(1 << 20);
  r.start(isn);
  std::vector<StreamChunk> out;
  for (std::size_t i : order) {
    RC_ASSERT(!r.add(static_cast<double>(i), segments[i].first, segments[i].second, 0, &out));
  }
  std::string got;
  for (const StreamChunk& c : out) got += c.bytes();
  RC_ASSERT(got == stream);
  RC_ASSERT(!r.has_hole());
  RC_ASSERT(!r.finish());
}

TEST(StreamReassembler, HoleAtTheEndIsAGap) {
  StreamReassembler r(1 << 20);
  r.start(100);
  std::vector<StreamChunk> out;
  EXPECT_FALSE(r.add(1, 100, "abc", 0, &out));
  EXPECT_FALSE(r.add(2, 106, "ghi", 0, &out));  // "def" never captured
  EXPECT_TRUE(r.has_hole());
  const std::optional<std::string> gap = r.finish();
  ASSERT_TRUE(gap);
  EXPECT_NE(gap->find("lost segment"), std::string::npos);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bytes(), "abc");
}

#ifdef PERMITCHECK_BIN
// `permitcheck validate` on capture files: exit codes and what it says.
int run(const std::string& args, std::string* err_text) {
  const std::string err = ::testing::TempDir() + "/capture-cli-err.txt";
  const int rc = std::system((std::string(PERMITCHECK_BIN) + " validate " + args + " >/dev/null 2>" + err).c_str());
  std::ifstream f(err);
  std::stringstream s;
  s << f.rdbuf();
  *err_text = s.str();
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(CaptureCli, ExitCodesOnCaptures) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/good.cap", bad = dir + "/bad.pcapng", cut = dir + "/cut.pcap",
                    garbage = dir + "/garbage.pcap", trace = dir + "/derived.jsonl";
  const std::string good_bytes = pcap(consumer_stream(client4(), server4()).packets(), LinkKind::kNull);
  testing::write_file(good, good_bytes);
  testing::write_file(bad, pcap(consumer_stream(client4(), server4(), Bad::kOverGrant).packets()));
  testing::write_file(cut, good_bytes.substr(0, good_bytes.size() - 5));
  testing::write_file(garbage, std::string("\xa1\xb2\xc3\xd4", 4) + std::string(100, 'x'));
  std::string err;
  EXPECT_EQ(run(good + " --trace-out " + trace, &err), 0) << err;
  EXPECT_EQ(run(bad, &err), 1) << err;
  EXPECT_EQ(run(cut, &err), 2);
  EXPECT_NE(err.find(cut), std::string::npos) << err;
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
  EXPECT_EQ(run(garbage, &err), 2);
  EXPECT_NE(err.find(garbage), std::string::npos) << err;
  // The derived trace is a trace: validate reads it back, with the same verdict.
  EXPECT_EQ(run(trace, &err), 0) << err;
  // A lost segment: INCOMPLETE (exit 3), never a pass; beside a violation, FAIL (1) wins; an
  // unreadable file first, then a failing one: bad input (2) wins.
  std::vector<Packet> lost_packets = consumer_stream(client4(), server4()).packets();
  lost_packets.erase(lost_packets.begin() +
                     static_cast<long>(segment_with(lost_packets, server4(), frames::success(1))));
  const std::string lost = dir + "/lost.pcap";
  testing::write_file(lost, pcap(lost_packets));
  EXPECT_EQ(run(lost, &err), 3) << err;
  EXPECT_NE(err.find("lost segment"), std::string::npos) << err;
  EXPECT_EQ(run(lost + " " + bad, &err), 1) << err;
  EXPECT_EQ(run(garbage + " " + bad, &err), 2) << err;
  EXPECT_EQ(run(good + " --port 9999", &err), 2);  // no Pulsar connection on that port
  EXPECT_NE(err.find("no Pulsar connection"), std::string::npos) << err;
  // Read on two threads (--threads 2) or on one (the default): the same exit codes and words.
  for (const std::string& f : {good, bad, cut, garbage}) {
    std::string two_threads, one_thread;
    EXPECT_EQ(run(f + " --threads 2", &two_threads), run(f, &one_thread)) << f;
    EXPECT_EQ(two_threads, one_thread) << f;
  }
}
#endif

}  // namespace
}  // namespace permitcheck::capture
