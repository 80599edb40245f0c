// The matrix's reports on a fixed set of cells (tests/matrix/matrix_testing.h): the markdown
// and JSON against golden files, the JSON against its schema and back, the page's content,
// the SVG sequence diagram and the JUnit verdicts.
//
//   PERMITCHECK_UPDATE_GOLDEN=1 build/tests/matrix_tests --gtest_filter='MatrixGolden.*'
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "matrix/expectations.h"
#include "matrix/json.h"
#include "matrix/render.h"
#include "matrix/sequence_svg.h"
#include "tests/matrix/matrix_testing.h"

namespace permitcheck::matrix {
namespace {

using testing::sample_matrix;

std::string golden_path(const std::string& name) {
  return std::string(PERMITCHECK_SOURCE_DIR) + "/tests/matrix/golden/" + name;
}

void expect_golden(const std::string& name, const std::string& actual) {
  if (std::getenv("PERMITCHECK_UPDATE_GOLDEN") != nullptr) {
    testing::spit(golden_path(name), actual);
    return;
  }
  EXPECT_EQ(testing::slurp(golden_path(name)), actual)
      << name << " differs (PERMITCHECK_UPDATE_GOLDEN=1 rewrites it)";
}

// The sample judged against go's pinned partial_batches finding.
Matrix judged() {
  Matrix m = sample_matrix();
  absl::StatusOr<Expectations> go = parse_expectations(
      "partial_batches fail E5,E2\nstale_epoch any  # the window needs a slow consumer\n", "go",
      "go.txt", {"complete_batches", "partial_batches", "stale_epoch"});
  EXPECT_TRUE(go.ok()) << go.status();
  apply_expectations(m, {*go});
  return m;
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(MatrixGolden, MarkdownTableMatchesTheGoldenFile) {
  const std::string md = render_markdown(judged());
  expect_golden("matrix.md", md);
  EXPECT_NE(md.find("| conformance | go | v0.21.0 | deviates as pinned (2 findings), 1 cell INCOMPLETE | PASS | FAIL E2,E5 | INCOMPLETE |"),
            std::string::npos)
      << md;
}

TEST(MatrixGolden, JsonMatchesTheGoldenFile) { expect_golden("matrix.json", to_json(judged())); }

TEST(MatrixJson, ValidatesAgainstItsSchemaWithPythonJsonschema) {
  if (testing::run("python3 -c 'import jsonschema'").code != 0) {
    GTEST_SKIP() << "python3 jsonschema is not installed (Debian python3-jsonschema)";
  }
  const std::string dir = ::testing::TempDir() + "matrix-schema";
  std::filesystem::create_directories(dir);
  testing::spit(dir + "/matrix.json", to_json(judged()));
  const std::string schema = std::string(PERMITCHECK_SOURCE_DIR) + "/docs/schemas/matrix.schema.json";
  const std::string check =
      "python3 -c 'import json,sys,jsonschema; s=json.load(open(sys.argv[1])); "
      "jsonschema.Draft202012Validator.check_schema(s); "
      "jsonschema.validate(json.load(open(sys.argv[2])), s, cls=jsonschema.Draft202012Validator); "
      "print(\"valid\")' ";
  const testing::Ran ok = testing::run(check + schema + " " + dir + "/matrix.json");
  EXPECT_EQ(ok.code, 0) << ok.output;
  // The schema is not vacuous: a cell without its outcome, or with an outcome outside the
  // vocabulary, is refused.
  std::string bad = to_json(judged());
  bad.replace(bad.find("\"outcome\": \"FAIL\""), 17, "\"outcome\": \"BROKEN\"");
  testing::spit(dir + "/bad.json", bad);
  const testing::Ran refused = testing::run(check + schema + " " + dir + "/bad.json");
  EXPECT_NE(refused.code, 0) << refused.output;
  EXPECT_NE(refused.output.find("BROKEN"), std::string::npos) << refused.output;
}

TEST(MatrixJson, RoundTripRendersTheSameReports) {
  const Matrix m = judged();
  absl::StatusOr<Matrix> back = from_json(to_json(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(render_markdown(*back), render_markdown(m));
  EXPECT_EQ(render_html(*back), render_html(m));
  EXPECT_EQ(render_junit(*back), render_junit(m));
  EXPECT_EQ(to_json(*back), to_json(m));
}

TEST(MatrixJson, RefusesAnotherSchemaVersionOrAMissingField) {
  std::string other = to_json(sample_matrix());
  other.replace(other.find("permitcheck-matrix/2"), 20, "permitcheck-matrix/9");
  const absl::StatusOr<Matrix> v9 = from_json(other);
  ASSERT_FALSE(v9.ok());
  EXPECT_NE(v9.status().message().find("permitcheck-matrix/9"), std::string::npos) << v9.status();
  std::string missing = to_json(sample_matrix());
  missing.replace(missing.find("\"scenario\": \"stale_epoch\",\n      \"outcome\""), 27, "");
  const absl::StatusOr<Matrix> m = from_json(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("scenario"), std::string::npos) << m.status();
  EXPECT_FALSE(from_json("{\"schema\": ").ok());
}

TEST(SequenceSvg, DrawsAnArrowPerWireEventAndAFindingNoteAfterItsLine) {
  const std::vector<CellFinding> findings = {{"E5", 9, "at quiescence available 13 > Q = 10"}};
  const std::string svg = sequence_svg(testing::kFailingTrace, findings, "t");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  // 8 events: 7 arrows (connect, subscribe, ok, flow, message, ack, flow) and the quiescent note.
  EXPECT_EQ(count(svg, "class=\"arrow\""), 7) << svg;
  EXPECT_NE(svg.find("5: Flow 10 permits"), std::string::npos) << svg;
  EXPECT_NE(svg.find("6: message cmd 1 B=4 P=4 acknowledged {0,2}"), std::string::npos) << svg;
  const std::size_t quiescent = svg.find("9: quiescent");
  const std::size_t finding = svg.find("line 9: E5 at quiescence available 13 &gt; Q = 10");
  ASSERT_NE(finding, std::string::npos) << svg;
  EXPECT_LT(quiescent, finding);
  EXPECT_EQ(count(svg, "class=\"note finding\""), 1);
}

TEST(SequenceSvg, UnreadableTraceIsSaidInTheDiagramNotAnError) {
  const std::string svg = sequence_svg("not a trace", {}, "t");
  EXPECT_NE(svg.find("trace not drawn"), std::string::npos) << svg;
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(SequenceSvg, LongTraceIsCutWithACount) {
  std::string trace = R"({"trace":"pip491-permits","version":1,"source":"wire"})" "\n";
  for (std::size_t i = 0; i < kMaxSequenceEvents + 5; ++i) trace += R"({"ev":"connect","cnx":1})" "\n";
  const std::string svg = sequence_svg(trace, {}, "t");
  EXPECT_EQ(count(svg, "class=\"arrow\""), static_cast<int>(kMaxSequenceEvents));
  EXPECT_NE(svg.find("5 more events: see the trace"), std::string::npos);
}

TEST(MatrixHtml, HasEveryCellItsDetailsDiagramAndArtifactLinks) {
  const Matrix m = judged();
  const std::string html = render_html(m);
  EXPECT_EQ(count(html, "<td class=\"cell "), 6);
  EXPECT_EQ(count(html, "<details class=\"cell\""), 6);
  EXPECT_EQ(count(html, "<svg"), 1);  // the one counterexample
  EXPECT_NE(html.find("href=\"cells/conformance/go@v0.21.0/partial_batches/client-run-1.log\""),
            std::string::npos);
  EXPECT_NE(html.find("href=\"cells/conformance/go@v0.21.0/partial_batches/trace.jsonl\""),
            std::string::npos);
  EXPECT_NE(html.find("no capture: conform writes no pcap"), std::string::npos);
  EXPECT_NE(html.find("class=\"cell FAIL pinned\""), std::string::npos);
  // The legend explains every scenario in one line.
  EXPECT_NE(html.find("<td><code>stale_epoch</code></td><td>M2</td><td>held across a drop"),
            std::string::npos);
}

TEST(MatrixHtml, LoadsNothingFromTheNetwork) {
  const std::string html = render_html(judged());
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // The only http:// is the SVG namespace, which is a name, not a load.
  EXPECT_EQ(count(html, "http://"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
}

TEST(MatrixJunit, PinnedCellIsSkippedAndUnexpectedCellFails) {
  Matrix m = sample_matrix();
  apply_expectations(m, {});  // no expectations: go's failing and incomplete cells are unexpected
  const std::string strict = render_junit(m);
  EXPECT_NE(strict.find("tests=\"6\" failures=\"2\" errors=\"0\" skipped=\"0\""), std::string::npos) << strict;
  const std::string pinned = render_junit(judged());
  EXPECT_NE(pinned.find("tests=\"6\" failures=\"0\" errors=\"0\" skipped=\"2\""), std::string::npos) << pinned;
  EXPECT_NE(pinned.find("<skipped message=\"FAIL as pinned: E2,E5\"/>"), std::string::npos) << pinned;
}

}  // namespace
}  // namespace permitcheck::matrix

namespace permitcheck::matrix {
namespace {

// The sample on two brokers: the same cells on pulsar-4.2.4, where go's partial_batches
// passes and its stale_epoch did not run.
Matrix two_brokers() {
  Matrix m = testing::sample_matrix();
  const std::vector<Cell> conformance = m.cells;
  for (Cell c : conformance) {
    if (c.key.scenario == "stale_epoch" && c.key.client == "go") continue;
    c.key.broker = "pulsar-4.2.4";
    if (c.key.scenario == "partial_batches") {
      c.outcome = Outcome::kPass;
      c.rules.clear();
    }
    m.plan.push_back(c.key);
    m.cells.push_back(c);
  }
  return m;
}

// A client release across brokers: the same word when every broker agrees, the worst with each
// broker's when they differ, a scenario one broker did not run taken from the one that did.
TEST(MatrixAcrossBrokers, EachScenarioIsTheWorstWithEachBrokersWhenTheyDiffer) {
  const Matrix m = two_brokers();
  const std::optional<AcrossBrokers> same = across_brokers(m, "go", "v0.21.0", "complete_batches");
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->outcome, Outcome::kPass);
  EXPECT_EQ(same->text, "PASS");
  const std::optional<AcrossBrokers> differ = across_brokers(m, "go", "v0.21.0", "partial_batches");
  ASSERT_TRUE(differ.has_value());
  EXPECT_EQ(differ->outcome, Outcome::kFail);
  EXPECT_EQ(differ->text, "FAIL (conformance FAIL E2,E5; pulsar-4.2.4 PASS)");
  const std::optional<AcrossBrokers> one = across_brokers(m, "go", "v0.21.0", "stale_epoch");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->outcome, Outcome::kIncomplete);
  EXPECT_FALSE(across_brokers(m, "java", "4.2.4", "stale_epoch").has_value());
}

// The row is on the page and in the markdown only when there is more than one broker.
TEST(MatrixAcrossBrokers, ThePageAndTheTableHaveARowPerClientAcrossBrokers) {
  const Matrix m = two_brokers();
  const std::string md = render_markdown(m);
  EXPECT_NE(md.find("| all brokers | go | v0.21.0 | "), std::string::npos) << md;
  EXPECT_NE(md.find(" FAIL (conformance FAIL E2,E5; pulsar-4.2.4 PASS) |"), std::string::npos)
      << md;
  const std::string html = render_html(m);
  EXPECT_NE(html.find("<tr class=\"across\"><th class=\"row\">all brokers</th>"),
            std::string::npos);
  EXPECT_EQ(render_markdown(testing::sample_matrix()).find("all brokers"), std::string::npos);
  EXPECT_EQ(render_html(testing::sample_matrix()).find("class=\"across\""), std::string::npos);
}

}  // namespace
}  // namespace permitcheck::matrix
