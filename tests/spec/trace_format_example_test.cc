// The worked example of trace-format.md ("client accounting, one partial batch, exact"), as
// C++ values: it passes rev-d exactly, and each single-number change to it is caught.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/monitor.h"

namespace permitcheck::spec {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

const TraceHeader kHeader{.source = TraceSource::kClient, .q = 4, .t = 2};

std::vector<Event> example() {
  const Id c1 = Id::text("c1");
  const Id inc = Id::number(1);
  const Id cmd = Id::number(1);
  return {
      IncOpen{.inc = inc, .cnx = c1, .consumer = 0},
      IncFlowEnabled{.inc = inc},
      Flow{.cnx = c1, .consumer = 0, .permits = 4, .inc = inc},
      Recv{.inc = inc, .cmd = cmd, .message_permits = 3, .ack_set = AckSet({37})},
      Metadata{.cmd = cmd, .batch_size = 8},
      Resolve{.cmd = cmd, .p = 3, .source = PermitSource::kExplicit},
      Claim{.cmd = cmd, .msg = Id::text("m0"), .index = 0},
      Claim{.cmd = cmd, .msg = Id::text("m2"), .index = 2},
      Corrupt{.cmd = cmd, .stage = FailureStage::kBatch, .index = 5},
      Settle{.cmd = cmd, .n = 1},
      MsgReturn{.msg = Id::text("m0")},
      Flow{.cnx = c1, .consumer = 0, .permits = 2, .inc = inc},
      MsgReturn{.msg = Id::text("m2")},
  };
}

TEST(TraceFormatExample, PartialBatchSettlesExactlyThree) {
  Monitor m(kHeader);
  const std::vector<Event> events = example();
  for (std::size_t i = 0; i < events.size(); ++i) m.on_event(events[i], i + 2);
  m.finish();
  EXPECT_THAT(m.violations(), IsEmpty());
  EXPECT_THAT(m.deviations(), IsEmpty());
  const std::optional<CommandLedger> ledger = m.ledger(Id::number(1));
  ASSERT_TRUE(ledger.has_value());
  EXPECT_EQ(ledger->p, 3);
  EXPECT_EQ(ledger->returned, 3);
  EXPECT_TRUE(ledger->settled);
}

TEST(TraceFormatExample, C7_SettlingZeroAfterTheBatchFailureLosesOne) {
  std::vector<Event> events = example();
  std::get<Settle>(events[9]).n = 0;
  const MonitorReport r = check_trace(kHeader, events);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().rule, RuleId::kC7);
  EXPECT_EQ(r.violations.front().line, 11u);  // the settle is on line 11 of the file
  EXPECT_THAT(r.violations.front().explanation, ::testing::HasSubstr("1 permit lost"));
}

TEST(TraceFormatExample, K7_E2_SettlingTwoOverReturns) {
  std::vector<Event> events = example();
  std::get<Settle>(events[9]).n = 2;
  const MonitorReport r = check_trace(kHeader, events);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().rule, RuleId::kK7);
  EXPECT_THAT(r.violations, ::testing::Contains(Field(&Finding::rule, RuleId::kE2)));
}

TEST(TraceFormatExample, E2_FlowBeyondTheAccumulatorIsAnOverGrant) {
  std::vector<Event> events = example();
  std::get<Flow>(events[11]).permits = 3;  // the accumulator holds 2
  const MonitorReport r = check_trace(kHeader, events);
  ASSERT_THAT(r.violations, ElementsAre(Field(&Finding::rule, RuleId::kE2)));
  EXPECT_THAT(r.violations.front().explanation, ::testing::HasSubstr("over-grant by 1"));
}

TEST(TraceFormatExample, K3_HandingOffAClearedIndexIsReported) {
  std::vector<Event> events = example();
  std::get<Claim>(events[7]).index = 1;  // 37 = {0,2,5}: index 1 is acknowledged
  const MonitorReport r = check_trace(kHeader, events);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().rule, RuleId::kK3);
}

}  // namespace
}  // namespace permitcheck::spec
