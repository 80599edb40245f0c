// The Monitor facade (spec/monitor.h): the line each finding names, what finish() adds, a moved
// monitor, and what size() counts.
#include "spec/monitor.h"

#include <iterator>
#include <utility>
#include <vector>

#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT

// A client trace with a command in flight (a batch of 4, one message handed off), a finished
// command (its message returned) and a finding (a skip in a command never received).
Trace sized_trace() {
  Trace t;
  t.subscribed(1, 8)
      .add(recv(1, 4))
      .add(Metadata{.cmd = n(1), .batch_size = 4})
      .add(claim(1, "m0", 0))
      .add(recv(2, 1))
      .add(Metadata{.cmd = n(2), .batch_size = 1})
      .add(claim(2, "m1"))
      .add(settle(2, 0))
      .add(msg_return("m1"))
      .add(Skip{.cmd = n(9), .index = 0, .reason = SkipReason::kDuplicate});
  return t;
}

// size() counts each part where its state is, and sizes exactly the parts that hold
// something; `bytes` is the sum of the parts. A streaming monitor keeps no ledger.
TEST(MonitorMemory, SizeCountsAndSizesEachPartWhereItsStateIs) {
  for (bool retain : {true, false}) {
    SCOPED_TRACE(retain ? "whole-trace" : "streaming");
    Monitor m(client(8, 4), MonitorOptions{.retain_ledger = retain});
    const Trace t = sized_trace();
    std::uint64_t line = 2;
    for (const Event& e : t.events()) m.on_event(e, line++);
    const MonitorSize size = m.size();
    EXPECT_EQ(size.commands, 1u);
    EXPECT_EQ(size.finished_commands, 1u);
    EXPECT_EQ(size.messages, 2u);
    EXPECT_EQ(size.incarnations, 1u);
    EXPECT_EQ(size.wire_consumers, 0u);
    EXPECT_EQ(size.connections, 1u);
    EXPECT_EQ(size.ledgers, retain ? 1u : 0u);
    EXPECT_EQ(size.findings, 1u) << dump({m.violations(), m.deviations()});
    const std::size_t counts[] = {size.commands, size.finished_commands, size.messages,
                                  size.incarnations, size.wire_consumers, size.connections,
                                  size.ledgers, size.findings};
    std::size_t sum = 0;
    for (std::size_t i = 0; i < std::size(counts); ++i) {
      EXPECT_EQ(size.part_bytes[i] > 0, counts[i] > 0) << "part " << i;
      sum += size.part_bytes[i];
    }
    EXPECT_EQ(size.bytes, sum);
  }
  // An empty monitor holds nothing.
  const MonitorSize empty = Monitor(client()).size();
  EXPECT_EQ(empty.bytes, 0u);
}

// A connection's part grows with the lists it holds: the wire consumers on one connection, and
// the permit states opened on it.
TEST(MonitorMemory, AConnectionsPartGrowsWithTheConsumersAndStatesOnIt) {
  auto wire_part = [](std::uint64_t consumers) {
    Trace t;
    for (std::uint64_t c = 0; c < consumers; ++c) t.wire_subscribed(4, "c1", c);
    return streamed_size(wire(4, 2), t).part_bytes[5];
  };
  EXPECT_GT(wire_part(40), wire_part(1));
  auto client_part = [](std::uint64_t states) {
    Trace t;
    for (std::uint64_t i = 1; i <= states; ++i) t.subscribed(i, 4, "c1", i);
    return streamed_size(client(4, 2), t).part_bytes[5];
  };
  EXPECT_GT(client_part(40), client_part(1));
}

// The end of a client connection leaves nothing of it: its permit states have ended and its
// list of them is gone.
TEST(MonitorMemory, AClientConnectionsEndLeavesNoListOfItsStates) {
  Trace t;
  t.subscribed(1, 4, "c1").add(Disconnect{.cnx = s("c1")});
  EXPECT_EQ(streamed_size(client(4, 2), t).connections, 0u);
}

// Closing the last consumer on a connection leaves no list of its consumers there.
TEST(MonitorMemory, ClosingAConnectionsLastConsumerLeavesNoListOfConsumers) {
  Trace t;
  t.wire_subscribed(4, "c1", 7).add(CloseConsumer{.cnx = s("c1"), .consumer = 7});
  const MonitorSize size = streamed_size(wire(4, 2), t);
  EXPECT_EQ(size.wire_consumers, 0u);
  EXPECT_EQ(size.connections, 0u);
}

// A finding names the line its event was passed with, whatever the caller numbers them from.
TEST(Monitor, K4_AFindingNamesTheLineItsEventCameWith) {
  Monitor m(client(8, 4));
  const Trace t = sized_trace();
  std::uint64_t line = 100;
  for (const Event& e : t.events()) m.on_event(e, line++);
  m.finish();
  ASSERT_EQ(m.violations().size(), 1u) << dump(m.violations());
  EXPECT_EQ(m.violations()[0].line, 111u);  // the 12th event
  EXPECT_EQ(format_finding(m.violations()[0]).rfind("line 111: K4 ", 0), 0u)
      << format_finding(m.violations()[0]);
}

// A monitor moved (constructed or assigned) mid-trace goes on judging the same trace.
TEST(Monitor, K4_AMovedMonitorGoesOnJudgingTheSameTrace) {
  const Trace t = sized_trace();
  const std::vector<Event>& events = t.events();
  Monitor first(client(8, 4));
  std::uint64_t line = 2;
  for (std::size_t i = 0; i < 4; ++i) first.on_event(events[i], line++);
  Monitor second(std::move(first));
  for (std::size_t i = 4; i < 8; ++i) second.on_event(events[i], line++);
  Monitor third(client());
  third = std::move(second);
  for (std::size_t i = 8; i < events.size(); ++i) third.on_event(events[i], line++);
  third.finish();
  EXPECT_TRUE(FirstViolation({third.violations(), third.deviations()}, RuleId::kK4,
                             {"skip in command 9, which was never received"}));
  EXPECT_EQ(third.size().commands, 1u);
}

}  // namespace
}  // namespace permitcheck::spec
