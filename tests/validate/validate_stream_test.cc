// What validate_stream records of a trace (validate/validate.h) and how the results of several
// inputs combine into one exit code: the header as checked (the --ruleset override in it), the
// last line read, the families of events (which rules applied), progress at its cadence on one
// thread and on two, and exit 2 for an unreadable input wherever it stands. Issue 33: these
// decisions had mutants no test caught.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "spec/outcome.h"
#include "validate/validate.h"

namespace permitcheck::validate {
namespace validate_stream_test {

using ::testing::HasSubstr;
using ::testing::Not;

// Line 1 the header; lines 2-9 eight wire events: two open the consumer, one message with
// batch_size, one quiescent point.
constexpr char kWire[] =
    R"({"trace":"pip491-permits","version":1,"source":"wire","q":10,"t":5})" "\n"
    R"({"ev":"connect","cnx":"c1"})" "\n"
    R"({"ev":"subscribe","cnx":"c1","consumer":0})" "\n"
    R"({"ev":"subscribe_ok","cnx":"c1","consumer":0})" "\n"
    R"({"ev":"flow","cnx":"c1","consumer":0,"permits":10})" "\n"
    R"({"ev":"message","cnx":"c1","consumer":0,"cmd":1,"message_permits":1,"batch_size":1})" "\n"
    R"({"ev":"ack","cnx":"c1","consumer":0,"cmd":1})" "\n"
    R"({"ev":"flow","cnx":"c1","consumer":0,"permits":1})" "\n"
    R"({"ev":"quiescent","cnx":"c1","consumer":0})" "\n";

FileResult validate_text(const std::string& text, ValidateOptions options = {}) {
  std::istringstream in(text);
  return validate_stream(in, "t.jsonl", options);
}

TEST(ValidateStream, TheHeaderTheLastLineAndTheFamiliesAreWhatTheTraceHeld) {
  for (int threads : {1, 2}) {
    ValidateOptions options;
    options.threads = threads;
    options.block_events = 3;
    const FileResult r = validate_text(kWire, options);
    EXPECT_FALSE(r.error.has_value()) << *r.error;
    EXPECT_TRUE(r.violations.empty());
    EXPECT_EQ(r.events, 8u) << threads;
    EXPECT_EQ(r.last_line, 9u) << threads;
    ASSERT_TRUE(r.header.has_value());
    EXPECT_EQ(r.header->q, 10);
    EXPECT_EQ(r.header->t, 5);
    EXPECT_EQ(r.header->ruleset, spec::RulesetId::kRevD);
    EXPECT_EQ(r.families.wire, 8u);
    EXPECT_EQ(r.families.client, 0u);
    EXPECT_EQ(r.families.broker, 0u);
    EXPECT_EQ(r.families.quiescent, 1u);
    EXPECT_EQ(r.families.sized_messages, 1u);
    EXPECT_EQ(r.families.consumers, 2u);
    EXPECT_EQ(validate_exit_code({r}), spec::kExitPass);
  }
  // --ruleset: the header recorded is the one checked.
  ValidateOptions legacy;
  legacy.ruleset = spec::RulesetId::kLegacy;
  const FileResult l = validate_text(kWire, legacy);
  ASSERT_TRUE(l.header.has_value());
  EXPECT_EQ(l.header->ruleset, spec::RulesetId::kLegacy);
}

// A trace of its header alone (after two comment lines) ends at the header's line, checked
// nothing, and is bad input (2), not a pass.
TEST(ValidateStream, AHeaderOnlyTraceEndsAtItsHeaderLineAndChecksNothing) {
  const FileResult r = validate_text(
      "# a comment\n# another\n"
      R"({"trace":"pip491-permits","version":1,"source":"wire"})" "\n");
  EXPECT_FALSE(r.error.has_value());
  EXPECT_EQ(r.events, 0u);
  EXPECT_EQ(r.last_line, 3u);
  EXPECT_TRUE(r.nothing_checked());
  EXPECT_EQ(validate_exit_code({r}), spec::kExitBadInput);
}

TEST(ValidateStream, ClientBrokerAndExtensionEventsAreCountedInTheirFamilies) {
  const FileResult c = validate_text(
      R"({"trace":"pip491-permits","version":1,"source":"client","q":4,"t":2})" "\n"
      R"({"ev":"inc_open","inc":1,"cnx":"c1","consumer":0})" "\n"
      R"({"ev":"inc_flow_enabled","inc":1})" "\n"
      R"({"ev":"x-note anything"})" "\n");
  EXPECT_FALSE(c.error.has_value()) << *c.error;
  EXPECT_EQ(c.families.client, 2u);
  EXPECT_EQ(c.families.extension, 1u);
  EXPECT_EQ(c.families.wire, 0u);
  EXPECT_EQ(c.families.consumers, 1u);
  const FileResult b = validate_text(
      R"({"trace":"pip491-permits","version":1,"source":"broker"})" "\n"
      R"({"ev":"send","consumer":0,"dispatcher":"persistent_shared","entries":[{"cmd":1,"batch_size":1,"admitted":true,"p":1}],"consumer_debit":1,"dispatcher_debit":1})" "\n");
  EXPECT_FALSE(b.error.has_value()) << *b.error;
  EXPECT_EQ(b.families.broker, 1u);
  EXPECT_EQ(b.families.client, 0u);
  EXPECT_EQ(b.families.consumers, 1u);
}

// Progress comes every `progress_every` events (at 3 and 6 of 8), with the line of that event.
TEST(ValidateStream, ProgressComesEveryNEventsWithItsLine) {
  for (int threads : {1, 2}) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
    ValidateOptions options;
    options.threads = threads;
    options.progress_every = 3;
    options.progress = [&](std::uint64_t events, std::uint64_t line) {
      calls.emplace_back(events, line);
    };
    validate_text(kWire, options);
    EXPECT_EQ(calls, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{3, 4}, {6, 7}}))
        << threads;
  }
}

// A line limit of 0 is a limit of one byte, not none: the header line is too long.
TEST(ValidateStream, ALineLimitOf0IsOneByteNotUnlimited) {
  ValidateOptions options;
  options.max_line_bytes = 0;
  const FileResult r = validate_text(kWire, options);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(validate_exit_code({r}), spec::kExitBadInput);
}

FileResult checked(std::vector<std::string> violations_and_incomplete = {}, bool incomplete = false) {
  FileResult r;
  r.name = "x";
  r.families.consumers = 1;
  for (const std::string& v : violations_and_incomplete) {
    if (incomplete) {
      r.incomplete.push_back(v);
    } else {
      r.violations.push_back(spec::Finding{spec::RuleId::kE5, 1, v});
    }
  }
  return r;
}

// An unreadable input wins (2) wherever it stands, over a violation (1) and an INCOMPLETE (3);
// a violation wins over an INCOMPLETE; no input at all is bad input.
TEST(ValidateStream, E5_AnUnreadableInputMakesExit2WhereverItStands) {
  std::istringstream none;
  const FileResult missing = validate_path("/nonexistent/permitcheck/trace.jsonl", none, {});
  ASSERT_TRUE(missing.error.has_value());
  EXPECT_THAT(*missing.error, HasSubstr("cannot open"));
  const FileResult fail = checked({"E5"});
  const FileResult incomplete = checked({"lost segment"}, true);
  const FileResult pass = checked();
  EXPECT_EQ(validate_exit_code({missing, fail, incomplete}), spec::kExitBadInput);
  EXPECT_EQ(validate_exit_code({fail, incomplete, missing}), spec::kExitBadInput);
  EXPECT_EQ(validate_exit_code({incomplete, fail}), spec::exit_code(spec::Outcome::kFail));
  EXPECT_EQ(validate_exit_code({pass, incomplete}), spec::exit_code(spec::Outcome::kIncomplete));
  EXPECT_EQ(validate_exit_code({pass, pass}), spec::kExitPass);
  EXPECT_EQ(validate_exit_code({}), spec::kExitBadInput);
  FileResult empty = pass;
  empty.families.consumers = 0;
  EXPECT_EQ(validate_exit_code({pass, empty}), spec::kExitBadInput);
}

// Which rules applied, as the report says, at each edge of the families.
TEST(ValidateStream, E5_E6_B2_B7_AppliedRulesSayWhatWasAndWasNotChecked) {
  spec::TraceHeader with_t;
  with_t.t = 5;
  with_t.q = 10;
  EventFamilies f;
  f.wire = 1;
  std::vector<AppliedRules> a = applied_rules(f, with_t);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].family, "wire");
  EXPECT_THAT(a[0].rules, HasSubstr("B2/B7 not checked (no batch_size)"));
  EXPECT_THAT(a[0].rules, HasSubstr("E5/E6 not checked (no quiescent event)"));
  EXPECT_THAT(a[0].rules, Not(HasSubstr("Q from the first Flow")));
  f.sized_messages = 1;
  f.quiescent = 1;
  a = applied_rules(f, with_t);
  EXPECT_THAT(a[0].rules, HasSubstr("B2/B7 (1 messages with batch_size)"));
  EXPECT_THAT(a[0].rules, HasSubstr("E5/E6 at 1 quiescent point"));
  EXPECT_THAT(a[0].rules, Not(HasSubstr("points")));
  EXPECT_THAT(a[0].rules, Not(HasSubstr("no t:")));
  f.quiescent = 2;
  const spec::TraceHeader no_t_no_q;
  a = applied_rules(f, no_t_no_q);
  EXPECT_THAT(a[0].rules, HasSubstr("E5/E6 at 2 quiescent points (no t: only 0 < available <= Q)"));
  EXPECT_THAT(a[0].rules, HasSubstr("Q from the first Flow after subscribe_ok"));
  EventFamilies cb;
  cb.client = 1;
  cb.broker = 1;
  a = applied_rules(cb, with_t);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].family, "client accounting");
  EXPECT_EQ(a[1].family, "broker accounting");
  EXPECT_TRUE(applied_rules(EventFamilies{}, with_t).empty());
}

// The byte units switch exactly at 1 KiB, 1 MiB and 1 GiB; --max-memory takes 1 byte to 1 TiB.
TEST(ValidateStream, ByteUnitsSwitchAtTheirPowersAndTheMemoryLimitIs1ByteTo1TiB) {
  EXPECT_EQ(format_bytes(1023), "1023 bytes");
  EXPECT_EQ(format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_bytes((std::size_t{1} << 20) - 1), "1024.0 KiB");
  EXPECT_EQ(format_bytes(std::size_t{1} << 20), "1.0 MiB");
  EXPECT_EQ(format_bytes((std::size_t{1} << 30) - (std::size_t{1} << 19)), "1023.5 MiB");
  EXPECT_EQ(format_bytes(std::size_t{1} << 30), "1.0 GiB");
  EXPECT_EQ(parse_memory_limit("1"), std::size_t{1});
  EXPECT_EQ(parse_memory_limit("0"), std::nullopt);
  EXPECT_EQ(parse_memory_limit(""), std::nullopt);
  EXPECT_EQ(parse_memory_limit("1099511627776"), std::size_t{1} << 40);  // 13 digits
  EXPECT_EQ(parse_memory_limit("1099511627777"), std::nullopt);
  EXPECT_EQ(parse_memory_limit("0001099511627"), std::size_t{1099511627});  // 13 digits
  EXPECT_EQ(parse_memory_limit("00001099511627"), std::nullopt);           // 14 digits
  EXPECT_EQ(parse_memory_limit("1073741824K"), std::size_t{1} << 40);
  EXPECT_EQ(parse_memory_limit("1073741825k"), std::nullopt);
  EXPECT_EQ(parse_memory_limit("1048576m"), std::size_t{1} << 40);
  EXPECT_EQ(parse_memory_limit("1048577M"), std::nullopt);
  EXPECT_EQ(parse_memory_limit("1025g"), std::nullopt);
  EXPECT_EQ(parse_memory_limit("2K"), std::size_t{2048});
  EXPECT_EQ(parse_memory_limit("G"), std::nullopt);
  EXPECT_EQ(parse_memory_limit("1T"), std::nullopt);
}

}  // namespace validate_stream_test
}  // namespace permitcheck::validate
