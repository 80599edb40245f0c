#include "spec/finalize.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

using monitor_testing::legacy;
using monitor_testing::rev_d;

SendResult finalize_ok(const Ruleset& rules, DispatcherKind kind,
                       const std::vector<SendEntry>& entries) {
  SendResult r = finalize_permits(rules, kind, entries);
  EXPECT_FALSE(r.overflow.has_value()) << r.overflow->reason;
  return r;
}

TEST(FinalizePermits, NonBatchedIsOnePermitAndStillSerialized) {
  EXPECT_EQ(candidate_permits(1, AckSet()), 1);
  const SendResult r =
      finalize_ok(rev_d(), DispatcherKind::kPersistentShared, {{.batch_size = 1}});
  ASSERT_EQ(r.commands.size(), 1U);
  EXPECT_EQ(r.commands[0].p, 1);
  EXPECT_EQ(r.commands[0].message_permits, std::optional<std::uint32_t>(1));  // P = 1 included
  EXPECT_EQ(r.consumer_debit, 1);
}

TEST(FinalizePermits, CompleteBatchOfEightIsEight) {
  EXPECT_EQ(candidate_permits(8, AckSet()), 8);
  const SendResult r =
      finalize_ok(rev_d(), DispatcherKind::kPersistentShared, {{.batch_size = 8}});
  ASSERT_EQ(r.commands.size(), 1U);
  EXPECT_EQ(r.commands[0].p, 8);
  EXPECT_EQ(r.commands[0].message_permits, std::optional<std::uint32_t>(8));
}

TEST(FinalizePermits, PartialBatchZeroTwoFiveOfEightIsThree) {
  const AckSet word37(std::vector<std::int64_t>{37});
  EXPECT_EQ(word37, AckSet::from_indexes({0, 2, 5}));
  EXPECT_EQ(candidate_permits(8, word37), 3);
  const SendResult r = finalize_ok(rev_d(), DispatcherKind::kPersistentKeyShared,
                                   {{.batch_size = 8, .ack_set = word37}});
  ASSERT_EQ(r.commands.size(), 1U);
  EXPECT_EQ(r.commands[0].p, 3);
  EXPECT_EQ(r.commands[0].message_permits, std::optional<std::uint32_t>(3));
  EXPECT_EQ(r.consumer_debit, 3);
  EXPECT_EQ(r.dispatcher_debit, std::optional<std::int64_t>(3));
}

TEST(FinalizePermits, BitsAtOrBeyondBAreIgnored) {
  EXPECT_EQ(candidate_permits(8, AckSet::from_indexes({0, 2, 5, 8, 9, 70})), 3);
  EXPECT_EQ(candidate_permits(4, AckSet::from_indexes({0, 2, 5})), 2);
}

TEST(FinalizePermits, ZeroCandidateMakesNoCommandAndNoDebit) {
  EXPECT_EQ(candidate_permits(8, AckSet(std::vector<std::int64_t>{0})), 0);
  EXPECT_EQ(candidate_permits(8, AckSet::from_indexes({8, 9})), 0);
  EXPECT_EQ(candidate_permits(0, AckSet()), 0);
  EXPECT_EQ(candidate_permits(-3, AckSet()), 0);
  for (const Ruleset* rules : all_rulesets()) {
    const SendResult r = finalize_ok(
        *rules, DispatcherKind::kPersistentShared,
        {{.batch_size = 8, .ack_set = AckSet(std::vector<std::int64_t>{0})},
         {.batch_size = 0},
         {.batch_size = 8, .ack_set = AckSet::from_indexes({9})}});
    EXPECT_TRUE(r.commands.empty()) << rules->name;
    EXPECT_EQ(r.consumer_debit, 0) << rules->name;
    EXPECT_EQ(r.dispatcher_debit, std::optional<std::int64_t>(0)) << rules->name;
    EXPECT_EQ(r.unacked_increase, 0) << rules->name;
  }
}

TEST(FinalizePermits, RevDDebitsOnlyTheAdmittedEntry) {
  const std::vector<SendEntry> send = {{.batch_size = 10, .admitted = true},
                                       {.batch_size = 10, .admitted = false}};
  const SendResult r = finalize_ok(rev_d(), DispatcherKind::kPersistentShared, send);
  ASSERT_EQ(r.commands.size(), 1U);
  EXPECT_EQ(r.commands[0].entry, 0U);
  EXPECT_EQ(r.commands[0].p, 10);
  EXPECT_EQ(r.consumer_debit, 10);
  EXPECT_EQ(r.dispatcher_debit, std::optional<std::int64_t>(10));
  EXPECT_EQ(r.unacked_increase, 10);
  EXPECT_EQ(r.finalized_sum, 10);
}

TEST(FinalizePermits, LegacyDebitsTwentyForOneCommandOfTen) {
  const std::vector<SendEntry> send = {{.batch_size = 10, .admitted = true},
                                       {.batch_size = 10, .admitted = false}};
  const SendResult r = finalize_ok(legacy(), DispatcherKind::kPersistentShared, send);
  ASSERT_EQ(r.commands.size(), 1U);  // one command of 10 is sent
  EXPECT_EQ(r.commands[0].p, 10);
  EXPECT_EQ(r.finalized_sum, 10);
  EXPECT_EQ(r.consumer_debit, 20);   // 10 permanently lost
  EXPECT_EQ(r.dispatcher_debit, std::optional<std::int64_t>(20));
}

TEST(FinalizePermits, RejectedEntryBetweenAdmittedOnesKeepsEntryIndexes) {
  const SendResult r = finalize_ok(rev_d(), DispatcherKind::kNonPersistentShared,
                                   {{.batch_size = 2}, {.batch_size = 5, .admitted = false},
                                    {.batch_size = 1}, {.batch_size = 0}, {.batch_size = 4}});
  ASSERT_EQ(r.commands.size(), 3U);
  EXPECT_EQ(r.commands[0].entry, 0U);
  EXPECT_EQ(r.commands[1].entry, 2U);
  EXPECT_EQ(r.commands[2].entry, 4U);
  EXPECT_EQ(r.consumer_debit, 7);
}

TEST(FinalizePermits, ConsumerDebitIsSumOfFinalizedP) {
  const SendResult r = finalize_ok(
      rev_d(), DispatcherKind::kSingleActive,
      {{.batch_size = 1}, {.batch_size = 8}, {.batch_size = 8, .ack_set = AckSet({37})}});
  EXPECT_EQ(r.consumer_debit, 1 + 8 + 3);
  EXPECT_EQ(r.finalized_sum, 12);
}

TEST(FinalizePermits, UnackedRisesOnlyInIndividualAckModes) {
  const std::vector<SendEntry> send = {{.batch_size = 8, .ack_set = AckSet({37})},
                                       {.batch_size = 4}};
  for (DispatcherKind kind : all_dispatcher_kinds()) {
    const SendResult r = finalize_ok(rev_d(), kind, send);
    EXPECT_EQ(r.unacked_increase, acks_individually(kind) ? 7 : 0) << dispatcher_name(kind);
  }
  EXPECT_FALSE(acks_individually(DispatcherKind::kSingleActive));
  EXPECT_TRUE(acks_individually(DispatcherKind::kPersistentKeySharedClassic));
}

TEST(FinalizePermits, AllSixDispatchersDebitTheSameFinalizedSum) {
  const std::vector<SendEntry> send = {{.batch_size = 10, .admitted = true},
                                       {.batch_size = 10, .admitted = false},
                                       {.batch_size = 8, .ack_set = AckSet({37})}};
  int aggregates = 0;
  for (DispatcherKind kind : all_dispatcher_kinds()) {
    const SendResult r = finalize_ok(rev_d(), kind, send);
    EXPECT_EQ(r.consumer_debit, 13) << dispatcher_name(kind);
    if (kind == DispatcherKind::kSingleActive) {
      EXPECT_EQ(r.dispatcher_debit, std::nullopt);  // no aggregate: only B4 applies
      EXPECT_EQ(r.unacked_increase, 0);
    } else {
      ++aggregates;
      EXPECT_EQ(r.dispatcher_debit, std::optional<std::int64_t>(13)) << dispatcher_name(kind);
      EXPECT_EQ(r.unacked_increase, 13) << dispatcher_name(kind);
    }
  }
  EXPECT_EQ(aggregates, 6);
}

TEST(FinalizePermits, StickyKeyOutsideCoverageDebitsPreAdmissionSum) {
  Ruleset rev_b_like = rev_d();
  rev_b_like.finalized_dispatchers = DispatcherCoverage::kPersistentSharedOnly;
  const std::vector<SendEntry> send = {{.batch_size = 10, .admitted = true},
                                       {.batch_size = 10, .admitted = false}};
  for (DispatcherKind kind : all_dispatcher_kinds()) {
    const SendResult r = finalize_ok(rev_b_like, kind, send);
    EXPECT_EQ(r.consumer_debit, 10) << dispatcher_name(kind);
    if (!has_aggregate(kind)) {
      EXPECT_EQ(r.dispatcher_debit, std::nullopt);
    } else {
      EXPECT_EQ(r.dispatcher_debit, std::optional<std::int64_t>(is_sticky_key(kind) ? 20 : 10))
          << dispatcher_name(kind);
    }
  }
}

TEST(FinalizePermits, DispatcherNamesAndKinds) {
  const std::vector<std::string_view> names = {
      "persistent_shared",     "persistent_shared_classic", "persistent_key_shared",
      "persistent_key_shared_classic", "non_persistent_shared", "non_persistent_key_shared",
      "single_active"};
  const auto kinds = all_dispatcher_kinds();
  ASSERT_EQ(kinds.size(), names.size());
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    EXPECT_EQ(dispatcher_name(kinds[i]), names[i]);
    EXPECT_EQ(parse_dispatcher(names[i]), kinds[i]);
    EXPECT_EQ(has_aggregate(kinds[i]), i < 6) << names[i];
  }
  EXPECT_EQ(parse_dispatcher("exclusive"), std::nullopt);
  EXPECT_TRUE(is_sticky_key(DispatcherKind::kPersistentKeyShared));
  EXPECT_TRUE(is_sticky_key(DispatcherKind::kPersistentKeySharedClassic));
  EXPECT_TRUE(is_sticky_key(DispatcherKind::kNonPersistentKeyShared));
  EXPECT_FALSE(is_sticky_key(DispatcherKind::kPersistentShared));
  EXPECT_FALSE(is_sticky_key(DispatcherKind::kNonPersistentShared));
  EXPECT_FALSE(is_sticky_key(DispatcherKind::kSingleActive));
}

TEST(FinalizePermits, OldBrokerOmitsTheField) {
  const SendResult r =
      finalize_ok(legacy(), DispatcherKind::kPersistentShared, {{.batch_size = 1}, {.batch_size = 8}});
  ASSERT_EQ(r.commands.size(), 2U);
  for (const FinalizedCommand& c : r.commands) EXPECT_EQ(c.message_permits, std::nullopt);
  EXPECT_EQ(r.commands[1].p, 8);
}

TEST(FinalizePermits, LargestValidPIsAccepted) {
  const SendResult r =
      finalize_ok(rev_d(), DispatcherKind::kPersistentShared, {{.batch_size = kMaxPermits}});
  ASSERT_EQ(r.commands.size(), 1U);
  EXPECT_EQ(r.commands[0].p, 2147483647);
  EXPECT_EQ(r.commands[0].message_permits, std::optional<std::uint32_t>(2147483647U));
  EXPECT_EQ(r.consumer_debit, 2147483647);
}

TEST(FinalizePermits, B8_PAboveTwoToThe31MinusOneStopsTheSendAtThatEntry) {
  const SendResult r =
      finalize_permits(rev_d(), DispatcherKind::kPersistentShared,
                       std::vector<SendEntry>{{.batch_size = 1}, {.batch_size = 2147483648}});
  ASSERT_TRUE(r.overflow.has_value());
  EXPECT_EQ(r.overflow->entry, 1U);
  EXPECT_THAT(r.overflow->reason, HasSubstr("B8"));
  EXPECT_THAT(r.overflow->reason, HasSubstr("2147483648"));
  // The entry before it stays finalized and debited.
  ASSERT_EQ(r.commands.size(), 1U);
  EXPECT_EQ(r.commands[0].entry, 0U);
  EXPECT_EQ(r.consumer_debit, 1);
}

// Pulsar's ConsumerTest.testSendMessagesResultRejectsPartialFinalization (apache/pulsar#26337):
// slot 0 takes 2^31-1, slot 1's P of 1 would overflow the total; slot 0 keeps its value and
// the total stays 2^31-1 (rulebook section 12, item 11; D11).
TEST(FinalizePermits, B8_SumOverflowKeepsTheEntriesBeforeTheOverflowingOne) {
  const std::vector<SendEntry> send = {{.batch_size = kMaxPermits}, {.batch_size = 1}};
  const SendResult r = finalize_permits(rev_d(), DispatcherKind::kPersistentShared, send);
  ASSERT_TRUE(r.overflow.has_value());
  EXPECT_EQ(r.overflow->entry, 1U);
  EXPECT_THAT(r.overflow->reason, HasSubstr("B8: finalized sum 2147483647 + 1 of the entry at "
                                            "index 1 overflows 2^31-1"));
  ASSERT_EQ(r.commands.size(), 1U);
  EXPECT_EQ(r.commands[0].entry, 0U);
  EXPECT_EQ(r.commands[0].p, kMaxPermits);
  EXPECT_EQ(r.commands[0].message_permits, std::optional<std::uint32_t>(2147483647U));
  EXPECT_EQ(r.finalized_sum, kMaxPermits);
  EXPECT_EQ(r.consumer_debit, kMaxPermits);
  EXPECT_EQ(r.dispatcher_debit, std::optional<std::int64_t>(kMaxPermits));
  EXPECT_EQ(r.unacked_increase, kMaxPermits);
}

TEST(FinalizePermits, EntriesAfterTheOverflowingOneAreNotFinalizedEvenWhenTheyWouldFit) {
  const std::vector<SendEntry> send = {
      {.batch_size = kMaxPermits - 1}, {.batch_size = 2}, {.batch_size = 1}};
  const SendResult r = finalize_permits(rev_d(), DispatcherKind::kPersistentKeyShared, send);
  ASSERT_TRUE(r.overflow.has_value());
  EXPECT_EQ(r.overflow->entry, 1U);
  ASSERT_EQ(r.commands.size(), 1U);  // entry 2's P of 1 would fit, but the send stopped
  EXPECT_EQ(r.consumer_debit, kMaxPermits - 1);
  EXPECT_EQ(r.dispatcher_debit, std::optional<std::int64_t>(kMaxPermits - 1));
}

TEST(FinalizePermits, B8_RejectedHugeEntryIsNotFinalizedUnderRevD) {
  const std::vector<SendEntry> send = {{.batch_size = 5},
                                       {.batch_size = std::int64_t{1} << 40, .admitted = false}};
  const SendResult r = finalize_ok(rev_d(), DispatcherKind::kPersistentShared, send);
  EXPECT_EQ(r.consumer_debit, 5);
  // Legacy debits the rejected entry too, so its pre-admission sum overflows there: the send
  // stops at it and debits the 5 before it.
  const SendResult l = finalize_permits(legacy(), DispatcherKind::kPersistentShared, send);
  ASSERT_TRUE(l.overflow.has_value());
  EXPECT_EQ(l.overflow->entry, 1U);
  EXPECT_THAT(l.overflow->reason, HasSubstr("B8: P 1099511627776"));
  EXPECT_EQ(l.consumer_debit, 5);
}

// ---- Properties ----

std::vector<SendEntry> gen_send() {
  const std::size_t n = *rc::gen::inRange<std::size_t>(0, 8);
  std::vector<SendEntry> send;
  for (std::size_t i = 0; i < n; ++i) {
    SendEntry e;
    e.batch_size = *rc::gen::inRange<std::int64_t>(-2, 200);
    if (*rc::gen::arbitrary<bool>()) {
      const std::size_t words = *rc::gen::inRange<std::size_t>(0, 5);
      e.ack_set = AckSet(*rc::gen::container<std::vector<std::int64_t>>(
          words, rc::gen::arbitrary<std::int64_t>()));
    }
    e.admitted = *rc::gen::weightedElement<bool>({{3, true}, {1, false}});
    send.push_back(std::move(e));
  }
  return send;
}

DispatcherKind gen_dispatcher() {
  const auto kinds = all_dispatcher_kinds();
  return *rc::gen::elementOf(std::vector<DispatcherKind>(kinds.begin(), kinds.end()));
}

RC_GTEST_PROP(FinalizePermits, FourDebitsAgreeUnderRevD, ()) {
  const std::vector<SendEntry> send = gen_send();
  const DispatcherKind kind = gen_dispatcher();
  const SendResult r = finalize_permits(rev_d(), kind, send);
  RC_ASSERT(!r.overflow);
  std::int64_t serialized = 0;
  std::int64_t sum_p = 0;
  for (const FinalizedCommand& c : r.commands) {
    RC_ASSERT(c.message_permits.has_value());
    serialized += *c.message_permits;
    sum_p += c.p;
  }
  RC_ASSERT(r.finalized_sum == sum_p);
  RC_ASSERT(r.consumer_debit == sum_p);
  RC_ASSERT(serialized == sum_p);
  if (has_aggregate(kind)) {
    RC_ASSERT(r.dispatcher_debit == std::optional<std::int64_t>(sum_p));
  } else {
    RC_ASSERT(!r.dispatcher_debit.has_value());
  }
  RC_ASSERT(r.unacked_increase == (acks_individually(kind) ? sum_p : 0));
}

RC_GTEST_PROP(FinalizePermits, CommandsAreExactlyAdmittedNonEmptyEntries, ()) {
  const std::vector<SendEntry> send = gen_send();
  for (const Ruleset* rules : all_rulesets()) {
    const SendResult r = finalize_permits(*rules, DispatcherKind::kPersistentShared, send);
    RC_ASSERT(!r.overflow);
    std::size_t next = 0;
    for (std::size_t i = 0; i < send.size(); ++i) {
      const std::int64_t candidate = candidate_permits(send[i].batch_size, send[i].ack_set);
      RC_ASSERT(candidate >= 0);
      RC_ASSERT(candidate <= std::max<std::int64_t>(send[i].batch_size, 0));
      if (!send[i].admitted || candidate == 0) continue;
      RC_ASSERT(next < r.commands.size());
      RC_ASSERT(r.commands[next].entry == i);
      RC_ASSERT(r.commands[next].p == candidate);
      RC_ASSERT(r.commands[next].p >= 1);
      RC_ASSERT(r.commands[next].p <= send[i].batch_size);
      ++next;
    }
    RC_ASSERT(next == r.commands.size());
  }
}

RC_GTEST_PROP(FinalizePermits, LegacyDebitsEveryCandidateRejectedOnesToo, ()) {
  const std::vector<SendEntry> send = gen_send();
  const DispatcherKind kind = gen_dispatcher();
  const SendResult r = finalize_permits(legacy(), kind, send);
  RC_ASSERT(!r.overflow);
  std::int64_t all = 0;
  for (const SendEntry& e : send) all += candidate_permits(e.batch_size, e.ack_set);
  RC_ASSERT(r.consumer_debit == all);
  if (has_aggregate(kind)) RC_ASSERT(r.dispatcher_debit == std::optional<std::int64_t>(all));
  RC_ASSERT(r.consumer_debit >= r.finalized_sum);
}

// B8 at the extremes: batch sizes up to 2^31-1 and beyond, so sums overflow 32 bits. Under
// every ruleset, the commands are exactly the admitted non-empty entries before the entry the
// send stops at, that entry is the first whose P would leave 1..2^31-1 on a checked sum, and the
// debits are those of the entries before it.
RC_GTEST_PROP(FinalizePermits, AnOverflowStopsTheSendAndKeepsEverythingBeforeIt, ()) {
  const std::size_t n = *rc::gen::inRange<std::size_t>(1, 6);
  std::vector<SendEntry> send;
  for (std::size_t i = 0; i < n; ++i) {
    send.push_back({.batch_size = *rc::gen::oneOf(rc::gen::inRange<std::int64_t>(1, 10),
                                                  rc::gen::inRange<std::int64_t>(
                                                      kMaxPermits - 4, kMaxPermits + 3)),
                    .admitted = *rc::gen::weightedElement<bool>({{3, true}, {1, false}})});
  }
  const DispatcherKind kind = gen_dispatcher();
  for (const Ruleset* rules : all_rulesets()) {
    const SendResult r = finalize_permits(*rules, kind, send);
    const std::size_t stop = r.overflow ? r.overflow->entry : send.size();
    RC_ASSERT(stop <= send.size());
    std::int64_t fin = 0;
    std::size_t next = 0;
    for (std::size_t i = 0; i < stop; ++i) {
      if (!send[i].admitted) continue;
      RC_ASSERT(next < r.commands.size());
      RC_ASSERT(r.commands[next].entry == i);
      fin += r.commands[next++].p;
    }
    RC_ASSERT(next == r.commands.size());
    RC_ASSERT(fin == r.finalized_sum);
    RC_ASSERT(fin <= kMaxPermits);
    if (rules->id != RulesetId::kRevD) continue;  // legacy and rev-b check a second sum too
    if (r.overflow) RC_ASSERT(send[stop].admitted && fin + send[stop].batch_size > kMaxPermits);
    RC_ASSERT(r.consumer_debit == fin);
  }
}

}  // namespace
}  // namespace permitcheck::spec
