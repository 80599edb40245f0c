#include "spec/plain_text.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spec/ack_set.h"
#include "spec/scenario_verdict.h"

namespace permitcheck::spec {
namespace {

TEST(PlainText, OneIsSingularEveryOtherCountIsPlural) {
  EXPECT_EQ(count_noun(1, "permit"), "1 permit");
  EXPECT_EQ(count_noun(0, "permit"), "0 permits");
  EXPECT_EQ(count_noun(3, "permit"), "3 permits");
  EXPECT_EQ(count_noun(-1, "permit"), "-1 permits");
  EXPECT_EQ(noun(1, "row"), "row");
  EXPECT_EQ(noun(2, "row"), "rows");
}

TEST(PlainText, IrregularPluralIsTheOneGiven) {
  EXPECT_EQ(count_noun(1, "entry", "entries"), "1 entry");
  EXPECT_EQ(count_noun(2, "entry", "entries"), "2 entries");
  EXPECT_EQ(count_noun(0, "index", "indexes"), "0 indexes");
}

TEST(PlainText, CountsOfEveryIntegralTypePrintExactly) {
  EXPECT_EQ(count_noun(std::size_t{1}, "case"), "1 case");
  EXPECT_EQ(count_noun(UINT64_MAX, "unit"), "18446744073709551615 units");
  EXPECT_EQ(count_noun(INT64_MIN, "unit"), "-9223372036854775808 units");
  EXPECT_EQ(count_noun(std::uint32_t{1}, "step"), "1 step");
}

TEST(PlainText, PartialBatchListsTheAcknowledgedIndexes) {
  EXPECT_EQ(acknowledged_text(std::vector<std::int64_t>{1}), "acknowledged {1}");
  EXPECT_EQ(acknowledged_text(std::vector<std::int64_t>{0, 2}), "acknowledged {0,2}");
  EXPECT_EQ(acknowledged_text(std::vector<std::int64_t>{}), "acknowledged {}");
}

TEST(PlainText, AckSetIsWrittenAsItsAcknowledgedIndexesBelowB) {
  // Set bits are the indexes still to deliver: {0} of B = 2 acknowledges index 1.
  EXPECT_EQ(acknowledged_text(AckSet::from_indexes({0}), 2), "acknowledged {1}");
  EXPECT_EQ(acknowledged_text(AckSet::from_indexes({1, 3}), 4), "acknowledged {0,2}");
  EXPECT_EQ(acknowledged_text(AckSet::from_indexes({0, 1}), 2), "acknowledged {}");
  EXPECT_EQ(acknowledged_text(AckSet({0}), 3), "acknowledged {0,1,2}");
}

TEST(PlainText, AckSetBitsAtOrBeyondBAreNamed) {
  EXPECT_EQ(acknowledged_text(AckSet::from_indexes({0, 2, 5, 9}), 8),
            "acknowledged {1,3,4,6,7}, bits {9} set beyond B");
  EXPECT_EQ(acknowledged_text(AckSet::from_indexes({2}), 2),
            "acknowledged {0,1}, bits {2} set beyond B");
}

TEST(PlainText, AckSetOfUnknownBListsItsBits) {
  EXPECT_EQ(acknowledged_text(AckSet::from_indexes({0, 2}), 0), "ack set bits {0,2}");
}

// The drain's finding (spec/scenario_verdict.h) counts its permits in plain words: one permit in
// the singular, more in the plural, and a shortfall bounded to one number as that number.
TEST(PlainText, DrainFindingSaysOnePermitAndManyPermits) {
  std::vector<std::string> rows;
  DrainFacts d{.ran = true, .measured = true, .delta = 1, .text = "d", .scenario = "s"};
  std::optional<Finding> f = drain_verdict({}, d, rows);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->explanation, "the client returned 1 permit too many in s (d)");
  d.delta = 2;
  f = drain_verdict({}, d, rows);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->explanation, "the client returned 2 permits too many in s (d)");
  const DrainFacts bounded{.ran = true, .short_min = 3, .short_max = 3, .text = "d",
                           .scenario = "s"};
  f = drain_verdict({}, bounded, rows);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->explanation, "the client returned 3 permits too few in s (d)");
}

}  // namespace
}  // namespace permitcheck::spec
