// `permitcheck matrix` as a process, with the reference client and two fast scenarios: the
// merge of shards run as separate processes equals the unsharded run; the expectations decide
// the exit code and the summary; usage errors exit 2. And the page in a real browser
// (headless Chromium): the cells, links and SVG diagrams are in its DOM.
#include <filesystem>
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "matrix/expectations.h"
#include "matrix/json.h"
#include "matrix/render.h"
#include "tests/matrix/matrix_testing.h"

namespace permitcheck::matrix {
namespace {

namespace fs = std::filesystem;
using testing::Ran;
using testing::run;

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "matrix-cli-" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

#if defined(PERMITCHECK_BIN) && defined(PERMITCHECK_REFERENCE_CLIENT)

// The reference client's run script finds the client in PERMITCHECK_BUILD_DIR.
std::string matrix_command(const std::string& args) {
  const fs::path build = fs::path(PERMITCHECK_REFERENCE_CLIENT).parent_path().parent_path();
  return "cd '" + std::string(PERMITCHECK_SOURCE_DIR) + "' && PERMITCHECK_BUILD_DIR='" +
         build.string() + "' '" + PERMITCHECK_BIN + "' matrix " + args;
}

constexpr char kCells[] =
    "--clients reference --scenarios complete_batches,unknown_consumer --cases 0 --no-progress ";

// A report with every measured time blanked: runs differ in their seconds only.
std::string untimed(const std::string& text) {
  static const std::regex seconds(R"(("(wall_)?seconds": )[0-9.e+-]+)");
  static const std::regex wall(R"([0-9]+\.[0-9] s wall time)");
  return std::regex_replace(std::regex_replace(text, seconds, "$1 0"), wall, "S s wall time");
}

TEST(MatrixCli, MergeOfShardsRunAsProcessesEqualsTheUnshardedRun) {
  const std::string whole = fresh_dir("whole"), s1 = fresh_dir("s1"), s2 = fresh_dir("s2"),
                    merged = fresh_dir("merged");
  // The shards run at once, as separate processes; the unsharded run after them.
  const Ran shards = run("(" + matrix_command(std::string(kCells) + "--no-expect --shard 1/2 --out " + s1) +
                         ") & a=$!; (" + matrix_command(std::string(kCells) + "--no-expect --shard 2/2 --out " + s2) +
                         "); b=$?; wait $a; a=$?; test $a -eq 0 && test $b -eq 0");
  EXPECT_EQ(shards.code, 0) << shards.output;
  ASSERT_TRUE(fs::exists(s1 + "/matrix.json")) << shards.output;
  ASSERT_TRUE(fs::exists(s2 + "/matrix.json")) << shards.output;
  EXPECT_FALSE(fs::exists(s1 + "/matrix.html"));  // a shard writes its JSON only
  const Ran one = run(matrix_command(std::string(kCells) + "--no-expect --out " + whole));
  ASSERT_EQ(one.code, 0) << one.output;
  const Ran m = run(matrix_command("merge --no-expect " + s1 + " " + s2 + " --out " + merged));
  ASSERT_EQ(m.code, 0) << m.output;
  EXPECT_EQ(untimed(testing::slurp(merged + "/matrix.json")), untimed(testing::slurp(whole + "/matrix.json")));
  EXPECT_EQ(untimed(testing::slurp(merged + "/matrix.md")), untimed(testing::slurp(whole + "/matrix.md")));
  // The cells passed, each with its client logs beside the merged page.
  absl::StatusOr<Matrix> back = from_json(testing::slurp(merged + "/matrix.json"));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->cells.size(), 2u);
  for (const Cell& c : back->cells) {
    EXPECT_EQ(c.outcome, Outcome::kPass) << c.key.id() << ": " << c.reason;
    EXPECT_GT(c.seconds, 0);
    ASSERT_FALSE(c.logs.empty()) << c.key.id();
    EXPECT_TRUE(fs::exists(merged + "/" + c.logs.front())) << c.logs.front();
  }
  EXPECT_NE(testing::slurp(merged + "/matrix.md").find("| conformance | reference | rev-d | conforms | PASS | PASS |"),
            std::string::npos);
}

TEST(MatrixCli, PinnedFindingThatDisappearsExitsOneSayingUnexpected) {
  const std::string out = fresh_dir("pinned");
  // A finding pinned for the reference client, which conforms: the pin disappears.
  testing::spit(out + "/reference.txt", "complete_batches fail E5  # a finding that is not there\n");
  const Ran r = run(matrix_command(std::string(kCells) + "--expect " + out + "/reference.txt --out " + out));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("reference rev-d (conformance): unexpected (1 cell)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("complete_batches: expected fail E5, got PASS (pinned finding E5 disappeared)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(testing::slurp(out + "/matrix.junit.xml").find("failures=\"1\""), std::string::npos);
  // The same cells with the expectation that they pass: exit 0, "conforms".
  testing::spit(out + "/reference.txt", "complete_batches pass\nunknown_consumer pass\n");
  const Ran ok = run(matrix_command(std::string(kCells) + "--expect " + out + "/reference.txt --out " + out));
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("reference rev-d (conformance): conforms"), std::string::npos) << ok.output;
}

TEST(MatrixCli, ShippedExpectationsParseAndTheReferenceClientConforms) {
  const std::string out = fresh_dir("shipped");
  // No --expect: conformance/expectations/ of the source tree, every file of it parsed.
  const Ran r = run(matrix_command("--clients reference --scenarios complete_batches --cases 0 "
                                   "--no-progress --out " + out));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("reference rev-d (conformance): conforms"), std::string::npos) << r.output;
  EXPECT_NE(testing::slurp(out + "/matrix.json").find("conformance/expectations/reference.txt"),
            std::string::npos);
}

TEST(MatrixCli, BadUsageExitsTwoNamingTheProblem) {
  const std::string out = fresh_dir("usage");
  const Ran shard = run(matrix_command("--shard 3/2 --out " + out));
  EXPECT_EQ(shard.code, 2);
  EXPECT_NE(shard.output.find("--shard"), std::string::npos) << shard.output;
  const Ran client = run(matrix_command("--clients no-such-client --out " + out));
  EXPECT_EQ(client.code, 2);
  EXPECT_NE(client.output.find("unknown client preset \"no-such-client\""), std::string::npos) << client.output;
  const Ran no_out = run(matrix_command("--clients reference"));
  EXPECT_EQ(no_out.code, 2);
  EXPECT_NE(no_out.output.find("--out"), std::string::npos) << no_out.output;
  testing::spit(out + "/go.txt", "reconnect perhaps\n");
  const Ran expect = run(matrix_command("--clients reference --expect " + out + "/go.txt --out " + out));
  EXPECT_EQ(expect.code, 2);
  EXPECT_NE(expect.output.find("go.txt:1: unknown expectation"), std::string::npos) << expect.output;
  const Ran merge = run(matrix_command("merge " + out + "/no-such-shard --out " + out));
  EXPECT_EQ(merge.code, 2);
  EXPECT_NE(merge.output.find("no-such-shard/matrix.json: cannot open"), std::string::npos) << merge.output;
}

#endif  // PERMITCHECK_BIN && PERMITCHECK_REFERENCE_CLIENT

// The fixed cells' page in headless Chromium: the DOM after load holds every cell, its
// details, the client-log and trace links and the SVG sequence diagram; a screenshot is kept
// (the test's temporary folder, matrix-screenshot.png).
TEST(MatrixPage, ChromiumShowsTheCellsLinksAndDiagrams) {
  const char* candidates[] = {"chromium", "chromium-browser", "google-chrome"};
  std::string browser;
  for (const char* c : candidates) {
    if (run(std::string("command -v ") + c + " >/dev/null").code == 0) {
      browser = c;
      break;
    }
  }
  if (browser.empty()) GTEST_SKIP() << "no headless Chromium (Debian package chromium)";
  const std::string dir = fresh_dir("page");
  Matrix m = testing::sample_matrix();
  absl::StatusOr<Expectations> go = parse_expectations(
      "partial_batches fail E2,E5\nstale_epoch any\n", "go", "go.txt",
      {"complete_batches", "partial_batches", "stale_epoch"});
  ASSERT_TRUE(go.ok());
  apply_expectations(m, {*go});
  testing::spit(dir + "/matrix.html", render_html(m));
  const std::string flags = " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                            "--no-first-run --user-data-dir=" + dir + "/profile ";
  const Ran dom = run(browser + flags + "--dump-dom 'file://" + dir + "/matrix.html' 2>/dev/null");
  ASSERT_EQ(dom.code, 0) << dom.output;
  const std::string& d = dom.output;
  int cells = 0, details = 0, svgs = 0;
  for (std::size_t at = d.find("<td class=\"cell "); at != std::string::npos; at = d.find("<td class=\"cell ", at + 1)) ++cells;
  for (std::size_t at = d.find("<details class=\"cell\""); at != std::string::npos; at = d.find("<details class=\"cell\"", at + 1)) ++details;
  for (std::size_t at = d.find("<svg"); at != std::string::npos; at = d.find("<svg", at + 1)) ++svgs;
  EXPECT_EQ(cells, 6) << d.substr(0, 2000);
  EXPECT_EQ(details, 6);
  EXPECT_EQ(svgs, 1);
  EXPECT_NE(d.find("<line class=\"arrow\""), std::string::npos);
  EXPECT_NE(d.find("href=\"cells/conformance/go@v0.21.0/partial_batches/client-run-1.log\""), std::string::npos);
  EXPECT_NE(d.find("href=\"#cell-4\""), std::string::npos);
  const std::string png = dir + "/matrix-screenshot.png";
  const Ran shot = run(browser + flags + "--window-size=1280,900 --screenshot='" + png + "' 'file://" + dir +
                       "/matrix.html' 2>/dev/null");
  EXPECT_EQ(shot.code, 0) << shot.output;
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 10000u);
}

}  // namespace
}  // namespace permitcheck::matrix
