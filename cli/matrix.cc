#include "cli/matrix.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "report/output.h"
#include "spec/outcome.h"

#ifdef PERMITCHECK_HAVE_CONFORMANCE
#include "cli/matrix_run.h"
#include "conformance/client_presets.h"
#include "conformance/scenario.h"
#endif
#include "matrix/expectations.h"
#include "matrix/json.h"
#include "matrix/render.h"

namespace permitcheck::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kHelpExample[] =
    "  permitcheck matrix --out /tmp/m                      # newest releases x all scenarios\n"
    "  permitcheck matrix --clients go,cpp --scenarios reconnect,negative_ack --out /tmp/m\n"
    "  permitcheck matrix --clients go --brokers conformance,pulsar-4.2.4 --out /tmp/m\n"
    "  permitcheck matrix --shard 1/3 --out /tmp/s1         # one slice; then:\n"
    "  permitcheck matrix merge /tmp/s1 /tmp/s2 /tmp/s3 --out /tmp/m";

std::vector<std::string> csv_names(const std::string& csv) {
  return absl::StrSplit(csv, ',', absl::SkipWhitespace());
}

std::vector<std::string> scenario_names() {
  std::vector<std::string> out;
#ifdef PERMITCHECK_HAVE_CONFORMANCE
  for (const conformance::ScenarioInfo& s : conformance::all_scenarios()) out.emplace_back(s.name);
#endif
  return out;
}

std::string default_root() {
#ifdef PERMITCHECK_HAVE_CONFORMANCE
  return conformance::presets_root();
#else
  return ".";
#endif
}

absl::StatusOr<std::string> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f.is_open()) return absl::NotFoundError(absl::StrCat(p.string(), ": cannot open"));
  std::stringstream s;
  s << f.rdbuf();
  if (f.bad()) return absl::DataLossError(absl::StrCat(p.string(), ": cannot read"));
  return s.str();
}

// --expect FILE|DIR (a DIR: every NAME.txt in it, for client NAME; a FILE: for the client its
// stem names). Without --expect the shipped conformance/expectations/ when it exists.
absl::StatusOr<std::vector<matrix::Expectations>> load_expectations(const std::string& expect,
                                                                    bool none) {
  std::vector<matrix::Expectations> out;
  if (none) return out;
  fs::path path = expect;
  if (expect.empty()) {
    path = fs::path(default_root()) / "conformance/expectations";
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return out;
  }
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      if (e.path().extension() == ".txt") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  } else if (fs::exists(path, ec)) {
    files.push_back(path);
  } else {
    return absl::NotFoundError(absl::StrCat(path.string(), ": no such file or directory"));
  }
  const std::vector<std::string> scenarios = scenario_names();
  for (const fs::path& f : files) {
    absl::StatusOr<std::string> text = read_file(f);
    if (!text.ok()) return text.status();
    absl::StatusOr<matrix::Expectations> e =
        matrix::parse_expectations(*text, f.stem().string(), f.string(), scenarios);
    if (!e.ok()) return e.status();
    out.push_back(*std::move(e));
  }
  return out;
}

// Writes the reports of `m` into `dir`: matrix.json always, the page, markdown and JUnit
// unless `json_only` (a shard).
bool write_outputs(const matrix::Matrix& m, const fs::path& dir, bool json_only, std::ostream& out,
                   std::ostream& err) {
  if (!report::write_report((dir / "matrix.json").string(), out, matrix::to_json(m), "matrix", err)) return false;
  if (json_only) return true;
  return report::write_report((dir / "matrix.md").string(), out, matrix::render_markdown(m), "matrix", err) &&
         report::write_report((dir / "matrix.html").string(), out, matrix::render_html(m), "matrix", err) &&
         report::write_report((dir / "matrix.junit.xml").string(), out, matrix::render_junit(m), "matrix", err);
}

bool make_dir(const std::string& dir, std::ostream& err) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    err << "permitcheck matrix: --out " << dir << ": " << ec.message() << "\n";
    return false;
  }
  return true;
}

}  // namespace

std::string_view MatrixCommand::description() const {
  return "Every installed client preset x every conformance scenario, one cell each (PASS, FAIL, "
      "INCOMPLETE, NOT-APPLICABLE, with rule IDs, numbers and seconds), judged against each "
      "client's expectations; writes matrix.html, matrix.md, matrix.json and matrix.junit.xml "
      "into --out. Exit 0 nothing unexpected, 1 a cell unexpected, 2 bad usage or input.";
}

std::string_view MatrixCommand::examples() const { return kHelpExample; }

void MatrixCommand::add_options(CLI::App& sub) {
  sub_ = &sub;
  sub_->require_subcommand(0, 1);
  sub_->add_option("--out", out_dir_, "Directory the reports and the cells' artifacts go to");
  sub_->add_option("--clients", clients_,
                   "Comma-separated preset names (default: every installed preset; "
                   "permitcheck conform --list-clients)");
  sub_->add_option("--scenarios", scenarios_, "Comma-separated scenario names (default: all)");
  sub_->add_option("--brokers", brokers_,
                   "The broker axis, comma-separated: conformance (permitcheck's own broker) "
                   "and pulsar-VERSION (the Pulsar standalone ci/install-pulsar-broker.sh "
                   "installed: the scenarios paired with a real-broker scenario, one cell at a "
                   "time; docs/matrix.md)")
      ->capture_default_str();
  sub_->add_flag("--catalogue-releases", catalogue_releases_,
                 "Every installed release of each preset (the bug catalogue's), not only the newest");
  sub_->add_option("--jobs", jobs_, "Cells run side by side (the runs mostly wait on clients)")
      ->check(IntRange(1, 64))
      ->capture_default_str();
  sub_->add_option("--shard", shard_,
                   "I/N: run only the I-th of N deterministic slices of the cells and write its "
                   "matrix.json (then: permitcheck matrix merge)");
  sub_->add_option("--expect", expect_,
                   "Expectations: a directory of PRESET.txt files or one PRESET.txt (default: "
                   "conformance/expectations/)");
  sub_->add_flag("--no-expect", no_expect_, "No expectations: every cell must pass (or be N/A)")
      ->excludes("--expect");
  sub_->add_flag("--progress", progress_, "Progress line on stderr even when it is no terminal");
  sub_->add_flag("--no-progress", no_progress_, "No progress line")->excludes("--progress");
  sub_->add_option("--seed", seed_,
                   "Seed of the drawn cases (the same default in conform, check and review; the "
                   "reports print it)")
      ->capture_default_str();
  sub_->add_option("--cases", cases_, "Random parameter sets per cell, after its fixed cases")
      ->check(IntRange(0, 1000))
      ->capture_default_str();
  sub_->add_option("--max-shrinks", max_shrinks_, "Client runs spent shrinking one failure")
      ->check(IntRange(0, 10000))
      ->capture_default_str();
  sub_->add_option("--q", q_, "Receiver queue size Q the clients are told to use")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}))
      ->capture_default_str();
  sub_->add_option("--timeout", timeout_s_, "Seconds one client run may take")
      ->check(FiniteRange(1.0, 3600.0))
      ->capture_default_str();
  sub_->add_option("--idle", idle_s_,
                   "Seconds of silence that count as quiescence (the same default in conform, "
                   "tap and validate; the reports print it)")
      ->check(FiniteRange(0.1, 60.0))
      ->capture_default_str();
  sub_->add_option("--deadline", deadline_s_,
                   "Seconds the whole matrix may take: no cell starts after it (those left are "
                   "INCOMPLETE)")
      ->check(FiniteRange(1.0, 7.0 * 24 * 3600))
      ->capture_default_str();

  merge_ = sub_->add_subcommand(
      "merge",
      "Merge the matrix.json of shards (permitcheck matrix --shard I/N) into the page, markdown, "
      "JSON and JUnit of the whole matrix, as one unsharded run writes them.");
  merge_->add_option("dirs", merge_dirs_, "The shards' --out directories")->required();
  merge_->add_option("--out", merge_out_, "Directory the merged reports go to")->required();
  merge_->add_option("--expect", expect_, "Expectations, as for matrix");
  merge_->add_flag("--no-expect", no_expect_, "No expectations: every cell must pass (or be N/A)");
}

int MatrixCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
  if (merge_->parsed()) return run_merge(out, err);
#ifndef PERMITCHECK_HAVE_CONFORMANCE
  err << "permitcheck matrix: not built in this configuration (needs protobuf and asio); "
         "`permitcheck matrix merge` works\n";
  return spec::kExitBadInput;
#else
  if (out_dir_.empty()) {
    err << "permitcheck matrix: --out DIR is required\n";
    return spec::kExitBadInput;
  }
  std::optional<matrix::Shard> shard;
  if (!shard_.empty()) {
    absl::StatusOr<matrix::Shard> s = matrix::parse_shard(shard_);
    if (!s.ok()) {
      err << "permitcheck matrix: --shard: " << s.status().message() << "\n";
      return spec::kExitBadInput;
    }
    shard = *s;
  }
  absl::StatusOr<std::vector<matrix::Expectations>> expectations =
      load_expectations(expect_, no_expect_);
  if (!expectations.ok()) {
    err << "permitcheck matrix: --expect: " << expectations.status().message() << "\n";
    return spec::kExitBadInput;
  }
  MatrixSettings settings{.out_dir = out_dir_,
                          .clients = csv_names(clients_),
                          .scenarios = csv_names(scenarios_),
                          .catalogue_releases = catalogue_releases_,
                          .jobs = jobs_,
                          .seed = seed_,
                          .cases = cases_,
                          .max_shrinks = max_shrinks_,
                          .q = q_,
                          .timeout_s = timeout_s_,
                          .idle_s = idle_s_,
                          .deadline_s = deadline_s_,
                          .root = conformance::presets_root(),
                          .brokers = csv_names(brokers_)};
  absl::StatusOr<MatrixPlan> plan = plan_matrix(settings);
  if (!plan.ok()) {
    err << "permitcheck matrix: " << plan.status().message() << "\n";
    return spec::kExitBadInput;
  }
  if (plan->matrix.plan.empty()) {
    err << "permitcheck matrix: no cell to run (no installed client among those asked for)\n";
    for (const std::string& n : plan->matrix.notes) err << "  " << n << "\n";
    return spec::kExitBadInput;
  }
  if (!make_dir(out_dir_, err)) return spec::kExitBadInput;
  const std::vector<matrix::CellKey> cells =
      matrix::shard_cells(plan->matrix.plan, shard.value_or(matrix::Shard{1, 1}));
  // run_matrix calls `progress` under its own lock: one update at a time.
  ProgressLine line(err, "matrix", "cells",
                    progress_wanted(progress_, no_progress_, stderr_is_terminal()));
  const MatrixProgress progress = [&line](int done, int total, double) { line.update(done, total); };
  matrix::Matrix m = run_matrix(*plan, settings, cells, progress);
  line.finish();
  m.shard = shard;
  matrix::apply_expectations(m, *expectations);
  if (!write_outputs(m, out_dir_, shard.has_value(), out, err)) return spec::kExitBadInput;
  out << matrix::render_summary(m);
  if (shard) {
    out << "shard " << shard->index << "/" << shard->count << ": " << m.cells.size() << " of "
        << m.plan.size() << " cells; merge the shards with permitcheck matrix merge\n";
  }
  return matrix::any_unexpected(m) ? spec::kExitViolation : spec::kExitPass;
#endif
}

int MatrixCommand::run_merge(std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::vector<matrix::Expectations>> expectations =
      load_expectations(expect_, no_expect_);
  if (!expectations.ok()) {
    err << "permitcheck matrix merge: --expect: " << expectations.status().message() << "\n";
    return spec::kExitBadInput;
  }
  std::vector<matrix::Matrix> shards;
  for (const std::string& dir : merge_dirs_) {
    absl::StatusOr<std::string> text = read_file(fs::path(dir) / "matrix.json");
    if (!text.ok()) {
      err << "permitcheck matrix merge: " << text.status().message() << "\n";
      return spec::kExitBadInput;
    }
    absl::StatusOr<matrix::Matrix> m = matrix::from_json(*text);
    if (!m.ok()) {
      err << "permitcheck matrix merge: " << dir << "/" << m.status().message() << "\n";
      return spec::kExitBadInput;
    }
    shards.push_back(*std::move(m));
  }
  absl::StatusOr<matrix::Matrix> merged = matrix::merge(std::move(shards));
  if (!merged.ok()) {
    err << "permitcheck matrix merge: " << merged.status().message() << "\n";
    return spec::kExitBadInput;
  }
  if (!make_dir(merge_out_, err)) return spec::kExitBadInput;
  // The cells' artifacts (logs, traces) beside the merged page.
  for (const std::string& dir : merge_dirs_) {
    std::error_code ec;
    const fs::path from = fs::path(dir) / "cells";
    if (!fs::exists(from, ec) || fs::equivalent(dir, merge_out_, ec)) continue;
    fs::copy(from, fs::path(merge_out_) / "cells",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    if (ec) {
      err << "permitcheck matrix merge: copying " << from.string() << ": " << ec.message() << "\n";
      return spec::kExitBadInput;
    }
  }
  matrix::apply_expectations(*merged, *expectations);
  if (!write_outputs(*merged, merge_out_, false, out, err)) return spec::kExitBadInput;
  out << matrix::render_summary(*merged);
  return matrix::any_unexpected(*merged) ? spec::kExitViolation : spec::kExitPass;
}

}  // namespace permitcheck::cli
