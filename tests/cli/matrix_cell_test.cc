// A matrix cell's outcome is the scenario's own verdict from conform (spec::Outcome), never
// guessed from the wording of its reasons: a scenario NOT-APPLICABLE to the client (its
// Subscribe names no consumer epoch) is a NOT-APPLICABLE cell, not a PASS, and one whose window
// did not open is INCOMPLETE.
#ifdef PERMITCHECK_REFERENCE_CLIENT  // the conformance module is part of this build
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/matrix_run.h"
#include "conformance/conform.h"
#include "gtest/gtest.h"
#include "matrix/render.h"
#include "spec/outcome.h"

namespace permitcheck::cli {
namespace {

conformance::ConformReport one(conformance::ScenarioReport s) {
  conformance::ConformReport r;
  r.scenarios.push_back(std::move(s));
  return r;
}

conformance::ScenarioReport stale_epoch() {
  conformance::ScenarioReport s{.kind = *conformance::parse_scenario("stale_epoch")};
  s.runs = 3;
  s.cases_passed = 3;
  return s;
}

TEST(MatrixCell, AScenarioTheClientCannotOpenIsNotApplicableNotPass) {
  conformance::ScenarioReport s = stale_epoch();
  s.cannot_open = {"the client's Subscribe named no consumer epoch"};
  matrix::Cell c;
  fill_cell(c, one(s));
  EXPECT_EQ(c.outcome, spec::Outcome::kNotApplicable);
  EXPECT_NE(c.reason.find("named no consumer epoch"), std::string::npos) << c.reason;
}

TEST(MatrixCell, AWindowNotOpenedIsIncomplete) {
  conformance::ScenarioReport s = stale_epoch();
  s.not_opened = {"run 1: the client acknowledged before the drop"};
  matrix::Cell c;
  fill_cell(c, one(s));
  EXPECT_EQ(c.outcome, spec::Outcome::kIncomplete);
}

TEST(MatrixCell, AWindowOpenedWithoutFindingsIsPass) {
  conformance::ScenarioReport s = stale_epoch();
  s.windows = {"held 3 across the drop"};
  matrix::Cell c;
  fill_cell(c, one(s));
  EXPECT_EQ(c.outcome, spec::Outcome::kPass);
}

// The files a cell's run left in its folder are linked from the cell and from the page: the
// run's wire trace (a real-broker cell's, the tap's record) and capture, and the client logs;
// a cell holding its own counterexample trace keeps that one, and a missing file is no link.
TEST(MatrixCellFiles, TheTraceCaptureAndLogsARunLeftAreLinkedFromThePage) {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("permitcheck-cell-files-" +
                                                    std::to_string(::getpid()));
  const fs::path dir = out / "cells" / "pulsar-4.2.4_go_v0.21.0_close_consumer";
  fs::create_directories(dir);
  std::ofstream(dir / "trace.jsonl") << "{}\n";
  std::ofstream(dir / "capture.pcap") << "pcap";
  std::ofstream(dir / "client.log") << "log";
  matrix::Cell c;
  c.key = {"pulsar-4.2.4", "go", "v0.21.0", "close_consumer"};
  c.outcome = spec::Outcome::kPass;
  c.capture_note = "the tap wrote no capture of this run";
  keep_cell_files(c, dir, out);
  const std::string cell = "cells/pulsar-4.2.4_go_v0.21.0_close_consumer/";
  EXPECT_EQ(c.trace_file, cell + "trace.jsonl");
  EXPECT_EQ(c.capture, cell + "capture.pcap");
  EXPECT_TRUE(c.capture_note.empty());
  EXPECT_EQ(c.logs, std::vector<std::string>{cell + "client.log"});
  matrix::Matrix m;
  m.scenarios = {{"close_consumer", "C5", "close"}};
  m.plan = {c.key};
  m.cells = {c};
  const std::string html = matrix::render_html(m);
  EXPECT_NE(html.find("<a class=\"trace\" href=\"" + cell + "trace.jsonl\">"), std::string::npos);
  EXPECT_NE(html.find("<a class=\"capture\" href=\"" + cell + "capture.pcap\">"),
            std::string::npos);
  EXPECT_NE(html.find("href=\"" + cell + "client.log\""), std::string::npos);

  matrix::Cell own;
  own.trace = "{}\n";  // a counterexample of its own: linked as before, not as trace_file
  fs::remove(dir / "capture.pcap");
  keep_cell_files(own, dir, out);
  EXPECT_TRUE(own.trace_file.empty());
  EXPECT_TRUE(own.capture.empty());
  fs::remove_all(out);
}

}  // namespace
}  // namespace permitcheck::cli
#endif
