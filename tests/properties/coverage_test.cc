// Coverage counting (check --coverage): decision points and rules reached are read from the
// trace events and the run's inputs; anything no case reached is listed.
#include "properties/coverage.h"

#include "gtest/gtest.h"

namespace permitcheck::properties {
namespace {

using spec::Id;

TEST(CaseCoverage, DecisionWaysAndRulesFromTraceEvents) {
  impl::WorldConfig config;
  impl::World world(config);
  CaseCoverage c(config);
  impl::EntrySpec all_acked;
  all_acked.payload.batch_size = 2;
  all_acked.payload.batched = true;
  all_acked.pre_acked = {0, 1};
  c.publish({all_acked});
  c.observe(spec::IncOpen{.inc = Id::number(1), .cnx = Id::text("c1"), .consumer = 0}, world);
  c.observe(spec::Message{.cnx = Id::text("c1"), .consumer = 0, .cmd = Id::number(1)}, world);
  c.observe(spec::Corrupt{.cmd = Id::number(1), .stage = spec::FailureStage::kInconsistent}, world);
  c.observe(spec::ProtocolError{.cnx = Id::text("c1"), .reason = "permit accumulator overflow"}, world);
  c.observe(spec::Drop{.msg = Id::text("m1.0"), .n = 1}, world);
  c.finish(3);
  EXPECT_TRUE(c.rules().contains("B3"));   // the fully acknowledged entry
  EXPECT_TRUE(c.rules().contains("C5"));
  EXPECT_TRUE(c.rules().contains("N7"));
  EXPECT_FALSE(c.rules().contains("C4"));
  EXPECT_TRUE(c.ways().contains("broker_sends_message_permits: field absent"));
  EXPECT_TRUE(c.ways().contains("inconsistent: corrupted-data handling"));
  EXPECT_TRUE(c.ways().contains("return_scope: ended incarnation"));
  EXPECT_FALSE(c.ways().contains("return_scope: current incarnation"));
  EXPECT_TRUE(c.tags().contains("ack_set all acknowledged"));
  EXPECT_TRUE(c.tags().contains("steps 0-10"));
}

// A crypto transfer reaches S4 (and its deviation X3) only when the consumer's crypto action
// is FAIL; DISCARD is S3's path.
TEST(CaseCoverage, S4_CryptoTransferReachesTheRuleOnlyUnderCryptoFail) {
  for (const impl::CryptoAction action : {impl::CryptoAction::kFail, impl::CryptoAction::kDiscard}) {
    impl::WorldConfig config;
    config.options.crypto_action = action;
    impl::World world(config);
    CaseCoverage c(config);
    c.observe(spec::Transfer{.cmd = Id::number(1), .path = spec::TransferPath::kCrypto}, world);
    c.finish(1);
    const bool fail = action == impl::CryptoAction::kFail;
    EXPECT_EQ(c.rules().contains("S4"), fail);
    EXPECT_EQ(c.rules().contains("X3"), fail);
    EXPECT_TRUE(c.rules().contains("S1"));
  }
}

TEST(Coverage, UnreachedListsEveryDecisionAndRuleNoCaseReached) {
  Coverage total;
  impl::WorldConfig config;
  impl::World world(config);
  CaseCoverage c(config);
  c.observe(spec::Recv{.inc = Id::number(1), .cmd = Id::number(1)}, world);
  total.add(c);
  EXPECT_EQ(total.cases(), 1);
  EXPECT_EQ(total.rule_cases("C1"), 1);
  EXPECT_EQ(total.decision_cases("client_reads_message_permits"), 1);
  const std::vector<std::string> missing = total.unreached();
  EXPECT_NE(std::find(missing.begin(), missing.end(), "rule E5"), missing.end());
  EXPECT_NE(std::find(missing.begin(), missing.end(), "decision inconsistent"), missing.end());
  EXPECT_EQ(std::find(missing.begin(), missing.end(), "rule C1"), missing.end());
  EXPECT_NE(std::find(missing.begin(), missing.end(), "rule S7"), missing.end());  // random worlds reach it
  EXPECT_EQ(std::find(missing.begin(), missing.end(), "rule M3"), missing.end());  // excluded
  EXPECT_NE(total.format(1).find("UNREACHED"), std::string::npos);
}

}  // namespace
}  // namespace permitcheck::properties
