// One scenario run's lifecycle around the driver (scenario_run.cc): its own broker and client
// process, the driver's windows, the client stopped, the trace judged (scenario_judge.cc); a
// client that never started is started again, fresh, up to ClientSpec::start_attempts.
#include <unistd.h>

#include <atomic>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "conformance/internal/process.h"
#include "conformance/internal/scenario_driver.h"
#include "conformance/internal/scenario_judge.h"
#include "conformance/scenario.h"
#include "spec/client_exit.h"
#include "spec/scenario_facts.h"

namespace permitcheck::conformance {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::string expand_command(const ClientSpec& client, const ScenarioParams& params,
                           const std::string& url) {
  return absl::StrReplaceAll(
      client.command, {{"{url}", url},
                       {"{topic}", "persistent://public/default/permitcheck"},
                       {"{subscription}", "permitcheck-sub"},
                       {"{q}", absl::StrCat(client.told_q.value_or(client.q))},
                       {"{delay_ms}", absl::StrCat(params.delay_ms)},
                       {"{nack_every}", absl::StrCat(params.nack_every)}});
}

namespace {

// One attempt: its own broker and client process, from start to judged trace.
ScenarioOutcome attempt_scenario(const ClientSpec& client, const ScenarioParams& params) {
  const auto start = Clock::now();
  ScenarioOutcome out;
  out.params = params;
  out.header = spec::TraceHeader{.source = spec::TraceSource::kBroker,
                                 .ruleset = spec::RulesetId::kRevD,
                                 .q = client.q,
                                 .t = client.t};
  const ScenarioInfo& info = scenario_info(params.kind);

  ConformanceBroker broker(BrokerOptions{.send_message_permits = params.send_field,
                                         .topic_hint = {},
                                         .advertised_url = client.advertised_url});
  if (absl::Status s = broker.start(); !s.ok()) {
    out.client_failure = absl::StrCat("broker could not start: ", s.message());
    out.client_never_started = true;
    return out;
  }
  static std::atomic<int> run_counter{0};
  const std::string log_path = absl::StrCat(client.log_dir, "/permitcheck-conform-", ::getpid(),
                                            "-", run_counter++, ".log");
  internal::ClientProcess proc;
  proc.keep_log(client.keep_log);
  if (absl::Status s = proc.start(expand_command(client, params, broker.url()), log_path);
      !s.ok()) {
    out.client_failure = absl::StrCat("client could not start: ", s.message());
    out.client_never_started = true;
    return out;
  }

  if (!internal::drive_scenario(client, params, broker, proc, out)) {
    out.client_never_started = true;
    out.client_failure =
        absl::StrCat("hang or start failure: no Subscribe and Flow within ",
                     client.startup.count(), " ms (",
                     proc.exit_description().value_or("still running"), ")");
  } else {
    const BrokerView v = broker.view();
    out.incarnations = v.subscribes;
    if (!v.subscribed && !proc.crashed()) {
      if (const std::optional<std::string> ended = proc.exit_description()) {
        // The client exited on its own (status 0) and took its consumer with it: the same fact
        // as a crash (spec/client_exit.h), so the saved trace reproduces the finding.
        broker.record_extension(spec::client_exit_event({.rule = info.primary,
                                                         .scenario = std::string(info.name),
                                                         .granted = v.granted,
                                                         .debited = v.debited,
                                                         .how = *ended}));
      } else {
        // Still running, its consumer or connection closed: a fact the wire does not state
        // (spec/scenario_facts.h), judged by the monitor at its line.
        broker.record_extension(spec::no_consumer_event(
            {.rule = info.primary, .scenario = std::string(info.name)}));
      }
    }
    // What the broker could not read (recorded here, after the scenario: the broker keeps the
    // reasons, not their place in the trace).
    for (const std::string& e : v.protocol_errors) {
      broker.record_extension(spec::malformed_frame_event(
          {.rule = info.primary, .scenario = std::string(info.name), .error = e}));
    }
  }
  const bool crashed = proc.crashed();
  const std::optional<std::string> exit = proc.exit_description();
  if (crashed) {
    const BrokerView v = broker.view();
    out.granted = v.granted;
    out.debited = v.debited;
    out.incarnations = v.subscribes;
    // What conform saw and the wire does not show, as a fact in the trace: the monitor reports
    // it there (spec/client_exit.h), so the saved trace reproduces the finding at its line.
    if (!out.client_never_started) {
      broker.record_extension(spec::client_exit_event(
          {.rule = info.primary,
           .scenario = std::string(info.name),
           .granted = out.granted,
           .debited = out.debited,
           .how = out.client_failure.value_or(absl::StrCat("crashed: ", exit.value_or("ended")))}));
    }
  }
  proc.stop(milliseconds(500));
  broker.stop();
  out.client_log_tail = proc.log_tail(2000);
  out.events = broker.trace();
  if (crashed && !out.client_failure) {
    out.client_failure = absl::StrCat("crashed: ", exit.value_or("ended"));
  }
  // A client whose first Flow is not the Q it is judged against would be judged on numbers
  // measured against the wrong Q (an over-grant of Q - 10 for a client of Q = 1000 judged at
  // 10): not judged, reported as the mismatch it is (issue 33).
  out.flows_seen = spec::flow_settings_seen(out.events);
  out.settings_mismatch = spec::q_mismatch(out.flows_seen, client.q);
  if (!out.settings_mismatch) internal::judge(client, out);
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace

ScenarioOutcome run_scenario(const ClientSpec& client, const ScenarioParams& params) {
  const auto start = Clock::now();
  std::vector<std::string> failed_starts;
  for (int attempt = 1;; ++attempt) {
    ScenarioOutcome out = attempt_scenario(client, params);
    // A client that never sent a Subscribe and a Flow is started again, fresh broker and
    // process (a slow start on a busy machine must not become the verdict); the attempts
    // before are reported with the run, and a client that never starts stays a failure.
    if (out.client_never_started && attempt < client.start_attempts) {
      failed_starts.push_back(absl::StrCat("attempt ", attempt, ": ",
                                           out.client_failure.value_or("never started")));
      continue;
    }
    out.failed_starts = std::move(failed_starts);
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return out;
  }
}

}  // namespace permitcheck::conformance
