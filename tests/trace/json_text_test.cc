// trace/internal/json_text.h: the number ranges trace-format.md states (int64, uint64, ack_set
// words in either), JSON string escaping, UTF-8 checks and how diagnostics quote tokens.
#include "trace/internal/json_text.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/trace/trace_testing.h"

namespace permitcheck::trace::internal {
namespace {

using testing::kInt64Max;
using testing::kInt64Min;
using testing::kUint64Max;

TEST(JsonNumberGrammar, AcceptsRfc8259NumbersOnly) {
  for (const char* ok : {"0", "-0", "7", "-12", "1.5", "1e5", "1E+5", "1e-5", "-0.0e0",
                         "123456789012345678901234567890", "1e400", "0 ", "5\r\n"}) {
    EXPECT_TRUE(classify_number(ok).valid) << ok;
  }
  for (const char* bad : {"", "-", "+1", "01", "-01", "1.", ".5", "1e", "1e+", "0x10", "12abc",
                          "NaN", "Infinity", "1.5.2", "--1", "1 2"}) {
    EXPECT_FALSE(classify_number(bad).valid) << bad;
  }
}

TEST(JsonNumberGrammar, IntegersAreNumbersWithoutFractionOrExponent) {
  EXPECT_TRUE(classify_number("42").integer);
  EXPECT_TRUE(classify_number("-0").integer);
  EXPECT_FALSE(classify_number("42.0").integer);
  EXPECT_FALSE(classify_number("4e1").integer);
}

TEST(Int64Fields, AcceptExactlyTheInt64Range) {
  EXPECT_EQ(to_int64(classify_number("9223372036854775807")), kInt64Max);
  EXPECT_EQ(to_int64(classify_number("-9223372036854775808")), kInt64Min);
  EXPECT_EQ(to_int64(classify_number("-0")), 0);
  EXPECT_EQ(to_int64(classify_number("9223372036854775808")), std::nullopt);
  EXPECT_EQ(to_int64(classify_number("-9223372036854775809")), std::nullopt);
  EXPECT_EQ(to_int64(classify_number("1e400")), std::nullopt);
  EXPECT_EQ(to_int64(classify_number("1.0")), std::nullopt);
  EXPECT_EQ(to_int64(classify_number("99999999999999999999999")), std::nullopt);
}

TEST(Uint64Fields, AcceptExactlyTheUint64Range) {
  EXPECT_EQ(to_uint64(classify_number("18446744073709551615")), kUint64Max);
  EXPECT_EQ(to_uint64(classify_number("0")), 0u);
  EXPECT_EQ(to_uint64(classify_number("-0")), 0u);
  EXPECT_EQ(to_uint64(classify_number("18446744073709551616")), std::nullopt);
  EXPECT_EQ(to_uint64(classify_number("-1")), std::nullopt);
  EXPECT_EQ(to_uint64(classify_number("2.5")), std::nullopt);
}

TEST(AckSetWords, Uint64AboveInt64MaxKeepsItsSixtyFourBits) {
  EXPECT_EQ(to_long_word(classify_number("18446744073709551615")), -1);
  EXPECT_EQ(to_long_word(classify_number("9223372036854775808")), kInt64Min);
  EXPECT_EQ(to_long_word(classify_number("-9223372036854775808")), kInt64Min);
  EXPECT_EQ(to_long_word(classify_number("37")), 37);
  EXPECT_EQ(to_long_word(classify_number("18446744073709551616")), std::nullopt);
  EXPECT_EQ(to_long_word(classify_number("-9223372036854775809")), std::nullopt);
  EXPECT_EQ(to_long_word(classify_number("1.5")), std::nullopt);
}

RC_GTEST_PROP(AckSetWords, SignedAndUnsignedSpellingsOfAWordAgree, (std::int64_t word)) {
  const std::string as_signed = absl::StrCat(word);
  const std::string as_unsigned = absl::StrCat(static_cast<std::uint64_t>(word));
  RC_ASSERT(to_long_word(classify_number(as_signed)) == word);
  RC_ASSERT(to_long_word(classify_number(as_unsigned)) == word);
}

RC_GTEST_PROP(Int64Fields, EveryInt64PrintsAndClassifiesBack, (std::int64_t value)) {
  RC_ASSERT(to_int64(classify_number(absl::StrCat(value))) == value);
}

std::string json(std::string_view s) {
  std::string out;
  append_json_string(&out, s);
  return out;
}

TEST(JsonStrings, EscapeQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json("m0"), R"("m0")");
  EXPECT_EQ(json("a\"b\\c/d"), R"("a\"b\\c/d")");
  EXPECT_EQ(json("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(json(std::string("\0\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\x7f\"");
}

TEST(JsonStrings, KeepValidUtf8AndReplaceInvalidBytesWithReplacementCharacter) {
  EXPECT_EQ(json("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"");
  EXPECT_EQ(json("a\xFFz"), "\"a\xEF\xBF\xBDz\"");
  EXPECT_EQ(json("\xC3"), "\"\xEF\xBF\xBD\"");                  // truncated sequence
  EXPECT_EQ(json("\xC0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");  // overlong NUL
  EXPECT_EQ(json("\xED\xA0\x80"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // surrogate
}

TEST(Utf8, FindsTheFirstInvalidByte) {
  EXPECT_EQ(find_invalid_utf8("plain \xC3\xA9 text"), std::string_view::npos);
  EXPECT_EQ(find_invalid_utf8("ab\xFF"), 2u);
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("ok\xE2\x82"), 2u);        // cut short
}

TEST(JsonStrings, LocatesRawControlCharactersAndUnclosedStrings) {
  EXPECT_EQ(find_unescaped_control("{\"a\":\"x\ty\"}"), 7u);
  EXPECT_EQ(find_unescaped_control("{\"a\":\t\"x\\ty\"}"), std::string_view::npos);
  EXPECT_EQ(find_unclosed_string(R"({"a":"b","c":"d)"), 13u);
  EXPECT_EQ(find_unclosed_string(R"({"a":"b\"c"})"), std::string_view::npos);
}

TEST(JsonStructure, TellsTruncatedObjectsFromTextAfterTheObject) {
  EXPECT_EQ(scan_structure(R"({"a":[1,2)").kind, Structure::kUnclosed);
  EXPECT_EQ(scan_structure(R"({"a":"b)").kind, Structure::kUnclosed);
  const Structure complete = scan_structure(R"( {"a":"}"} x)");
  EXPECT_EQ(complete.kind, Structure::kComplete);
  EXPECT_EQ(complete.offset, 10u);
  const Structure mismatch = scan_structure(R"({"a":[}])");
  EXPECT_EQ(mismatch.kind, Structure::kMismatch);
  EXPECT_EQ(mismatch.offset, 6u);
  EXPECT_EQ(scan_structure(",").kind, Structure::kMismatch);
}

TEST(Diagnostics, QuoteTokensTrimmedAndCutAtACharacterBoundary) {
  EXPECT_EQ(display_token("1e400 \t"), "1e400");
  EXPECT_EQ(display_token(std::string(50, '7')), std::string(40, '7') + "...");
  // 39 ASCII bytes then a 2-byte character straddling the cut: the character is dropped whole.
  EXPECT_EQ(display_token(std::string(39, 'a') + "\xC3\xA9" + "zzzz"),
            std::string(39, 'a') + "...");
}

}  // namespace
}  // namespace permitcheck::trace::internal
