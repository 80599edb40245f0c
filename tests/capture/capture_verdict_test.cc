// Verdicts on captures that say what they saw (issue 33): a connection is PASS only when every
// byte of it in scope was reassembled. Each situation is made with the capture generator
// (tests/capture/capture_testing.h) from a correct and a violating run: information-losing
// transforms (a lost segment, a segment and its ack lost before a quiet close, a capture that
// ends inside a frame, a mid-stream start) never give PASS and never a violation the run did
// not have; verdict-preserving ones (re-segmenting, duplicates, a late duplicate SYN, a clock
// that steps back, a capture stopped right after the last data) keep the verdict.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "capture/capture_file.h"
#include "capture/wire_monitor.h"
#include "spec/outcome.h"
#include "spec/rule_id.h"
#include "tests/capture/capture_testing.h"

namespace permitcheck::capture {
namespace capture_verdict {

using testing::Conversation;
using testing::LinkKind;
using testing::Packet;
namespace frames = testing::frames;

// What `permitcheck validate` decides on a capture (cli/capture.cc): FAIL on a violation, else
// INCOMPLETE when a connection was not understood to its end, else PASS.
struct Judged {
  spec::Outcome outcome = spec::Outcome::kPass;
  std::string rules;
  std::vector<NotUnderstood> not_understood;
  std::uint64_t quiescent = 0;
  CaptureStats stats;
};

Judged judge(const std::vector<Packet>& packets, std::optional<std::int64_t> t = 5,
             CaptureOptions options = {}) {
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire, .t = t}, nullptr);
  WireTraceBuilder builder(options, checker.sink());
  const absl::Status read =
      read_capture_bytes(testing::pcap_bytes(LinkKind::kEthernet, packets), &builder);
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

std::string reasons(const Judged& j) {
  std::string out;
  for (const NotUnderstood& n : j.not_understood) out += n.connection + ": " + n.reason + "\n";
  return out;
}

Endpoint client() { return testing::endpoint4(1, 40000); }
Endpoint server() { return testing::endpoint4(2, 6650); }

// One consumer: connect, subscribe, Flow 10, five single entries acknowledged, then the Flow
// returning 5 (correct) or nothing (violating: 5 short at quiescence, over T - 1 = 4: E5). With
// `quiet_close`, a 1.5 s silence and the client's FIN follow; without, the capture stops right
// after the last data.
Conversation run(bool correct, std::size_t mss = 1400, bool quiet_close = true) {
  Conversation c(client(), server());
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
  if (quiet_close) {
    c.pause(1.5);
    c.client_fin();
  }
  return c;
}

std::size_t first_with(const std::vector<Packet>& p, const Endpoint& from, const std::string& bytes) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].src == from && p[i].payload.find(bytes) != std::string::npos) return i;
  }
  return p.size();
}

TEST(CaptureVerdict, E5_CorrectRunPassesAndViolatingRunFails) {
  const Judged good = judge(run(true).packets());
  EXPECT_EQ(good.outcome, spec::Outcome::kPass) << good.rules << reasons(good);
  EXPECT_EQ(good.quiescent, 1u);
  const Judged bad = judge(run(false).packets());
  EXPECT_EQ(bad.outcome, spec::Outcome::kFail);
  EXPECT_EQ(bad.rules, "E5");
}

// A lost segment (the receiver's ack shows it) is INCOMPLETE, saying which connection, from
// when and why: never PASS, never a violation.
TEST(CaptureVerdict, LostSegmentIsIncompleteSayingWhatWhereAndWhen) {
  std::vector<Packet> p = run(true).packets();
  const std::size_t i = first_with(p, server(), frames::success(1));
  ASSERT_LT(i, p.size());
  p.erase(p.begin() + static_cast<long>(i));
  const Judged j = judge(p);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules;
  ASSERT_EQ(j.not_understood.size(), 1u);
  EXPECT_EQ(j.not_understood[0].connection, "10.0.0.1:40000>10.0.0.2:6650");
  EXPECT_NE(j.not_understood[0].reason.find("broker stream: lost segment"), std::string::npos)
      << reasons(j);
  EXPECT_GT(j.not_understood[0].time, 1764600000.0);
}

// The bug on main: the client's last Flow and the broker's ack of it are both lost, the
// connection goes quiet and closes. The silence was not quiescence (bytes sent during it were
// never captured): only the gap is reported, no E5.
TEST(CaptureVerdict, E5_LostLastFlowAndItsAckBeforeAQuietCloseIsIncompleteNotAViolation) {
  std::vector<Packet> p = run(true).packets();
  const std::size_t flow = first_with(p, client(), frames::flow(0, 5));
  ASSERT_LT(flow + 1, p.size());
  ASSERT_TRUE(p[flow + 1].src == server() && p[flow + 1].payload.empty());  // its ack
  p.erase(p.begin() + static_cast<long>(flow), p.begin() + static_cast<long>(flow) + 2);
  const Judged j = judge(p);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules << reasons(j);
  EXPECT_EQ(j.rules.find("E5"), std::string::npos) << j.rules;
  EXPECT_EQ(j.quiescent, 0u);
  ASSERT_EQ(j.not_understood.size(), 1u);
  EXPECT_NE(j.not_understood[0].reason.find("client stream: lost segment"), std::string::npos)
      << reasons(j);
}

// A capture that ends inside a frame says so (INCOMPLETE), for either run: the rest of the
// frame, and what followed, was never seen.
TEST(CaptureVerdict, CaptureEndingInsideAFrameIsIncomplete) {
  for (bool correct : {true, false}) {
    std::vector<Packet> p = run(correct, /*mss=*/20).packets();
    const std::size_t i = first_with(p, server(), frames::message(0, 1, 1, {}, 1).substr(0, 20));
    ASSERT_LT(i + 1, p.size());
    p.resize(i + 1);  // the first segment of the MESSAGE, then the capture stops
    const Judged j = judge(p);
    EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << correct << " " << j.rules;
    EXPECT_NE(reasons(j).find("broker stream: the capture ends inside a frame"),
              std::string::npos)
        << reasons(j);
  }
}

// A Pulsar connection whose start the capture lacks is INCOMPLETE whatever --port says (before
// issue 33 it was dropped without a word unless --port named it).
TEST(CaptureVerdict, MidStreamStartIsIncompleteWithOrWithoutPort) {
  std::vector<Packet> p = run(false).packets();
  const std::size_t i = first_with(p, client(), frames::flow(0, 10));
  ASSERT_LT(i, p.size());
  p.erase(p.begin(), p.begin() + static_cast<long>(i));
  CaptureOptions on_port;
  on_port.port = 6650;
  for (const CaptureOptions& o : {CaptureOptions{}, on_port}) {
    const Judged j = judge(p, 5, o);
    EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules;
    EXPECT_NE(reasons(j).find("mid-stream"), std::string::npos) << reasons(j);
  }
}

// A late duplicate SYN followed by the client's bytes sent again from the start is no restart:
// before issue 33 it restarted the stream under the decoded Pulsar state, and the replayed
// SUBSCRIBE and Flow gave N4 on a correct run. Both runs keep their verdicts.
TEST(CaptureVerdict, N4_LateDuplicateSynIsNeverARestart) {
  for (bool correct : {true, false}) {
    std::vector<Packet> p = run(correct).packets();
    const std::size_t at = first_with(p, client(), frames::ack(0, 1));
    ASSERT_LT(at, p.size());
    std::vector<Packet> replay = {p[0]};  // the SYN again
    for (std::size_t k = 3; k < at; ++k) {
      if (p[k].src == client() && !p[k].payload.empty()) replay.push_back(p[k]);
    }
    for (Packet& r : replay) r.time = p[at].time;
    p.insert(p.begin() + static_cast<long>(at), replay.begin(), replay.end());
    const Judged j = judge(p);
    EXPECT_EQ(j.rules.find("N4"), std::string::npos) << j.rules;
    EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
        << j.rules << reasons(j);
  }
  // A SYN with a new sequence number inside the live stream is another connection on the same
  // addresses: not followed, so INCOMPLETE, never a restart.
  std::vector<Packet> p = run(true).packets();
  const std::size_t at = first_with(p, client(), frames::ack(0, 1));
  Packet syn = p[0];
  syn.seq += 5000;
  syn.time = p[at].time;
  p.insert(p.begin() + static_cast<long>(at), syn);
  const Judged j = judge(p);
  EXPECT_EQ(j.outcome, spec::Outcome::kIncomplete) << j.rules;
  EXPECT_NE(reasons(j).find("SYN with a new sequence number"), std::string::npos) << reasons(j);
}

// A clock that steps back (by an hour, or to 1970 as a classic pcap's seconds past 2038 read
// back) never disables quiescence: the capture is taken in capture order.
TEST(CaptureVerdict, ClockSteppingBackKeepsTheVerdict) {
  for (double step : {3600.0, 1764599999.0}) {
    for (bool correct : {true, false}) {
      std::vector<Packet> p = run(correct).packets();
      const std::size_t at = first_with(p, server(), frames::message(0, 1, 1, {}, 1));
      ASSERT_LT(at, p.size());
      for (std::size_t k = at; k < p.size(); ++k) p[k].time -= step;
      const Judged j = judge(p);
      EXPECT_EQ(j.outcome, correct ? spec::Outcome::kPass : spec::Outcome::kFail)
          << step << " " << j.rules << reasons(j);
      EXPECT_EQ(j.quiescent, 1u) << step;
      EXPECT_EQ(j.stats.clock_steps_back, 1u) << step;
    }
  }
}

// The end of the capture is a quiescence point: a capture stopped right after the last data
// is judged there (the violation is still found; the correct run passes).
TEST(CaptureVerdict, E5_EndOfCaptureIsAQuiescencePoint) {
  const Judged good = judge(run(true, 1400, /*quiet_close=*/false).packets());
  EXPECT_EQ(good.outcome, spec::Outcome::kPass) << good.rules << reasons(good);
  EXPECT_EQ(good.quiescent, 1u);
  const Judged bad = judge(run(false, 1400, /*quiet_close=*/false).packets());
  EXPECT_EQ(bad.rules, "E5");
}

// Verdict-preserving transforms (segments of 1 to 40 bytes, every data segment sent twice,
// the clock stepped back): the verdict of either run is kept.
RC_GTEST_PROP(CaptureVerdict, E5_VerdictPreservingTransformsKeepTheVerdict, ()) {
  const bool correct = *rc::gen::arbitrary<bool>();
  const auto mss = *rc::gen::inRange<std::size_t>(1, 41);
  const bool duplicate = *rc::gen::arbitrary<bool>();
  const bool step_back = *rc::gen::arbitrary<bool>();
  std::vector<Packet> p = run(correct, mss).packets();
  if (duplicate) {
    std::vector<Packet> twice;
    for (const Packet& k : p) {
      twice.push_back(k);
      if (!k.payload.empty()) twice.push_back(k);
    }
    p = std::move(twice);
  }
  if (step_back) {
    // Before the FIN: a step back at the packet ending the silence would erase the silence
    // itself (its length is then unknown), which is no longer the same run.
    const auto at = *rc::gen::inRange<std::size_t>(1, p.size() - 1);
    for (std::size_t k = at; k < p.size(); ++k) p[k].time -= 7200;
  }
  const Judged j = judge(p);
  RC_ASSERT(j.outcome == (correct ? spec::Outcome::kPass : spec::Outcome::kFail));
  RC_ASSERT(j.rules == (correct ? "" : "E5"));
}

// Information-losing transforms (one data segment lost): never PASS, and a gap never becomes
// a violation the uncut run lacks.
RC_GTEST_PROP(CaptureVerdict, InformationLosingTransformsNeverPass, ()) {
  const bool correct = *rc::gen::arbitrary<bool>();
  const auto mss = *rc::gen::inRange<std::size_t>(8, 200);
  std::vector<Packet> p = run(correct, mss).packets();
  // Losses once the connection is known to be Pulsar (from the SUBSCRIBE on): a loss inside
  // the first CONNECT is not covered here (see the report of issue 33's step 5).
  std::vector<std::size_t> data;
  for (std::size_t k = first_with(p, client(), frames::subscribe(0, 1).substr(0, 4)); k < p.size(); ++k) {
    if (!p[k].payload.empty()) data.push_back(k);
  }
  const std::size_t lost = data[*rc::gen::inRange<std::size_t>(0, data.size())];
  p.erase(p.begin() + static_cast<long>(lost));
  const Judged j = judge(p);
  RC_ASSERT(j.outcome != spec::Outcome::kPass);
  if (correct) RC_ASSERT(j.rules.empty());
}

}  // namespace capture_verdict
}  // namespace permitcheck::capture
