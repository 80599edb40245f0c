// trace/internal/line_parser.h, LineParser::compact_event (through CompactDecoder): the writer's compact form is decoded
// in place (not declined to the slower paths, which would keep the results but lose the speed
// silently), and what it decodes is what the writer wrote.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "tests/trace/trace_testing.h"
#include "trace/internal/line_parser.h"
#include "trace/writer.h"

namespace permitcheck::trace {
namespace {

// Decodes `line` with compact_event; the event written back, or "declined".
std::string decode(internal::CompactDecoder& parser, const std::string& line) {
  spec::Event event;
  if (!parser.decode(line, &event)) return "declined";
  return write_event(event);
}

TEST(CompactForm, TheWritersLinesAreDecodedInPlace) {
  const std::vector<std::string> lines = {
      R"({"ev":"connect","cnx":"c1"})",
      R"({"ev":"subscribe","cnx":"c1","consumer":0,"inc":1})",
      R"({"ev":"subscribe_ok","cnx":"c1","consumer":0})",
      R"({"ev":"flow","cnx":"c1","consumer":0,"permits":1000,"inc":1})",
      R"({"ev":"message","cnx":"c1","consumer":0,"cmd":7,"message_permits":4,"ack_set":[5,-1],"batch_size":4})",
      R"({"ev":"ack","cnx":"c1","consumer":0,"cmd":7,"validation_error":"ChecksumMismatch"})",
      R"({"ev":"quiescent","cnx":"c1","consumer":0,"backlog":3})",
      R"({"ev":"inc_open","inc":1,"cnx":"c1","consumer":0})",
      R"({"ev":"inc_flow_enabled","inc":1})",
      R"({"ev":"recv","inc":1,"cmd":7,"message_permits":4})",
      R"({"ev":"metadata","cmd":7,"batch_size":4})",
      R"({"ev":"resolve","cmd":7,"p":4,"source":"explicit"})",
      R"({"ev":"claim","cmd":7,"msg":56,"index":0})",
      R"({"ev":"settle","cmd":7,"n":0})",
      R"({"ev":"msg_return","msg":56})",
      R"({"ev":"send","consumer":0,"entries":[{"cmd":1,"batch_size":2,"admitted":true,"p":2}],"consumer_debit":2})",
  };
  internal::CompactDecoder parser;
  for (int pass = 0; pass < 2; ++pass) {  // the second pass with every guess in place
    for (const std::string& line : lines) {
      const std::string decoded = decode(parser, line);
      ASSERT_NE(decoded, "declined") << line;
      EXPECT_EQ(decode(parser, decoded), decoded) << line;  // the writer's own line too
    }
  }
}

// Whatever the writer writes, the compact path decodes exactly that or declines it.
RC_GTEST_PROP(CompactForm, AnEventItDecodesIsTheEventWritten, ()) {
  internal::CompactDecoder parser;
  const std::vector<spec::Event> events =
      *rc::gen::container<std::vector<spec::Event>>(rc::gen::scale(0.3, testing::gen_event()));
  for (const spec::Event& e : events) {
    const std::string line = write_event(e);
    const std::string decoded = decode(parser, line);
    RC_ASSERT(decoded == "declined" || decoded == line);
  }
}

}  // namespace
}  // namespace permitcheck::trace
