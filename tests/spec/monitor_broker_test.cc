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
                             {"entry 1 finalized P = 8 but B = 8, acknowledged {1,3,4,6,7} "
                              "give 3"}));
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
                              "10 permits lost"}));
  Trace under;
  under.add(Send{.consumer = 0, .entries = {entry(1, 10, true, 10)}, .consumer_debit = 7});
  EXPECT_TRUE(FirstViolation(check(broker(), under), RuleId::kB4,
                             {"debited 7 but the finalized sum is 10", "3 permits over-granted"}));
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

// B8 (decision 11): the entry whose P would overflow the send's sum, and every later one, is
// neither sent nor debited; the entries before it stay finalized and debited. Pulsar's
// ConsumerTest.testSendMessagesResultRejectsPartialFinalization: slot 0 keeps 2^31-1.
TEST(MonitorBroker, B8_OverflowKeepsTheEntriesBeforeTheOverflowingOne) {
  for (DispatcherKind kind : {DispatcherKind::kPersistentShared, DispatcherKind::kSingleActive}) {
    const std::optional<std::int64_t> aggregate =
        has_aggregate(kind) ? std::optional<std::int64_t>(kMaxPermits) : std::nullopt;
    Trace good;
    good.add(Send{.consumer = 0,
                  .dispatcher = kind,
                  .entries = {entry(1, kMaxPermits, true, kMaxPermits),
                              entry(2, 1, true, std::nullopt), entry(3, 1, true, std::nullopt)},
                  .consumer_debit = kMaxPermits,
                  .dispatcher_debit = aggregate});
    for (const Ruleset* rules : all_rulesets()) {  // every ruleset checks its sums (B8)
      EXPECT_TRUE(Clean(check(broker(rules->id), good)))
          << dispatcher_name(kind) << " " << rules->name;
    }
  }
  Trace largest;  // 2^31-1 alone is in range
  largest.add(Send{.consumer = 0,
                   .entries = {entry(1, kMaxPermits, true, kMaxPermits)},
                   .consumer_debit = kMaxPermits});
  EXPECT_TRUE(Clean(check(broker(), largest)));
}

TEST(MonitorBroker, B8_OverflowingSendThatFinalizesNothingIsReported) {
  // The all-or-nothing reading: the entry before the overflow is dropped too.
  Trace t;
  t.add(Send{.consumer = 0,
             .dispatcher = DispatcherKind::kPersistentShared,
             .entries = {entry(1, kMaxPermits, true, std::nullopt),
                         entry(2, 1, true, std::nullopt)},
             .consumer_debit = 0,
             .dispatcher_debit = 0});
  const MonitorReport r = check(broker(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kB8,
                             {"consumer 0 debited 0 but the finalized sum of the entries before "
                              "entry 2",
                              "B8: finalized sum 2147483647 + 1 of the entry at index 1 overflows",
                              "is 2147483647 (2147483647 permits over-granted)"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kB8,
                      {"persistent_shared aggregate debited 0 but the finalized sum of the "
                       "entries before entry 2"}));
}

TEST(MonitorBroker, B8_OverflowingEntryFinalizedAndDebitedIsReported) {
  Trace t;
  t.add(Send{.consumer = 0,
             .entries = {entry(1, kMaxPermits, true, kMaxPermits), entry(2, 1, true, 1)},
             .consumer_debit = kMaxPermits + 1});
  const MonitorReport r = check(broker(), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kB8,
                             {"entry 2 was finalized with P = 1 but the send stops at entry 2",
                              "neither sent nor debited"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kB8,
                      {"consumer 0 debited 2147483648", "is 2147483647 (1 permit lost)"}));
  // An entry after the overflowing one is not finalized either, even when it would fit.
  Trace later;
  later.add(Send{.consumer = 0,
                 .entries = {entry(1, kMaxPermits - 1, true, kMaxPermits - 1),
                             entry(2, 2, true, std::nullopt), entry(3, 1, true, 1)},
                 .consumer_debit = kMaxPermits});
  EXPECT_TRUE(FirstViolation(check(broker(), later), RuleId::kB8,
                             {"entry 3 was finalized with P = 1 but the send stops at entry 2"}));
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

// B11, decision 10: a failed broker write is connection loss. Pulsar's
// ConsumerTest.testSendMessagesWriteFailureDisconnectsConsumer: the consumer is closed and
// removed after the write of its send fails.
TEST(MonitorBroker, WriteFailureFollowedByRemovalPasses) {
  Trace t;
  t.wire_subscribed(100)
      .add(Send{.consumer = 0, .inc = s("b1"), .entries = {entry(1, 1, true, 1)},
                .consumer_debit = 1})
      .add(WriteFailed{.consumer = 0, .inc = s("b1")})
      .add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(ConsumerRemoved{.consumer = 0, .inc = s("b1")});
  EXPECT_TRUE(Clean(check(model(100, 50), t)));
  // The replacement incarnation starts clean and may be sent to.
  t.add(Subscribe{.cnx = s("c1"), .consumer = 0})
      .add(SubscribeOk{.cnx = s("c1"), .consumer = 0})
      .add(flow(100))
      .add(Send{.consumer = 0, .inc = s("b2"), .entries = {entry(2, 1, true, 1)},
                .consumer_debit = 1})
      .add(message(2, 1));
  EXPECT_TRUE(Clean(check(model(100, 50), t)));
}

TEST(MonitorBroker, B11_SendAfterAFailedWriteIsReported) {
  Trace t;
  t.add(Send{.consumer = 0, .inc = s("b1"), .entries = {entry(1, 1, true, 1)},
             .consumer_debit = 1})
      .add(WriteFailed{.consumer = 0, .inc = s("b1")})
      .add(Send{.consumer = 0, .inc = s("b1"), .entries = {entry(2, 1, true, 1)},
                .consumer_debit = 1});
  EXPECT_TRUE(FirstViolation(check(broker(), t), RuleId::kB11,
                             {"send to consumer 0 debited 1 after a write to it failed on line 3",
                              "connection loss"}));
  // Without incarnation ids too, until the consumer is removed.
  Trace bare;
  bare.add(WriteFailed{.consumer = 0})
      .add(Send{.consumer = 0, .entries = {entry(2, 1, true, 1)}, .consumer_debit = 1});
  EXPECT_TRUE(FirstViolation(check(broker(), bare), RuleId::kB11, {"after a write to it failed"}));
}

TEST(MonitorBroker, B11_MessageAfterAFailedWriteIsReported) {
  // The broker keeps the consumer: its next MESSAGE goes out on the same incarnation.
  Trace t;
  t.wire_subscribed(100)
      .add(Send{.consumer = 0, .inc = s("b1"), .entries = {entry(1, 1, true, 1)},
                .consumer_debit = 1})
      .add(WriteFailed{.consumer = 0, .inc = s("b1")})
      .add(message(2, 1));
  EXPECT_TRUE(FirstViolation(check(model(100, 50), t), RuleId::kB11,
                             {"MESSAGE command 2 to consumer 0 on connection c1 after a write to "
                              "it failed on line 7"}));
  // A connection that really ended takes the consumer with it: a new connection is clean.
  Trace lost;
  lost.wire_subscribed(100)
      .add(WriteFailed{.consumer = 0})
      .add(Disconnect{.cnx = s("c1")})
      .add(ConsumerRemoved{.consumer = 0})
      .wire_subscribed(100, "c2")
      .add(message(3, 1, {}, std::nullopt, "c2"));
  EXPECT_TRUE(Clean(check(model(100, 50), lost)));
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
