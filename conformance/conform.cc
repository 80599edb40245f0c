#include "conformance/conform.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "conformance/flow_probe.h"
#include "conformance/internal/process.h"
#include "spec/permit_state.h"

namespace permitcheck::conformance {
namespace {

std::set<spec::RuleId> rules_of(const ScenarioOutcome& o) {
  std::set<spec::RuleId> r;
  for (const spec::Finding& f : o.violations) r.insert(f.rule);
  return r;
}

// A shrink is accepted when it still fails with at least one of the original rules, so the
// minimal counterexample shows the same defect.
bool same_defect(const std::set<spec::RuleId>& original, const ScenarioOutcome& o) {
  if (!o.failed() || o.client_never_started) return false;
  for (const spec::Finding& f : o.violations) {
    if (original.contains(f.rule)) return true;
  }
  return false;
}

}  // namespace

std::string applicable_rules(bool knows_message_permits) {
  if (knows_message_permits) {
    return "new client (reads message_permits): judged by rev-d on the wire: W2, B2/B7, N4, "
           "E2 (over-grant at every Flow), E5/E6 at quiescence; with the field absent (old "
           "broker) early payload failures may return the fallback (X1, X6)";
  }
  return "old client (ignores message_permits): judged as if the field were absent: E2 "
         "(over-grant at every Flow), N4, E5/E6 at quiescence, with early payload failures "
         "excused down to the field-absent fallback (X1 complete batch -> 1, X6 partial -> "
         "all ack_set bits); W2/C4 do not apply";
}

std::string_view setting_source_name(SettingSource source) {
  switch (source) {
    case SettingSource::kGiven: return "given";
    case SettingSource::kPreset: return "preset";
    case SettingSource::kInferred: return "inferred";
    case SettingSource::kDefault: return "default";
  }
  return "given";
}

std::string FlowSettings::text() const {
  const auto from = [](SettingSource s, std::string_view inferred_from) {
    switch (s) {
      case SettingSource::kGiven: return std::string("given");
      case SettingSource::kPreset: return std::string("from the client preset");
      case SettingSource::kInferred: return absl::StrCat("inferred from ", std::string(inferred_from));
      case SettingSource::kDefault: return std::string("the default max(1, Q/2)");
    }
    return std::string();
  };
  if (q_source == SettingSource::kInferred && t_source == SettingSource::kInferred) {
    return absl::StrCat("Q = ", q, " and T = ", t, ", inferred from the client's first Flow and "
                        "its replenishing Flows");
  }
  return absl::StrCat("Q = ", q, " (", from(q_source, "the client's first Flow"), "), T = ", t,
                      " (", from(t_source, "the client's smallest replenishing Flow"), ")");
}

spec::Outcome ScenarioReport::outcome() const {
  if (counterexample) return spec::Outcome::kFail;
  if (deadline_reached || skipped_never_started || settings_mismatch || inconclusive()) {
    return spec::Outcome::kIncomplete;
  }
  if (not_applicable()) return spec::Outcome::kNotApplicable;
  return spec::Outcome::kPass;
}

spec::Outcome ConformReport::outcome() const {
  spec::Outcome out = spec::Outcome::kNotApplicable;
  for (const ScenarioReport& s : scenarios) out = spec::combine(out, s.outcome());
  return out;
}

bool ConformReport::passed() const {
  return !client_could_not_start && !interrupted && outcome() == spec::Outcome::kPass;
}

bool ConformReport::deadline_reached() const {
  return std::any_of(scenarios.begin(), scenarios.end(),
                     [](const ScenarioReport& s) { return s.deadline_reached; });
}

bool ConformReport::has_counterexample() const {
  return std::any_of(scenarios.begin(), scenarios.end(),
                     [](const ScenarioReport& s) { return s.counterexample.has_value(); });
}

std::map<std::string, std::vector<std::string>> ConformReport::violations_by_rule() const {
  std::map<std::string, std::vector<std::string>> out;
  for (const ScenarioReport& s : scenarios) {
    if (!s.counterexample) continue;
    for (spec::RuleId r : rules_of(*s.counterexample)) {
      auto& v = out[std::string(spec::rule_name(r))];
      const std::string name(scenario_info(s.kind).name);
      if (v.empty() || v.back() != name) v.push_back(name);
    }
  }
  return out;
}

std::map<std::string, std::vector<std::string>> ConformReport::rows_found() const {
  std::map<std::string, std::vector<std::string>> out;
  for (const ScenarioReport& s : scenarios) {
    if (!s.counterexample) continue;
    for (const std::string& row : s.counterexample->found_rows) {
      out[row].push_back(std::string(scenario_info(s.kind).name));
    }
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

// A run that ends this close to the overall deadline may have been cut by it.
constexpr std::chrono::milliseconds kDeadlineMargin{200};

// Whether no run may start any more.
bool past(Clock::time_point until) { return Clock::now() + kDeadlineMargin >= until; }

// What the scenarios running side by side share: whether any client ever started, and the
// first run whose client never did while none had (the run then stops: reported once).
struct Shared {
  std::atomic<bool> any_started{false};
  std::atomic<bool> gave_up{false};
  std::mutex mu;
  std::optional<ScenarioOutcome> never_started;  // guarded by mu
  // A run's client Flowed another Q than the one given: nothing more runs.
  std::atomic<bool> mismatch{false};
  std::optional<std::string> mismatch_text;  // guarded by mu
};

// One client run within the overall deadline `until`: nullopt when the deadline has passed,
// or when the run was given only the time left and ended at the deadline (cut by it, its
// verdict is not the client's).
std::optional<ScenarioOutcome> run_within(const ClientSpec& spec, Clock::time_point until,
                                          const ScenarioParams& params, ScenarioReport* sr,
                                          Shared& shared) {
  using std::chrono::milliseconds;
  const Clock::time_point now = Clock::now();
  if (past(until)) return std::nullopt;
  ClientSpec client = spec;
  const milliseconds left = std::chrono::duration_cast<milliseconds>(until - now);
  const bool clamped = left < client.timeout;
  if (clamped) {
    client.timeout = left;
    client.startup = std::min(client.startup, left);
  }
  // A start attempt that fails costs up to `startup` (and the process's stop) before the next:
  // only as many attempts as fit before the deadline with a whole run after them.
  const milliseconds per_start = client.startup + milliseconds(1000);
  const milliseconds spare = left - client.timeout;
  const long fit = 1 + (spare.count() > 0 ? spare.count() / per_start.count() : 0);
  client.start_attempts =
      static_cast<int>(std::clamp<long>(fit, 1, std::max(1, spec.start_attempts)));
  // Until some client of this conform run has started, a start is not retried: a client that
  // never subscribes is reported after one `startup`, not after every attempt of every
  // scenario. Once one has started, a slow start is retried as usual.
  const bool known_to_start = shared.any_started.load();
  if (!known_to_start) client.start_attempts = 1;
  ScenarioOutcome outcome = run_scenario(client, params);
  if (!known_to_start && outcome.client_never_started && shared.any_started.load() &&
      !past(until)) {
    client.start_attempts = std::max(1, spec.start_attempts - 1);  // another run started meanwhile
    outcome = run_scenario(client, params);
  }
  ++sr->runs;  // cut or not, the client ran
  for (const std::string& f : outcome.failed_starts) {
    sr->restarts.push_back(absl::StrCat("run ", sr->runs, ", ", f));
  }
  if (clamped && Clock::now() + kDeadlineMargin >= until) {
    ++sr->cut_runs;
    return std::nullopt;
  }
  if (!outcome.client_never_started) {
    shared.any_started = true;
  } else if (!shared.any_started.load()) {
    std::lock_guard<std::mutex> lock(shared.mu);
    if (!shared.never_started) shared.never_started = outcome;
    shared.gave_up = true;
  }
  return outcome;
}

void note_run(ScenarioReport& sr, const ScenarioOutcome& o) {
  for (const std::string& w : o.windows) {
    if (std::find(sr.windows.begin(), sr.windows.end(), w) == sr.windows.end()) {
      sr.windows.push_back(w);
    }
  }
  for (const std::string& w : o.not_opened) sr.not_opened.push_back(w);
  for (const std::string& w : o.cannot_open) {
    if (std::find(sr.cannot_open.begin(), sr.cannot_open.end(), w) == sr.cannot_open.end()) {
      sr.cannot_open.push_back(w);
    }
  }
  for (const std::string& r : o.rows) {
    if (std::find(sr.rows.begin(), sr.rows.end(), r) == sr.rows.end()) sr.rows.push_back(r);
  }
  for (std::uint64_t e : o.never_acked) {
    sr.never_acked.push_back(absl::StrCat("entry ", e, " (run ", sr.runs, ")"));
  }
  if (o.inconclusive()) ++sr.inconclusive_runs;
}

// Runs `params` again until `n` runs in all (the failing one included) and counts those that
// fail the same way; stops early at the deadline (then fewer than n are counted).
void measure_reproduction(const ConformOptions& options, Clock::time_point until,
                          const ScenarioParams& params, const std::set<spec::RuleId>& original,
                          ScenarioReport& sr, Shared& shared) {
  sr.reproduced = 1;
  sr.reproduce_runs = 1;
  for (int i = 1; i < options.reproduce; ++i) {
    std::optional<ScenarioOutcome> run = run_within(options.client, until, params, &sr, shared);
    if (!run) return;
    ++sr.reproduce_runs;
    if (same_defect(original, *run)) ++sr.reproduced;
  }
}

// Runs a smaller case up to `tries` times; the first run that fails the same way, if any.
std::optional<ScenarioOutcome> fails_within(const ConformOptions& options, Clock::time_point until,
                                            const ScenarioParams& params,
                                            const std::set<spec::RuleId>& original, int tries,
                                            int& budget, bool& deadline, ScenarioReport& sr,
                                            Shared& shared) {
  ++sr.shrink_tries;
  for (int i = 0; i < tries && budget > 0; ++i) {
    --budget;
    std::optional<ScenarioOutcome> run = run_within(options.client, until, params, &sr, shared);
    if (!run) {
      deadline = true;
      return std::nullopt;
    }
    if (same_defect(original, *run)) return run;
  }
  return std::nullopt;
}

// Runs per smaller case while shrinking: one for a case that failed every time, n for a racy one.
int shrink_tries(const ConformOptions& options, const ScenarioReport& sr) {
  return sr.reproduced < sr.reproduce_runs ? std::max(1, options.reproduce) : 1;
}

// A fixed case as RapidCheck's shrink tree: its smaller cases are shrink_candidates, so that
// fixed and drawn cases share one shrink loop (`minimize`).
rc::Shrinkable<ScenarioParams> fixed_shrinkable(const ScenarioParams& params) {
  return rc::shrinkable::shrinkRecur(params, [](const ScenarioParams& p) {
    return rc::seq::fromContainer(shrink_candidates(p));
  });
}

// A failing case made the scenario's counterexample: how often it reproduces is measured, then
// it is shrunk (the first smaller case that fails the same way, repeated, within
// --max-shrink-runs) and the minimal case is measured again. A client that never started is
// kept as it is: there is no defect to shrink.
void minimize(const ConformOptions& options, Clock::time_point until, const ProgressFn& progress,
              rc::Shrinkable<ScenarioParams> current, ScenarioOutcome outcome, ScenarioReport& sr,
              Shared& shared) {
  sr.original = describe(current.value());
  if (outcome.client_never_started) {
    sr.counterexample = std::move(outcome);
    return;
  }
  const std::set<spec::RuleId> original = rules_of(outcome);
  measure_reproduction(options, until, current.value(), original, sr, shared);
  const int tries = shrink_tries(options, sr);
  int budget = options.max_shrink_runs;
  bool improved = true;
  bool deadline = false;
  while (improved && budget > 0 && !deadline) {
    improved = false;
    rc::Seq<rc::Shrinkable<ScenarioParams>> shrinks = current.shrinks();
    while (budget > 0 && !deadline) {
      rc::Maybe<rc::Shrinkable<ScenarioParams>> next = shrinks.next();
      if (!next) break;
      std::optional<ScenarioOutcome> candidate = fails_within(
          options, until, next->value(), original, tries, budget, deadline, sr, shared);
      if (candidate) {
        if (progress) progress(absl::StrCat("  shrunk to ", describe(next->value()), "\n"));
        current = *next;
        outcome = *std::move(candidate);
        ++sr.shrink_steps;
        improved = true;
        break;
      }
    }
  }
  if (sr.shrink_steps > 0) measure_reproduction(options, until, current.value(), original, sr, shared);
  sr.counterexample = std::move(outcome);
}

}  // namespace

namespace {

// One scenario: its fixed cases, then the draws; the first failure shrunk.
ScenarioReport explore(const ConformOptions& options, Clock::time_point until,
                       const ProgressFn& progress, ScenarioKind kind, int& started_runs,
                       Shared& shared) {
  const auto t0 = std::chrono::steady_clock::now();
  ScenarioReport sr{.kind = kind};
  const auto cut = [&] {
    sr.deadline_reached = true;
    if (progress) {
      progress(absl::StrCat(std::string(scenario_info(kind).name), ": overall deadline reached, ",
                            sr.runs == 0 ? "not run" : "not finished", "\n"));
    }
  };
  const std::string name(scenario_info(kind).name);
  const rc::Gen<ScenarioParams> gen = gen_scenario(kind);
  // One case run and noted: kPassed, kFailed (`failed` holds its outcome) or kStop when the
  // scenario ends here (the overall deadline, or a client that never starts).
  enum class Step { kPassed, kFailed, kStop };
  const auto run_case = [&](const ScenarioParams& p, const std::string& label,
                            std::optional<ScenarioOutcome>& failed) {
    if (past(until)) {
      cut();
      return Step::kStop;
    }
    if (shared.gave_up) {
      sr.skipped_never_started = true;
      return Step::kStop;
    }
    if (shared.mismatch) {
      sr.settings_mismatch = true;
      return Step::kStop;
    }
    if (progress) progress(absl::StrCat(name, " ", label, ": ", describe(p), "\n"));
    std::optional<ScenarioOutcome> run = run_within(options.client, until, p, &sr, shared);
    if (!run) {
      cut();
      return Step::kStop;
    }
    if (run->client_never_started && shared.gave_up) {
      sr.skipped_never_started = true;  // reported once, for the whole run
      return Step::kStop;
    }
    if (!run->client_never_started) ++started_runs;
    if (run->settings_mismatch) {  // not judged: reported once, for the run
      sr.settings_mismatch = true;
      std::lock_guard<std::mutex> lock(shared.mu);
      if (!shared.mismatch_text) shared.mismatch_text = run->settings_mismatch;
      shared.mismatch = true;
      return Step::kStop;
    }
    note_run(sr, *run);
    if (!run->failed()) {
      if (!run->inconclusive()) ++sr.cases_passed;
      for (const spec::Finding& d : run->deviations) sr.deviations.push_back(d);
      return Step::kPassed;
    }
    failed = std::move(run);
    return Step::kFailed;
  };
  if (options.fixed_cases) {
    for (const ScenarioParams& p :
         fixed_cases(kind, options.client.q, options.client.threshold())) {
      std::optional<ScenarioOutcome> failed;
      const Step step = run_case(p, "fixed", failed);
      if (step == Step::kPassed) continue;
      if (step == Step::kFailed) {
        minimize(options, until, progress, fixed_shrinkable(p), *std::move(failed), sr, shared);
      }
      break;
    }
  }
  for (int c = 0; c < options.cases && !sr.counterexample && !sr.deadline_reached &&
                  !sr.skipped_never_started;
       ++c) {
    const rc::Random random(options.seed * 1000003ULL + static_cast<std::uint64_t>(kind) * 7919ULL +
                            static_cast<std::uint64_t>(c));
    rc::Shrinkable<ScenarioParams> current = gen(random, 10 + 10 * c);
    std::optional<ScenarioOutcome> failed;
    const Step step = run_case(current.value(), absl::StrCat("case ", c + 1), failed);
    if (step == Step::kStop) break;
    if (step == Step::kFailed) {
      minimize(options, until, progress, std::move(current), *std::move(failed), sr, shared);
    }
  }
  sr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sr;
}

}  // namespace

namespace {

// The flow probe (conformance/flow_probe.h) when Q or T is to be inferred: `options` with the
// Q and T the client's own Flows show, and where each came from. False when no client ran to
// its first Flow: `report` then says the client could not start, or the overall deadline came.
// The largest Q read off a client's first Flow (--q's own bound): the fixed cases deliver
// batches of Q and T single messages.
constexpr std::int64_t kMaxInferredQ = 100000;
// What one drain message costs at least: the silence after its acknowledgement
// (scenario_run.cc, drain()).
constexpr std::chrono::milliseconds kDrainMessageAtLeast{100};

bool settle_flow_settings(ConformOptions& options, Clock::time_point until,
                          const ProgressFn& progress, ConformReport& report) {
  ClientSpec& client = options.client;
  FlowSettings& s = report.settings;
  s.q_source = options.q_source;
  s.t_source = options.infer_t ? SettingSource::kDefault : options.t_source;
  s.q = client.q;
  s.t = client.threshold();
  if (options.infer_q || options.infer_t) {
    if (past(until)) return false;
    if (progress) progress("flow probe: reading Q and T off the client's own Flows\n");
    ClientSpec probe = client;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    probe.startup = std::min(probe.startup, left);
    probe.timeout = std::min(probe.timeout, left);
    ScenarioOutcome o = probe_flow_settings(probe);
    if (o.client_never_started) {
      report.never_started = std::move(o);
      report.client_could_not_start = !past(until);
      return false;
    }
    const std::optional<std::int64_t> q = o.flows_seen.q;
    if (options.infer_q && q && *q > kMaxInferredQ) {
      report.settings_mismatch = absl::StrCat(
          "the client's first Flow granted ", *q, " permits, more than the receiver queue size ",
          kMaxInferredQ, " conform can judge (give --q and --threshold)");
      return false;
    }
    if (options.infer_q && q) {
      client.told_q = client.q;
      client.q = *q;
      s.q_source = SettingSource::kInferred;
    } else if (!options.infer_q) {
      if (std::optional<std::string> m = spec::q_mismatch(o.flows_seen, client.q)) {
        report.settings_mismatch = std::move(m);
        return false;
      }
    }
    if (options.infer_t) {
      if (o.flows_seen.t) {
        client.t = std::min(*o.flows_seen.t, client.q);  // T <= Q: due once Q were returned
        s.t_source = SettingSource::kInferred;
      } else {
        client.t = std::nullopt;
        s.t_source = SettingSource::kDefault;
        if (progress) progress("flow probe: no replenishing Flow seen; T is max(1, Q/2)\n");
      }
    }
  }
  s.q = client.q;
  s.t = client.threshold();
  if (progress) progress(absl::StrCat(s.text(), "\n"));
  // The drain sends its up to T single messages one at a time, each followed by a silence in
  // which a due Flow must come: at a large T that may not fit in one run's --timeout, and a
  // drain cut short looks like permits short (E5).
  if (progress && client.threshold() * kDrainMessageAtLeast > client.timeout) {
    progress(absl::StrCat("warning: T = ", client.threshold(), ": the drain's ",
                          client.threshold(), " single messages, one at a time, may not fit in ",
                          "--timeout ", client.timeout.count() / 1000, " s; raise it\n"));
  }
  return true;
}

}  // namespace

ConformReport run_conformance(const ConformOptions& given, const ProgressFn& progress) {
  ConformReport report;
  report.applicable_rules = applicable_rules(given.client.knows_message_permits);
  const Clock::time_point until = Clock::now() + given.deadline;
  ConformOptions options = given;
  const bool settled = settle_flow_settings(options, until, progress, report);
  std::vector<ScenarioKind> kinds = options.scenarios;
  if (kinds.empty()) {
    for (const ScenarioInfo& s : all_scenarios()) kinds.push_back(s.kind);
  }
  // Scenarios run side by side (each has its own broker and client process; the runs mostly
  // wait), reported in catalogue order.
  std::mutex mu;
  const ProgressFn locked = [&](std::string_view line) {
    if (!progress) return;
    std::lock_guard<std::mutex> lock(mu);
    progress(line);
  };
  std::vector<ScenarioReport> reports(kinds.size());
  std::vector<int> started(kinds.size(), 0);
  std::vector<bool> finished(kinds.size(), false);
  std::atomic<std::size_t> next{0};
  Shared shared;
  std::mutex finished_mu;
  auto worker = [&] {
    for (std::size_t i = next++; i < kinds.size(); i = next++) {
      ScenarioReport r =
          settled ? explore(options, until, progress ? locked : ProgressFn{}, kinds[i], started[i],
                            shared)
                  : ScenarioReport{.kind = kinds[i]};
      if (!settled) {  // what the probe found stands for every scenario
        r.settings_mismatch = report.settings_mismatch.has_value();
        r.skipped_never_started = report.client_could_not_start;
        r.deadline_reached = !r.settings_mismatch && !r.skipped_never_started;
      }
      std::lock_guard<std::mutex> lock(finished_mu);
      reports[i] = std::move(r);
      finished[i] = true;
      if (options.on_finished) {
        ConformReport so_far;
        so_far.applicable_rules = report.applicable_rules;
        so_far.settings = report.settings;
        for (std::size_t k = 0; k < kinds.size(); ++k) {
          if (finished[k]) so_far.scenarios.push_back(reports[k]);
        }
        options.on_finished(so_far);
      }
    }
  };
  const int jobs = std::clamp<int>(options.jobs, 1, static_cast<int>(kinds.size()));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  int started_runs = 0, total_runs = 0;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    started_runs += started[i];
    total_runs += reports[i].runs - reports[i].cut_runs;  // a cut run says nothing of the client
  }
  report.scenarios = std::move(reports);
  if (!settled) return report;
  report.client_could_not_start = total_runs > 0 && started_runs == 0;
  if (report.client_could_not_start) report.never_started = std::move(shared.never_started);
  if (shared.mismatch_text) report.settings_mismatch = shared.mismatch_text;
  return report;
}

void set_interrupted_report(std::string text, std::string path) {
  internal::set_interrupt_report(std::move(text), std::move(path));
}

}  // namespace permitcheck::conformance
