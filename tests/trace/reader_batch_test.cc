// trace/reader.h, ReaderOptions::batched: parsing the buffered lines together must read exactly
// what parsing one line at a time reads — the same events on the same lines, or the same error
// — for valid traces, for every kind of malformed line, and wherever the read chunks happen to
// split the lines. The fuzzer (fuzz/trace_reader_fuzz.cc) checks the same on arbitrary bytes.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/trace/trace_testing.h"
#include "trace/reader.h"
#include "trace/writer.h"

namespace permitcheck::trace {
namespace {

using testing::kHeader;

// What a read gave: "error: <message>", or the events as the writer writes them, each with its
// line number.
std::string outcome(const std::string& text, bool batched, std::size_t chunk_bytes,
                    std::size_t max_line_bytes = kDefaultMaxLineBytes) {
  ReaderOptions options;
  options.batched = batched;
  options.chunk_bytes = chunk_bytes;
  options.max_line_bytes = max_line_bytes;
  absl::StatusOr<Trace> trace = read_trace_text(text, options);
  if (!trace.ok()) return absl::StrCat("error: ", trace.status().ToString());
  std::string out;
  for (std::size_t i = 0; i < trace->events.size(); ++i) {
    absl::StrAppend(&out, trace->lines[i], " ", write_event(trace->events[i]), "\n");
  }
  return out;
}

// Checks that both ways agree on `text` for several chunk sizes; returns the outcome.
std::string same_both_ways(const std::string& text, std::size_t max_line_bytes = 1 << 20) {
  const std::string expected = outcome(text, /*batched=*/false, 1 << 16, max_line_bytes);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64},
                            std::size_t{4096}, std::size_t{1} << 18}) {
    EXPECT_EQ(outcome(text, /*batched=*/true, chunk, max_line_bytes), expected)
        << "chunk " << chunk << ", trace:\n"
        << text;
  }
  return expected;
}

std::string trace_of(const std::vector<std::string>& lines) {
  std::string text = absl::StrCat(kHeader, "\n");
  for (const std::string& line : lines) absl::StrAppend(&text, line, "\n");
  return text;
}

const std::vector<std::string> kValidLines = {
    R"({"ev":"inc_open","inc":1,"cnx":"c1","consumer":0})",
    R"({"ev":"recv","inc":1,"cmd":7,"message_permits":4})",
    R"({"ev":"resolve","cmd":7,"p":4,"source":"explicit"})",
    R"({"ev":"claim","cmd":7,"msg":"m\u0030","index":0})",
    R"(  {"ev":"settle", "cmd" : 7 , "n":-3}  )",
    R"({"ev":"x-note","text":"anything","nested":{"a":[1,2.5,true,null]}})",
    R"({"cmd":7,"ev":"metadata","batch_size":4})",
    R"({"e\u0076":"msg_return","msg":9})",
    R"({"ev":"flow","cnx":"c1","consumer":0,"permits":9223372036854775807})",
    R"({"ev":"subscribe","cnx":"c1","consumer":18446744073709551615})",
    R"({"ev":"flow","cnx":"c1","consumer":-0,"permits":-9223372036854775808})",
    R"({"ev":"recv","inc":1,"cmd":8,"ack_set":[1,-1,18446744073709551615]})",
    R"({"ev":"send","consumer":0,"entries":[{"cmd":1,"batch_size":2,"admitted":true,"p":2}],"consumer_debit":2})",
    R"({"ev":"protocol_error","cnx":"c\"1","reason":"caf\u00e9 \ud83d\ude00"})",
    R"({"ev":"claim","cmd":7,"msg":"m1","unknown":"x","index":1})",
    "# a comment, with bytes that are not UTF-8: \xff\xfe",
    "",
    "   \t",
};

TEST(ReaderBatch, ValidTracesReadTheSameEventsOnTheSameLines) {
  const std::string both = same_both_ways(trace_of(kValidLines));
  EXPECT_EQ(both.rfind("error", 0), std::string::npos) << both;
  // CRLF line endings, and a last line without its newline.
  std::string crlf;
  for (const std::string& line : kValidLines) absl::StrAppend(&crlf, line, "\r\n");
  EXPECT_EQ(same_both_ways(absl::StrCat(kHeader, "\r\n", crlf)).rfind("error", 0),
            std::string::npos);
  std::string unterminated = trace_of(kValidLines);
  unterminated.pop_back();
  same_both_ways(unterminated);
}

TEST(ReaderBatch, EachMalformedLineGivesTheSameErrorOnTheSameLine) {
  const std::vector<std::string> bad = {
      R"({"ev":"settle","cmd":7,"n":1}{"ev":"settle","cmd":7,"n":1})",  // two objects
      R"({"ev":"settle","cmd":7,"n":1} 5)",                              // trailing value
      R"({"ev":"settle","cmd":7,)",                                     // object left open
      R"({"ev":"settle","cmd":7,"n":1.0})",
      R"({"ev":"settle","cmd":7,"n":1e2})",
      R"({"ev":"settle","cmd":7,"n":01})",
      R"({"ev":"settle","cmd":7,"n":99999999999999999999})",
      R"({"ev":"settle","cmd":-1,"n":1})",
      R"({"ev":"settle","cmd":true,"n":1})",
      R"({"ev":"settle","cmd":7,"n":1,"n":2})",
      R"({"ev":"settle","ev":"settle","cmd":7,"n":1})",
      R"({"ev":"settle","cmd":7})",
      R"({"ev":"nope","cmd":7})",
      R"({"ev":"resolve","cmd":7,"p":4,"source":"guess"})",
      R"({"ev":"settle","cmd":"a\qb","n":1})",
      R"({"ev":"x-note","bad":tru})",
      R"({"ev":"x-note","bad":[1,2})",
      "{\"ev\":\"settle\",\"cmd\":\"\x01\",\"n\":1}",
      "{\"ev\":\"settle\",\"cmd\":\"\xc3\x28\",\"n\":1}",
      std::string("{\"ev\":\"settle\",\"cmd\":7,\"n\":1}\0", 31),
      R"([1,2,3])",
      R"("just a string")",
      R"(  # an indented comment is not a comment)",
      "\xEF\xBB\xBF{\"ev\":\"settle\",\"cmd\":7,\"n\":1}",
      std::string(300, ' ') + R"({"ev":"settle","cmd":7,"n":1})",  // over the 256-byte limit
  };
  for (const std::string& line : bad) {
    // The bad line in the middle of good ones: the good ones before it are read, then the error.
    std::vector<std::string> lines(kValidLines.begin(), kValidLines.begin() + 5);
    lines.push_back(line);
    lines.insert(lines.end(), kValidLines.begin(), kValidLines.begin() + 3);
    const std::string result = same_both_ways(trace_of(lines), /*max_line_bytes=*/256);
    EXPECT_NE(result.find("error: INVALID_ARGUMENT: line 7: "), std::string::npos)
        << line << "\n" << result;
  }
  // Found by the fuzzer: text after an object, then a last line cut short.
  same_both_ways(absl::StrCat(
      kHeader, "\n", R"({"ev":"connect","cnx":"a"}"consumer":18446744073709551615})", "\n",
      R"({"ev":"flow","c{"trace":"pinp)"));
  // An object split over two lines.
  const std::string split = same_both_ways(
      trace_of({kValidLines[0], R"({"ev":"settle",)", R"("cmd":7,"n":1})", kValidLines[1]}));
  EXPECT_NE(split.find("error: INVALID_ARGUMENT: line 3: "), std::string::npos) << split;
}

// Lines in or near the writer's compact form, which the batched reader decodes straight from
// the bytes (LineParser::compact_event) or declines to the JSON parser: each one, valid or not,
// in the middle of good lines, reads the same both ways.
TEST(ReaderBatch, CompactFormLinesReadTheSameBothWays) {
  const std::vector<std::string> lines = {
      R"({"ev":"settle","cmd":7,"n":-0})",
      R"({"ev":"settle","cmd":-0,"n":1})",
      R"({"ev":"settle","cmd":999999999999999999,"n":-999999999999999999})",
      R"({"ev":"settle","cmd":1000000000000000000,"n":1})",
      R"({"ev":"settle","cmd":7,"n":-})",
      R"({"ev":"settle","cmd":7,"n":1,})",
      R"({"ev":"settle","cmd":7,"n":1)",
      R"({"ev":"settle","cmd":7,"n":1}})",
      R"({"ev":"settle","cmd":7,"n":1}x)",
      R"({"ev":"settle","cmd":"7","n":1})",
      R"({"ev":"settle","cmd":"","n":1})",
      "{\"ev\":\"settle\",\"cmd\":\"a\x7f\",\"n\":1}",
      "{\"ev\":\"settle\",\"cmd\":\"caf\xc3\xa9\",\"n\":1}",
      "{\"ev\":\"settle\",\"cmd\":7,\"n\":1}\r",
      "{\"ev\":\"settle\",\"cmd\":7,\r\"n\":1}",
      R"({"ev":"claim","cmd":7,"msg":1,"permits":3})",
      R"({"ev":"claim","cmd":7,"msg":1,"msg":2})",
      R"({"ev":"x-note","cmd":7})",
      R"({"ev":"recv","inc":1,"cmd":8,"ack_set":[]})",
      R"({"ev":"recv","inc":1,"cmd":8,"ack_set":[-5,0,7]})",
      R"({"ev":"recv","inc":1,"cmd":8,"ack_set":[1,]})",
      R"({"ev":"recv","inc":1,"cmd":8,"ack_set":[1.5]})",
      R"({"ev":"send","consumer":0,"entries":[],"consumer_debit":0})",
      R"({"ev":"send","consumer":0,"entries":[{"cmd":"c","batch_size":2,"ack_set":[3],"admitted":false},{"p":1,"admitted":true,"batch_size":1,"cmd":2}],"consumer_debit":1,"dispatcher":"persistent_shared","dispatcher_debit":1})",
      R"({"ev":"send","consumer":0,"entries":[{"cmd":1,"batch_size":2,"admitted":tru}],"consumer_debit":2})",
      R"({"ev":"send","consumer":0,"entries":[{"cmd":1,"batch_size":2}],"consumer_debit":2})",
      R"({"ev":"send","consumer":0,"entries":[{"cmd":1,"cmd":1,"batch_size":2,"admitted":true}],"consumer_debit":2})",
      R"({"ev":"send","consumer":0,"entries":[{"cmd":1,"batch_size":2,"admitted":true,"x":1}],"consumer_debit":2})",
      R"({"ev":"send","consumer":0,"entries":[{"cmd":1,"batch_size":2,"admitted":true}{}],"consumer_debit":2})",
      R"({"ev":"inc_close","inc":1,"reason":"nope"})",
      "#" + std::string(300, 'c'),
      std::string(250, '#'),
      R"({"ev":"settle","cmd":7,"n":1})" + std::string(240, ' '),
      R"({"ev":"protocol_error","cnx":"c1","reason":")" + std::string(250, 'r') + "\"}",
  };
  for (const std::string& line : lines) {
    std::vector<std::string> around(kValidLines.begin(), kValidLines.begin() + 3);
    around.push_back(line);
    around.insert(around.end(), kValidLines.begin(), kValidLines.begin() + 3);
    same_both_ways(trace_of(around), /*max_line_bytes=*/256);
  }
  // The compact lines that are valid are read (not refused).
  const std::string valid = same_both_ways(trace_of({lines[0], lines[2], lines[9], lines[18],
                                                     lines[19], lines[22], lines[23]}));
  EXPECT_EQ(valid.rfind("error", 0), std::string::npos) << valid;
}

// A fuzzer find (ci/fuzz, trace_reader_fuzz): a header line, then a line holding a control
// character (ESC) inside its JSON, read with the fuzzer's 1 KiB line limit and a chunk of 405
// bytes. Both ways must give the same error on the same line.
TEST(ReaderBatch, ALineWithAControlCharacterGivesTheSameErrorBothWays) {
  const std::string text =
      "# a wire tap: reconnect, duplicate Flow, quiescence\n{\"trace\":\"pip491-permits\",\""
      "version\":1,\"source\":\"wire\",\"ruleset\":\"legacy\",\"q\":1000}\n{\"ev\":\"connec"
      "t\",\"cnx\":\"1_permits\":4294967295,\"ack_set\":\x1b""-1,18446744073709551615],\"ba"
      "tch_size\":100,\"epoch\":0}\n{\"ev\":\"ack\",\"cnx\":\"10.0.0.1:6650\",\"consumer\":"
      "18446744073709551615,\"cmd\":1,\"validation_error\":\"BatchDeSerializeError\"}\n{\"e"
      "v\":\"close_c/nsumer\",\"cnx\":\"10.0.0.1:6650\",\"consumer\":18446744073709551614}\n"
      "{\"ev\":\"subscribe_fail\",\"cnx\":\"10.0.0.1:6650\",\"cote Flow, quiescence\n{\"tra"
      "ce\":\"pip491-permits\",\"version\":1,\"source\":\"wire\",\"ruleset\":\"legacy\",\"q"
      "\":1000}\n{\"ev\":\"connect\",\"cnx\":\"10.0.0.1:6650\"}\n{\"e";
  const std::string expected = outcome(text, /*batched=*/false, 1 << 16, 1024);
  EXPECT_NE(expected.find("line 3: malformed JSON at column 34"), std::string::npos) << expected;
  for (std::size_t chunk : {std::size_t{405}, std::size_t{1}, std::size_t{64}, std::size_t{4096}}) {
    EXPECT_EQ(outcome(text, /*batched=*/true, chunk, 1024), expected) << "chunk " << chunk;
  }
}

// A second fuzzer find (ci/fuzz, trace_reader_fuzz, chunk 405): the same error both ways.
TEST(ReaderBatch, AFuzzerFoundTraceWithACarriageReturnAndNulsGivesTheSameErrorBothWays) {
  const std::string text(
      "# a wire tap: reconnect, duplicate{\"trace\":\"pip491-permits\",\"trace\":\"pip491-pe491-p"
      "ermits\",\"vurce\" Flow, quiescence\n{\"trace\":\"pip491-permits\",\"version\":1,\"source\""
      ":\"wire\",\"ruleset\":\"legacy\",\"q\":1000}\n{\"ev\":\"connect\",\"cnx\":\"10.0.0.1]:6650"
      "\":\"client\"}}\n{\"ev\":\"subscribe\",\"cnx\":\"10.0.0.1:6650\",\"consumer\":184467440737"
      "09551615,\"inci1\"\":\"}\n{\"ev\":\"su\x0d""\x00""\x00""\x00""ibe_ok\",\"cnx\":\"10.0.0.1:"
      "6650\",\"\nconsu\"source\"1e40mer\":{\"tra0ce",
      408);
  const std::string expected = outcome(text, /*batched=*/false, 1 << 16, 1024);
  for (std::size_t chunk : {std::size_t{405}, std::size_t{1}, std::size_t{64}, std::size_t{4096}}) {
    EXPECT_EQ(outcome(text, /*batched=*/true, chunk, 1024), expected) << "chunk " << chunk;
  }
}

// Traces built from good and bad lines at random, read with random chunk sizes.
RC_GTEST_PROP(ReaderBatch, RandomTracesReadTheSameBothWays, ()) {
  std::vector<std::string> pool = kValidLines;
  pool.insert(pool.end(), {R"({"ev":"settle","cmd":7,)", R"("cmd":7,"n":1})", "{", "}",
                           R"({"ev":"settle","cmd":7,"n":1} )", "\xff", "\r", "#", " # x"});
  const std::vector<std::size_t> picks =
      *rc::gen::container<std::vector<std::size_t>>(rc::gen::inRange<std::size_t>(0, pool.size()));
  std::string text = absl::StrCat(kHeader, "\n");
  for (std::size_t i : picks) absl::StrAppend(&text, pool[i], *rc::gen::element("\n", "\r\n", ""));
  // Also random events as the writer writes them.
  const std::vector<spec::Event> events = *rc::gen::container<std::vector<spec::Event>>(
      rc::gen::scale(0.2, testing::gen_event()));
  for (const spec::Event& e : events) absl::StrAppend(&text, write_event(e), "\n");
  const std::size_t chunk = *rc::gen::inRange<std::size_t>(1, 300);
  const std::size_t max_line = *rc::gen::inRange<std::size_t>(8, 400);
  RC_ASSERT(outcome(text, true, chunk, max_line) == outcome(text, false, 1 << 16, max_line));
}

}  // namespace
}  // namespace permitcheck::trace
