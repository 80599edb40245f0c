#include "cli/matrix_run.h"

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/explain.h"
#include "conformance/client_presets.h"
#include "conformance/conform.h"
#include "spec/plain_text.h"
#include "trace/writer.h"
#ifdef PERMITCHECK_HAVE_REALBROKER
#include "realbroker/fidelity.h"
#include "realbroker/run.h"
#include "realbroker/standalone.h"
#endif

namespace permitcheck::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using matrix::Cell;
using matrix::CellKey;
using matrix::Outcome;


// The plan's row of a cell's client and version; nullptr when the plan has none.
const MatrixPlan::Row* plan_row(const MatrixPlan& plan, const CellKey& key) {
  const auto row = std::find_if(plan.rows.begin(), plan.rows.end(), [&](const MatrixPlan::Row& r) {
    return r.client == key.client && r.version == key.version;
  });
  return row == plan.rows.end() ? nullptr : &*row;
}

std::string distinct_join(const std::vector<std::string>& v) {
  std::vector<std::string> seen;
  for (const std::string& s : v) {
    if (std::find(seen.begin(), seen.end(), s) == seen.end()) seen.push_back(s);
  }
  return absl::StrJoin(seen, "; ");
}

// The client logs the runs kept in `dir` (permitcheck-conform-PID-N.log, in run order),
// renamed client-run-K.log; their paths relative to `out`.
std::vector<std::string> keep_logs(const fs::path& dir, const fs::path& out) {
  std::map<std::pair<long, long>, fs::path> logs;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("permitcheck-conform-", 0) != 0 || e.path().extension() != ".log") continue;
    const std::string mid = name.substr(20, name.size() - 24);  // PID-N
    const std::size_t dash = mid.find('-');
    long pid = 0, n = 0;
    if (dash == std::string::npos || !absl::SimpleAtoi(mid.substr(0, dash), &pid) ||
        !absl::SimpleAtoi(mid.substr(dash + 1), &n)) {
      continue;
    }
    logs[{pid, n}] = e.path();
  }
  std::vector<std::string> out_paths;
  int k = 0;
  for (const auto& [order, path] : logs) {
    const fs::path to = dir / absl::StrCat("client-run-", ++k, ".log");
    fs::rename(path, to, ec);
    if (ec) continue;
    out_paths.push_back(fs::relative(to, out, ec).generic_string());
  }
  return out_paths;
}

trace::Trace cell_run_trace(const conformance::ScenarioOutcome& o) {
  trace::Trace t{o.header, o.events, {}};
  for (std::size_t i = 0; i < o.events.size(); ++i) t.lines.push_back(i + 2);
  return t;
}

// The cell of one scenario report (conform's statuses mapped to the matrix's outcomes).
}  // namespace

void fill_cell(Cell& c, const conformance::ConformReport& r) {
  const conformance::ScenarioReport& s = r.scenarios.front();
  c.runs = s.runs;
  c.cases_passed = s.cases_passed;
  c.seconds = s.seconds;
  c.windows = s.windows;
  std::set<std::string> devs;
  for (const spec::Finding& d : s.deviations) {
    devs.insert(absl::StrCat(std::string(spec::rule_name(d.rule)), ": ", d.explanation));
  }
  if (s.counterexample) {
    for (const spec::Finding& d : s.counterexample->deviations) {
      devs.insert(absl::StrCat(std::string(spec::rule_name(d.rule)), ": ", d.explanation));
    }
  }
  c.deviations.assign(devs.begin(), devs.end());
  if (s.counterexample && !s.counterexample->client_never_started) {
    const conformance::ScenarioOutcome& o = *s.counterexample;
    c.outcome = Outcome::kFail;
    std::set<std::string> rules;
    for (const spec::Finding& f : o.violations) {
      rules.insert(std::string(spec::rule_name(f.rule)));
      c.findings.push_back({std::string(spec::rule_name(f.rule)), f.line, f.explanation});
    }
    c.rules.assign(rules.begin(), rules.end());
    c.original = s.original;
    c.minimal = conformance::describe(o.params);
    c.shrink_steps = s.shrink_steps;
    c.client_failure = o.client_failure.value_or("");
    c.reason = c.findings.empty() ? c.client_failure : c.findings.front().explanation;
    Explained e = explain(cell_run_trace(o));
    e.violations = o.violations;
    e.deviations = o.deviations;
    c.prose = render_text(e, "trace.jsonl");
    if (!o.drain.text.empty()) c.prose = absl::StrCat(o.drain.text, "\n\n", c.prose);
    std::ostringstream t;
    if (trace::write_trace(t, o.header, o.events).ok()) c.trace = t.str();
    return;
  }
  if (r.client_could_not_start || (s.counterexample && s.counterexample->client_never_started)) {
    c.outcome = Outcome::kIncomplete;
    c.reason = absl::StrCat("the client never subscribed and sent a Flow: could not start",
                            s.counterexample && s.counterexample->client_failure
                                ? absl::StrCat(" (", *s.counterexample->client_failure, ")")
                                : "");
    if (s.counterexample) c.client_failure = s.counterexample->client_failure.value_or("");
    return;
  }
  if (s.deadline_reached) {
    c.outcome = Outcome::kIncomplete;
    c.reason = s.runs == 0 ? "not run: the matrix's --deadline came first"
                           : "not finished: the matrix's --deadline came before its last run";
    return;
  }
  // The scenario's own verdict (spec::Outcome, decided by conform), never guessed from text.
  c.outcome = s.outcome();
  switch (c.outcome) {
    case Outcome::kNotApplicable:
      c.reason = absl::StrCat("not applicable: ", distinct_join(s.cannot_open));
      return;
    case Outcome::kIncomplete:
      c.reason = absl::StrCat("no run opened the scenario's window: ", distinct_join(s.not_opened));
      return;
    case Outcome::kFail:  // conform fails a scenario only with a counterexample, handled above
    case Outcome::kPass:
      break;
  }
  c.reason = absl::StrCat(spec::count_noun(s.cases_passed, "case"), " passed");
}

namespace {

// The cells of a real broker: the installed standalone started once (advertising the tap's
// port), each cell's paired real-broker scenario run through the tap, the broker stopped.
void run_real_cells([[maybe_unused]] const MatrixPlan& plan,
                    [[maybe_unused]] const MatrixSettings& settings,
                    const std::vector<CellKey>& cells, const std::vector<std::size_t>& which,
                    std::vector<Cell>& results, [[maybe_unused]] const fs::path& out,
                    [[maybe_unused]] Clock::time_point until, const std::function<void()>& done) {
  if (which.empty()) return;
  std::string cannot = "not built with the real broker (realbroker/)";
#ifdef PERMITCHECK_HAVE_REALBROKER
  std::unique_ptr<realbroker::StandaloneBroker> broker;
  absl::StatusOr<std::uint16_t> tap_port = realbroker::free_loopback_port();
  if (!tap_port.ok()) {
    cannot = absl::StrCat("the real broker's tap: ", tap_port.status().message());
  } else {
    broker = std::make_unique<realbroker::StandaloneBroker>(realbroker::StandaloneOptions{
        .root = settings.root, .advertised = absl::StrCat("127.0.0.1:", *tap_port)});
    if (absl::Status st = broker->start(std::chrono::seconds(180)); !st.ok()) {
      cannot = absl::StrCat("the Pulsar standalone did not start: ", st.message());
      broker.reset();
    }
  }
  if (broker) {
    realbroker::StandaloneControl control(broker.get());
    // A restarted broker's own loopback connections may take the tap's port as their local
    // port (it is free between cells): the cells that restart it run last.
    std::vector<std::size_t> order = which;
    std::stable_partition(order.begin(), order.end(), [&](std::size_t i) {
      const realbroker::FidelityPair* p = realbroker::find_pair_by_conformance(cells[i].scenario);
      const realbroker::ScenarioInfo* info =
          p ? realbroker::find_real_broker_scenario(p->real_broker) : nullptr;
      return info == nullptr || !info->needs_restart;
    });
    for (std::size_t i : order) {
      Cell& c = results[i];
      c.key = cells[i];
      c.capture_note = "the tap wrote no capture of this run";
      const MatrixPlan::Row* row = plan_row(plan, c.key);
      const realbroker::FidelityPair* pair = realbroker::find_pair_by_conformance(c.key.scenario);
      if (row == nullptr || pair == nullptr) {
        c.outcome = Outcome::kIncomplete;
        c.reason = "not in this plan";
      } else if (until - Clock::now() < std::chrono::seconds(1)) {
        c.outcome = Outcome::kIncomplete;
        c.reason = "not run: the matrix's --deadline came first";
      } else {
        const fs::path dir = out / "cells" / c.key.id();
        std::error_code ec;
        fs::remove_all(dir, ec);
        fs::create_directories(dir, ec);
        const realbroker::RealBrokerOutcome o = realbroker::run_on_real_broker(
            control,
            realbroker::RealBrokerRun{
                .client_command = row->command,
                .client_name = absl::StrCat(row->client, "@", row->version),
                .q = settings.q,
                .t = row->threshold,
                .scenario = std::string(pair->real_broker),
                .tap_port = *tap_port,
                .timeout = std::chrono::milliseconds(
                    static_cast<std::int64_t>(settings.real_broker_timeout_s * 1000)),
                .trace_path = (dir / "trace.jsonl").string(),
                .pcap_path = (dir / "capture.pcap").string(),
                .log_dir = dir.string(),
                .keep_client_log = true});
        fill_from_real_broker(c, o);
        keep_cell_files(c, dir, out);
      }
      done();
    }
    broker->stop();
    return;
  }
#endif
  for (std::size_t i : which) {
    Cell& c = results[i];
    c.key = cells[i];
    c.outcome = Outcome::kIncomplete;
    c.reason = cannot;
    done();
  }
}

}  // namespace

#ifdef PERMITCHECK_HAVE_REALBROKER
void fill_from_real_broker(Cell& c, const realbroker::RealBrokerOutcome& o) {
  c.outcome = matrix::parse_outcome(o.verdict).value_or(Outcome::kIncomplete);
  std::set<std::string> rules(o.rules.begin(), o.rules.end());
  c.rules.assign(rules.begin(), rules.end());
  for (const std::string& f : o.findings) {
    const std::size_t colon = f.find(':');
    c.findings.push_back({colon == std::string::npos ? "" : f.substr(0, colon), 0,
                          colon == std::string::npos ? f : f.substr(colon + 2)});
  }
  for (const realbroker::StatsComparison& s : o.comparisons) {
    c.windows.push_back(absl::StrCat("stats ", s.when, ": availablePermits ", s.broker_available,
                                     " (wire ", s.wire_available, "), unackedMessages ",
                                     s.broker_unacked, s.matches() ? ", match" : ", MISMATCH"));
  }
  c.seconds = o.seconds;
  c.runs = 1;
  c.cases_passed = c.outcome == Outcome::kPass ? 1 : 0;
  c.reason = !o.findings.empty() ? o.findings.front()
             : !o.notes.empty()  ? o.notes.front()
                                 : absl::StrCat("published ", o.published, " messages; ", o.messages,
                                                " MESSAGE commands, ", o.acks,
                                                " acks through the tap; the stats matched the wire");
}
#else
void fill_from_real_broker(Cell& c, const realbroker::RealBrokerOutcome&) {
  c.outcome = Outcome::kIncomplete;
  c.reason = "not built with the real broker (realbroker/)";
}
#endif

void keep_cell_files(Cell& c, const fs::path& dir, const fs::path& out) {
  std::error_code ec;
  const auto relative = [&](const fs::path& p) {
    return fs::relative(p, out, ec).generic_string();
  };
  if (c.trace.empty() && fs::is_regular_file(dir / "trace.jsonl", ec)) {
    c.trace_file = relative(dir / "trace.jsonl");
  }
  if (fs::is_regular_file(dir / "capture.pcap", ec)) {
    c.capture = relative(dir / "capture.pcap");
    c.capture_note.clear();
  }
  std::vector<std::string> logs;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".log") logs.push_back(relative(e.path()));
  }
  std::sort(logs.begin(), logs.end());
  for (std::string& l : logs) {
    if (std::find(c.logs.begin(), c.logs.end(), l) == c.logs.end()) c.logs.push_back(std::move(l));
  }
}

absl::Status preset_installed(std::string_view name, std::string_view version, bool is_default,
                              std::string_view root) {
  const fs::path run = fs::path(std::string(root)) / "clients" / std::string(name) / "run";
  std::error_code ec;
  if (!fs::exists(run, ec)) {
    return absl::NotFoundError(absl::StrCat("no run script ", run.string()));
  }
  // The run script's own check, the one a client run makes first: exit 0 when what it starts
  // is there, else its message. Single-quoted for the shell ('\'' for a quote in the path).
  std::string quoted = "'";
  for (char ch : run.string()) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  quoted += "'";
  std::string command = "PERMITCHECK_CHECK_INSTALLED=1 ";
  if (!is_default) {
    absl::StrAppend(&command, "PERMITCHECK_CLIENT_VERSION='", std::string(version), "' ");
  }
  absl::StrAppend(&command, quoted, " </dev/null 2>&1");
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return absl::InternalError(absl::StrCat("cannot run ", run.string()));
  std::string said;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) said += buf;
  const int status = ::pclose(p);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  return absl::NotFoundError(said.empty() ? absl::StrCat(run.string(), " failed its check") : said);
}

namespace {

bool has_real_broker_pair([[maybe_unused]] const std::string& scenario) {
#ifdef PERMITCHECK_HAVE_REALBROKER
  return realbroker::find_pair_by_conformance(scenario) != nullptr;
#else
  return false;
#endif
}

bool real_broker_installed([[maybe_unused]] const std::string& root) {
#ifdef PERMITCHECK_HAVE_REALBROKER
  return realbroker::installed_classpath(root).ok();
#else
  return false;
#endif
}

}  // namespace

std::string pulsar_broker_name([[maybe_unused]] std::string_view root) {
#ifdef PERMITCHECK_HAVE_REALBROKER
  const std::string v = realbroker::installed_version(std::string(root));
  return v.empty() ? "" : absl::StrCat("pulsar-", v);
#else
  return "";
#endif
}

absl::StatusOr<MatrixPlan> plan_matrix(const MatrixSettings& settings) {
  MatrixPlan plan;
  matrix::Matrix& m = plan.matrix;
  const std::string pulsar = pulsar_broker_name(settings.root);
  std::vector<std::string> brokers;
  for (const std::string& b : settings.brokers.empty()
                                  ? std::vector<std::string>{std::string(kConformanceBroker)}
                                  : settings.brokers) {
    if (b != kConformanceBroker && (pulsar.empty() || b != pulsar)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown broker \"", b, "\" (known: ", std::string(kConformanceBroker),
          pulsar.empty() ? "" : absl::StrCat(", ", pulsar), ")"));
    }
    if (std::find(brokers.begin(), brokers.end(), b) != brokers.end()) continue;
    if (b != kConformanceBroker && !real_broker_installed(settings.root)) {
      m.notes.push_back(absl::StrCat("not installed, not run: broker ", b,
                                     " (run ci/install-pulsar-broker.sh)"));
      continue;
    }
    brokers.push_back(b);
  }
  for (const conformance::ScenarioInfo& s : conformance::all_scenarios()) {
    const bool wanted = settings.scenarios.empty() ||
                        std::find(settings.scenarios.begin(), settings.scenarios.end(), s.name) !=
                            settings.scenarios.end();
    if (wanted) {
      m.scenarios.push_back({std::string(s.name), std::string(spec::rule_name(s.primary)),
                             std::string(s.summary)});
    }
  }
  for (const std::string& name : settings.scenarios) {
    if (!conformance::parse_scenario(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown scenario \"", name, "\" (permitcheck conform --list names them)"));
    }
  }
  const auto& presets = conformance::all_client_presets();
  for (const std::string& name : settings.clients) {
    if (std::none_of(presets.begin(), presets.end(),
                     [&](const conformance::ClientPreset& p) { return p.name == name; })) {
      std::vector<std::string> names;
      for (const conformance::ClientPreset& p : presets) names.push_back(p.name);
      return absl::InvalidArgumentError(absl::StrCat("unknown client preset \"", name,
                                                     "\" (known: ", absl::StrJoin(names, ", "), ")"));
    }
  }
  for (const conformance::ClientPreset& p : presets) {
    if (!settings.clients.empty() &&
        std::find(settings.clients.begin(), settings.clients.end(), p.name) == settings.clients.end()) {
      continue;
    }
    std::vector<std::string> versions = {p.default_version};
    if (settings.catalogue_releases) {
      versions.insert(versions.end(), p.other_versions.begin(), p.other_versions.end());
    }
    for (const std::string& v : versions) {
      const bool is_default = v == p.default_version;
      if (absl::Status installed = preset_installed(p.name, v, is_default, settings.root);
          !installed.ok()) {
        m.notes.push_back(absl::StrCat("not installed, not run: ", p.name, " ", v, " (", p.library,
                                       "): ", installed.message()));
        continue;
      }
      absl::StatusOr<conformance::ResolvedPreset> r =
          conformance::resolve_preset(absl::StrCat(p.name, "@", v), settings.root);
      if (!r.ok()) return r.status();
      plan.rows.push_back({.client = p.name, .version = v, .command = r->command,
                           .threshold = p.threshold(settings.q),
                           .knows_message_permits = p.knows_message_permits,
                           .startup = p.startup});
      m.clients.push_back({.client = p.name, .version = v, .library = p.library,
                           .knows_message_permits = p.knows_message_permits,
                           .threshold = absl::StrCat("T = ", p.threshold(settings.q), " at Q = ",
                                                     settings.q, " (", p.threshold_source, ")")});
    }
  }
  for (const std::string& broker : brokers) {
    for (const MatrixPlan::Row& row : plan.rows) {
      for (const matrix::ScenarioColumn& s : m.scenarios) {
        if (broker != kConformanceBroker && !has_real_broker_pair(s.name)) continue;
        m.plan.push_back({broker, row.client, row.version, s.name});
      }
    }
  }
  return plan;
}

matrix::Matrix run_matrix(const MatrixPlan& plan, const MatrixSettings& settings,
                          const std::vector<CellKey>& cells, const MatrixProgress& progress) {
  matrix::Matrix m = plan.matrix;
  m.jobs = settings.jobs;
  m.seed = settings.seed;
  m.idle_seconds = settings.idle_s;
  const Clock::time_point t0 = Clock::now();
  const Clock::time_point until =
      t0 + std::chrono::milliseconds(static_cast<std::int64_t>(settings.deadline_s * 1000));
  const fs::path out = fs::absolute(settings.out_dir);
  std::vector<Cell> results(cells.size());
  std::atomic<std::size_t> next{0};
  std::atomic<int> done{0};
  std::mutex mu;
  const auto report = [&] {
    if (!progress) return;
    std::lock_guard<std::mutex> lock(mu);
    progress(done.load(), static_cast<int>(cells.size()),
             std::chrono::duration<double>(Clock::now() - t0).count());
  };
  std::vector<std::size_t> conformance_cells, real_cells;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    (cells[i].broker == kConformanceBroker ? conformance_cells : real_cells).push_back(i);
  }
  auto worker = [&] {
    for (std::size_t k = next++; k < conformance_cells.size(); k = next++) {
      const std::size_t i = conformance_cells[k];
      Cell& c = results[i];
      c.key = cells[i];
      c.capture_note =
          "conform writes no pcap of its runs; trace.jsonl is the broker's record of the wire "
          "(permitcheck tap --pcap in front of a broker writes one)";
      const MatrixPlan::Row* row = plan_row(plan, c.key);
      const std::optional<conformance::ScenarioKind> kind = conformance::parse_scenario(c.key.scenario);
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      if (row == nullptr || !kind) {
        c.outcome = Outcome::kIncomplete;
        c.reason = "not in this plan";
      } else if (left.count() < 1000) {
        c.outcome = Outcome::kIncomplete;
        c.reason = "not run: the matrix's --deadline came first";
      } else {
        const fs::path dir = out / "cells" / c.key.id();
        std::error_code ec;
        fs::remove_all(dir, ec);
        fs::create_directories(dir, ec);
        conformance::ConformOptions o;
        o.client.command = row->command;
        o.client.q = settings.q;
        o.client.t = row->threshold;
        o.client.knows_message_permits = row->knows_message_permits;
        o.client.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(settings.timeout_s * 1000));
        o.client.idle = std::chrono::milliseconds(static_cast<std::int64_t>(settings.idle_s * 1000));
        o.client.startup = std::min(o.client.timeout, row->startup);
        o.client.log_dir = dir.string();
        o.client.keep_log = true;
        o.scenarios = {*kind};
        o.seed = settings.seed;
        o.cases = settings.cases;
        o.max_shrink_runs = settings.max_shrinks;
        o.jobs = 1;
        o.deadline = left;
        const conformance::ConformReport r = conformance::run_conformance(o);
        fill_cell(c, r);
        c.logs = keep_logs(dir, out);
        if (!c.trace.empty()) {
          std::ofstream f(dir / "trace.jsonl", std::ios::binary);
          f << c.trace;
        }
      }
      ++done;
      report();
    }
  };
  report();
  const int jobs = std::clamp<int>(settings.jobs, 1,
                                   std::max<int>(1, static_cast<int>(conformance_cells.size())));
  std::vector<std::thread> threads;
  if (!conformance_cells.empty()) {
    for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
  }
  // The real broker's cells, one at a time beside the pool: one standalone, one tap port.
  run_real_cells(plan, settings, cells, real_cells, results, out, until, [&] {
    ++done;
    report();
  });
  for (std::thread& t : threads) t.join();
  m.cells = std::move(results);
  m.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return m;
}

}  // namespace permitcheck::cli
