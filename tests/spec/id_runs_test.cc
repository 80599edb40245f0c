// IdRuns (spec/internal/id_runs.h): the compact set of finished ids behaves as a map from id to
// value under any order of inserts and removals, and an increasing sequence costs one run.
#include "spec/internal/id_runs.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "spec/events.h"

namespace permitcheck::spec::monitor_internal {
namespace {

// Ids from a small range (so runs form, split and merge) and a few text ids; values from a
// small set (so neighbours often share one) or rising with the id (so runs rise).
RC_GTEST_PROP(IdRuns, BehavesAsAMapFromIdToValue, ()) {
  IdRuns<std::uint32_t> runs;
  std::map<std::pair<bool, std::string>, std::uint32_t> model;
  const auto key = [](const Id& id) {
    return std::pair{id.is_number(),
                     id.is_number() ? std::to_string(id.as_number()) : id.as_text()};
  };
  const int steps = *rc::gen::inRange(1, 300);
  for (int i = 0; i < steps; ++i) {
    const Id id = *rc::gen::weightedOneOf<Id>(
        {{9, rc::gen::map(rc::gen::inRange<std::uint64_t>(0, 40), Id::number)},
         {1, rc::gen::map(rc::gen::element<std::uint64_t>(0, ~std::uint64_t{0},
                                                          ~std::uint64_t{0} - 1),
                          Id::number)},
         {1, rc::gen::map(rc::gen::element<std::string>("a", "b"), Id::text)}});
    // Mostly a small value; else one rising with the id (so rising runs form, split and join).
    const std::uint32_t small = *rc::gen::inRange<std::uint32_t>(0, 3);
    const std::uint32_t value =
        id.is_number() && *rc::gen::inRange(0, 3) == 0
            ? static_cast<std::uint32_t>(id.as_number()) + *rc::gen::inRange<std::uint32_t>(0, 2)
            : small;
    switch (*rc::gen::inRange(0, 3)) {
      case 0:
        runs.insert(id, value);
        model[key(id)] = value;
        break;
      case 1: {
        const std::optional<std::uint32_t> taken = runs.take(id);
        const auto it = model.find(key(id));
        RC_ASSERT(taken.has_value() == (it != model.end()));
        if (it != model.end()) {
          RC_ASSERT(*taken == it->second);
          model.erase(it);
        }
        break;
      }
      default: {
        const std::optional<std::uint32_t> found = runs.find(id);
        const auto it = model.find(key(id));
        RC_ASSERT(found.has_value() == (it != model.end()));
        if (found) RC_ASSERT(*found == it->second);
      }
    }
    RC_ASSERT(runs.size() == model.size());
    RC_ASSERT(runs.empty() == model.empty());
  }
  for (const auto& [k, value] : model) {
    const Id id = k.first ? Id::number(std::stoull(k.second)) : Id::text(k.second);
    RC_ASSERT(runs.find(id) == std::optional<std::uint32_t>(value));
  }
}

TEST(IdRuns, AMillionIncreasingIdsWithOneValueCostOneRun) {
  IdRuns<std::uint32_t> runs;
  for (std::uint64_t i = 1; i <= 1'000'000; ++i) runs.insert(Id::number(i), 7);
  EXPECT_EQ(runs.size(), 1'000'000u);
  EXPECT_LT(runs.bytes(), 64u);
  EXPECT_EQ(runs.find(Id::number(500'000)), std::optional<std::uint32_t>(7));
  EXPECT_EQ(runs.find(Id::number(0)), std::nullopt);
  EXPECT_EQ(runs.find(Id::number(1'000'001)), std::nullopt);
  // Taking one from the middle splits the run in two; putting it back joins them.
  EXPECT_EQ(runs.take(Id::number(500'000)), std::optional<std::uint32_t>(7));
  EXPECT_EQ(runs.find(Id::number(500'000)), std::nullopt);
  EXPECT_EQ(runs.find(Id::number(500'001)), std::optional<std::uint32_t>(7));
  runs.insert(Id::number(500'000), 7);
  EXPECT_LT(runs.bytes(), 64u);
  EXPECT_EQ(runs.size(), 1'000'000u);
}

// Ids finishing out of order still merge into one run once the gaps fill.
TEST(IdRuns, IdsFinishingOutOfOrderMergeOnceTheGapsFill) {
  IdRuns<std::uint32_t> runs;
  for (std::uint64_t i = 0; i < 10'000; i += 2) runs.insert(Id::number(i), 1);
  const std::size_t sparse = runs.bytes();
  for (std::uint64_t i = 1; i < 10'000; i += 2) runs.insert(Id::number(i), 1);
  EXPECT_LT(runs.bytes(), 64u);
  EXPECT_GT(sparse, runs.bytes());
  EXPECT_EQ(runs.size(), 10'000u);
}

// Values rising by one with the id (commands each on the permit state after the previous
// one's, a new consumer id per permit state) cost one run too, and split and join as alike ones.
TEST(IdRuns, AMillionIdsWithRisingValuesCostOneRun) {
  IdRuns<std::uint64_t> runs;
  for (std::uint64_t i = 1; i <= 1'000'000; ++i) runs.insert(Id::number(i), i + 10);
  EXPECT_LT(runs.bytes(), 64u);
  EXPECT_EQ(runs.find(Id::number(500'000)), std::optional<std::uint64_t>(500'010));
  EXPECT_EQ(runs.take(Id::number(500'000)), std::optional<std::uint64_t>(500'010));
  EXPECT_EQ(runs.find(Id::number(500'001)), std::optional<std::uint64_t>(500'011));
  EXPECT_EQ(runs.find(Id::number(499'999)), std::optional<std::uint64_t>(500'009));
  runs.insert(Id::number(500'000), 500'010);
  EXPECT_LT(runs.bytes(), 64u);
  // A value off the rise starts a run of its own.
  runs.insert(Id::number(1'000'001), 7);
  EXPECT_GT(runs.bytes(), 64u);
  EXPECT_EQ(runs.find(Id::number(1'000'000)), std::optional<std::uint64_t>(1'000'010));
  EXPECT_EQ(runs.find(Id::number(1'000'001)), std::optional<std::uint64_t>(7));
  EXPECT_EQ(runs.size(), 1'000'001u);
}

}  // namespace
}  // namespace permitcheck::spec::monitor_internal
