// Plain words (issue 35): no text the suite writes says "permit(s)". Every string literal of the
// sources (tests/ left out: their literals are test inputs and failure messages) is read with
// comments skipped, and a word followed by "(s)", "(es)" or "(ies)" in one fails: count it with
// spec::count_noun / spec::noun (spec/plain_text.h), or write the singular and the plural
// where a module may not include spec/.
#include <cctype>
#include <cstddef>
#include <filesystem>
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

// True when `literal` holds a letter followed by "(s)", "(es)" or "(ies)".
bool has_parenthesized_plural(std::string_view literal) {
  for (std::string_view tail : {"(s)", "(es)", "(ies)"}) {
    for (std::size_t at = literal.find(tail); at != std::string_view::npos;
         at = literal.find(tail, at + 1)) {
      if (at > 0 && std::isalpha(static_cast<unsigned char>(literal[at - 1]))) return true;
    }
  }
  return false;
}

// The string literals of C++ `source` (their text between the quotes, with the line each
// starts on) that hold a parenthesized plural. Comments are skipped; character literals and
// raw strings are read as such. Linear in the source's length.
std::vector<std::string> parenthesized_plurals(std::string_view source) {
  std::vector<std::string> found;
  int line = 1;
  auto note = [&](std::string_view literal, int at_line) {
    if (has_parenthesized_plural(literal)) {
      found.push_back(std::to_string(at_line) + ": \"" + std::string(literal) + "\"");
    }
  };
  const std::size_t n = source.size();
  std::size_t i = 0;
  auto lines_in = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < n; ++k) line += source[k] == '\n' ? 1 : 0;
  };
  while (i < n) {
    const char c = source[i];
    const bool word_before = i > 0 && (std::isalnum(static_cast<unsigned char>(source[i - 1])) ||
                                       source[i - 1] == '_');
    if (source.substr(i, 2) == "//") {
      const std::size_t end = source.find('\n', i);
      i = end == std::string_view::npos ? n : end;
    } else if (source.substr(i, 2) == "/*") {
      const std::size_t end = source.find("*/", i + 2);
      const std::size_t stop = end == std::string_view::npos ? n : end + 2;
      lines_in(i, stop);
      i = stop;
    } else if (c == 'R' && source.substr(i + 1, 1) == "\"" &&
               (!word_before ||
                std::string_view("u8UL").find(source[i - 1]) != std::string_view::npos)) {
      const std::size_t open = source.find('(', i + 2);
      if (open == std::string_view::npos) break;
      const std::string close = ")" + std::string(source.substr(i + 2, open - i - 2)) + "\"";
      const std::size_t end = source.find(close, open + 1);
      const std::size_t stop = end == std::string_view::npos ? n : end;
      note(source.substr(open + 1, stop - open - 1), line);
      lines_in(i, stop);
      i = stop == n ? n : stop + close.size();
    } else if (c == '"' || (c == '\'' && !word_before)) {  // `1'000` is a digit separator
      std::size_t k = i + 1;
      while (k < n && source[k] != c && source[k] != '\n') k += source[k] == '\\' ? 2 : 1;
      if (c == '"') note(source.substr(i + 1, std::min(k, n) - i - 1), line);
      i = k + 1;
    } else {
      line += c == '\n' ? 1 : 0;
      ++i;
    }
  }
  return found;
}

TEST(PlainPlurals, TheScannerFindsPluralsInLiteralsOnly) {
  EXPECT_EQ(parenthesized_plurals("x = StrCat(n, \" permit(s) lost\");\n").size(), 1u);
  EXPECT_EQ(parenthesized_plurals("x = \"2 entr(ies)\" \"and 3 box(es)\";\n").size(), 2u);
  EXPECT_EQ(parenthesized_plurals("x = R\"(a unit(s) \"quoted\")\";\n").size(), 1u);
  EXPECT_EQ(parenthesized_plurals("\n\ny = \"3 time(s)\";\n").front().substr(0, 2), "3:");
  // Comments, code, a character literal holding a quote and a digit separator are not texts.
  EXPECT_TRUE(parenthesized_plurals("// the unit(s) reach it\nx = f(s);\n").empty());
  EXPECT_TRUE(parenthesized_plurals("/* \"permit(s)\" */ x = g(s);\n").empty());
  EXPECT_TRUE(parenthesized_plurals("c = '\"'; n = 1'000; s = \"(s) alone, f (s)\";\n").empty());
  EXPECT_TRUE(parenthesized_plurals("s = \"1 permit\"; t = \"3 permits\";\n").empty());
}

TEST(PlainPlurals, NoSourceTextWritesAPluralInParentheses) {
  std::size_t scanned = 0;
  for (auto it = fs::recursive_directory_iterator(kSourceDir);
       it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().lexically_relative(kSourceDir).generic_string();
    if (it->is_directory()) {
      const std::string top = rel.substr(0, rel.find('/'));
      if (top == "tests" || top.starts_with("build") || top.starts_with(".")) {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (!rel.ends_with(".cc") && !rel.ends_with(".h")) continue;
    ++scanned;
    for (const std::string& f : parenthesized_plurals(read_file(it->path()))) {
      ADD_FAILURE() << rel << ":" << f << ": count it with spec::count_noun (spec/plain_text.h)";
    }
  }
  EXPECT_GT(scanned, 100u) << "no sources found under " << kSourceDir;
}

}  // namespace
}  // namespace permitcheck
