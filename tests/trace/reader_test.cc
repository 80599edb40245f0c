// trace/reader.h against trace-format.md version 1: the format's own example parsed exactly,
// every header and event rule, and each class of unreadable input with its exact diagnostic
// ("line N: reason"), which `validate` prints before exiting 2.
#include "trace/reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/trace/trace_testing.h"

namespace permitcheck::trace {
namespace {

using spec::Id;

using testing::kHeader;
using testing::kInt64Max;
using testing::kInt64Min;
using testing::kUint64Max;

// The events of a trace whose line 1 is kHeader and whose later lines are `lines`.
std::vector<spec::Event> events_of(const std::string& lines) {
  absl::StatusOr<Trace> trace = read_trace_text(absl::StrCat(kHeader, "\n", lines));
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? trace->events : std::vector<spec::Event>{};
}

// The single event of `line` (on line 2).
spec::Event event_of(const std::string& line) {
  std::vector<spec::Event> events = events_of(line + "\n");
  EXPECT_EQ(events.size(), 1u);
  return events.empty() ? spec::Event{} : events[0];
}

// The error reading a whole trace text, or "OK".
std::string error_of_trace(const std::string& text) {
  absl::StatusOr<Trace> trace = read_trace_text(text);
  if (trace.ok()) return "OK";
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(trace.status().message());
}

// The error reading kHeader followed by `lines` (so the first event is on line 2).
std::string error_of(const std::string& lines) {
  return error_of_trace(absl::StrCat(kHeader, "\n", lines));
}

#define EXPECT_EVENT_EQ(actual, expected) \
  EXPECT_TRUE(testing::EventsEqual(actual, spec::Event(expected)))

// ---- The format's example ----

constexpr char kFormatExample[] =
    R"({"trace":"pip491-permits","version":1,"source":"client","q":4,"t":2}
{"ev":"inc_open","inc":1,"cnx":"c1","consumer":0}
{"ev":"inc_flow_enabled","inc":1}
{"ev":"flow","cnx":"c1","consumer":0,"inc":1,"permits":4}
{"ev":"recv","inc":1,"cmd":1,"message_permits":3,"ack_set":[37]}
{"ev":"metadata","cmd":1,"batch_size":8}
{"ev":"resolve","cmd":1,"p":3,"source":"explicit"}
{"ev":"claim","cmd":1,"msg":"m0","index":0}
{"ev":"claim","cmd":1,"msg":"m2","index":2}
{"ev":"corrupt","cmd":1,"stage":"batch","index":5}
{"ev":"settle","cmd":1,"n":1}
{"ev":"msg_return","msg":"m0"}
{"ev":"flow","cnx":"c1","consumer":0,"inc":1,"permits":2}
{"ev":"msg_return","msg":"m2"}
)";

TEST(FormatExample, ParsesToExactlyTheseValues) {
  absl::StatusOr<Trace> trace = read_trace_text(kFormatExample);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->header.source, spec::TraceSource::kClient);
  EXPECT_EQ(trace->header.ruleset, spec::RulesetId::kRevD);  // the default
  EXPECT_EQ(trace->header.q, 4);
  EXPECT_EQ(trace->header.t, 2);
  const Id c1 = Id::text("c1"), inc = Id::number(1), cmd = Id::number(1);
  const std::vector<spec::Event> expected = {
      spec::IncOpen{inc, c1, 0},
      spec::IncFlowEnabled{inc},
      spec::Flow{c1, 0, 4, inc},
      spec::Recv{inc, cmd, 3, spec::AckSet({37})},
      spec::Metadata{cmd, 8},
      spec::Resolve{cmd, 3, spec::PermitSource::kExplicit},
      spec::Claim{cmd, Id::text("m0"), 0},
      spec::Claim{cmd, Id::text("m2"), 2},
      spec::Corrupt{cmd, spec::FailureStage::kBatch, 5},
      spec::Settle{cmd, 1},
      spec::MsgReturn{Id::text("m0"), 1},
      spec::Flow{c1, 0, 2, inc},
      spec::MsgReturn{Id::text("m2"), 1},
  };
  ASSERT_EQ(trace->events.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EVENT_EQ(trace->events[i], expected[i]);
    EXPECT_EQ(trace->lines[i], i + 2);
  }
  // "Here ack_set 37 = bits {0,2,5}: P = 3."
  EXPECT_EQ(std::get<spec::Recv>(trace->events[3]).ack_set.count_below(8), 3);
}

TEST(FormatExample, StreamsOneEventAtATimeWithLineNumbers) {
  std::istringstream in(kFormatExample);
  absl::StatusOr<TraceReader> reader = TraceReader::open(in);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->header_line(), 1u);
  spec::Event event;
  std::uint64_t line = 0;
  std::uint64_t count = 0;
  while (true) {
    absl::StatusOr<bool> more = reader->next(&event, &line);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    EXPECT_EQ(line, ++count + 1);
  }
  EXPECT_EQ(count, 13u);
  EXPECT_FALSE(*reader->next(&event, &line));  // the end repeats
}

// ---- Header ----

TEST(TraceHeader, RulesetDefaultsToRevDAndLegacyIsAccepted) {
  absl::StatusOr<Trace> legacy = read_trace_text(
      R"({"trace":"pip491-permits","version":1,"source":"wire","ruleset":"legacy"})");
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  EXPECT_EQ(legacy->header.ruleset, spec::RulesetId::kLegacy);
  EXPECT_EQ(legacy->header.source, spec::TraceSource::kWire);
  EXPECT_FALSE(legacy->header.q.has_value());
  EXPECT_FALSE(legacy->header.t.has_value());
  absl::StatusOr<Trace> rev_d = read_trace_text(
      R"({"trace":"pip491-permits","version":1,"source":"model","ruleset":"rev-d","q":0,"t":1})");
  ASSERT_TRUE(rev_d.ok()) << rev_d.status();
  EXPECT_EQ(rev_d->header.ruleset, spec::RulesetId::kRevD);
  EXPECT_EQ(rev_d->header.q, 0);
  EXPECT_EQ(rev_d->header.t, 1);
}

TEST(TraceHeader, EverySourceOfTheFormat) {
  const std::pair<const char*, spec::TraceSource> sources[] = {
      {"wire", spec::TraceSource::kWire},
      {"client", spec::TraceSource::kClient},
      {"broker", spec::TraceSource::kBroker},
      {"model", spec::TraceSource::kModel}};
  for (const auto& [name, source] : sources) {
    absl::StatusOr<Trace> trace = read_trace_text(
        absl::StrCat(R"({"trace":"pip491-permits","version":1,"source":")", name, "\"}"));
    ASSERT_TRUE(trace.ok()) << trace.status();
    EXPECT_EQ(trace->header.source, source) << name;
  }
}

TEST(TraceHeader, UnknownHeaderFieldsAreIgnoredAndFieldOrderIsFree) {
  absl::StatusOr<Trace> trace = read_trace_text(
      R"({"recorder":{"name":"tap","v":[1,2.5,null,true]},"t":3,"source":"broker","version":1,"trace":"pip491-permits"})");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->header.source, spec::TraceSource::kBroker);
  EXPECT_EQ(trace->header.t, 3);
}

TEST(TraceHeader, IsTheFirstLineThatIsNeitherBlankNorAComment) {
  std::istringstream in(absl::StrCat("# recorded by a test\n\n  \t\r\n", kHeader, "\n"));
  absl::StatusOr<TraceReader> reader = TraceReader::open(in);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->header_line(), 4u);
}

TEST(TraceHeader, EveryRevisionOfTheFormatIsAccepted) {
  const std::pair<const char*, spec::RulesetId> revisions[] = {{"rev-a", spec::RulesetId::kRevA},
                                                               {"rev-b", spec::RulesetId::kRevB},
                                                               {"rev-c", spec::RulesetId::kRevC}};
  for (const auto& [name, id] : revisions) {
    absl::StatusOr<Trace> t = read_trace_text(absl::StrCat(
        R"({"trace":"pip491-permits","version":1,"source":"wire","ruleset":")", name, "\"}\n"));
    ASSERT_TRUE(t.ok()) << name << ": " << t.status();
    EXPECT_EQ(t->header.ruleset, id) << name;
  }
}

TEST(TraceHeaderErrors, UnknownRulesetTraceVersionOrSource) {
  EXPECT_EQ(
      error_of_trace(R"({"trace":"pip491-permits","version":1,"source":"wire","ruleset":"rev-e"})"),
      R"(line 1: unknown ruleset "rev-e" (known: legacy, rev-a, rev-b, rev-c, rev-d))");
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491","version":1,"source":"wire"})"),
            R"(line 1: field "trace" must be "pip491-permits", got "pip491")");
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491-permits","version":2,"source":"wire"})"),
            "line 1: unsupported trace version 2 (this build reads version 1)");
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491-permits","version":"1","source":"wire"})"),
            R"(line 1: field "version" must be the integer 1, got "1")");
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491-permits","version":1,"source":"tap"})"),
            R"(line 1: field "source" must be one of wire, client, broker, model, got "tap")");
}

TEST(TraceHeaderErrors, QMustBeNonNegativeAndTAtLeastOne) {
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491-permits","version":1,"source":"wire","q":-1})"),
            R"(line 1: field "q" must be a non-negative integer in int64 range, got -1)");
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491-permits","version":1,"source":"wire","t":0})"),
            R"(line 1: field "t" must be a positive integer in int64 range, got 0)");
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491-permits","version":1,"source":"wire","q":2.5})"),
            R"(line 1: field "q" must be a non-negative integer in int64 range, got 2.5)");
}

TEST(TraceHeaderErrors, MissingRequiredFieldsAreNamed) {
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491-permits","source":"wire"})"),
            R"(line 1: the header is missing required field "version")");
  EXPECT_EQ(error_of_trace(R"({"trace":"pip491-permits","version":1})"),
            R"(line 1: the header is missing required field "source")");
  EXPECT_EQ(
      error_of_trace("{\"ev\":\"connect\",\"cnx\":1}\n"),
      R"(line 1: the header is missing required field "trace" (the first JSON line of a )"
      R"(trace must be its header, e.g. {"trace":"pip491-permits","version":1,"source":"client"}))");
}

TEST(TraceHeaderErrors, EmptyTraceOrOnlyComments) {
  const std::string expected_tail = R"(: the trace has no header (expected a first JSON line like )"
                                    R"({"trace":"pip491-permits","version":1,"source":"client"}))";
  EXPECT_EQ(error_of_trace(""), "line 1" + expected_tail);
  EXPECT_EQ(error_of_trace("# nothing\n\n"), "line 3" + expected_tail);
}

TEST(TraceHeaderErrors, ByteOrderMarkIsRefusedClearly) {
  EXPECT_EQ(
      error_of_trace(absl::StrCat("\xEF\xBB\xBF", kHeader, "\n")),
      "line 1: the trace starts with a UTF-8 byte order mark (remove it: JSON Lines has none)");
}

TEST(TraceHeaderErrors, HeaderMustBeAnObject) {
  EXPECT_EQ(error_of_trace("[1]\n"), "line 1: the header must be a JSON object, got an array");
}

// ---- Lines: blank, comments, line endings ----

TEST(JsonLines, BlankLinesAndCommentsAreSkippedButCounted) {
  absl::StatusOr<Trace> trace =
      read_trace_text(absl::StrCat(kHeader,
                                   "\n\n# {\"ev\":\"bogus\"} is a comment, not an event\n   "
                                   "\n{\"ev\":\"connect\",\"cnx\":1}\n"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->events.size(), 1u);
  EXPECT_EQ(trace->lines[0], 5u);
}

TEST(JsonLines, CommentIsOnlyAHashAtTheStartOfTheLine) {
  EXPECT_EQ(
      error_of("  # indented\n"),
      "line 2: malformed JSON at column 3: unexpected token (a missing or extra comma, colon, "
      "quote, brace or bracket?)");
}

TEST(JsonLines, CrLfLineEndingsAndAMissingFinalNewlineAreAccepted) {
  absl::StatusOr<Trace> trace = read_trace_text(absl::StrCat(
      kHeader, "\r\n{\"ev\":\"connect\",\"cnx\":1}\r\n{\"ev\":\"connect\",\"cnx\":2}"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->events.size(), 2u);
  EXPECT_EVENT_EQ(trace->events[1], spec::Connect{Id::number(2)});
  EXPECT_EQ(trace->lines[1], 3u);
}

TEST(JsonLines, OneObjectPerLine) {
  EXPECT_EQ(
      error_of("{\"ev\":\"connect\",\"cnx\":1} {\"ev\":\"connect\",\"cnx\":2}\n"),
      "line 2: unexpected text at column 26 after the JSON object (one JSON object per line)");
  EXPECT_EQ(
      error_of("{\"ev\":\"connect\",\"cnx\":1}\r{\"ev\":\"connect\",\"cnx\":2}\n"),
      "line 2: unexpected text at column 26 after the JSON object (one JSON object per line)");
  EXPECT_EQ(
      error_of("{\"ev\":\"connect\",\"cnx\":1}}\n"),
      "line 2: unexpected text at column 25 after the JSON object (one JSON object per line)");
}

// ---- Events: ev, unknown fields, extensions ----

TEST(EventNames, EveryKindOfTheFormatIsRead) {
  // One minimal line per `ev` of the format's tables, in spec::Event order.
  const std::vector<std::string> lines = {
      R"({"ev":"connect","cnx":1})",
      R"({"ev":"subscribe","cnx":1,"consumer":2})",
      R"({"ev":"subscribe_ok","cnx":1,"consumer":2})",
      R"({"ev":"subscribe_fail","cnx":1,"consumer":2})",
      R"({"ev":"flow","cnx":1,"consumer":2,"permits":3})",
      R"({"ev":"message","cnx":1,"consumer":2,"cmd":3})",
      R"({"ev":"ack","cnx":1,"consumer":2,"cmd":3})",
      R"({"ev":"close_consumer","cnx":1,"consumer":2})",
      R"({"ev":"disconnect","cnx":1})",
      R"({"ev":"quiescent","cnx":1,"consumer":2})",
      R"({"ev":"inc_open","inc":1,"cnx":1,"consumer":2})",
      R"({"ev":"inc_flow_enabled","inc":1})",
      R"({"ev":"inc_close","inc":1,"reason":"closed"})",
      R"({"ev":"recv","inc":1,"cmd":3})",
      R"({"ev":"resolve","cmd":3,"p":1,"source":"legacy"})",
      R"({"ev":"metadata","cmd":3,"batch_size":1})",
      R"({"ev":"corrupt","cmd":3,"stage":"checksum"})",
      R"({"ev":"claim","cmd":3,"msg":"m"})",
      R"({"ev":"restore","cmd":3,"msg":"m"})",
      R"({"ev":"skip","cmd":3,"index":0,"reason":"duplicate"})",
      R"({"ev":"transfer","cmd":3,"path":"chunk"})",
      R"({"ev":"direct_return","cmd":3,"n":1})",
      R"({"ev":"settle","cmd":3,"n":1})",
      R"({"ev":"msg_return","msg":"m"})",
      R"({"ev":"drop","n":1})",
      R"({"ev":"protocol_error","cnx":1,"reason":"N7 accumulator overflow"})",
      R"({"ev":"send","consumer":2,"entries":[],"consumer_debit":0})",
      R"({"ev":"consumer_removed","consumer":2})",
      R"({"ev":"write_failed","consumer":2,"inc":"b1"})",
      R"({"ev":"x-anything"})",
  };
  ASSERT_EQ(lines.size(), std::variant_size_v<spec::Event>);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const spec::Event event = event_of(lines[i]);
    EXPECT_EQ(event.index(), i) << lines[i];
    // The reader's names agree with the spec's.
    const std::string_view ev = spec::event_name(event);
    EXPECT_NE(lines[i].find(absl::StrCat("\"ev\":\"", std::string(ev), "\"")), std::string::npos)
        << ev;
  }
}

TEST(EventNames, ExtensionsStartWithXDashAndKeepTheirName) {
  EXPECT_EVENT_EQ(event_of(R"({"ev":"x-recorder-note","text":"hi","n":"not a number","cmd":[1]})"),
                  spec::Extension{"x-recorder-note"});
  EXPECT_EQ(error_of("{\"ev\":\"bogus\",\"cnx\":1}\n"),
            R"(line 2: unknown event "bogus" (an extension event's name starts with "x-"))");
  EXPECT_EQ(error_of("{\"ev\":\"X-upper\"}\n"),
            R"(line 2: unknown event "X-upper" (an extension event's name starts with "x-"))");
}

TEST(EventNames, ExtensionFieldsAreIgnoredButMustStillBeJson) {
  EXPECT_EQ(error_of("{\"ev\":\"x-note\",\"v\":[1 2]}\n"),
            "line 2: malformed JSON at column 23: unexpected token (a missing or extra comma, "
            "colon, quote, brace or bracket?)");
  EXPECT_EQ(
      error_of("{\"ev\":\"x-note\",\"v\":{\"a\":nul}}\n"),
      "line 2: malformed JSON at column 25: invalid literal nul (expected true, false or null)");
}

TEST(EventNames, EvMayComeAfterTheOtherFields) {
  EXPECT_EVENT_EQ(event_of(R"({"cnx":"c","consumer":7,"permits":9,"ev":"flow","inc":"i"})"),
                  (spec::Flow{Id::text("c"), 7, 9, Id::text("i")}));
}

TEST(UnknownFields, AreIgnoredEvenWhenAnotherEventUsesTheName) {
  // "permits" belongs to flow, not connect: on connect it is an unknown field, any type.
  EXPECT_EVENT_EQ(event_of(R"({"ev":"connect","cnx":1,"permits":"lots","future":{"x":[1e400]}})"),
                  spec::Connect{Id::number(1)});
}

TEST(EventErrors, EvMissingOrNotAString) {
  EXPECT_EQ(error_of("{\"cnx\":1}\n"), R"(line 2: missing required field "ev")");
  EXPECT_EQ(error_of("{\"ev\":3}\n"), R"(line 2: field "ev" must be a string, got 3)");
  EXPECT_EQ(
      error_of(absl::StrCat(kHeader, "\n")),
      R"(line 2: missing required field "ev" (a trace has one header, on its first JSON line))");
}

TEST(EventErrors, EventMustBeAJsonObject) {
  EXPECT_EQ(error_of("[1,2]\n"), "line 2: an event must be a JSON object, got an array");
  EXPECT_EQ(error_of("\"connect\"\n"), R"(line 2: an event must be a JSON object, got "connect")");
  EXPECT_EQ(error_of("42\n"), "line 2: an event must be a JSON object, got 42");
}

TEST(EventErrors, RequiredFieldMissingIsNamed) {
  EXPECT_EQ(error_of("{\"ev\":\"flow\",\"cnx\":\"c1\",\"consumer\":0}\n"),
            R"(line 2: event "flow" is missing required field "permits")");
  EXPECT_EQ(error_of("{\"ev\":\"settle\",\"n\":1}\n"),
            R"(line 2: event "settle" is missing required field "cmd")");
  EXPECT_EQ(error_of("{\"ev\":\"send\",\"consumer\":1,\"consumer_debit\":0}\n"),
            R"(line 2: event "send" is missing required field "entries")");
}

TEST(EventErrors, DuplicateFields) {
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":1,\"cnx\":2}\n"),
            R"(line 2: duplicate field "cnx")");
  EXPECT_EQ(error_of("{\"cnx\":1,\"ev\":\"connect\",\"cnx\":2}\n"),
            R"(line 2: duplicate field "cnx")");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"ev\":\"connect\",\"cnx\":2}\n"),
            R"(line 2: duplicate field "ev")");
}

// ---- Identifiers ----

TEST(Identifiers, AreStringsOrNonNegativeIntegersAndNeverEqualAcrossKinds) {
  const spec::Event numeric = event_of(R"({"ev":"connect","cnx":7})");
  const spec::Event textual = event_of(R"({"ev":"connect","cnx":"7"})");
  EXPECT_EVENT_EQ(numeric, spec::Connect{Id::number(7)});
  EXPECT_EVENT_EQ(textual, spec::Connect{Id::text("7")});
  EXPECT_FALSE(spec::events_equal(numeric, textual));
  EXPECT_EVENT_EQ(event_of(R"({"ev":"connect","cnx":18446744073709551615})"),
                  spec::Connect{Id::number(kUint64Max)});
  EXPECT_EVENT_EQ(event_of(R"({"ev":"connect","cnx":"c\u00e9\n\"\\"})"),
                  spec::Connect{Id::text("c\xC3\xA9\n\"\\")});
  EXPECT_EVENT_EQ(event_of(R"({"ev":"connect","cnx":""})"), spec::Connect{Id::text("")});
}

TEST(IdentifierErrors, NegativeFractionalOrOutOfRange) {
  const std::string expected =
      R"(line 2: field "cnx" must be a string or a non-negative integer in uint64 range, got )";
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":-1}\n"), expected + "-1");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":1.5}\n"), expected + "1.5");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":18446744073709551616}\n"),
            expected + "18446744073709551616");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":null}\n"), expected + "null");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":{\"id\":1}}\n"), expected + "an object");
}

// ---- Integers ----

TEST(ConsumerId, AcceptsTheFullUint64Range) {
  EXPECT_EVENT_EQ(event_of(R"({"ev":"quiescent","cnx":1,"consumer":18446744073709551615})"),
                  (spec::Quiescent{Id::number(1), kUint64Max}));
  EXPECT_EQ(error_of("{\"ev\":\"quiescent\",\"cnx\":1,\"consumer\":-1}\n"),
            R"(line 2: field "consumer" must be an integer in uint64 range, got -1)");
  EXPECT_EQ(
      error_of("{\"ev\":\"quiescent\",\"cnx\":1,\"consumer\":18446744073709551616}\n"),
      R"(line 2: field "consumer" must be an integer in uint64 range, got 18446744073709551616)");
}

// B13 is judged at `quiescent` from the backlog the recorder states; absent means unknown.
TEST(QuiescentBacklog, ReadWhenPresentAbsentMeansUnknown) {
  EXPECT_EVENT_EQ(event_of(R"({"ev":"quiescent","cnx":1,"consumer":2,"backlog":3})"),
                  (spec::Quiescent{Id::number(1), 2, 3}));
  EXPECT_EVENT_EQ(event_of(R"({"ev":"quiescent","cnx":1,"consumer":2,"backlog":0})"),
                  (spec::Quiescent{Id::number(1), 2, 0}));
  EXPECT_EVENT_EQ(event_of(R"({"ev":"quiescent","cnx":1,"consumer":2,"backlog":9223372036854775807})"),
                  (spec::Quiescent{Id::number(1), 2, std::numeric_limits<std::int64_t>::max()}));
  EXPECT_FALSE(std::get<spec::Quiescent>(event_of(R"({"ev":"quiescent","cnx":1,"consumer":2})"))
                   .backlog.has_value());
}

TEST(QuiescentBacklog, NegativeOrNonIntegerBacklogIsRefusedWithItsLine) {
  EXPECT_EQ(error_of("{\"ev\":\"quiescent\",\"cnx\":1,\"consumer\":2,\"backlog\":-1}\n"),
            R"(line 2: field "backlog" must be a non-negative integer, got -1)");
  EXPECT_THAT(error_of("{\"ev\":\"quiescent\",\"cnx\":1,\"consumer\":2,\"backlog\":\"3\"}\n"),
              ::testing::StartsWith(R"(line 2: field "backlog" must be )"));
  EXPECT_THAT(error_of("{\"ev\":\"quiescent\",\"cnx\":1,\"consumer\":2,\"backlog\":1.5}\n"),
              ::testing::StartsWith(R"(line 2: field "backlog" must be )"));
  EXPECT_THAT(error_of("{\"ev\":\"quiescent\",\"cnx\":1,\"consumer\":2,\"backlog\":1,\"backlog\":2}\n"),
              ::testing::HasSubstr("duplicate field \"backlog\""));
}

TEST(MessagePermits, FullUint64IsReadAndRangeIsLeftToRuleW2) {
  const spec::Event e = event_of(
      R"({"ev":"message","cnx":1,"consumer":0,"cmd":1,"message_permits":18446744073709551615})");
  EXPECT_EQ(std::get<spec::Message>(e).message_permits, kUint64Max);
  const spec::Event zero = event_of(R"({"ev":"recv","inc":1,"cmd":1,"message_permits":0})");
  EXPECT_EQ(std::get<spec::Recv>(zero).message_permits, 0u);
  const spec::Event absent = event_of(R"({"ev":"recv","inc":1,"cmd":1})");
  EXPECT_FALSE(std::get<spec::Recv>(absent).message_permits.has_value());
  EXPECT_EQ(error_of("{\"ev\":\"recv\",\"inc\":1,\"cmd\":1,\"message_permits\":-1}\n"),
            R"(line 2: field "message_permits" must be an integer in uint64 range, got -1)");
}

TEST(Int64Fields, AcceptTheWholeInt64RangeIncludingNegativeValues) {
  EXPECT_EVENT_EQ(event_of(R"({"ev":"flow","cnx":1,"consumer":0,"permits":-9223372036854775808})"),
                  (spec::Flow{Id::number(1), 0, kInt64Min, std::nullopt}));
  EXPECT_EVENT_EQ(event_of(R"({"ev":"settle","cmd":1,"n":9223372036854775807})"),
                  (spec::Settle{Id::number(1), kInt64Max}));
}

TEST(Int64FieldErrors, FloatsStringsAndOutOfRangeNameTheFieldAndValue) {
  // The brief's own example: an error on line 7.
  EXPECT_EQ(error_of("\n# five lines of "
                     "noise\n\n\n\n{\"ev\":\"flow\",\"cnx\":1,\"consumer\":0,\"permits\":1e400}\n"),
            R"(line 7: field "permits" must be an integer in int64 range, got 1e400)");
  EXPECT_EQ(error_of("{\"ev\":\"settle\",\"cmd\":1,\"n\":9223372036854775808}\n"),
            R"(line 2: field "n" must be an integer in int64 range, got 9223372036854775808)");
  EXPECT_EQ(error_of("{\"ev\":\"settle\",\"cmd\":1,\"n\":-9223372036854775809}\n"),
            R"(line 2: field "n" must be an integer in int64 range, got -9223372036854775809)");
  EXPECT_EQ(error_of("{\"ev\":\"settle\",\"cmd\":1,\"n\":1.0}\n"),
            R"(line 2: field "n" must be an integer in int64 range, got 1.0)");
  EXPECT_EQ(error_of("{\"ev\":\"settle\",\"cmd\":1,\"n\":\"1\"}\n"),
            R"(line 2: field "n" must be an integer in int64 range, got "1")");
  EXPECT_EQ(error_of("{\"ev\":\"settle\",\"cmd\":1,\"n\":true}\n"),
            R"(line 2: field "n" must be an integer in int64 range, got true)");
  EXPECT_EQ(error_of("{\"ev\":\"settle\",\"cmd\":1,\"n\":[1]}\n"),
            R"(line 2: field "n" must be an integer in int64 range, got an array)");
}

TEST(Int64FieldErrors, LongOffendingValuesAreCutInTheMessage) {
  EXPECT_EQ(
      error_of(absl::StrCat("{\"ev\":\"settle\",\"cmd\":1,\"n\":", std::string(60, '9'), "}\n")),
      absl::StrCat(R"(line 2: field "n" must be an integer in int64 range, got )",
                   std::string(40, '9'), "..."));
}

// ---- ack_set ----

TEST(AckSet, WordsInInt64OrUint64RangeAreTheSameSixtyFourBits) {
  const spec::Event e = event_of(
      R"({"ev":"recv","inc":1,"cmd":1,"ack_set":[-1,18446744073709551615,9223372036854775808,-9223372036854775808,37]})");
  EXPECT_EQ(std::get<spec::Recv>(e).ack_set.words(),
            (std::vector<std::int64_t>{-1, -1, kInt64Min, kInt64Min, 37}));
}

TEST(AckSet, AnEmptyArrayIsTheAbsentField) {
  const spec::Event e = event_of(R"({"ev":"recv","inc":1,"cmd":1,"ack_set":[]})");
  EXPECT_TRUE(std::get<spec::Recv>(e).ack_set.absent());
}

TEST(AckSetErrors, AnythingButInt64OrUint64WordsIsRefused) {
  EXPECT_EQ(
      error_of("{\"ev\":\"recv\",\"inc\":1,\"cmd\":1,\"ack_set\":[1,18446744073709551616]}\n"),
      R"(line 2: field "ack_set[1]" must be an integer in int64 or uint64 range, got 18446744073709551616)");
  EXPECT_EQ(
      error_of("{\"ev\":\"recv\",\"inc\":1,\"cmd\":1,\"ack_set\":[-9223372036854775809]}\n"),
      R"(line 2: field "ack_set[0]" must be an integer in int64 or uint64 range, got -9223372036854775809)");
  EXPECT_EQ(error_of("{\"ev\":\"recv\",\"inc\":1,\"cmd\":1,\"ack_set\":[0.5]}\n"),
            R"(line 2: field "ack_set[0]" must be an integer in int64 or uint64 range, got 0.5)");
  EXPECT_EQ(error_of("{\"ev\":\"recv\",\"inc\":1,\"cmd\":1,\"ack_set\":[\"37\"]}\n"),
            R"(line 2: field "ack_set[0]" must be an integer in int64 or uint64 range, got "37")");
  EXPECT_EQ(
      error_of("{\"ev\":\"recv\",\"inc\":1,\"cmd\":1,\"ack_set\":[[1]]}\n"),
      R"(line 2: field "ack_set[0]" must be an integer in int64 or uint64 range, got an array)");
  EXPECT_EQ(error_of("{\"ev\":\"recv\",\"inc\":1,\"cmd\":1,\"ack_set\":37}\n"),
            R"(line 2: field "ack_set" must be an array of integers, got 37)");
}

// ---- Enumerations ----

TEST(Enumerations, EveryValueOfTheFormatIsRead) {
  for (const char* r :
       {"close_consumer", "disconnect", "subscribe_fail", "closed", "protocol_error"}) {
    const spec::Event e =
        event_of(absl::StrCat(R"({"ev":"inc_close","inc":1,"reason":")", r, "\"}"));
    EXPECT_EQ(spec::close_reason_name(std::get<spec::IncClose>(e).reason), r);
  }
  for (const char* s : {"explicit", "ack_set", "batch", "legacy"}) {
    const spec::Event e =
        event_of(absl::StrCat(R"({"ev":"resolve","cmd":1,"p":1,"source":")", s, "\"}"));
    EXPECT_EQ(spec::permit_source_name(std::get<spec::Resolve>(e).source), s);
  }
  for (const char* s : {"checksum", "metadata", "decompress", "batch", "inconsistent"}) {
    const spec::Event e = event_of(absl::StrCat(R"({"ev":"corrupt","cmd":1,"stage":")", s, "\"}"));
    EXPECT_EQ(spec::failure_stage_name(std::get<spec::Corrupt>(e).stage), s);
  }
  for (const char* r : {"duplicate", "compacted", "before_start", "dead_letter"}) {
    const spec::Event e =
        event_of(absl::StrCat(R"({"ev":"skip","cmd":1,"index":0,"reason":")", r, "\"}"));
    EXPECT_EQ(spec::skip_reason_name(std::get<spec::Skip>(e).reason), r);
  }
  for (const char* p : {"chunk", "crypto", "processor"}) {
    const spec::Event e = event_of(absl::StrCat(R"({"ev":"transfer","cmd":1,"path":")", p, "\"}"));
    EXPECT_EQ(spec::transfer_path_name(std::get<spec::Transfer>(e).path), p);
  }
  for (const char* d : {"persistent_shared", "persistent_shared_classic", "persistent_key_shared",
                        "persistent_key_shared_classic", "non_persistent_shared",
                        "non_persistent_key_shared", "single_active"}) {
    const spec::Event e = event_of(absl::StrCat(R"({"ev":"send","consumer":1,"dispatcher":")", d,
                                                R"(","entries":[],"consumer_debit":0})"));
    EXPECT_EQ(spec::dispatcher_name(*std::get<spec::Send>(e).dispatcher), d);
  }
}

TEST(Enumerations, FreeTextFieldsAreNotChecked) {
  // direct_return's path and protocol_error's reason are text; validation_error too.
  EXPECT_EVENT_EQ(event_of(R"({"ev":"direct_return","cmd":1,"n":2,"path":"dead_letter"})"),
                  (spec::DirectReturn{Id::number(1), 2, "dead_letter"}));
  EXPECT_EVENT_EQ(event_of(R"({"ev":"protocol_error","cnx":"c","reason":"C4"})"),
                  (spec::ProtocolError{Id::text("c"), "C4"}));
  EXPECT_EVENT_EQ(
      event_of(
          R"({"ev":"ack","cnx":"c","consumer":1,"cmd":2,"validation_error":"ChecksumMismatch"})"),
      (spec::Ack{Id::text("c"), 1, Id::number(2), "ChecksumMismatch"}));
}

TEST(EnumerationErrors, ListTheValuesTheFormatAllows) {
  EXPECT_EQ(
      error_of("{\"ev\":\"inc_close\",\"inc\":1,\"reason\":\"gone\"}\n"),
      R"(line 2: field "reason" must be one of close_consumer, disconnect, subscribe_fail, closed, protocol_error, got "gone")");
  EXPECT_EQ(
      error_of("{\"ev\":\"resolve\",\"cmd\":1,\"p\":1,\"source\":\"guess\"}\n"),
      R"(line 2: field "source" must be one of explicit, ack_set, batch, legacy, got "guess")");
  EXPECT_EQ(
      error_of("{\"ev\":\"corrupt\",\"cmd\":1,\"stage\":\"Batch\"}\n"),
      R"(line 2: field "stage" must be one of checksum, metadata, decompress, batch, inconsistent, got "Batch")");
  EXPECT_EQ(
      error_of("{\"ev\":\"skip\",\"cmd\":1,\"index\":0,\"reason\":\"acked\"}\n"),
      R"(line 2: field "reason" must be one of duplicate, compacted, before_start, dead_letter, got "acked")");
  EXPECT_EQ(error_of("{\"ev\":\"transfer\",\"cmd\":1,\"path\":\"dlq\"}\n"),
            R"(line 2: field "path" must be one of chunk, crypto, processor, got "dlq")");
  EXPECT_EQ(
      error_of("{\"ev\":\"send\",\"consumer\":1,\"dispatcher\":\"shared\",\"entries\":[],"
               "\"consumer_debit\":0}\n"),
      R"(line 2: field "dispatcher" must be one of persistent_shared, persistent_shared_classic, persistent_key_shared, persistent_key_shared_classic, non_persistent_shared, non_persistent_key_shared, single_active, got "shared")");
  EXPECT_EQ(error_of("{\"ev\":\"inc_close\",\"inc\":1,\"reason\":2}\n"),
            R"(line 2: field "reason" must be a string, got 2)");
}

// ---- Defaults and broker sends ----

TEST(MsgReturn, NDefaultsToOne) {
  EXPECT_EVENT_EQ(event_of(R"({"ev":"msg_return","msg":"m0"})"),
                  (spec::MsgReturn{Id::text("m0"), 1}));
  EXPECT_EVENT_EQ(event_of(R"({"ev":"msg_return","msg":"m0","n":0})"),
                  (spec::MsgReturn{Id::text("m0"), 0}));
}

TEST(SendEntries, AreObjectsWithCmdBatchSizeAckSetAdmittedAndP) {
  const spec::Event e = event_of(
      R"({"ev":"send","consumer":5,"inc":"b1","dispatcher":"persistent_key_shared","entries":[)"
      R"({"cmd":1,"batch_size":10,"admitted":true,"p":10},)"
      R"({"p":3,"cmd":"c2","batch_size":8,"ack_set":[37],"admitted":false,"note":"rejected"}],)"
      R"("consumer_debit":10,"dispatcher_debit":10})");
  spec::Send expected{5, Id::text("b1"), spec::DispatcherKind::kPersistentKeyShared, {}, 10, 10};
  expected.entries.push_back({Id::number(1), spec::SendEntry{10, spec::AckSet(), true}, 10});
  expected.entries.push_back({Id::text("c2"), spec::SendEntry{8, spec::AckSet({37}), false}, 3});
  EXPECT_EVENT_EQ(e, expected);
}

TEST(SendEntryErrors, NameTheEntryAndItsField) {
  const auto send = [](const std::string& entries) {
    return absl::StrCat(R"({"ev":"send","consumer":1,"entries":)", entries,
                        R"(,"consumer_debit":0})", "\n");
  };
  EXPECT_EQ(error_of(send(R"([{"cmd":1,"batch_size":2}])")),
            R"(line 2: event "send" is missing required field "entries[0].admitted")");
  EXPECT_EQ(error_of(send(
                R"([{"cmd":1,"batch_size":2,"admitted":true},{"batch_size":2,"admitted":true}])")),
            R"(line 2: event "send" is missing required field "entries[1].cmd")");
  EXPECT_EQ(error_of(send(R"([{"cmd":1,"batch_size":2,"admitted":1}])")),
            R"(line 2: field "entries[0].admitted" must be true or false, got 1)");
  EXPECT_EQ(error_of(send(R"([{"cmd":1,"batch_size":2.5,"admitted":true}])")),
            R"(line 2: field "entries[0].batch_size" must be an integer in int64 range, got 2.5)");
  EXPECT_EQ(
      error_of(send(R"([{"cmd":1,"batch_size":2,"admitted":true,"ack_set":[1e3]}])")),
      R"(line 2: field "entries[0].ack_set[0]" must be an integer in int64 or uint64 range, got 1e3)");
  EXPECT_EQ(error_of(send(R"([{"cmd":1,"cmd":2,"batch_size":2,"admitted":true}])")),
            R"(line 2: duplicate field "entries[0].cmd")");
  EXPECT_EQ(error_of(send("[7]")), R"(line 2: field "entries[0]" must be an object, got 7)");
  EXPECT_EQ(error_of(send("{}")),
            R"(line 2: field "entries" must be an array of objects, got an object)");
}

// ---- Unreadable input ----

TEST(MalformedJson, PointsAtTheOffendingColumn) {
  const std::string bad_token =
      ": unexpected token (a missing or extra comma, colon, quote, brace or bracket?)";
  EXPECT_EQ(error_of("{\"ev\":\"connect\" \"cnx\":1}\n"),
            "line 2: malformed JSON at column 17" + bad_token);
  EXPECT_EQ(error_of("{\"ev\":\"connect\",,\"cnx\":1}\n"),
            "line 2: malformed JSON at column 17" + bad_token);
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":1,}\n"),
            "line 2: malformed JSON at column 25" + bad_token);
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"x\":[}\n"),
            "line 2: malformed JSON at column 22" + bad_token);
  EXPECT_EQ(error_of("}\n"), "line 2: malformed JSON at column 1" + bad_token);
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":01}\n"),
            "line 2: malformed JSON at column 23: invalid number 01");
  EXPECT_EQ(
      error_of("{\"ev\":\"connect\",\"cnx\":tru}\n"),
      "line 2: malformed JSON at column 23: invalid literal tru (expected true, false or null)");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":\"a\\qb\"}\n"),
            "line 2: malformed JSON at column 23: invalid string (bad escape sequence or surrogate "
            "pair)");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":\"\\ud800\"}\n"),
            "line 2: malformed JSON at column 23: invalid string (bad escape sequence or surrogate "
            "pair)");
}

TEST(MalformedJson, ObjectNeverClosedOnATerminatedLine) {
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"x\":{\"a\":1}\n{\"ev\":\"connect\",\"cnx\":1}\n"),
            "line 2: malformed JSON: object or array is never closed");
}

TEST(TruncatedTrace, LastLineCutMidObjectSaysTheTraceMayBeTruncated) {
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":1}\n{\"ev\":\"flow\",\"cnx\":1,\"cons"),
            "line 3: malformed JSON at column 22: string is never closed (the last line has no "
            "newline: is the trace truncated?)");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":1}\n{\"ev\":\"flow\",\"cnx\":1,"),
            "line 3: malformed JSON: object or array is never closed (the last line has no "
            "newline: is the trace truncated?)");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":1}\n{\"ev\":\"settle\",\"cmd\":1,\"n\":12"),
            "line 3: malformed JSON: object or array is never closed (the last line has no "
            "newline: is the trace truncated?)");
}

TEST(TextEncoding, NulBytesAreRefusedWithTheirColumn) {
  EXPECT_EQ(error_of(std::string("{\"ev\":\"connect\",\"cnx\":\"a\0b\"}\n", 28)),
            "line 2: NUL byte at column 25 (a trace is UTF-8 text)");
  EXPECT_EQ(error_of(std::string("{\"ev\":\"connect\",\"cnx\":1}\0\n", 26)),
            "line 2: NUL byte at column 25 (a trace is UTF-8 text)");
  // An escaped NUL is ordinary text.
  EXPECT_EVENT_EQ(event_of(R"({"ev":"connect","cnx":"a\u0000b"})"),
                  spec::Connect{Id::text(std::string("a\0b", 3))});
}

TEST(TextEncoding, InvalidUtf8IsRefusedWithItsColumn) {
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":\"a\xFF\"}\n"),
            "line 2: invalid UTF-8 at column 25");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":\"\xED\xA0\x80\"}\n"),  // encoded surrogate
            "line 2: invalid UTF-8 at column 24");
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":\"\xC3\"}\n"),
            "line 2: invalid UTF-8 at column 24");
}

TEST(TextEncoding, CommentsAreNotDecoded) {
  EXPECT_EQ(
      error_of(std::string("# \xFF") + '\0' + " binary junk\n{\"ev\":\"connect\",\"cnx\":1}\n"),
      "OK");
}

TEST(TextEncoding, RawControlCharactersInStringsAreRefused) {
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":\"a\tb\"}\n"),
            "line 2: malformed JSON at column 25: control character in a string (U+0000 to U+001F "
            "must be escaped)");
}

TEST(Nesting, DeeplyNestedUnknownFieldsAreRefusedNotRecursedInto) {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":1,\"x\":" + deep + "}\n"),
            "line 2: JSON nested deeper than 64 levels");
  const std::string ok = std::string(60, '[') + std::string(60, ']');
  EXPECT_EQ(error_of("{\"ev\":\"connect\",\"cnx\":1,\"x\":" + ok + "}\n"), "OK");
}

TEST(LineLength, ALongerLineThanTheLimitIsAClearErrorNotACrash) {
  ReaderOptions options;
  options.max_line_bytes = 100;
  const std::string line =
      absl::StrCat(R"({"ev":"connect","cnx":")", std::string(200, 'a'), "\"}\n");
  absl::StatusOr<Trace> trace = read_trace_text(absl::StrCat(kHeader, "\n", line), options);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().message(),
            "line 2: line is longer than 100 bytes, the reader's limit (is this a trace file?)");
}

TEST(LineLength, AHundredMegabyteLineIsParsedWithTheDefaultLimit) {
  const std::string name(100 << 20, 'n');
  std::string text = absl::StrCat(kHeader, "\n{\"ev\":\"connect\",\"cnx\":\"", name, "\"}\n");
  absl::StatusOr<Trace> trace = read_trace_text(text);
  text.clear();
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->events.size(), 1u);
  EXPECT_EQ(std::get<spec::Connect>(trace->events[0]).cnx.as_text().size(), name.size());
}

TEST(LineLength, AMillionWordAckSetIsParsed) {
  std::string words;
  for (int i = 0; i < 1'000'000; ++i) absl::StrAppend(&words, i == 0 ? "" : ",", -i);
  const spec::Event e =
      event_of(absl::StrCat(R"({"ev":"recv","inc":1,"cmd":1,"ack_set":[)", words, "]}"));
  const std::vector<std::int64_t>& read = std::get<spec::Recv>(e).ack_set.words();
  ASSERT_EQ(read.size(), 1'000'000u);
  EXPECT_EQ(read.back(), -999'999);
}

// ---- Streaming ----

TEST(Streaming, ErrorsAreStickyAndEarlierEventsWereDelivered) {
  std::istringstream in(absl::StrCat(
      kHeader,
      "\n{\"ev\":\"connect\",\"cnx\":1}\n{\"ev\":\"oops\"}\n{\"ev\":\"connect\",\"cnx\":2}\n"));
  absl::StatusOr<TraceReader> reader = TraceReader::open(in);
  ASSERT_TRUE(reader.ok());
  spec::Event event;
  ASSERT_TRUE(*reader->next(&event));
  absl::StatusOr<bool> bad = reader->next(&event);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            R"(line 3: unknown event "oops" (an extension event's name starts with "x-"))");
  EXPECT_EQ(reader->next(&event).status(), bad.status());
}

// An endless trace: a header, then `connect` events forever.
class EndlessTrace : public std::streambuf {
 protected:
  int_type underflow() override {
    line_ = absl::StrCat("{\"ev\":\"connect\",\"cnx\":", n_++, "}\n");
    if (n_ == 1) line_ = absl::StrCat(kHeader, "\n");
    setg(line_.data(), line_.data(), line_.data() + line_.size());
    return traits_type::to_int_type(line_[0]);
  }

 private:
  std::string line_;
  std::uint64_t n_ = 0;
};

TEST(Streaming, ReadsEventsWithoutWaitingForTheEndOfTheTrace) {
  EndlessTrace endless;
  std::istream in(&endless);
  absl::StatusOr<TraceReader> reader = TraceReader::open(in);
  ASSERT_TRUE(reader.ok()) << reader.status();
  spec::Event event;
  std::uint64_t line = 0;
  for (int i = 0; i < 200'000; ++i) ASSERT_TRUE(*reader->next(&event, &line));
  EXPECT_EQ(line, 200'001u);
  EXPECT_EVENT_EQ(event, spec::Connect{Id::number(200'000)});  // the first connect has cnx 1
}

}  // namespace
}  // namespace permitcheck::trace
