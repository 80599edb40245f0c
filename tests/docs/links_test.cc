// Every relative link and every repository path that README.md and the docs mention exists.
//
// What counts as mentioned (a mechanical proxy, kept narrow so that it never needs exceptions):
//   - a Markdown link or image target `[text](target)` that is not a URL (`http:`, `https:`,
//     `mailto:`) or a bare `#anchor`: resolved against the file's directory, `#...` cut off;
//   - a path in `backticks`, or a whitespace-separated word of a fenced code block, whose first
//     segment is a top-level folder of the repository (`docs/rules.md`, `ci/main`,
//     `clients/go/main.go`; of a code span, its first word, so `ci/test plain` names
//     ci/test): resolved against the repository root; PATH.cc counts for a program PATH.
// Paths under build*/ or node_modules (made by a build or an install) and paths with a placeholder (`{`, `<`, `*`, `...`,
// `…`, an upper-case segment such as `NAME` or `DIR`) are not files of the repository and
// are skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/docs/docs_testing.h"

namespace permitcheck::docs_testing {
namespace {

namespace fs = std::filesystem;

// README.md, conformance/README.md and every .md file under docs/.
std::vector<fs::path> documents() {
  std::vector<fs::path> docs = {kSourceDir / "README.md", kSourceDir / "conformance/README.md"};
  for (const auto& e : fs::recursive_directory_iterator(kSourceDir / "docs")) {
    if (e.is_regular_file() && e.path().extension() == ".md") docs.push_back(e.path());
  }
  std::sort(docs.begin(), docs.end());
  return docs;
}

// The repository's top-level folders (build directories aside).
std::set<std::string> top_level_folders() {
  std::set<std::string> folders;
  for (const auto& e : fs::directory_iterator(kSourceDir)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.rfind("build", 0) != 0 && name[0] != '.') folders.insert(name);
  }
  folders.insert(".ci");
  return folders;
}

// A segment with an upper-case word (`NAME`, `requirements-VERSION.txt`) other than README.
bool is_placeholder_segment(const std::string& segment) {
  std::size_t i = 0;
  while (i < segment.size()) {
    std::size_t j = i;
    bool upper = true;
    while (j < segment.size() && std::isalpha(static_cast<unsigned char>(segment[j]))) {
      upper = upper && std::isupper(static_cast<unsigned char>(segment[j]));
      ++j;
    }
    const std::string word = segment.substr(i, j - i);
    if (upper && word.size() >= 2 && word != "README") return true;
    i = j + 1;
  }
  return false;
}

// The token as a repository path to check, or "" when it is not one.
std::string repository_path(std::string token, const std::set<std::string>& folders) {
  while (!token.empty() && std::string("'\"(,;").find(token.front()) != std::string::npos) {
    token.erase(0, 1);
  }
  while (!token.empty() && std::string("'\"),;:.").find(token.back()) != std::string::npos) {
    token.pop_back();
  }
  const std::size_t slash = token.find('/');
  if (slash == std::string::npos || slash == 0) return "";
  if (folders.count(token.substr(0, slash)) == 0) return "";
  if (token.find("node_modules") != std::string::npos ||
      token.find_first_of("{<*[$") != std::string::npos || token.find("...") != std::string::npos ||
      token.find("\xE2\x80\xA6") != std::string::npos) {
    return "";
  }
  std::size_t start = 0;
  while (start <= token.size()) {
    std::size_t end = token.find('/', start);
    if (end == std::string::npos) end = token.size();
    if (is_placeholder_segment(token.substr(start, end - start))) return "";
    start = end + 1;
  }
  return token;
}

struct Missing {
  std::string doc;
  int line;
  std::string target;
};

std::vector<Missing> missing_in(const fs::path& doc, const std::set<std::string>& folders) {
  std::vector<Missing> missing;
  const std::string text = read_file(doc);
  const std::string name = fs::relative(doc, kSourceDir).string();
  auto check_repo = [&](const std::string& token, int line) {
    const std::string path = repository_path(token, folders);
    // A program is named after its source: `bench/tap_client_bench` is bench/tap_client_bench.cc.
    if (!path.empty() && !fs::exists(kSourceDir / path) &&
        !fs::exists(kSourceDir / (path + ".cc"))) {
      missing.push_back({name, line, path});
    }
  };
  bool fenced = false;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      std::size_t i = 0;
      while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        std::size_t j = i;
        while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
        if (j > i) check_repo(line.substr(i, j - i), line_no);
        i = j;
      }
      continue;
    }
    // `code` spans; blanked out of `prose`, where Markdown renders links (a lambda `[](const
    // X& x)` quoted in a code span is no link).
    std::string prose = line;
    for (std::size_t open = line.find('`'); open != std::string::npos;) {
      const std::size_t close = line.find('`', open + 1);
      if (close == std::string::npos) break;
      // The first word: `ci/test plain` mentions ci/test.
      const std::string span = line.substr(open + 1, close - open - 1);
      check_repo(span.substr(0, span.find(' ')), line_no);
      prose.replace(open, close - open + 1, close - open + 1, ' ');
      open = line.find('`', close + 1);
    }
    // [text](target) links.
    for (std::size_t at = prose.find("]("); at != std::string::npos; at = prose.find("](", at + 2)) {
      const std::size_t close = prose.find(')', at + 2);
      if (close == std::string::npos) break;
      std::string target = prose.substr(at + 2, close - at - 2);
      if (const std::size_t space = target.find(' '); space != std::string::npos) {
        target.resize(space);  // [text](path "title")
      }
      if (target.empty() || target[0] == '#' || target.find("://") != std::string::npos ||
          target.rfind("mailto:", 0) == 0) {
        continue;
      }
      if (const std::size_t hash = target.find('#'); hash != std::string::npos) target.resize(hash);
      if (!fs::exists(doc.parent_path() / target)) missing.push_back({name, line_no, target});
    }
  }
  return missing;
}

TEST(DocLinks, EveryRelativeLinkAndRepositoryPathInTheDocsExists) {
  const std::set<std::string> folders = top_level_folders();
  std::vector<Missing> missing;
  for (const fs::path& doc : documents()) {
    for (Missing& m : missing_in(doc, folders)) missing.push_back(std::move(m));
  }
  for (const Missing& m : missing) {
    ADD_FAILURE() << m.doc << ":" << m.line << ": " << m.target << " does not exist";
  }
}

// The check itself: a known-bad mention is caught, a good one passes, placeholders are skipped.
TEST(DocLinks, TheCheckCatchesAMissingPathAndSkipsPlaceholders) {
  const std::set<std::string> folders = top_level_folders();
  EXPECT_EQ(repository_path("`docs/rules.md`", folders), "");  // backticks are cut by the caller
  EXPECT_EQ(repository_path("docs/rules.md", folders), "docs/rules.md");
  EXPECT_EQ(repository_path("'clients/go/main.go',", folders),
            "clients/go/main.go");
  EXPECT_EQ(repository_path("clients/NAME/run", folders), "");
  EXPECT_EQ(repository_path("clients/cpp/requirements-VERSION.txt", folders), "");
  EXPECT_EQ(repository_path("conformance/README.md", folders), "conformance/README.md");
  EXPECT_EQ(repository_path("build/cli/permitcheck", folders), "");
  EXPECT_EQ(repository_path("docs/{x}.md", folders), "");
  EXPECT_EQ(repository_path("pulsar://127.0.0.1:6650", folders), "");
  const fs::path scratch = fs::temp_directory_path() / "permitcheck-links-test";
  fs::create_directories(scratch);
  const fs::path doc = scratch / "doc.md";
  {
    std::ofstream out(doc);
    out << "See [rules](../no-such-file.md) and `docs/no-such-page.md`.\n"
           "A lambda in code is no link: `[](const Event& e) { return e.time; }`.\n```sh\n"
           "cat docs/rules.md tests/no-such-dir/x\n```\n[ok](https://example.org) [a](#b)\n";
  }
  const std::vector<Missing> missing = missing_in(doc, folders);
  fs::remove_all(scratch);
  ASSERT_EQ(missing.size(), 3u);
  EXPECT_EQ(missing[0].target, "docs/no-such-page.md");
  EXPECT_EQ(missing[1].target, "../no-such-file.md");
  EXPECT_EQ(missing[2].target, "tests/no-such-dir/x");
  EXPECT_EQ(missing[2].line, 4);
}

}  // namespace
}  // namespace permitcheck::docs_testing
