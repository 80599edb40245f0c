// docs/bug-catalogue.md stays true to the rows `bug_catalogue()` defines
// (conformance/bug_catalogue.cc, read as text): the summary table has one row per defined row,
// with its client and its affected and fixed releases, the row count it states is right, every
// row id the document tabulates is defined, and no table is broken by a blank line.
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/docs/docs_testing.h"

namespace permitcheck {
namespace {

using docs_testing::kSourceDir;
using docs_testing::read_file;

struct Row {
  std::string client, affected, fixed;
};

// The rows of conformance/bug_catalogue.cc: `.id = "..."` followed, before the next id, by
// `.client`, `.affected` and `.fixed`.
std::map<std::string, Row> defined_rows(const std::string& source) {
  std::map<std::string, Row> rows;
  static const std::regex id(R"re(\.id = "([^"]+)")re");
  std::vector<std::pair<std::string, std::size_t>> ids;
  for (std::sregex_iterator m(source.begin(), source.end(), id), end; m != end; ++m) {
    ids.emplace_back((*m)[1], static_cast<std::size_t>(m->position()));
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::size_t stop = i + 1 < ids.size() ? ids[i + 1].second : source.size();
    const std::string chunk = source.substr(ids[i].second, stop - ids[i].second);
    auto field = [&](const char* name) {
      std::smatch m;
      const std::regex re(std::string(R"re(\.)re") + name + R"re( = "([^"]+)")re");
      return std::regex_search(chunk, m, re) ? m[1].str() : std::string();
    };
    rows[ids[i].first] = Row{field("client"), field("affected"), field("fixed")};
  }
  return rows;
}

// The cells of a table line "| a | b |", trimmed.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::size_t at = 1;
  while (at < line.size()) {
    const std::size_t bar = line.find(" |", at);
    if (bar == std::string::npos) break;
    std::string cell = line.substr(at, bar - at);
    const std::size_t first = cell.find_first_not_of(' ');
    out.push_back(first == std::string::npos ? "" : cell.substr(first));
    at = bar + 2;
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return lines;
}

// What the document gets wrong about the defined rows; empty when it agrees.
std::vector<std::string> doc_problems(const std::string& doc,
                                      const std::map<std::string, Row>& rows) {
  std::vector<std::string> problems;
  const std::vector<std::string> lines = lines_of(doc);
  // The summary table: the first table whose header starts "| id | client |".
  std::map<std::string, std::vector<std::string>> summary;
  std::size_t i = 0;
  while (i < lines.size() && lines[i].rfind("| id | client |", 0) != 0) ++i;
  if (i == lines.size()) problems.push_back("no summary table ('| id | client | ...')");
  for (i += 2; i < lines.size() && lines[i].rfind("|", 0) == 0; ++i) {
    const std::vector<std::string> c = cells(lines[i]);
    if (c.size() >= 5) summary[c[0]] = c;
  }
  for (const auto& [id, row] : rows) {
    const auto it = summary.find("`" + id + "`");
    if (it == summary.end()) {
      problems.push_back(id + ": no row in the summary table");
      continue;
    }
    const std::vector<std::string>& c = it->second;
    if (c[1] != row.client) problems.push_back(id + ": client " + c[1] + ", defined " + row.client);
    if (c[3].find(row.affected) == std::string::npos) {
      problems.push_back(id + ": the affected cell does not name " + row.affected);
    }
    if (c[4].find(row.fixed) == std::string::npos) {
      problems.push_back(id + ": the fixed cell does not name " + row.fixed);
    }
  }
  // "The six rows:" states the count.
  static const std::vector<std::string> numbers = {"no",    "one",  "two", "three", "four",
                                                   "five",  "six",  "seven", "eight", "nine",
                                                   "ten",   "eleven", "twelve"};
  if (rows.size() < numbers.size() &&
      doc.find("The " + numbers[rows.size()] + " rows:") == std::string::npos) {
    problems.push_back("no 'The " + numbers[rows.size()] + " rows:' before the summary table");
  }
  // Every tabulated row id ("| `go-833` | ...") is defined.
  static const std::regex row_id(R"(^\| `([a-z]+-[0-9]+)` \|)");
  for (const std::string& line : lines) {
    std::smatch m;
    if (std::regex_search(line, m, row_id) && !rows.count(m[1])) {
      problems.push_back(m[1].str() + ": tabulated but not defined in bug_catalogue()");
    }
  }
  // A blank line between two table lines splits the table in two.
  for (std::size_t k = 1; k + 1 < lines.size(); ++k) {
    if (lines[k].empty() && lines[k - 1].rfind("|", 0) == 0 && lines[k + 1].rfind("|", 0) == 0) {
      problems.push_back("a blank line breaks a table at line " + std::to_string(k + 1));
    }
  }
  return problems;
}

TEST(BugCatalogueDoc, TheDocumentAgreesWithTheDefinedRows) {
  const std::map<std::string, Row> rows =
      defined_rows(read_file(kSourceDir / "conformance/bug_catalogue.cc"));
  ASSERT_GE(rows.size(), 6u) << "bug_catalogue() rows not found in conformance/bug_catalogue.cc";
  for (const auto& [id, row] : rows) {
    EXPECT_FALSE(row.client.empty() || row.affected.empty() || row.fixed.empty()) << id;
  }
  const std::string doc = read_file(kSourceDir / "docs/bug-catalogue.md");
  ASSERT_FALSE(doc.empty());
  for (const std::string& p : doc_problems(doc, rows)) ADD_FAILURE() << p;
}

TEST(BugCatalogueDoc, TheCheckRejectsAMissingRowAWrongReleaseAnUndefinedIdAndABrokenTable) {
  const std::map<std::string, Row> rows = {{"go-1", Row{"go", "v0.1.0", "v0.2.0"}},
                                           {"cpp-2", Row{"cpp", "3.6.1", "3.7.0"}}};
  const std::string head = "The two rows:\n\n| id | client | bug | affected | fixed |\n"
                           "| --- | --- | --- | --- | --- |\n";
  const std::string go = "| `go-1` | go | #1 | v0.1.0: E5 | v0.2.0: pass |\n";
  const std::string cpp = "| `cpp-2` | cpp | #2 | pulsar-client 3.6.1 | 3.7.0: pass |\n";
  EXPECT_TRUE(doc_problems(head + go + cpp, rows).empty());
  EXPECT_EQ(doc_problems(head + go, rows).size(), 1u);  // cpp-2 missing
  std::string wrong = head + go + cpp;
  wrong.replace(wrong.find("v0.2.0"), 6, "v0.3.0");
  EXPECT_EQ(doc_problems(wrong, rows).size(), 1u);
  EXPECT_EQ(doc_problems(head + go + cpp + "\nText.\n\n| `java-9` | x |\n", rows).size(), 1u);
  // A blank line inside the table: the second row falls out of it, and the table is broken.
  EXPECT_EQ(doc_problems(head + go + "\n" + cpp, rows).size(), 2u);
  std::string count = head + go + cpp;
  count.replace(count.find("two"), 3, "six");
  EXPECT_EQ(doc_problems(count, rows).size(), 1u);
}

}  // namespace
}  // namespace permitcheck
