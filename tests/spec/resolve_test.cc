#include "spec/resolve.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/generators.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using ::testing::HasSubstr;

using monitor_testing::legacy;
using monitor_testing::rev_d;

const AckSet kWord37(std::vector<std::int64_t>{37});  // {0, 2, 5}
using monitor_testing::kTwoTo31;
using monitor_testing::kTwoTo32Minus1;

TEST(Resolve, RangeIsOneToTwoTo31MinusOneReadUnsigned) {
  EXPECT_FALSE(message_permits_in_range(0));
  EXPECT_TRUE(message_permits_in_range(1));
  EXPECT_TRUE(message_permits_in_range(2147483647));
  EXPECT_FALSE(message_permits_in_range(kTwoTo31));
  EXPECT_FALSE(message_permits_in_range(kTwoTo32Minus1));  // -1 as int32, read unsigned
  EXPECT_FALSE(message_permits_in_range(UINT64_MAX));
}

TEST(Resolve, LadderStepOneIsThePresentExplicitValue) {
  EXPECT_EQ(resolve_early(rev_d(), 3, kWord37), (Resolution{3, PermitSource::kExplicit}));
  EXPECT_EQ(resolve_early(rev_d(), 8, AckSet()), (Resolution{8, PermitSource::kExplicit}));
  EXPECT_EQ(resolve_early(rev_d(), 1, AckSet()), (Resolution{1, PermitSource::kExplicit}));
}

TEST(Resolve, X6_LadderStepTwoCountsEveryAckSetBit) {
  EXPECT_EQ(resolve_early(rev_d(), std::nullopt, kWord37), (Resolution{3, PermitSource::kAckSet}));
  // B is unknown yet: bits beyond any later B are counted too (X6).
  EXPECT_EQ(resolve_early(rev_d(), std::nullopt, AckSet::from_indexes({0, 2, 5, 9, 64})),
            (Resolution{5, PermitSource::kAckSet}));
}

TEST(Resolve, C1_LadderStepThreeIsBOnceMetadataIsParsed) {
  const Validation v = validate_permits(rev_d(), std::nullopt, AckSet(), 8);
  EXPECT_EQ(v.verdict, Verdict::kValid);
  EXPECT_EQ(v.resolution, (Resolution{8, PermitSource::kBatch}));
  EXPECT_EQ(v.rule, RuleId::kC1);
}

TEST(Resolve, LadderStepFourIsTheLegacyOne) {
  EXPECT_EQ(resolve_early(rev_d(), std::nullopt, AckSet()), (Resolution{1, PermitSource::kLegacy}));
  EXPECT_EQ(resolve_early(rev_d(), std::nullopt, AckSet(std::vector<std::int64_t>{0, 0})),
            (Resolution{1, PermitSource::kLegacy}));
}

TEST(Resolve, OutOfRangeExplicitFallsThroughTheLadder) {
  EXPECT_EQ(resolve_early(rev_d(), 0, kWord37), (Resolution{3, PermitSource::kAckSet}));
  EXPECT_EQ(resolve_early(rev_d(), kTwoTo31, AckSet()), (Resolution{1, PermitSource::kLegacy}));
}

TEST(Resolve, LegacyTreatsTheFieldAsAbsent) {
  EXPECT_EQ(resolve_early(legacy(), 3, AckSet()), (Resolution{1, PermitSource::kLegacy}));
  EXPECT_EQ(resolve_early(legacy(), 3, kWord37), (Resolution{3, PermitSource::kAckSet}));
  const Validation v = validate_permits(legacy(), 5, AckSet(), 8);
  EXPECT_EQ(v.verdict, Verdict::kValid);
  EXPECT_EQ(v.resolution, (Resolution{8, PermitSource::kBatch}));
  // Even an out-of-range value is unread, so never a protocol error.
  EXPECT_EQ(validate_permits(legacy(), 0, AckSet(), 8).verdict, Verdict::kValid);
}

TEST(Resolve, PresenceOfTheFieldIsMeaningful) {
  const Resolution present = resolve_early(rev_d(), 3, kWord37);
  const Resolution absent = resolve_early(rev_d(), std::nullopt, kWord37);
  EXPECT_EQ(present.source, PermitSource::kExplicit);
  EXPECT_EQ(absent.source, PermitSource::kAckSet);
  EXPECT_EQ(validate_permits(rev_d(), 3, kWord37, 8).rule, RuleId::kC3);
  EXPECT_EQ(validate_permits(rev_d(), std::nullopt, kWord37, 8).rule, RuleId::kC1);
}

TEST(Resolve, C3_ExplicitEqualToBoundedPopcountIsValid) {
  const Validation v = validate_permits(rev_d(), 3, kWord37, 8);
  EXPECT_EQ(v.verdict, Verdict::kValid);
  EXPECT_EQ(v.resolution, (Resolution{3, PermitSource::kExplicit}));
  EXPECT_EQ(v.rule, RuleId::kC3);
  // Bits at or beyond B are ignored once B is known (decision 1).
  EXPECT_EQ(validate_permits(rev_d(), 3, AckSet::from_indexes({0, 2, 5, 9}), 8).verdict,
            Verdict::kValid);
}

TEST(Resolve, ExplicitEqualToBIsValid) {
  const Validation v = validate_permits(rev_d(), 8, AckSet(), 8);
  EXPECT_EQ(v.verdict, Verdict::kValid);
  EXPECT_EQ(v.resolution, (Resolution{8, PermitSource::kExplicit}));
  EXPECT_EQ(validate_permits(rev_d(), 1, AckSet(), 1).verdict, Verdict::kValid);
}

TEST(Resolve, C4_ZeroIsProtocolError) {
  const Validation v = validate_permits(rev_d(), 0, AckSet(), 8);
  EXPECT_EQ(v.verdict, Verdict::kProtocolError);
  EXPECT_EQ(v.rule, RuleId::kC4);
  EXPECT_THAT(v.reason, HasSubstr("message_permits 0"));
}

TEST(Resolve, C4_TwoTo31IsProtocolError) {
  const Validation v = validate_permits(rev_d(), kTwoTo31, AckSet(), 8);
  EXPECT_EQ(v.verdict, Verdict::kProtocolError);
  EXPECT_EQ(v.rule, RuleId::kC4);
  EXPECT_THAT(v.reason, HasSubstr("2147483648"));
}

TEST(Resolve, C4_TwoTo32Minus1ReadUnsignedIsProtocolError) {
  const Validation v = validate_permits(rev_d(), kTwoTo32Minus1, kWord37, 8);
  EXPECT_EQ(v.verdict, Verdict::kProtocolError);
  EXPECT_EQ(v.rule, RuleId::kC4);
  EXPECT_THAT(v.reason, HasSubstr("4294967295"));
}

TEST(Resolve, C5_ExplicitDifferentFromExpectedIsInconsistent) {
  const Validation v = validate_permits(rev_d(), 4, kWord37, 8);
  EXPECT_EQ(v.verdict, Verdict::kInconsistent);
  EXPECT_EQ(v.rule, RuleId::kC5);
  EXPECT_EQ(v.resolution, (Resolution{4, PermitSource::kExplicit}));  // settle exactly P
  EXPECT_THAT(v.reason, HasSubstr("explicit 4 != expected 3"));
  const Validation complete = validate_permits(rev_d(), 7, AckSet(), 8);
  EXPECT_EQ(complete.verdict, Verdict::kInconsistent);
  EXPECT_THAT(complete.reason, HasSubstr("explicit 7 != expected 8"));
}

TEST(Resolve, C5_ExplicitWithNoDeliverableIndexIsInconsistent) {
  for (const auto& [ack_set, b] : std::vector<std::pair<AckSet, std::int64_t>>{
           {AckSet(), 0},
           {AckSet(), -1},
           {AckSet(std::vector<std::int64_t>{0}), 8},
           {AckSet::from_indexes({9, 10}), 8}}) {
    const Validation v = validate_permits(rev_d(), 1, ack_set, b);
    EXPECT_EQ(v.verdict, Verdict::kInconsistent) << b;
    EXPECT_EQ(v.rule, RuleId::kC5);
    EXPECT_EQ(v.resolution, (Resolution{1, PermitSource::kExplicit}));
  }
}

TEST(Resolve, C5_FieldAbsentAllZeroAckSetSettlesTheEarlyValue) {
  const Validation v = validate_permits(rev_d(), std::nullopt, AckSet(std::vector<std::int64_t>{0}), 8);
  EXPECT_EQ(v.verdict, Verdict::kInconsistent);
  EXPECT_EQ(v.rule, RuleId::kC5);
  EXPECT_EQ(v.resolution, (Resolution{1, PermitSource::kLegacy}));
}

TEST(Resolve, C5_FieldAbsentBitsOnlyBeyondBSettleTheEarlyValue) {
  const AckSet beyond = AckSet::from_indexes({9, 10});
  const Validation v = validate_permits(rev_d(), std::nullopt, beyond, 8);
  EXPECT_EQ(v.verdict, Verdict::kInconsistent);
  EXPECT_EQ(v.rule, RuleId::kC5);
  EXPECT_EQ(v.resolution, (Resolution{2, PermitSource::kAckSet}));
  EXPECT_EQ(v.resolution, resolve_early(rev_d(), std::nullopt, beyond));
}

TEST(Resolve, C5_FieldAbsentNonPositiveBSettlesTheEarlyValue) {
  for (std::int64_t b : {0, -1}) {
    const Validation v = validate_permits(rev_d(), std::nullopt, AckSet(), b);
    EXPECT_EQ(v.verdict, Verdict::kInconsistent) << b;
    EXPECT_EQ(v.rule, RuleId::kC5);
    EXPECT_EQ(v.resolution, (Resolution{1, PermitSource::kLegacy}));
    EXPECT_THAT(v.reason, HasSubstr("batch_size " + std::to_string(b)));
  }
  const Validation with_bits = validate_permits(rev_d(), std::nullopt, kWord37, 0);
  EXPECT_EQ(with_bits.verdict, Verdict::kInconsistent);
  EXPECT_EQ(with_bits.resolution, (Resolution{3, PermitSource::kAckSet}));
}

TEST(Resolve, C1_FieldAbsentPartialBatchUsesTheBoundedPopcount) {
  const AckSet s = AckSet::from_indexes({0, 2, 5, 9});
  EXPECT_EQ(resolve_early(rev_d(), std::nullopt, s).p, 4);  // X6 before B is known
  const Validation v = validate_permits(rev_d(), std::nullopt, s, 8);
  EXPECT_EQ(v.verdict, Verdict::kValid);
  EXPECT_EQ(v.resolution, (Resolution{3, PermitSource::kAckSet}));
  EXPECT_EQ(v.rule, RuleId::kC1);
}

TEST(Resolve, PermitSourceNamesRoundTrip) {
  const std::vector<std::pair<PermitSource, std::string_view>> names = {
      {PermitSource::kExplicit, "explicit"},
      {PermitSource::kAckSet, "ack_set"},
      {PermitSource::kBatch, "batch"},
      {PermitSource::kLegacy, "legacy"}};
  for (const auto& [source, name] : names) {
    EXPECT_EQ(permit_source_name(source), name);
    EXPECT_EQ(parse_permit_source(name), source);
  }
  EXPECT_EQ(parse_permit_source("ackset"), std::nullopt);
}

// ---- Properties ----

std::optional<std::uint64_t> gen_field() {
  return *rc::gen::oneOf(
      rc::gen::just(std::optional<std::uint64_t>()),
      rc::gen::map(rc::gen::inRange<std::uint64_t>(0, 300),
                   [](std::uint64_t v) { return std::optional<std::uint64_t>(v); }),
      rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                   [](std::uint64_t v) { return std::optional<std::uint64_t>(v); }));
}

RC_GTEST_PROP(Resolve, FieldAbsentIsNeverAProtocolError, ()) {
  const AckSet s = *properties::gen_wire_ack_set();
  const std::int64_t b = *rc::gen::inRange<std::int64_t>(-2, 300);
  for (const Ruleset* rules : all_rulesets()) {
    const Validation v = validate_permits(*rules, std::nullopt, s, b);
    RC_ASSERT(v.verdict != Verdict::kProtocolError);
    RC_ASSERT(v.resolution.p >= 1);
    RC_ASSERT(v.resolution.source != PermitSource::kExplicit);
  }
}

RC_GTEST_PROP(Resolve, C3_C4_C5_VerdictFollowsRangeAndExpectedValue, ()) {
  const AckSet s = *properties::gen_wire_ack_set();
  const std::int64_t b = *rc::gen::inRange<std::int64_t>(-2, 300);
  const std::optional<std::uint64_t> field = gen_field();
  const Validation v = validate_permits(rev_d(), field, s, b);
  const std::int64_t expected = s.absent() ? b : s.count_below(b);
  if (!field.has_value()) {
    RC_ASSERT(v.rule == (v.verdict == Verdict::kValid ? RuleId::kC1 : RuleId::kC5));
    if (v.verdict == Verdict::kValid) RC_ASSERT(v.resolution.p == expected);
    if (v.verdict == Verdict::kInconsistent)
      RC_ASSERT(v.resolution == resolve_early(rev_d(), field, s));
  } else if (!message_permits_in_range(*field)) {
    RC_ASSERT(v.verdict == Verdict::kProtocolError);
    RC_ASSERT(v.rule == RuleId::kC4);
  } else {
    const bool matches = static_cast<std::int64_t>(*field) == expected && expected >= 1;
    RC_ASSERT(v.verdict == (matches ? Verdict::kValid : Verdict::kInconsistent));
    RC_ASSERT(v.rule == (matches ? RuleId::kC3 : RuleId::kC5));
    RC_ASSERT(v.resolution == resolve_early(rev_d(), field, s));  // C2 early value holds
  }
}

}  // namespace
}  // namespace permitcheck::spec
