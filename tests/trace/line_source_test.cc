// trace/internal/line_source.h: JSON Lines framing of trace-format.md ("\n"-terminated lines,
// a missing final newline accepted, "\r\n" treated as "\n") in bounded memory.
#include "trace/internal/line_source.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace permitcheck::trace::internal {
namespace {

struct Line {
  std::string text;
  std::uint64_t number;
  bool terminated;
  friend bool operator==(const Line&, const Line&) = default;
};

std::vector<Line> split(const std::string& text, std::size_t chunk = 1 << 16,
                        std::size_t max = 1 << 20) {
  std::istringstream in(text);
  LineSource lines(in, max, chunk);
  std::vector<Line> out;
  while (true) {
    absl::StatusOr<bool> more = lines.next();
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    out.push_back({std::string(lines.line()), lines.number(), lines.terminated()});
  }
  return out;
}

TEST(JsonLinesFraming, SplitsOnNewlineAndNumbersLinesFromOne) {
  EXPECT_EQ(split("a\nbb\n\nc\n"),
            (std::vector<Line>{{"a", 1, true}, {"bb", 2, true}, {"", 3, true}, {"c", 4, true}}));
}

TEST(JsonLinesFraming, AcceptsAMissingFinalNewlineAndSaysSo) {
  EXPECT_EQ(split("a\nb"), (std::vector<Line>{{"a", 1, true}, {"b", 2, false}}));
}

TEST(JsonLinesFraming, EmptyStreamHasNoLines) { EXPECT_TRUE(split("").empty()); }

TEST(JsonLinesFraming, CrLfEndsALineLikeLf) {
  EXPECT_EQ(split("a\r\nb\r\n"), (std::vector<Line>{{"a", 1, true}, {"b", 2, true}}));
  // Only one "\r" before the "\n" is a line ending; a lone "\r" elsewhere is content.
  EXPECT_EQ(split("a\r\r\nb\rc\n"), (std::vector<Line>{{"a\r", 1, true}, {"b\rc", 2, true}}));
}

TEST(JsonLinesFraming, KeepsNulAndInvalidBytesForTheParserToReport) {
  EXPECT_EQ(split(std::string("a\0b\xff\n", 5)),
            (std::vector<Line>{{std::string("a\0b\xff", 4), 1, true}}));
}

TEST(JsonLinesFraming, PadsEveryLineWithSpacesForSimdjson) {
  std::istringstream in("abc\n");
  LineSource lines(in, 100);
  ASSERT_TRUE(*lines.next());
  ASSERT_GE(lines.padded_size(), 3 + LineSource::kPadding);
  EXPECT_EQ(std::string(lines.padded_data() + 3, LineSource::kPadding),
            std::string(LineSource::kPadding, ' '));
}

TEST(LineLengthLimit, ALineAtTheLimitIsReadAndOneByteMoreIsAnError) {
  std::istringstream in(std::string(8, 'x') + "\r\n" + std::string(9, 'y') + "\n");
  LineSource lines(in, 8, /*chunk_bytes=*/3);
  ASSERT_TRUE(*lines.next());
  EXPECT_EQ(lines.line(), std::string(8, 'x'));
  absl::StatusOr<bool> second = lines.next();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(),
            "line 2: line is longer than 8 bytes, the reader's limit (is this a trace file?)");
  EXPECT_EQ(lines.next().status(), second.status());  // the error repeats
}

TEST(LineLengthLimit, ReportedBeforeTheRestOfAnEndlessLineIsRead) {
  // 64 MiB without a newline against a 1 KiB limit: the error comes after one chunk.
  std::istringstream in(std::string(64 << 20, 'z'));
  LineSource lines(in, 1024, 4096);
  EXPECT_FALSE(lines.next().ok());
  EXPECT_LE(in.tellg(), 4096);
}

TEST(JsonLinesFraming, IoFailureIsDataLossWithTheLineNumber) {
  std::istringstream in("a\nb\n");
  LineSource lines(in, 100, /*chunk_bytes=*/2);
  ASSERT_TRUE(*lines.next());
  in.setstate(std::ios::badbit);
  absl::StatusOr<bool> more = lines.next();
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(more.status().message(), "line 2: I/O error while reading the trace");
}

RC_GTEST_PROP(JsonLinesFraming, ChunkSizeNeverChangesTheLines, ()) {
  const auto lines = *rc::gen::container<std::vector<std::string>>(
      rc::gen::container<std::string>(rc::gen::element('a', '{', ' ', '\r', '#')));
  const bool final_newline = *rc::gen::arbitrary<bool>();
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    text += lines[i];
    if (i + 1 < lines.size() || final_newline) text += "\n";
  }
  const std::size_t chunk = *rc::gen::inRange<std::size_t>(1, 20);
  RC_ASSERT(split(text, chunk) == split(text));
}

TEST(JsonStart, BlankLinesAndCommentsAreSkippedOthersStartAtTheirFirstNonWhitespaceByte) {
  constexpr std::size_t npos = std::string_view::npos;
  EXPECT_EQ(json_start(""), npos);
  EXPECT_EQ(json_start(" \t\r"), npos);
  EXPECT_EQ(json_start("# {\"ev\":1}"), npos);
  EXPECT_EQ(json_start("{}"), 0u);
  EXPECT_EQ(json_start("  \t{}"), 3u);
  EXPECT_EQ(json_start("  # not a comment"), 2u);  // "#" counts only in the first column
  EXPECT_EQ(json_start("\f{}"), 0u);                // form feed is not JSON whitespace
}

TEST(BulkAccess, BufferedIsTheCompleteLinesAfterTheCurrentOneAndSkipMovesPastThem) {
  std::istringstream in("a\nbb\nccc\ndd");
  LineSource lines(in, 100, /*chunk_bytes=*/64);
  ASSERT_TRUE(*lines.next());  // line 1, "a"; reads the whole input into the chunk
  LineSource::Buffered b = lines.buffered();
  EXPECT_EQ(std::string(b.data, b.size), "bb\nccc\n");  // "dd" is not complete
  EXPECT_EQ(b.first_line, 2u);
  lines.skip(3, 1);  // past "bb\n"
  EXPECT_EQ(lines.number(), 2u);
  ASSERT_TRUE(*lines.next());
  EXPECT_EQ(lines.line(), "ccc");
  EXPECT_EQ(lines.number(), 3u);
  EXPECT_EQ(lines.buffered().size, 0u);  // only the unterminated "dd" is left
  ASSERT_TRUE(*lines.next());
  EXPECT_EQ(lines.line(), "dd");
  EXPECT_FALSE(lines.terminated());
}

}  // namespace
}  // namespace permitcheck::trace::internal
