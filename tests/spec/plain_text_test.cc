#include "spec/plain_text.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "spec/ack_set.h"

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

}  // namespace
}  // namespace permitcheck::spec
