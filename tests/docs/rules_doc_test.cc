// docs/rules.md, the rulebook in the project's words, has a row for every rule ID of
// spec::all_rules() and every legacy row of spec::legacy_catalogue(): a rule added to the
// specification without its explanation fails here, listing the IDs.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/docs/docs_testing.h"

#include "spec/legacy_catalogue.h"
#include "spec/rule_id.h"

namespace permitcheck::spec {
namespace {

namespace fs = std::filesystem;

using docs_testing::kSourceDir;
using docs_testing::read_file;

// True when `doc` has a table row for `id`: a line that starts with "| ID |" and explains it
// (a non-empty second cell).
bool has_entry(std::string_view doc, std::string_view id) {
  const std::string prefix = "| " + std::string(id) + " | ";
  for (std::size_t pos = 0; pos < doc.size();) {
    const std::size_t eol = doc.find('\n', pos);
    const std::string_view line =
        doc.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? doc.size() : eol + 1;
    if (line.substr(0, prefix.size()) != prefix) continue;
    const std::string_view rest = line.substr(prefix.size());
    if (rest.find_first_not_of(" |") != std::string_view::npos) return true;
  }
  return false;
}

// The IDs of `ids` that have no row in `doc`, space-separated ("" when none is missing).
template <typename Ids>
std::string missing_entries(std::string_view doc, const Ids& ids) {
  std::string missing;
  for (std::string_view id : ids) {
    if (!has_entry(doc, id)) missing.append(" ").append(id);
  }
  return missing;
}

std::vector<std::string_view> rule_names() {
  std::vector<std::string_view> names;
  for (const RuleInfo& r : all_rules()) names.push_back(r.name);
  return names;
}

TEST(RulesDoc, RowMatchIsExact) {
  const std::string doc = "| B10 | Flow adds |\n| K4 |  |\n text | C2 | not at line start\n";
  EXPECT_TRUE(has_entry(doc, "B10"));
  EXPECT_FALSE(has_entry(doc, "B1"));  // "| B10 |" is not B1's row
  EXPECT_FALSE(has_entry(doc, "K4"));  // a row without an explanation does not count
  EXPECT_FALSE(has_entry(doc, "C2"));
  EXPECT_EQ(missing_entries(doc, std::vector<std::string_view>{"B10", "B1", "K4"}), " B1 K4");
}

TEST(RulesDoc, EveryRuleOfTheSpecHasAnEntry) {
  const fs::path path = kSourceDir / "docs" / "rules.md";
  ASSERT_TRUE(fs::is_regular_file(path)) << path;
  const std::string doc = read_file(path);
  EXPECT_EQ(missing_entries(doc, rule_names()), "")
      << "rule IDs of spec::all_rules() without a row in " << path;
}

TEST(RulesDoc, EveryLegacyRowHasAnEntry) {
  const std::string doc = read_file(kSourceDir / "docs" / "rules.md");
  std::vector<std::string_view> ids;
  for (const CatalogueEntry& e : legacy_catalogue()) ids.push_back(e.id);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(missing_entries(doc, ids), "") << "legacy rows without a row in docs/rules.md";
}

TEST(RulesDoc, ARemovedRowIsReported) {
  std::string doc = read_file(kSourceDir / "docs" / "rules.md");
  const std::string row = "| K5 | ";
  const std::size_t at = doc.find(row);
  ASSERT_NE(at, std::string::npos);
  doc.replace(at, row.size(), "| K5x | ");
  EXPECT_EQ(missing_entries(doc, rule_names()), " K5");
}

}  // namespace
}  // namespace permitcheck::spec
