// The Monitor on broker accounting (spec/monitor_broker.cc): B1-B11 and E4.
#include "spec/monitor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests

// ======================================================================================
// Broker accounting: B1-B11, E4.
// ======================================================================================

TEST(MonitorBroker, B1_RejectedEntryFinalizedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, 10, true, 10), entry(2, 10, false, 10)},
             .consumer_debit = 10});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB1,
                             {"rejected entry 2 was finalized with P = 10"}));
}

TEST(MonitorBroker, RejectedEntryMakesNoCommandAndNoDebit) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
             .consumer_debit = 10});
  EXPECT_TRUE(Clean(check(broker(), t)));
}

// A send entry recorded without its P still has one: the ruleset's finalized P, which its
// MESSAGE's serialized value is then held to.
TEST(MonitorBroker, E4_AnEntryRecordedWithoutItsPIsHeldToTheFinalizedP) {
  Trace t;
  t.wire_subscribed(8)
      .add(Send{.consumer = 0,
                .dispatcher = DispatcherKind::kSingleActive,
                .entries = {entry(1, 3, true, std::nullopt)},
                .consumer_debit = 3})
      .add(message(1, 2));  // no batch_size: only the send knows P
  EXPECT_TRUE(FirstViolation(check(wire(8, 4), t), RuleId::kE4,
                             {"serialized message_permits = 2 but its send finalized P = 3"}));
}

TEST(MonitorBroker, B2_FinalizedPOtherThanTheCandidateIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .entries = {entry(1, 8, true, 8, AckSet({37}))}, .consumer_debit = 3});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB2,
                             {"entry 1 finalized P = 8 but B = 8", "give 3"}));
  Trace good;
  good.add(
      Send{.consumer = 0, .entries = {entry(1, 8, true, 3, AckSet({37}))}, .consumer_debit = 3});
  EXPECT_TRUE(Clean(check(broker(), good)));
}

TEST(MonitorBroker, B3_EntryWithNothingToDeliverFinalizedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .entries = {entry(1, 8, true, 1, AckSet({0}))}, .consumer_debit = 0});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB3,
                             {"entry 1 has nothing to deliver but was finalized with P = 1"}));
  Trace good;
  good.add(Send{.consumer = 0,
                .entries = {entry(1, 8, true, std::nullopt, AckSet({0}))},
                .consumer_debit = 0});
  EXPECT_TRUE(Clean(check(broker(), good)));
}

TEST(MonitorBroker, B4_ConsumerDebitOtherThanTheFinalizedSumIsReported) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
             .consumer_debit = 20});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB4,
                             {"consumer 0 debited 20 but the finalized sum is 10",
                              "10 permit(s) lost"}));
  Trace under;
  under.add(Send{.consumer = 0, .entries = {entry(1, 10, true, 10)}, .consumer_debit = 7});
  EXPECT_TRUE(FirstViolation(check(broker(), under), RuleId::kB4,
                             {"debited 7 but the finalized sum is 10", "3 permit(s) over-granted"}));
}

TEST(MonitorBroker, LegacyDebitsThePreAdmissionSum) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
             .consumer_debit = 20});
  EXPECT_TRUE(Clean(check(broker(RulesetId::kLegacy), t)));
}

TEST(MonitorBroker, B6_EachAggregateDispatcherMustDebitTheFinalizedSum) {
  int aggregates = 0;
  for (DispatcherKind kind : all_dispatcher_kinds()) {
    if (!has_aggregate(kind)) continue;
    ++aggregates;
    SCOPED_TRACE(dispatcher_name(kind));
    Trace bad;
    bad.add(Send{.consumer = 0,
                 .dispatcher = kind,
                 .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
                 .consumer_debit = 10,
                 .dispatcher_debit = 20});
    EXPECT_TRUE(FirstViolation(check(broker(), bad), RuleId::kB6,
                               {std::string(dispatcher_name(kind)) + " aggregate debited 20",
                                "the finalized sum is 10"}));
    Trace good;
    good.add(Send{.consumer = 0,
                  .dispatcher = kind,
                  .entries = {entry(1, 10, true, 10), entry(2, 10, false, std::nullopt)},
                  .consumer_debit = 10,
                  .dispatcher_debit = 10});
    EXPECT_TRUE(Clean(check(broker(), good)));
  }
  EXPECT_EQ(aggregates, 6);
}

TEST(MonitorBroker, B6_SingleActiveDispatcherHasNoAggregate) {
  Trace bad;
  bad.add(Send{.consumer = 0,
               .dispatcher = DispatcherKind::kSingleActive,
               .entries = {entry(1, 10, true, 10)},
               .consumer_debit = 10,
               .dispatcher_debit = 10});
  EXPECT_TRUE(FirstViolation(check(broker(), bad), RuleId::kB6,
                             {"single_active dispatcher has no aggregate but debited 10"}));
  Trace good;
  good.add(Send{.consumer = 0,
                .dispatcher = DispatcherKind::kSingleActive,
                .entries = {entry(1, 10, true, 10)},
                .consumer_debit = 10});
  EXPECT_TRUE(Clean(check(broker(), good)));
}

TEST(MonitorBroker, B8_OverflowingSendFinalizedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, kMaxPermits, true, kMaxPermits), entry(2, 1, true, 1)},
             .consumer_debit = kMaxPermits + 1});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB8,
                             {"although it overflows",
                              "2^31-1"}));
  // Atomic: nothing of the overflowing send is finalized.
  Trace good;
  good.add(Send{.consumer = 0,
                .entries = {entry(1, kMaxPermits, true, std::nullopt),
                            entry(2, 1, true, std::nullopt)},
                .consumer_debit = 0});
  EXPECT_TRUE(Clean(check(broker(), good)));
  Trace largest;  // 2^31-1 alone is in range
  largest.add(Send{.consumer = 0,
                   .entries = {entry(1, kMaxPermits, true, kMaxPermits)},
                   .consumer_debit = kMaxPermits});
  EXPECT_TRUE(Clean(check(broker(), largest)));
}

TEST(MonitorBroker, B8_OverflowingSendThatStillDebitsIsReported) {
  // Nothing of an overflowing send is finalized, so nothing may be debited either.
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, kMaxPermits, true, std::nullopt),
                         entry(2, 1, true, std::nullopt)},
             .consumer_debit = kMaxPermits + 1});
  const MonitorReport r = check(broker(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kB8, {"2147483648"}));
}

TEST(MonitorBroker, B10_NegativeFlowIsReported) {
  Trace t;
  t.wire_subscribed(4).add(flow(-1));
  EXPECT_TRUE(FirstViolation(check(wire(), t), RuleId::kB10,
                             {"Flow for consumer 0 on connection c1 carries -1 permits",
                              "Flow only adds"}));
  Trace zero;
  zero.wire_subscribed(4).add(flow(0));
  EXPECT_TRUE(Clean(check(wire(), zero)));
}

TEST(MonitorBroker, B11_SendAfterConsumerRemovedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .entries = {entry(1, 1, true, 1)}, .consumer_debit = 1})
      .add(ConsumerRemoved{.consumer = 0})
      .add(Send{.consumer = 0, .entries = {entry(2, 1, true, 1)}, .consumer_debit = 1});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB11,
                             {"send to consumer 0 after it was removed"}));
}

TEST(MonitorBroker, ReplacementIncarnationWithTheSameConsumerIdMayBeSentTo) {
  // The client re-subscribes with the same consumer_id: a new broker consumer incarnation.
  Trace t;
  t.add(Send{.consumer = 0, .inc = n(1), .entries = {entry(1, 1, true, 1)}, .consumer_debit = 1})
      .add(ConsumerRemoved{.consumer = 0, .inc = n(1)})
      .add(Send{.consumer = 0, .inc = n(2), .entries = {entry(2, 1, true, 1)},
                .consumer_debit = 1});
  const MonitorReport r = check(broker(), t);
  EXPECT_TRUE(Clean(r));
}

TEST(MonitorBroker, E4_SerializedValueOtherThanTheFinalizedPIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .entries = {entry(1, 8, true, 3, AckSet({37}))}, .consumer_debit = 3})
      .add(message(1, 8));
  EXPECT_TRUE(FirstViolation(check(model(std::nullopt, std::nullopt), t), RuleId::kE4,
                             {"command 1 serialized message_permits = 8",
                              "its send finalized P = 3"}));
}

TEST(MonitorBroker, OneFinalizedValueEverywhere) {
  Trace t;
  t.add(Send{.consumer = 0,
             .dispatcher = DispatcherKind::kPersistentKeyShared,
             .entries = {entry(1, 8, true, 3, AckSet({37})), entry(2, 10, false, std::nullopt),
                         entry(3, 1, true, 1)},
             .consumer_debit = 4,
             .dispatcher_debit = 4})
      .add(message(1, 3, AckSet({37}), 8))
      .add(message(3, 1, {}, 1));
  EXPECT_TRUE(Clean(check(model(std::nullopt, std::nullopt), t)));
}

// ======================================================================================

}  // namespace
}  // namespace permitcheck::spec
