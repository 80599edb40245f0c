// trace/writer.h: the exact lines written for trace-format.md (field order of the format's
// tables, optional fields only when present, JSON escaping), pinned as golden strings.
#include "trace/writer.h"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tests/trace/trace_testing.h"
#include "trace/reader.h"

namespace permitcheck::trace {
namespace {

using spec::Id;

TEST(WrittenHeader, AlwaysNamesTheRulesetAndOmitsAbsentQAndT) {
  EXPECT_EQ(write_header({}),
            R"({"trace":"pip491-permits","version":1,"source":"model","ruleset":"rev-d"})");
  EXPECT_EQ(
      write_header({.source = spec::TraceSource::kClient,
                    .ruleset = spec::RulesetId::kLegacy,
                    .q = 4,
                    .t = 2}),
      R"({"trace":"pip491-permits","version":1,"source":"client","ruleset":"legacy","q":4,"t":2})");
}

TEST(FormatExample, EveryEventLineIsWrittenBackByteForByte) {
  const std::vector<std::string> lines = {
      R"({"ev":"inc_open","inc":1,"cnx":"c1","consumer":0})",
      R"({"ev":"inc_flow_enabled","inc":1})",
      R"({"ev":"flow","cnx":"c1","consumer":0,"inc":1,"permits":4})",
      R"({"ev":"recv","inc":1,"cmd":1,"message_permits":3,"ack_set":[37]})",
      R"({"ev":"metadata","cmd":1,"batch_size":8})",
      R"({"ev":"resolve","cmd":1,"p":3,"source":"explicit"})",
      R"({"ev":"claim","cmd":1,"msg":"m0","index":0})",
      R"({"ev":"claim","cmd":1,"msg":"m2","index":2})",
      R"({"ev":"corrupt","cmd":1,"stage":"batch","index":5})",
      R"({"ev":"settle","cmd":1,"n":1})",
      R"({"ev":"msg_return","msg":"m0"})",
      R"({"ev":"flow","cnx":"c1","consumer":0,"inc":1,"permits":2})",
      R"({"ev":"msg_return","msg":"m2"})",
  };
  std::string text = R"({"trace":"pip491-permits","version":1,"source":"client","q":4,"t":2})";
  for (const std::string& line : lines) text += "\n" + line;
  absl::StatusOr<Trace> trace = read_trace_text(text);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->events.size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(write_event(trace->events[i]), lines[i]);
}

TEST(WrittenEvents, WireEventsInTheFormatsFieldOrder) {
  const Id c = Id::text("c1");
  EXPECT_EQ(write_event(spec::Connect{c}), R"({"ev":"connect","cnx":"c1"})");
  EXPECT_EQ(write_event(spec::Subscribe{c, 3, Id::number(2)}),
            R"({"ev":"subscribe","cnx":"c1","consumer":3,"inc":2})");
  EXPECT_EQ(write_event(spec::Subscribe{c, 3, std::nullopt}),
            R"({"ev":"subscribe","cnx":"c1","consumer":3})");
  EXPECT_EQ(write_event(spec::SubscribeOk{c, 3}),
            R"({"ev":"subscribe_ok","cnx":"c1","consumer":3})");
  EXPECT_EQ(write_event(spec::SubscribeFail{c, 3}),
            R"({"ev":"subscribe_fail","cnx":"c1","consumer":3})");
  EXPECT_EQ(write_event(spec::Flow{c, 3, 1000, std::nullopt}),
            R"({"ev":"flow","cnx":"c1","consumer":3,"permits":1000})");
  EXPECT_EQ(
      write_event(spec::Message{c, 3, Id::number(7), 3, spec::AckSet({37}), 8, 2}),
      R"({"ev":"message","cnx":"c1","consumer":3,"cmd":7,"message_permits":3,"ack_set":[37],"batch_size":8,"epoch":2})");
  EXPECT_EQ(
      write_event(spec::Message{c, 3, Id::number(7), std::nullopt, {}, std::nullopt, std::nullopt}),
      R"({"ev":"message","cnx":"c1","consumer":3,"cmd":7})");
  EXPECT_EQ(
      write_event(spec::Ack{c, 3, Id::number(7), "ChecksumMismatch"}),
      R"({"ev":"ack","cnx":"c1","consumer":3,"cmd":7,"validation_error":"ChecksumMismatch"})");
  EXPECT_EQ(write_event(spec::CloseConsumer{c, 3}),
            R"({"ev":"close_consumer","cnx":"c1","consumer":3})");
  EXPECT_EQ(write_event(spec::Disconnect{c}), R"({"ev":"disconnect","cnx":"c1"})");
  EXPECT_EQ(write_event(spec::Quiescent{c, 3}), R"({"ev":"quiescent","cnx":"c1","consumer":3})");
  EXPECT_EQ(write_event(spec::Quiescent{c, 3, 0}),
            R"({"ev":"quiescent","cnx":"c1","consumer":3,"backlog":0})");
}

TEST(WrittenEvents, ClientAccountingEventsInTheFormatsFieldOrder) {
  const Id cmd = Id::number(7), msg = Id::text("m");
  EXPECT_EQ(write_event(spec::IncClose{Id::number(1), spec::CloseReason::kSubscribeFail}),
            R"({"ev":"inc_close","inc":1,"reason":"subscribe_fail"})");
  EXPECT_EQ(write_event(spec::Recv{Id::number(1), cmd, std::nullopt, {}}),
            R"({"ev":"recv","inc":1,"cmd":7})");
  EXPECT_EQ(write_event(spec::Resolve{cmd, 4, spec::PermitSource::kAckSet}),
            R"({"ev":"resolve","cmd":7,"p":4,"source":"ack_set"})");
  EXPECT_EQ(write_event(spec::Corrupt{cmd, spec::FailureStage::kChecksum, std::nullopt}),
            R"({"ev":"corrupt","cmd":7,"stage":"checksum"})");
  EXPECT_EQ(write_event(spec::Claim{cmd, msg, std::nullopt}),
            R"({"ev":"claim","cmd":7,"msg":"m"})");
  EXPECT_EQ(write_event(spec::Restore{cmd, msg}), R"({"ev":"restore","cmd":7,"msg":"m"})");
  EXPECT_EQ(write_event(spec::Skip{cmd, 3, spec::SkipReason::kBeforeStart}),
            R"({"ev":"skip","cmd":7,"index":3,"reason":"before_start"})");
  EXPECT_EQ(write_event(spec::Transfer{cmd, spec::TransferPath::kProcessor}),
            R"({"ev":"transfer","cmd":7,"path":"processor"})");
  EXPECT_EQ(write_event(spec::DirectReturn{cmd, 2, "chunk"}),
            R"({"ev":"direct_return","cmd":7,"n":2,"path":"chunk"})");
  EXPECT_EQ(write_event(spec::DirectReturn{cmd, 2, std::nullopt}),
            R"({"ev":"direct_return","cmd":7,"n":2})");
  EXPECT_EQ(write_event(spec::MsgReturn{msg, 3}), R"({"ev":"msg_return","msg":"m","n":3})");
  EXPECT_EQ(write_event(spec::Drop{std::nullopt, msg, 1}), R"({"ev":"drop","msg":"m","n":1})");
  EXPECT_EQ(write_event(spec::Drop{cmd, std::nullopt, 2}), R"({"ev":"drop","cmd":7,"n":2})");
  EXPECT_EQ(write_event(spec::ProtocolError{Id::text("c1"), "C4 message_permits 0"}),
            R"({"ev":"protocol_error","cnx":"c1","reason":"C4 message_permits 0"})");
}

TEST(WrittenEvents, BrokerSendWithEntries) {
  spec::Send send{5, Id::text("b1"), spec::DispatcherKind::kNonPersistentKeyShared, {}, 10, 10};
  send.entries.push_back({Id::number(1), spec::SendEntry{10, {}, true}, 10});
  send.entries.push_back(
      {Id::number(2), spec::SendEntry{8, spec::AckSet({37}), false}, std::nullopt});
  EXPECT_EQ(
      write_event(send),
      R"({"ev":"send","consumer":5,"inc":"b1","dispatcher":"non_persistent_key_shared","entries":[)"
      R"({"cmd":1,"batch_size":10,"admitted":true,"p":10},)"
      R"({"cmd":2,"batch_size":8,"ack_set":[37],"admitted":false}],)"
      R"("consumer_debit":10,"dispatcher_debit":10})");
  EXPECT_EQ(write_event(spec::Send{1, std::nullopt, std::nullopt, {}, 0, std::nullopt}),
            R"({"ev":"send","consumer":1,"entries":[],"consumer_debit":0})");
  EXPECT_EQ(write_event(spec::ConsumerRemoved{1, std::nullopt}),
            R"({"ev":"consumer_removed","consumer":1})");
}

TEST(WrittenEvents, ExtensionsKeepOnlyTheirName) {
  EXPECT_EQ(write_event(spec::Extension{"x-note"}), R"({"ev":"x-note"})");
}

TEST(WrittenIntegers, FullRangesAndAckSetWordsAsSignedLongs) {
  constexpr auto kU64Max = std::numeric_limits<std::uint64_t>::max();
  constexpr auto kI64Min = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(write_event(spec::Connect{Id::number(kU64Max)}),
            R"({"ev":"connect","cnx":18446744073709551615})");
  EXPECT_EQ(
      write_event(
          spec::Recv{Id::number(0), Id::number(1), kU64Max, spec::AckSet({-1, kI64Min, 0})}),
      R"({"ev":"recv","inc":0,"cmd":1,"message_permits":18446744073709551615,"ack_set":[-1,-9223372036854775808,0]})");
}

TEST(WrittenStrings, AreJsonEscapedAndAlwaysValidUtf8) {
  EXPECT_EQ(write_event(spec::Connect{Id::text(std::string("q\"b\\s\n\t\0\x1f\xC3\xA9", 11))}),
            "{\"ev\":\"connect\",\"cnx\":\"q\\\"b\\\\s\\n\\t\\u0000\\u001f\xC3\xA9\"}");
  // Bytes that are not UTF-8 cannot be written as JSON text: they become U+FFFD.
  EXPECT_EQ(write_event(spec::Connect{Id::text("a\xFF")}),
            "{\"ev\":\"connect\",\"cnx\":\"a\xEF\xBF\xBD\"}");
}

TEST(WrittenTrace, HeaderThenOneEventPerNewlineTerminatedLine) {
  std::ostringstream out;
  ASSERT_TRUE(write_trace(out, {.source = spec::TraceSource::kWire},
                          {spec::Connect{Id::text("c")}, spec::Disconnect{Id::text("c")}})
                  .ok());
  EXPECT_EQ(
      out.str(),
      "{\"trace\":\"pip491-permits\",\"version\":1,\"source\":\"wire\",\"ruleset\":\"rev-d\"}\n"
      "{\"ev\":\"connect\",\"cnx\":\"c\"}\n"
      "{\"ev\":\"disconnect\",\"cnx\":\"c\"}\n");
}

TEST(WrittenTrace, AFailedStreamIsDataLoss) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  absl::Status s = write_trace(out, {}, {spec::Connect{Id::number(1)}});
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
}

TEST(WrittenEvents, AppendEventReusesTheBuffer) {
  std::string line = "prefix ";
  append_event(&line, spec::Disconnect{Id::number(1)});
  EXPECT_EQ(line, R"(prefix {"ev":"disconnect","cnx":1})");
}

}  // namespace
}  // namespace permitcheck::trace
