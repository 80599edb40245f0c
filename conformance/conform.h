// run_conformance: drives a client under test through the scenario catalogue. For each
// scenario its fixed first cases run (each corner that opens its window deterministically),
// then RapidCheck draws `cases` parameter sets; the first failing one is shrunk by re-running
// the client on ever smaller parameters, and the minimal counterexample (its parameters and
// its wire trace) is kept for the report. Each scenario's outcome is one of spec/outcome.h's:
// FAIL (a counterexample), INCOMPLETE (its window was not opened though it could be, or the
// deadline cut it), NOT-APPLICABLE (this client cannot open its window, with the reason;
// never fails or passes the run) or PASS.
//
//   ConformOptions o{.client = {.command = "my-consumer --url {url}", .q = 10, .t = 5}};
//   ConformReport r = run_conformance(o, [](std::string_view line) { std::cerr << line; });
//   // r.scenarios[i].counterexample->violations: rule IDs with the numbers observed
#ifndef PERMITCHECK_CONFORMANCE_CONFORM_H_
#define PERMITCHECK_CONFORMANCE_CONFORM_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/scenario.h"
#include "spec/outcome.h"

namespace permitcheck::conformance {

struct ConformReport;

// Where a run's Q or T came from, as the report says it: given on the command line, from the
// client preset, read off the client's own Flows by the flow probe (conformance/flow_probe.h),
// or T's default max(1, Q/2) (spec::default_threshold) when the probe saw no replenishing Flow.
enum class SettingSource { kGiven, kPreset, kInferred, kDefault };
std::string_view setting_source_name(SettingSource source);  // "given", ..., "default"

// The Q and T every scenario of a run is judged against, and where each came from.
struct FlowSettings {
  std::int64_t q = 10;
  std::int64_t t = 5;
  SettingSource q_source = SettingSource::kGiven;
  SettingSource t_source = SettingSource::kGiven;
  // The report's sentence: "Q = 1000 and T = 500, inferred from the client's first Flow and its
  // replenishing Flows".
  std::string text() const;
};

struct ConformOptions {
  // client.q and client.t as given; with infer_q (infer_t) the flow probe runs first and its
  // Q (T) replaces them, the client still told client.q as {q} (ClientSpec::told_q).
  ClientSpec client;
  bool infer_q = false, infer_t = false;
  SettingSource q_source = SettingSource::kGiven;  // of client.q when not inferred
  SettingSource t_source = SettingSource::kGiven;  // of client.t when not inferred
  std::vector<ScenarioKind> scenarios;  // empty: all
  std::uint64_t seed = 1;
  int cases = 1;                        // random parameter sets per scenario, after the fixed
  bool fixed_cases = true;              // run the fixed first cases (fixed_cases())
  int max_shrink_runs = 12;             // client runs spent shrinking one counterexample
  // A failing case is run this many times in all and reported "reproduced k of n"; when it
  // fails in fewer than n (a racy client), each smaller case tried while shrinking is run up to
  // n times and kept if it fails the same way once. 1: no re-runs (`permitcheck conform`: 5).
  int reproduce = 1;
  int jobs = 4;                         // scenarios run side by side (they mostly wait)
  // Called (under a lock, on the thread that ran it) each time a scenario finishes, with the
  // report of the scenarios finished so far: what an interrupted run can still print.
  std::function<void(const ConformReport& finished)> on_finished;
  // The whole of run_conformance: no client run starts after it, and a run it would cut is
  // given only the time left and, if the deadline ends it, not judged (its scenario is "not
  // finished", never failed or passed for it). Scenarios not started are "not run".
  std::chrono::milliseconds deadline{15 * 60 * 1000};
};

struct ScenarioReport {
  ScenarioKind kind;
  int runs = 0;                         // client runs, shrinking included
  int cases_passed = 0;
  std::optional<ScenarioOutcome> counterexample;  // minimal failing run
  std::string original;                 // describe() of the first failing parameters
  int shrink_steps = 0;                 // accepted shrinks
  int shrink_tries = 0;                 // smaller cases tried while shrinking
  // The minimal counterexample's parameters failed the same way (a rule of the first failure)
  // in `reproduced` of `reproduce_runs` runs (the counterexample's own run included).
  int reproduced = 0, reproduce_runs = 0;
  std::vector<spec::Finding> deviations;  // known deviations seen in passing runs
  std::vector<std::string> windows;     // windows opened, over every run ("held 3 ...")
  std::vector<std::string> not_opened;  // windows runs could not open, with the reason
  std::vector<std::string> cannot_open;  // why this client cannot open its window at all
  std::vector<std::string> rows;        // legacy rows whose window was opened
  std::vector<std::string> never_acked;  // "entry 3 (run 2)": never acknowledged
  // Start attempts whose client never subscribed, each started again (ClientSpec::
  // start_attempts): "run 2, attempt 1: hang or start failure: no Subscribe and Flow ...".
  std::vector<std::string> restarts;
  int inconclusive_runs = 0;
  double seconds = 0;
  // The overall deadline came before its last run (runs == 0: it never started). Without a
  // counterexample such a scenario is neither passed nor failed.
  bool deadline_reached = false;
  int cut_runs = 0;  // runs the deadline cut (counted in `runs`, not judged)
  // Not run: an earlier run showed the client never subscribes (reported once, for the run).
  bool skipped_never_started = false;
  // Not judged: a run's client Flowed a Q other than the one given (ConformReport::
  // settings_mismatch), so no run of this scenario can be judged against it.
  bool settings_mismatch = false;
  // Opened none of its windows although it could: cannot count as a pass (INCOMPLETE).
  bool inconclusive() const { return !counterexample && windows.empty() && !not_opened.empty(); }
  // Opened none of its windows because this client cannot (NOT-APPLICABLE).
  bool not_applicable() const {
    return !counterexample && windows.empty() && not_opened.empty() && !cannot_open.empty();
  }
  // FAIL, INCOMPLETE (window not opened, the deadline, not run, or a settings mismatch),
  // NOT-APPLICABLE, PASS.
  spec::Outcome outcome() const;
  bool passed() const { return outcome() == spec::Outcome::kPass; }
};

struct ConformReport {
  std::vector<ScenarioReport> scenarios;
  bool client_could_not_start = false;  // not a single run got a Subscribe and a Flow
  // The first run whose client never subscribed, when none ever did: reported once.
  std::optional<ScenarioOutcome> never_started;
  bool interrupted = false;             // by a signal: `scenarios` holds the finished ones
  FlowSettings settings;                // the Q and T judged against, and their sources
  // The client's own Flows contradict the Q given: "the client's first Flow granted 1000
  // permits, its receiver queue size Q, not the 10 given" (spec::q_mismatch). Nothing is judged
  // from then on; the report says so instead of reporting over-grants (issue 33).
  std::optional<std::string> settings_mismatch;
  std::string applicable_rules;         // which rules judge this client (old/new)
  // The scenarios' outcomes combined (spec::combine): NOT-APPLICABLE ones never decide it.
  spec::Outcome outcome() const;
  bool passed() const;
  // Some scenario was cut short or not run by the overall deadline.
  bool deadline_reached() const;
  // Some scenario has a counterexample (a finding about the client).
  bool has_counterexample() const;
  // rule name -> scenarios where it was violated
  std::map<std::string, std::vector<std::string>> violations_by_rule() const;
  // legacy row -> scenarios whose counterexample has a finding reported under it
  std::map<std::string, std::vector<std::string>> rows_found() const;
};

// Which rules judge a client that does (not) know message_permits (the compatibility matrix).
std::string applicable_rules(bool knows_message_permits);

using ProgressFn = std::function<void(std::string_view line)>;
ConformReport run_conformance(const ConformOptions& options, const ProgressFn& progress = {});

// On SIGINT or SIGTERM of this process from now on: every running client's process group is
// killed, `text` is written to `path` (empty: standard output) and the process exits 128 + the
// signal (130, 143). Replaces the text set before; thread-safe. A signal ignored when the
// first client started (nohup) stays ignored.
void set_interrupted_report(std::string text, std::string path);

}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_CONFORM_H_
