// The module graph of docs/architecture.md, checked against the code: every `#include "..."`
// of every source file names a header its module may include. The allowed edges are read from
// the table between the include-graph markers of docs/architecture.md, so the document and the
// check cannot drift apart.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/docs/docs_testing.h"

namespace permitcheck {
namespace {

namespace fs = std::filesystem;

using docs_testing::kSourceDir;
using docs_testing::read_file;

// What one module may include: whole modules, single headers, or everything.
struct Allowed {
  bool everything = false;
  std::set<std::string> modules;  // "spec"
  std::set<std::string> headers;  // "spec/vocabulary.h"
};
using Graph = std::map<std::string, Allowed>;

// The backticked words of one table cell.
std::vector<std::string> quoted(std::string_view cell) {
  std::vector<std::string> words;
  for (std::size_t pos = 0;;) {
    const std::size_t open = cell.find('`', pos);
    if (open == std::string_view::npos) break;
    const std::size_t close = cell.find('`', open + 1);
    if (close == std::string_view::npos) break;
    words.emplace_back(cell.substr(open + 1, close - open - 1));
    pos = close + 1;
  }
  return words;
}

// The table between "<!-- include-graph: begin -->" and "<!-- include-graph: end -->".
Graph parse_graph(std::string_view doc) {
  Graph graph;
  const std::size_t begin = doc.find("<!-- include-graph: begin -->");
  const std::size_t end = doc.find("<!-- include-graph: end -->");
  if (begin == std::string_view::npos || end == std::string_view::npos) return graph;
  std::istringstream rows(std::string(doc.substr(begin, end - begin)));
  for (std::string row; std::getline(rows, row);) {
    if (row.rfind("| `", 0) != 0) continue;
    const std::size_t first = row.find('|', 1);
    const std::size_t second = row.find('|', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::vector<std::string> module = quoted(std::string_view(row).substr(0, first));
    if (module.size() != 1) continue;
    Allowed& allowed = graph[module[0]];
    for (const std::string& word :
         quoted(std::string_view(row).substr(first + 1, second - first - 1))) {
      if (word == "*") allowed.everything = true;
      else if (word.find('/') != std::string::npos) allowed.headers.insert(word);
      else allowed.modules.insert(word);
    }
  }
  return graph;
}

struct Include {
  std::string file;  // relative to the source dir
  int line = 0;
  std::string header;
};

// The quoted includes of `text`.
std::vector<Include> includes_of(const std::string& file, const std::string& text) {
  std::vector<Include> found;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::size_t pos = line.find_first_not_of(" \t");
    if (pos == std::string::npos || line[pos] != '#') continue;
    pos = line.find_first_not_of(" \t", pos + 1);
    if (pos == std::string::npos || line.compare(pos, 7, "include") != 0) continue;
    const std::size_t open = line.find('"', pos);
    const std::size_t close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close == std::string::npos) continue;
    found.push_back(Include{file, number, line.substr(open + 1, close - open - 1)});
  }
  return found;
}

// Every C++ source of the project, relative to the source dir (build trees and .git skipped).
std::vector<fs::path> project_sources() {
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(kSourceDir), end; it != end; ++it) {
    const fs::path rel = fs::relative(it->path(), kSourceDir);
    const std::string top = rel.begin()->string();
    if (it->is_directory() && (top.rfind("build", 0) == 0 || top[0] == '.' ||
                               it->path().filename() == "node_modules")) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string ext = it->path().extension().string();
    if (it->is_regular_file() && (ext == ".cc" || ext == ".h") && rel.begin() != --rel.end()) {
      files.push_back(rel);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Why `inc` (in module `from`) is not allowed by `graph`, or "" when it is.
std::string violation(const Graph& graph, const std::string& from, const Include& inc) {
  const std::size_t slash = inc.header.find('/');
  if (slash == std::string::npos) return "";  // a header beside the file, or third-party
  const std::string to = inc.header.substr(0, slash);
  if (!graph.contains(to)) return "";  // not one of our modules: third-party or generated
  if (to == from) return "";
  const std::string where = inc.file + ":" + std::to_string(inc.line) + ": " + from + " -> ";
  if (inc.header.find("/internal/") != std::string::npos && from != "tests") {
    return where + inc.header + " (another module's internal header)";
  }
  const auto it = graph.find(from);
  if (it == graph.end()) return where + inc.header + " (module " + from + " has no row)";
  const Allowed& a = it->second;
  if (a.everything || a.modules.contains(to) || a.headers.contains(inc.header)) return "";
  return where + inc.header;
}

std::string module_of(const fs::path& rel) { return rel.begin()->string(); }

Graph documented_graph() {
  return parse_graph(read_file(kSourceDir / "docs" / "architecture.md"));
}

TEST(IncludeGraph, TableIsParsed) {
  const Graph g = parse_graph(
      "<!-- include-graph: begin -->\n| module | may include | what |\n| --- | --- | --- |\n"
      "| `spec` | — | x |\n| `impl` | `spec/vocabulary.h` | y |\n| `cli` | `*` | z |\n"
      "| `trace` | `spec` | w |\n<!-- include-graph: end -->\n| `late` | `spec` | v |\n");
  ASSERT_EQ(g.size(), 4u);
  EXPECT_TRUE(g.at("spec").modules.empty());
  EXPECT_EQ(g.at("impl").headers, std::set<std::string>{"spec/vocabulary.h"});
  EXPECT_TRUE(g.at("cli").everything);
  EXPECT_EQ(g.at("trace").modules, std::set<std::string>{"spec"});
}

TEST(IncludeGraph, ForbiddenEdgesAreReported) {
  const Graph g = parse_graph(
      "<!-- include-graph: begin -->\n| `spec` | — | |\n| `trace` | `spec` | |\n"
      "| `impl` | `spec/vocabulary.h` | |\n| `cli` | `*` | |\n| `tests` | `*` | |\n"
      "<!-- include-graph: end -->\n");
  auto check = [&](std::string from, std::string header) {
    return violation(g, from, Include{from + "/x.cc", 3, std::move(header)});
  };
  EXPECT_EQ(check("trace", "spec/monitor.h"), "");
  EXPECT_EQ(check("trace", "absl/strings/str_cat.h"), "");  // third-party
  EXPECT_EQ(check("spec", "trace/reader.h"), "spec/x.cc:3: spec -> trace/reader.h");
  EXPECT_EQ(check("impl", "spec/vocabulary.h"), "");
  EXPECT_EQ(check("impl", "spec/monitor.h"), "impl/x.cc:3: impl -> spec/monitor.h");
  EXPECT_NE(check("cli", "trace/internal/schema.h"), "");  // internal headers stay private
  EXPECT_EQ(check("tests", "trace/internal/schema.h"), "");
  EXPECT_EQ(includes_of("a.cc", "#include \"spec/x.h\"\n  #  include \"b/c.h\"\n// #include \"d.h\"\n"
                                "#include <vector>\n").size(), 2u);
}

TEST(IncludeGraph, EveryModuleIsListed) {
  const Graph graph = documented_graph();
  ASSERT_FALSE(graph.empty()) << "no include-graph table in docs/architecture.md";
  std::set<std::string> unlisted;
  for (const fs::path& file : project_sources()) {
    if (!graph.contains(module_of(file))) unlisted.insert(module_of(file));
  }
  std::string listed;
  for (const std::string& m : unlisted) listed += " " + m;
  EXPECT_TRUE(unlisted.empty()) << "folders with sources but no row in docs/architecture.md:" << listed;
}

TEST(IncludeGraph, EveryIncludeIsAnAllowedEdge) {
  const Graph graph = documented_graph();
  ASSERT_FALSE(graph.empty()) << "no include-graph table in docs/architecture.md";
  const std::vector<fs::path> files = project_sources();
  ASSERT_GT(files.size(), 50u) << "sources not found under " << kSourceDir;
  std::string bad;
  std::size_t edges = 0;
  for (const fs::path& file : files) {
    for (const Include& inc : includes_of(file.string(), read_file(kSourceDir / file))) {
      ++edges;
      const std::string why = violation(graph, module_of(file), inc);
      if (!why.empty()) bad += "\n  " + why;
    }
  }
  EXPECT_EQ(bad, "") << "includes not allowed by docs/architecture.md (" << edges
                     << " includes in " << files.size() << " files):" << bad;
}

}  // namespace
}  // namespace permitcheck
