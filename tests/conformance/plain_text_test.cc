// The conformance scenarios' texts in plain words (issue 35): a partial batch in a scenario's
// parameters is written as every text writes it (spec::acknowledged_text), one entry from the
// next set apart by a comma.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/scenario.h"

namespace permitcheck::conformance {
namespace {

TEST(ConformancePlainText, APartialBatchIsNamedByItsAcknowledgedIndexes) {
  ScenarioParams p;
  p.kind = ScenarioKind::kPartialBatches;
  p.entries = {EntrySpec{.batch_size = 2, .batched = true, .cleared = {1}},
               EntrySpec{.batch_size = 3, .batched = true, .cleared = {0, 2}}, single(),
               EntrySpec{.batch_size = 5, .batched = true, .fault = EntryFault::kChecksum}};
  const std::string text = describe(p);
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "entries=[b2 acknowledged {1}, b3 acknowledged {0,2}, single, "
                        "b5!checksum]"))
      << text;
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("cleared"))) << text;
}

}  // namespace
}  // namespace permitcheck::conformance
