// trace/internal/schema.h: name lookups. Every field and event name of the format is found, as
// itself; names that differ by one byte, a prefix, a suffix or the case are not.
#include "trace/internal/schema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace permitcheck::trace::internal {
namespace {

// Spellings close to `name` that are not it.
std::vector<std::string> near_misses(const std::string& name) {
  std::vector<std::string> out = {name + "x", name.substr(1), name.substr(0, name.size() - 1),
                                  "x" + name, name + name};
  for (std::size_t i = 0; i < name.size(); ++i) {
    std::string changed = name;
    changed[i] = static_cast<char>(changed[i] == 'a' ? 'b' : 'a');
    out.push_back(changed);
    std::string upper = name;
    upper[i] = static_cast<char>(upper[i] - 'a' + 'A');
    out.push_back(upper);
  }
  return out;
}

// Expects `found` false for every near miss of every name that is not itself a name.
template <typename Found>
void expect_near_misses_not_found(const std::vector<std::string>& names, Found found) {
  for (const std::string& name : names) {
    for (const std::string& miss : near_misses(name)) {
      if (std::find(names.begin(), names.end(), miss) != names.end()) continue;
      EXPECT_FALSE(found(miss)) << miss;
    }
  }
}

TEST(Schema, FindFieldFindsEveryFieldAndNoNearMiss) {
  std::vector<std::string> names;
  for (std::size_t f = 0; f < static_cast<std::size_t>(FieldId::kCount); ++f) {
    const std::string name(field_info(static_cast<FieldId>(f)).name);
    names.push_back(name);
    ASSERT_EQ(find_field(name), static_cast<FieldId>(f)) << name;
  }
  expect_near_misses_not_found(names, [](const std::string& s) { return find_field(s).has_value(); });
  EXPECT_FALSE(find_field("").has_value());
  EXPECT_FALSE(find_field("ev").has_value());
}

TEST(Schema, FindEventFindsEveryKindButTheExtensionAndNoNearMiss) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k + 1 < kEventKinds; ++k) {
    const std::string name(event_schema(k).name);
    names.push_back(name);
    ASSERT_EQ(find_event(name), k) << name;
  }
  expect_near_misses_not_found(names, [](const std::string& s) { return find_event(s).has_value(); });
  EXPECT_FALSE(find_event("").has_value());
  EXPECT_FALSE(find_event("x-note").has_value());
}

}  // namespace
}  // namespace permitcheck::trace::internal
