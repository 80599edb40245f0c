// One client x scenario on a real Pulsar broker: the messages published by BatchProducer, the
// client's consumer command run through a tap (capture::Tap) in front of the broker, the wire
// judged live as an old broker's (no message_permits), the broker's stats compared with the
// wire at each settle point (balance.h), everything stopped at the end. The function
// `run_on_real_broker` is what `permitcheck real-broker` and a matrix call.
//
//   RealBrokerSession session(broker_control, tap_port);
//   RealBrokerOutcome o = run_on_real_broker(session, RealBrokerRun{
//       .client_command = "clients/go/run {url} {topic} {subscription} {q}",
//       .q = 10, .t = 5, .scenario = "partial_redelivery"});
//   o.verdict;  // "PASS", "FAIL" or "INCOMPLETE"; o.rules: {"C1", "B4"}; o.comparisons
//
// Guarantees: returns within run.timeout plus the broker's restart time (restart scenario)
// plus a few seconds of stopping; the client's process group and the tap are stopped on every
// path; a run that could not exercise the scenario is INCOMPLETE with the reason, never PASS.
#ifndef PERMITCHECK_REALBROKER_RUN_H_
#define PERMITCHECK_REALBROKER_RUN_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "realbroker/balance.h"
#include "realbroker/standalone.h"

namespace permitcheck::realbroker {

// The scenarios, in the order they run.
struct ScenarioInfo {
  std::string name;
  std::string what;  // one line for --help and the report
  std::string sub_type = "Shared";  // the {sub_type} placeholder's value
  int nack_every = 0;                // the {nack_every} placeholder's value
  bool needs_restart = false;        // needs a broker this process started
  // The client's batch-index acknowledgement on: PERMITCHECK_BATCH_INDEX_ACK=1 in the client's
  // environment and the {batch_index_ack} placeholder 1 (else 0, and nothing exported).
  bool batch_index_ack = false;
  // Close the consumer after this many messages and subscribe again on the same client:
  // PERMITCHECK_REOPEN_AFTER=N and the {reopen_after} placeholder (0: never, nothing exported).
  int reopen_after = 0;
};
const std::vector<ScenarioInfo>& real_broker_scenarios();
const ScenarioInfo* find_real_broker_scenario(std::string_view name);

// `command` with the scenario's client inputs: the placeholders {sub_type}, {batch_index_ack},
// {reopen_after} replaced and, only when the scenario needs them, PERMITCHECK_BATCH_INDEX_ACK=1
// and PERMITCHECK_REOPEN_AFTER=N exported before it (the other placeholders are left).
std::string with_client_inputs(const std::string& command, const ScenarioInfo& info);

// The broker a run talks to: the standalone started here, or the user's own (no restart).
class BrokerControl {
 public:
  virtual ~BrokerControl() = default;
  virtual BrokerEndpoint endpoint() const = 0;
  // Unimplemented for a broker this process did not start.
  virtual absl::Status restart() = 0;
};

class StandaloneControl : public BrokerControl {
 public:
  explicit StandaloneControl(StandaloneBroker* broker,
                             std::chrono::milliseconds timeout = std::chrono::seconds(120))
      : broker_(broker), timeout_(timeout) {}
  BrokerEndpoint endpoint() const override { return broker_->endpoint(); }
  absl::Status restart() override { return broker_->restart(timeout_); }

 private:
  StandaloneBroker* broker_;
  std::chrono::milliseconds timeout_;
};

class OwnBrokerControl : public BrokerControl {
 public:
  explicit OwnBrokerControl(BrokerEndpoint endpoint) : endpoint_(std::move(endpoint)) {}
  BrokerEndpoint endpoint() const override { return endpoint_; }
  absl::Status restart() override {
    return absl::UnimplementedError("a user's own broker is not restarted by permitcheck");
  }

 private:
  BrokerEndpoint endpoint_;
};

struct RealBrokerRun {
  // Shell command with {url} {topic} {subscription} {q} {delay_ms} {nack_every} {sub_type}
  // {batch_index_ack} {reopen_after}; the scenario's non-default inputs are also exported to
  // it (PERMITCHECK_BATCH_INDEX_ACK, PERMITCHECK_REOPEN_AFTER; ScenarioInfo).
  std::string client_command;
  std::string client_name;  // for the report ("cpp@3.13.0", or the command)
  std::int64_t q = 10;
  std::optional<std::int64_t> t;  // the client's Flow threshold, when known
  std::string scenario = "batches";
  std::uint16_t tap_port = 0;  // the port the broker advertises (0: any free one)
  std::chrono::milliseconds timeout{60000};
  std::string trace_path, pcap_path;  // the tap's, when not empty
  std::string log_dir = "/tmp";      // the client's log (removed unless keep_client_log)
  bool keep_client_log = false;
  int batch_size = 10, entries = 6;
};

struct RealBrokerOutcome {
  std::string scenario, client;
  std::string verdict = "INCOMPLETE";  // PASS, FAIL, INCOMPLETE
  std::vector<std::string> rules;      // the distinct rule IDs of the findings, in order
  std::vector<std::string> findings;   // "C1: ..." (wire) and "B4: ..." (stats), as found
  std::vector<std::string> notes;      // why INCOMPLETE, bypassed lookups, client failures
  // Known deviations (docs/rules.md, X): reported apart, never a failure. On a real broker:
  // X7, frames that may continue a multi-entry send that began positive (B12 undecided).
  std::vector<std::string> deviations;
  std::vector<StatsComparison> comparisons;
  std::int64_t published = 0;  // messages
  std::uint64_t consumers = 0, flows = 0, messages = 0, acks = 0;  // what the tap checked
  std::int64_t peak_available = 0;  // the largest wire balance after a Flow
  std::int64_t broker_peak_available = 0;  // the largest availablePermits the stats showed
  std::int64_t q = 0;                      // the receiver queue size the client was given
  // A consumer's availablePermits above Q in the broker's own stats: the broker was granted
  // more than the client's queue holds (the stats' face of an over-return, E2/E5 on the wire).
  bool broker_above_q() const { return broker_peak_available > q; }
  std::string sub_type;                    // the subscription type the stats reported
  std::string client_log_tail;
  double seconds = 0;
};

RealBrokerOutcome run_on_real_broker(BrokerControl& broker, const RealBrokerRun& run);

}  // namespace permitcheck::realbroker

#endif  // PERMITCHECK_REALBROKER_RUN_H_
