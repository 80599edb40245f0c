// Golden tests: what a user reads from `validate`, `render` and `replay` is pinned, byte for
// byte, by files under tests/cli/golden/. Each legacy catalogue entry (rulebook section 10) is
// checked in as the trace legacy Pulsar produces, with a rev-d header, next to its expected
// reports. After a reviewed change of wording, regenerate with
//   PERMITCHECK_UPDATE_GOLDEN=1 build/tests/cli_tests --gtest_filter='Golden*'
// and review the diff.
#include <sstream>
#include <regex>
#include <string>
#include <vector>

#include "cli/explain.h"
#include "cli/replay.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/legacy_catalogue.h"
#include "spec/rule_id.h"
#include "tests/cli/cli_testing.h"
#include "trace/reader.h"
#include "trace/writer.h"
#include "spec/outcome.h"
#include "validate/report.h"
#include "validate/validate.h"

namespace permitcheck::cli {
namespace {

using testing::golden_dir;
using testing::read_file;
using testing::run_permitcheck;
using ::testing::HasSubstr;

// Compares `actual` with golden file `name` (or rewrites it under PERMITCHECK_UPDATE_GOLDEN=1).
void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = golden_dir() + "/" + name;
  if (testing::update_golden()) {
    testing::write_file(path, actual);
    return;
  }
  EXPECT_EQ(read_file(path), actual) << "golden file " << path
                                     << " differs (PERMITCHECK_UPDATE_GOLDEN=1 rewrites it)";
}

// The catalogue entry's legacy trace as a file, checked against rev-d.
std::string legacy_trace_file(const spec::CatalogueEntry& e) {
  std::ostringstream out;
  out << "# " << e.id << ": " << e.situation << " (legacy Pulsar; checked against rev-d)\n";
  out << "# legacy returns " << e.legacy_value << ", correct is " << e.correct_value << ": "
      << e.effect << "\n";
  EXPECT_TRUE(trace::write_trace(out, e.header_for(spec::RulesetId::kRevD), e.legacy).ok());
  return out.str();
}

std::string validate_text(const std::string& file, const std::string& name,
                          const validate::ValidateOptions& options = {}) {
  std::istringstream in(read_file(golden_dir() + "/" + file));
  return validate::format_validate({validate::validate_stream(in, name, options)}, validate::ReportFormat::kText);
}

TEST(GoldenCatalogue, TraceFilesAreTheCatalogue) {
  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) {
    SCOPED_TRACE(std::string(e.id));
    expect_golden(std::string(e.id) + ".jsonl", legacy_trace_file(e));
  }
}

TEST(GoldenCatalogue, ValidateReportsTheRuleUnderRevD) {
  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) {
    const std::string id(e.id);
    SCOPED_TRACE(id);
    expect_golden(id + ".validate.txt", validate_text(id + ".jsonl", id + ".jsonl"));
    const testing::Run r = run_permitcheck({"validate", golden_dir() + "/" + id + ".jsonl"});
    // L10 is a known deviation under rev-d (X2): it does not fail the trace.
    EXPECT_EQ(r.code, e.rev_d_deviation ? spec::kExitPass : spec::kExitViolation) << r.out << r.err;
    const std::string rule(spec::rule_name(e.rev_d_rule));
    EXPECT_THAT(r.out, HasSubstr(": " + rule + " "));
  }
}

TEST(GoldenCatalogue, LegacyTracePassesTheLegacyRuleset) {
  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) {
    const std::string id(e.id);
    SCOPED_TRACE(id);
    const testing::Run r =
        run_permitcheck({"validate", "--ruleset", "legacy", golden_dir() + "/" + id + ".jsonl"});
    EXPECT_EQ(r.code, spec::kExitPass) << r.out << r.err;
  }
}

TEST(GoldenCatalogue, CorrectTracePassesRevD) {
  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) {
    SCOPED_TRACE(std::string(e.id));
    std::ostringstream text;
    ASSERT_TRUE(trace::write_trace(text, e.header_for(spec::RulesetId::kRevD), e.correct).ok());
    const testing::Run r = run_permitcheck({"validate", "-"}, text.str());
    EXPECT_EQ(r.code, spec::kExitPass) << r.out << r.err;
  }
}

TEST(GoldenCatalogue, RenderTextAndMermaid) {
  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) {
    const std::string id(e.id);
    SCOPED_TRACE(id);
    absl::StatusOr<trace::Trace> t = trace::read_trace_text(read_file(golden_dir() + "/" + id + ".jsonl"));
    ASSERT_TRUE(t.ok()) << t.status();
    const Explained x = explain(*t);
    expect_golden(id + ".render.txt", render_text(x, id + ".jsonl"));
    expect_golden(id + ".mmd", render_mermaid(x));
  }
}

TEST(GoldenCatalogue, ReplayShowsEveryRuleset) {
  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) {
    const std::string id(e.id);
    SCOPED_TRACE(id);
    absl::StatusOr<trace::Trace> t = trace::read_trace_text(read_file(golden_dir() + "/" + id + ".jsonl"));
    ASSERT_TRUE(t.ok()) << t.status();
    expect_golden(id + ".replay.txt", format_replay(replay(*t, /*with_drafts=*/true), id + ".jsonl", validate::ReportFormat::kText));
  }
}

// The trace-format example (one partial batch, exact) and one with an over-return, in every
// report format.
TEST(GoldenFormats, ValidateTextJsonJunit) {
  validate::ValidateOptions options;
  std::vector<validate::FileResult> results;
  for (const char* name : {"format_example.jsonl", "over_return.jsonl"}) {
    std::istringstream in(read_file(golden_dir() + "/" + name));
    results.push_back(validate::validate_stream(in, name, options));
  }
  expect_golden("formats.validate.txt", validate::format_validate(results, validate::ReportFormat::kText));
  expect_golden("formats.validate.json", validate::format_validate(results, validate::ReportFormat::kJson));
  expect_golden("formats.validate.xml", validate::format_validate(results, validate::ReportFormat::kJunit));
  EXPECT_EQ(validate::validate_exit_code(results), spec::kExitViolation);
}

TEST(GoldenFormats, RenderOverReturn) {
  absl::StatusOr<trace::Trace> t = trace::read_trace_text(read_file(golden_dir() + "/over_return.jsonl"));
  ASSERT_TRUE(t.ok()) << t.status();
  const Explained x = explain(*t);
  expect_golden("over_return.render.txt", render_text(x, "over_return.jsonl"));
  expect_golden("over_return.mmd", render_mermaid(x));
  expect_golden("over_return.render.jsonl", render_jsonl(x));
}

// The rule IDs of the findings in a `validate --format json` report, in report order
// (violations, then deviations).
std::vector<std::string> reported_rules(const std::string& json) {
  std::vector<std::string> rules;
  const std::string key = "\"rule\":\"";
  for (std::size_t at = json.find(key); at != std::string::npos; at = json.find(key, at)) {
    at += key.size();
    rules.push_back(json.substr(at, json.find('"', at) - at));
  }
  return rules;
}

TEST(GoldenFormats, ReportedRulesAreRead) {
  EXPECT_EQ(reported_rules(R"({"violations":[{"line":9,"rule":"C7","text":"x"},{"rule":"E1"}]})"),
            (std::vector<std::string>{"C7", "E1"}));
  EXPECT_TRUE(reported_rules("{}").empty());
}

// The canonical JSONL render reads back and reports the same rules.
TEST(GoldenFormats, RenderJsonRoundTrips) {
  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) {
    SCOPED_TRACE(std::string(e.id));
    const std::string path = golden_dir() + "/" + std::string(e.id) + ".jsonl";
    const testing::Run rendered = run_permitcheck({"render", "--format", "json", path});
    ASSERT_EQ(rendered.code, spec::kExitPass) << rendered.err;
    const testing::Run direct = run_permitcheck({"validate", "--format", "json", path});
    const testing::Run again = run_permitcheck({"validate", "--format", "json", "-"}, rendered.out);
    EXPECT_EQ(direct.code, again.code);
    // Every legacy row breaks a rule under rev-d (L10 as a known deviation), so both reports
    // name rules, and the same ones in the same order.
    const std::vector<std::string> rules = reported_rules(direct.out);
    EXPECT_FALSE(rules.empty()) << direct.out;
    EXPECT_EQ(reported_rules(again.out), rules) << again.out;
  }
}

// The finding lines ("line 9: K1 ...") of a report, in order; for replay only those under the
// trace's own ruleset.
std::vector<std::string> finding_lines(const std::string& report, bool replay) {
  std::vector<std::string> lines;
  std::istringstream in(report);
  bool on = !replay;
  static const std::regex kFinding(R"(^\s*(line [0-9]+: .*)$)");
  for (std::string l; std::getline(in, l);) {
    if (replay) {
      if (l.find("specification, ruleset") == 0) on = l.find("(the trace's ruleset)") != std::string::npos;
      else if (l.find("reference implementation") == 0) on = false;
    }
    std::smatch m;
    if (on && std::regex_match(l, m, kFinding)) lines.push_back(m[1].str());
  }
  return lines;
}

// A command or message id used again after its command finished: validate (streaming), render
// (whole trace) and replay give the same findings on the same lines.
TEST(GoldenFormats, K1_K2_M3_E2_ReusedIdsAreJudgedAlikeByValidateRenderAndReplay) {
  const std::string finished =
      R"({"trace":"pip491-permits","version":1,"source":"client","ruleset":"rev-d","q":4,"t":2})" "\n"
      R"({"ev":"inc_open","inc":1,"cnx":"c1","consumer":0})" "\n"
      R"({"ev":"inc_flow_enabled","inc":1})" "\n"
      R"({"ev":"flow","cnx":"c1","consumer":0,"inc":1,"permits":4})" "\n"
      R"({"ev":"recv","inc":1,"cmd":1,"message_permits":1})" "\n"
      R"({"ev":"claim","cmd":1,"msg":"m0","index":0})" "\n"
      R"({"ev":"settle","cmd":1,"n":0})" "\n"
      R"({"ev":"msg_return","msg":"m0"})" "\n";
  const struct {
    std::string tail;
    std::vector<std::string> rules;
  } cases[] = {
      {R"({"ev":"recv","inc":1,"cmd":1,"message_permits":1})" "\n", {"K1"}},
      {R"({"ev":"recv","inc":1,"cmd":2,"message_permits":1})" "\n"
       R"({"ev":"claim","cmd":2,"msg":"m0","index":0})" "\n", {"K2"}},
      {R"({"ev":"msg_return","msg":"m0"})" "\n", {"M3", "E2"}},
  };
  for (const auto& c : cases) {
    const std::string trace = finished + c.tail;
    SCOPED_TRACE(c.tail);
    const testing::Run v = run_permitcheck({"validate", "-"}, trace);
    EXPECT_EQ(v.code, spec::kExitViolation) << v.out << v.err;
    const std::vector<std::string> lines = finding_lines(v.out, false);
    ASSERT_EQ(lines.size(), c.rules.size()) << v.out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      EXPECT_THAT(lines[i], ::testing::MatchesRegex("line [0-9]+: " + c.rules[i] + " .*"));
    }
    const testing::Run r = run_permitcheck({"render", "-"}, trace);
    EXPECT_EQ(r.code, spec::kExitPass) << r.err;  // render exits 0 whenever it rendered
    EXPECT_EQ(finding_lines(r.out, false), lines) << r.out;
    const testing::Run p = run_permitcheck({"replay", "-"}, trace);
    EXPECT_EQ(p.code, spec::kExitViolation) << p.err;
    EXPECT_EQ(finding_lines(p.out, true), lines) << p.out;
  }
}

}  // namespace
}  // namespace permitcheck::cli

namespace permitcheck::cli {
namespace {

// The text of `check` and `prove` as a user reads it, with the measured seconds masked
// ("1.61" -> "#.##"): everything else is deterministic for a fixed seed and bound.
// Every measured second ("12.25 s", or a table's seconds column before yes/no) becomes #.##,
// right-aligned in the width the spaces and the number had: a proof over 10 s on a busy machine
// widens the number, not the column.
std::string mask_seconds(const std::string& text) {
  static const std::regex kSeconds(R"(( *)\b([0-9]+\.[0-9]{2})( s\b|(\s+(yes|no)\b)))");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), kSeconds), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.append(last, m[0].first);
    const std::size_t width = m[1].length() + m[2].length();
    out.append(width > 4 ? width - 4 : 0, ' ').append("#.##").append(m[3].str());
    last = m[0].second;
  }
  out.append(last, text.cend());
  return out;
}

TEST(GoldenText, SecondsAreMasked) {
  EXPECT_EQ(mask_seconds("case 2 (seed 491, 0.00 s)\nfinalization  proved   12.25  yes\nB=9.50x\n"),
            "case 2 (seed 491, #.## s)\nfinalization  proved    #.##  yes\nB=9.50x\n");
  // A wider number in a right-aligned column masks to the same line as a narrower one.
  EXPECT_EQ(mask_seconds("x     9.25  yes\n"), mask_seconds("x    10.25  yes\n"));
}

TEST(GoldenText, CheckHolds) {
  const testing::Run r = run_permitcheck({"check", "--cases", "20", "--seed", "491"});
  EXPECT_EQ(r.code, spec::kExitPass) << r.err;
  expect_golden("check.revd.txt", mask_seconds(r.out));
}

TEST(GoldenText, CheckShrinksTheLegacyCounterexample) {
  const testing::Run r =
      run_permitcheck({"check", "--ruleset", "legacy", "--cases", "200", "--seed", "491"});
  EXPECT_EQ(r.code, spec::kExitViolation) << r.err;
  expect_golden("check.legacy.txt", mask_seconds(r.out));
}

// Measured: at most 0.51 M (rev-d) and 0.95 M (legacy) per query; the rlimit is ten times more.
TEST(GoldenText, ProveFinalizationTable) {
  const testing::Run r =
      run_permitcheck(testing::prove_args({"--check", "finalization", "--bound", "8"}, 10'000'000));
  EXPECT_EQ(r.code, spec::kExitPass) << r.err;
  expect_golden("prove.finalization.revd.txt", mask_seconds(r.out));
}

TEST(GoldenText, ProveLegacyCounterexamplesInWords) {
  const testing::Run r = run_permitcheck(testing::prove_args(
      {"--ruleset", "legacy", "--check", "finalization", "--bound", "8"}, 10'000'000));
  EXPECT_EQ(r.code, spec::kExitViolation) << r.err;
  expect_golden("prove.finalization.legacy.txt", mask_seconds(r.out));
}

// `review --findings` at a small budget: the table (found, cases or seconds, length, rule)
// and each counterexample in words, every measured second masked.
TEST(GoldenText, ReviewFindingsTable) {
  if (run_permitcheck({"review", "--from", "rev-z"}).err.find("not built") != std::string::npos) {
    GTEST_SKIP() << "review not built";
  }
  const testing::Run r =
      run_permitcheck({"review", "--findings", "--cases", "300", "--bound", "8", "--seed", "491"});
  EXPECT_EQ(r.code, spec::kExitPass) << r.err;
  // The seconds column is right-aligned: its padding goes with the masked number.
  static const std::regex kPaddedSeconds(R"( +[0-9]+\.[0-9]{2} s\b)");
  expect_golden("review.findings.txt", std::regex_replace(r.out, kPaddedSeconds, " #.## s"));
}

#ifdef PERMITCHECK_REFERENCE_CLIENT
// conform's text against the reference client on a fixed seed: the client command (a build
// path), the seconds of each scenario and any 127.0.0.1 port are masked.
std::string mask_conform(std::string text) {
  const std::string client = PERMITCHECK_REFERENCE_CLIENT;
  for (std::size_t at = text.find(client); at != std::string::npos; at = text.find(client, at)) {
    text.replace(at, client.size(), "REFERENCE-CLIENT");
  }
  static const std::regex kSeconds(R"(\b[0-9]+\.[0-9] s\))");
  static const std::regex kPort(R"(127\.0\.0\.1:[0-9]+)");
  return std::regex_replace(std::regex_replace(text, kSeconds, "#.# s)"), kPort, "127.0.0.1:PORT");
}

std::string reference_client(const std::string& extra = "") {
  return std::string(PERMITCHECK_REFERENCE_CLIENT) +
         " --url {url} --q {q} --delay-ms {delay_ms} --nack-every {nack_every}" + extra;
}

TEST(GoldenText, ConformMaskingLeavesTheRestAlone) {
  EXPECT_EQ(mask_conform(std::string(PERMITCHECK_REFERENCE_CLIENT) +
                         " --url pulsar://127.0.0.1:41234\n  PASS x  (2 runs, 1.5 s)\nB=1.5 s\n"),
            "REFERENCE-CLIENT --url pulsar://127.0.0.1:PORT\n  PASS x  (2 runs, #.# s)\nB=1.5 s\n");
}

TEST(GoldenText, ConformReferenceClientPasses) {
  const testing::Run r =
      run_permitcheck({"conform", "--client", reference_client(), "--scenarios",
                       "complete_batches,partial_batches", "--cases", "0", "--seed", "491",
                       "--idle", "0.8", "--jobs", "1"});
  EXPECT_EQ(r.code, spec::kExitPass) << r.err;
  expect_golden("conform.reference.txt", mask_conform(r.out));
}

TEST(GoldenText, ConformLegacyReferenceClientShrinksTheChecksumLoss) {
  const testing::Run r =
      run_permitcheck({"conform", "--client", reference_client(" --ruleset legacy"), "--scenarios",
                       "corrupt_checksum", "--cases", "0", "--seed", "491", "--idle", "0.8",
                       "--max-shrinks", "2", "--jobs", "1"});
  EXPECT_EQ(r.code, spec::kExitViolation) << r.err;
  expect_golden("conform.legacy.txt", mask_conform(r.out));
}
#endif

}  // namespace
}  // namespace permitcheck::cli
