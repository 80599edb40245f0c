#include "cli/conform.h"
#include "cli/conform_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "nlohmann/json.hpp"
#include "report/findings.h"
#include "report/json.h"
#include "report/output.h"
#include "validate/junit.h"
#include "validate/report.h"

#ifdef PERMITCHECK_HAVE_CONFORMANCE
#include "cli/explain.h"
#include "conformance/bug_catalogue.h"
#include "conformance/client_presets.h"
#include "conformance/conform.h"
#include "spec/monitor.h"
#include "spec/outcome.h"
#include "spec/permit_state.h"
#include "spec/plain_text.h"
#include "trace/writer.h"
#endif

namespace permitcheck::cli {

std::string_view ConformCommand::description() const {
  return "Run the conformance scenarios against a real Pulsar client: a PIP-491 broker on "
      "127.0.0.1 delivers generated scenarios, records the wire trace and judges it with the "
      "monitor; failures are shrunk by re-running the client. Exit 0 pass (NOT-APPLICABLE "
      "scenarios aside), 1 a finding, 3 incomplete, 2 usage, a client that could not start or "
      "nothing checked; SIGINT/SIGTERM: the finished scenarios' report, exit 130/143 "
      "(docs/cli.md, \"Outcomes and exit codes\").";
}

std::string_view ConformCommand::examples() const {
  return "  permitcheck conform --list-clients\n"
      "  permitcheck conform --client-preset go --scenarios partial_batches\n"
      "  permitcheck conform --old-client --threshold 5 \\\n"
      "    --client 'node consumer.js {url} {topic} {subscription} {q} {delay_ms} {nack_every}'";
}

void ConformCommand::add_options(CLI::App& sub) {
  sub_ = &sub;
  sub_->add_option("--client", client_,
                   "Command line starting the client; placeholders {url} {topic} {subscription} "
                   "{q} {delay_ms} {nack_every}");
  sub_->add_option("--scenarios", scenarios_, "Comma-separated scenario names (default: all)");
  sub_->add_option("--seed", seed_,
                   "Seed of the drawn cases (the same default in matrix, check and review; the "
                   "report prints it)")
      ->capture_default_str();
  sub_->add_option("--cases", cases_,
                   "Random parameter sets per scenario, drawn after its fixed first cases")
      ->check(IntRange(0, 1000))
      ->capture_default_str();
  sub_->add_option("--jobs", jobs_, "Scenarios run side by side (each its own broker and client)")
      ->check(IntRange(1, 32))
      ->capture_default_str();
  sub_->add_option("--timeout", timeout_s_, "Seconds one client run may take")
      ->check(FiniteRange(1.0, 3600.0))
      ->capture_default_str();
  sub_->add_option("--startup", startup_s_,
                   "Seconds a client run may take to its first Flow (default 10, or the "
                   "preset's own: 30 for the Java client)")
      ->check(FiniteRange(0.1, 3600.0));
  sub_->add_option("--start-attempts", start_attempts_,
                   "Starts of one run whose client sends no Subscribe and Flow within --startup, "
                   "each with a fresh broker and client (the earlier ones are reported); only as "
                   "many as fit before --deadline")
      ->check(IntRange(1, 10))
      ->capture_default_str();
  sub_->add_option("--idle", idle_s_,
                   "Seconds of silence that count as quiescence (the same default in matrix, tap "
                   "and validate; the report prints it)")
      ->check(FiniteRange(0.1, 60.0))
      ->capture_default_str();
  sub_->add_option("--deadline", deadline_s_,
                   "Seconds the whole of conform may take: no run starts after it, the "
                   "scenarios left are reported as not run (exit 2 unless something failed)")
      ->check(FiniteRange(1.0, 7.0 * 24 * 3600))
      ->capture_default_str();
  sub_->add_option("--format", format_, "Report format")
      ->check(CLI::IsMember({"text", "json", "junit"}))
      ->capture_default_str();
  sub_->add_option("--trace-dir", trace_dir_,
                   "Write each minimal counterexample as DIR/SCENARIO.jsonl (+ .mmd, .txt)");
  sub_->add_option("-o,--output", output_, "Write the report to this file instead of stdout");
  sub_->add_option("--q", q_,
                   "Receiver queue size Q the client is told ({q}) and judged against (default "
                   "10: a preset's client uses it; --client's Q is read off its first Flow, and a "
                   "first Flow other than a given Q is a configuration mismatch, exit 2)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}))
      ->capture_default_str();
  sub_->add_option("--threshold", threshold_,
                   "The client's Flow threshold T: at quiescence Q - available must be below it "
                   "(default: the preset's, else read off the client's smallest replenishing "
                   "Flow, else max(1, Q/2))")
      ->check(IntRange(1, 100000));
  sub_->add_flag("--old-client", old_client_,
                 "The client does not know message_permits: judge it as field-absent (X1, X6)");
  sub_->add_option("--max-shrinks", max_shrinks_, "Client runs spent shrinking one failure")
      ->check(IntRange(0, 10000))
      ->capture_default_str();
  sub_->add_option("--reproduce", reproduce_,
                   "Runs of a failing case in all, reported as \"reproduced k of n\"; a racy "
                   "failure (k < n) has each smaller case tried up to n times while shrinking")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  sub_->add_flag("--progress", progress_,
                 "A progress line on stderr as each scenario finishes (done, elapsed, left) even "
                 "when it is no terminal");
  sub_->add_flag("--no-progress", no_progress_, "No progress line")->excludes("--progress");
  sub_->add_flag("--list", list_, "List the scenarios and exit");
  sub_->add_option("--client-preset", client_preset_,
                   "A shipped consumer NAME[@VERSION] (--list-clients) with its known settings: "
                   "old client or not, its Flow threshold")
      ->excludes("--client");
  sub_->add_option("--advertised-url", advertised_url_,
                   "pulsar://HOST:PORT the broker names in its lookup answers (default: its "
                   "own): a tap or proxy in front of it gives its address, so the client "
                   "consumes through it");
  sub_->add_flag("--list-clients", list_clients_, "List the shipped client presets and exit");
  sub_->add_flag("--catalogue", catalogue_,
                 "Run the bug catalogue (docs/bug-catalogue.md): each row found in its affected "
                 "release and passing in its fixed one (--format text|json)");
}

#ifndef PERMITCHECK_HAVE_CONFORMANCE

int ConformCommand::run(std::istream&, std::ostream&, std::ostream& err) {
  err << "permitcheck conform: not built in this configuration (needs protobuf and asio)\n";
  return spec::kExitBadInput;
}

#else

namespace {

// --advertised-url: pulsar://HOST:PORT, a host without '/', a port 1-65535 and nothing after;
// the reason otherwise. (pulsar+ssl:// is not offered: the broker speaks no TLS.)
std::optional<std::string> advertised_url_problem(std::string_view url) {
  constexpr std::string_view kScheme = "pulsar://";
  if (url.substr(0, kScheme.size()) != kScheme) return "must start with pulsar://";
  const std::string_view rest = url.substr(kScheme.size());
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return "must be pulsar://HOST:PORT";
  const std::string_view host = rest.substr(0, colon), port = rest.substr(colon + 1);
  if (host.find_first_of("/?#@ ") != std::string_view::npos) {
    return absl::StrCat("host \"", std::string(host), "\" is not a host name or address");
  }
  int n = 0;
  if (port.empty() || port.find_first_not_of("0123456789") != std::string_view::npos ||
      !absl::SimpleAtoi(std::string(port), &n) || n < 1 || n > 65535) {
    return absl::StrCat("port \"", std::string(port), "\" is not a number in 1-65535");
  }
  return std::nullopt;
}

using conformance::ConformReport;

}  // namespace

int ConformCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
  if ((list_ || list_clients_) && format_ == "junit") {
    err << "permitcheck conform: --list and --list-clients write text or json, not junit\n";
    return spec::kExitBadInput;
  }
  if (list_) return list_scenarios(out);
  if (list_clients_) return list_clients(out);
  if (catalogue_) return run_catalogue(out, err);
  return run_scenarios(out, err);
}

// --list: every scenario with its rule, legacy rows and what it does; the unobservable rows.
int ConformCommand::list_scenarios(std::ostream& out) const {
  if (format_ == "json") {
    nlohmann::json j = {{"scenarios", nlohmann::json::array()},
                        {"unobservable_rows", nlohmann::json::array()}};
    for (const conformance::ScenarioInfo& s : conformance::all_scenarios()) {
      nlohmann::json rows = nlohmann::json::array();
      for (absl::string_view r : absl::StrSplit(std::string(s.rows), ',', absl::SkipEmpty())) {
        rows.push_back(std::string(r));
      }
      j["scenarios"].push_back({{"name", std::string(s.name)},
                                {"rule", std::string(spec::rule_name(s.primary))},
                                {"legacy_rows", rows},
                                {"summary", std::string(s.summary)}});
    }
    for (const conformance::UnobservableRow& u : conformance::unobservable_rows()) {
      j["unobservable_rows"].push_back({{"row", std::string(u.row)}, {"reason", std::string(u.reason)}});
    }
    out << report::json_indented(j);
    return spec::kExitPass;
  }
  out << "scenario\trule\tlegacy rows\twhat it does\n";
  for (const conformance::ScenarioInfo& s : conformance::all_scenarios()) {
    out << s.name << "\t" << spec::rule_name(s.primary) << "\t"
        << (s.rows.empty() ? "-" : std::string(s.rows)) << "\t" << s.summary << "\n";
  }
  out << "\nLegacy rows not observable on the wire:\n";
  for (const conformance::UnobservableRow& u : conformance::unobservable_rows()) {
    out << u.row << "\t" << u.reason << "\n";
  }
  return spec::kExitPass;
}

// --list-clients: every shipped client preset with its versions and Flow threshold at --q.
int ConformCommand::list_clients(std::ostream& out) const {
  if (format_ == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const conformance::ClientPreset& p : conformance::all_client_presets()) {
      j.push_back({{"name", p.name},
                   {"version", p.default_version},
                   {"other_versions", p.other_versions},
                   {"knows_message_permits", p.knows_message_permits},
                   {"q", q_},
                   {"threshold", p.threshold(q_)},
                   {"threshold_source", p.threshold_source},
                   {"library", p.library}});
    }
    out << report::json_indented(j);
    return spec::kExitPass;
  }
  for (const conformance::ClientPreset& p : conformance::all_client_presets()) {
    out << p.name << "\t" << p.default_version;
    for (const std::string& v : p.other_versions) out << "," << v;
    out << "\t" << (p.knows_message_permits ? "new client" : "old client") << "\tT = "
        << p.threshold(q_) << " at Q = " << q_ << " (" << p.threshold_source << ")\t"
        << p.library << "\n";
  }
  return spec::kExitPass;
}

// --catalogue: each bug-catalogue row found in its affected release and passing in its fixed one.
int ConformCommand::run_catalogue(std::ostream& out, std::ostream& err) const {
  std::vector<conformance::RowResult> results;
  for (const conformance::BugRow& row : conformance::bug_catalogue()) {
    err << "conform: catalogue row " << row.id << "\n";
    results.push_back(conformance::run_bug_row(row, conformance::presets_root()));
  }
  out << (format_ == "json" ? conformance::format_catalogue_json(results)
                            : conformance::format_catalogue_text(results));
  const bool all = std::all_of(results.begin(), results.end(),
                               [](const conformance::RowResult& r) { return r.holds(); });
  return all ? spec::kExitPass : spec::kExitViolation;
}

// The run's options from the command line (a preset resolved into its command, threshold and
// startup bound); false, with the reason on `err`, when they do not make a run.
bool ConformCommand::configure(conformance::ConformOptions& options, std::ostream& err) {
  std::chrono::milliseconds startup(10000);  // until the first Flow
  std::optional<std::int64_t> preset_threshold;
  if (!client_preset_.empty()) {
    absl::StatusOr<conformance::ResolvedPreset> preset =
        conformance::resolve_preset(client_preset_, conformance::presets_root());
    if (!preset.ok()) {
      err << "permitcheck conform: --client-preset: " << preset.status().message() << "\n";
      return false;
    }
    client_ = preset->command;
    if (!preset->preset->knows_message_permits) old_client_ = true;
    preset_threshold = preset->preset->threshold(q_);
    startup = preset->preset->startup;
  }
  if (startup_s_ > 0) startup = std::chrono::milliseconds(static_cast<std::int64_t>(startup_s_ * 1000));
  if (client_.empty()) {
    err << "permitcheck conform: --client or --client-preset is required\n";
    return false;
  }
  if (client_.find("{url}") == std::string::npos) {
    err << "permitcheck conform: --client: the command has no {url} placeholder, so the client "
           "cannot find the broker\n";
    return false;
  }
  if (!advertised_url_.empty()) {
    if (std::optional<std::string> why = advertised_url_problem(advertised_url_)) {
      err << "permitcheck conform: --advertised-url \"" << advertised_url_ << "\": " << *why
          << "\n";
      return false;
    }
  }
  options.client.command = client_;
  options.client.advertised_url = advertised_url_;
  // Q and T: given; else the preset's (its run script tells the client {q}; its threshold is
  // documented); else read off the client's own Flows by the flow probe (issue 33).
  const bool preset = preset_threshold.has_value();
  options.client.q = q_;
  options.q_source = sub_->count("--q") > 0 ? conformance::SettingSource::kGiven
                                            : conformance::SettingSource::kPreset;
  options.infer_q = sub_->count("--q") == 0 && !preset;
  if (threshold_ > 0) {
    options.client.t = threshold_;
    options.t_source = conformance::SettingSource::kGiven;
  } else if (preset) {
    options.client.t = preset_threshold;
    options.t_source = conformance::SettingSource::kPreset;
  } else {
    options.infer_t = true;
  }
  options.client.knows_message_permits = !old_client_;
  options.client.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s_ * 1000));
  options.client.idle = std::chrono::milliseconds(static_cast<std::int64_t>(idle_s_ * 1000));
  options.client.startup = std::min(options.client.timeout, startup);
  options.client.start_attempts = start_attempts_;
  options.client.log_dir = trace_dir_.empty() ? std::filesystem::temp_directory_path().string()
                                               : trace_dir_;
  options.client.keep_log = !trace_dir_.empty();
  options.seed = seed_;
  options.cases = cases_;
  options.max_shrink_runs = max_shrinks_;
  options.reproduce = reproduce_;
  options.jobs = jobs_;
  options.deadline = std::chrono::milliseconds(static_cast<std::int64_t>(deadline_s_ * 1000));
  if (!scenarios_.empty()) {
    const std::vector<std::string> names = absl::StrSplit(scenarios_, ',', absl::SkipEmpty());
    for (const std::string& name : names) {
      std::optional<conformance::ScenarioKind> k = conformance::parse_scenario(name);
      if (!k) {
        err << "permitcheck conform: --scenarios: unknown scenario \"" << name
            << "\" (permitcheck conform --list names them)\n";
        return false;
      }
      options.scenarios.push_back(*k);
    }
  }
  if (!trace_dir_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(trace_dir_, ec);
    if (ec) {
      err << "permitcheck conform: --trace-dir " << trace_dir_ << ": " << ec.message() << "\n";
      return false;
    }
  }
  return true;
}

int ConformCommand::run_scenarios(std::ostream& out, std::ostream& err) {
  conformance::ConformOptions options;
  if (!configure(options, err)) return spec::kExitBadInput;
  // SIGINT/SIGTERM: the report of every scenario finished so far, marked interrupted, then exit
  // 130/143 (conformance::set_interrupted_report); kept up to date as scenarios finish.
  const RunSettings settings{.seed = seed_, .idle_s = idle_s_, .cases = cases_};
  const auto interrupted_text = [this, settings](conformance::ConformReport so_far) {
    so_far.interrupted = true;
    if (format_ == "json") return format_json(so_far, client_, settings);
    if (format_ == "junit") return conform_junit(so_far);
    return format_text(so_far, client_, settings, /*full=*/true);
  };
  conformance::set_interrupted_report(interrupted_text(ConformReport{}), output_);
  const auto total_scenarios = static_cast<std::int64_t>(
      options.scenarios.empty() ? conformance::all_scenarios().size() : options.scenarios.size());
  ProgressLine line(err, "conform", "scenarios",
                    progress_wanted(progress_, no_progress_, stderr_is_terminal()),
                    ProgressLine::Style::kLines);
  options.on_finished = [&](const ConformReport& so_far) {
    conformance::set_interrupted_report(interrupted_text(so_far), output_);
    line.update(static_cast<std::int64_t>(so_far.scenarios.size()), total_scenarios);
  };
  const ConformReport report = conformance::run_conformance(
      options, [&err](std::string_view line) { err << "conform: " << line; });

  if (!trace_dir_.empty() && !write_counterexamples(report, trace_dir_, out, err)) {
    return spec::kExitBadInput;
  }
  std::string text;
  if (format_ == "json") text = format_json(report, client_, settings);
  else if (format_ == "junit") text = conform_junit(report);
  else text = format_text(report, client_, settings, /*full=*/true);
  if (!output_.empty()) {
    if (!report::write_report(output_, out, text, "conform", err)) return spec::kExitBadInput;
    if (format_ != "text") err << format_text(report, client_, settings, /*full=*/false);
  } else if (!report::write_report("", out, text, "conform", err)) {
    return spec::kExitBadInput;
  }
  if (report.client_could_not_start) return spec::kExitBadInput;
  if (report.settings_mismatch) {
    err << "permitcheck conform: configuration mismatch: " << *report.settings_mismatch
        << "; nothing judged\n";
    return spec::kExitBadInput;
  }
  const spec::Outcome outcome = report.outcome();
  if (outcome == spec::Outcome::kIncomplete && report.deadline_reached()) {
    err << "permitcheck conform: --deadline of " << deadline_s_
        << " s reached before every scenario ran; nothing failed in what ran\n";
  }
  if (outcome == spec::Outcome::kNotApplicable) {
    err << "permitcheck conform: nothing checked: every scenario is NOT-APPLICABLE to this "
           "client\n";
  }
  return spec::exit_code(outcome);  // 0 PASS, 1 FAIL, 3 INCOMPLETE, 2 nothing checked
}

#endif  // PERMITCHECK_HAVE_CONFORMANCE

}  // namespace permitcheck::cli
