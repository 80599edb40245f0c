// The conformance broker's fidelity to Pulsar, measured: each real-broker scenario paired with
// the conformance scenario that exercises the same thing, the same client run through both
// (the conformance run given the real broker's workload: an old broker, entries of 10-message
// batches), and the two verdicts and rule sets compared. Each difference is either one of
// known_differences() (fixed in the conformance broker, or a deliberate simplification, with
// the reason) or unexplained, which fails the comparison.
//
//   FidelityOptions o{.client_command = cmd, .client_name = "go@v0.21.0", .t = 5};
//   std::vector<FidelityRow> rows = run_fidelity(broker_control, o);   // both brokers
//   std::cout << render_fidelity_table(rows);   // markdown; fidelity_holds(rows): no unexplained
//
// Guarantees: run_fidelity runs each pair's two runs one after the other, each bounded by its
// own timeout (run.h's and conformance/scenario.h's guarantees), and leaves no process of its
// own running; the pure parts (pairing, verdicts, comparison, table) do no I/O and are linear
// in the rows.
#ifndef PERMITCHECK_REALBROKER_FIDELITY_H_
#define PERMITCHECK_REALBROKER_FIDELITY_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/scenario.h"
#include "realbroker/run.h"

namespace permitcheck::realbroker {

// A conformance scenario and the real-broker scenario that exercise the same path.
struct FidelityPair {
  std::string_view real_broker;  // "batches" (run.h's real_broker_scenarios())
  std::string_view conformance;  // "complete_batches" (conformance/scenario.h's catalogue)
  std::string_view exercises;    // what both exercise, one line
};
std::span<const FidelityPair> fidelity_pairs();
const FidelityPair* find_fidelity_pair(std::string_view real_broker_scenario);
// The pair whose conformance scenario is `name`, or nullptr.
const FidelityPair* find_pair_by_conformance(std::string_view name);

// The conformance run that mirrors the real-broker run of `pair` (the same client workload):
// an old broker (no message_permits), `entries` entries of `batch_size`-message batches, the
// real scenario's nack_every, the disruption half-way for unload/restart.
conformance::ScenarioParams conformance_params(const FidelityPair& pair, int batch_size = 10,
                                               int entries = 6);

// The client's command for the conformance run of `pair`: the real scenario's client inputs
// (its subscription type, PERMITCHECK_BATCH_INDEX_ACK, PERMITCHECK_REOPEN_AFTER), as the real
// run gives them, so both brokers judge the same client behaviour.
std::string conformance_command(const std::string& client_command, const FidelityPair& pair);

// One broker's verdict on the client: "PASS", "FAIL", "INCOMPLETE" or "NOT-APPLICABLE", the
// sorted distinct rule IDs of its findings, and one line saying why.
struct SideVerdict {
  std::string verdict = "INCOMPLETE";
  std::vector<std::string> rules;
  std::string detail;
  friend bool operator==(const SideVerdict& a, const SideVerdict& b) {
    return a.verdict == b.verdict && a.rules == b.rules;
  }
};
SideVerdict verdict_of(const conformance::ScenarioOutcome& o);
SideVerdict verdict_of(const RealBrokerOutcome& o);

// A difference between the brokers that is understood: resolved in the conformance broker
// (kFixed, pinned by a test) or kept on purpose (kSimplification, with the reason).
struct KnownDifference {
  enum class Resolution { kFixed, kSimplification };
  std::string_view real_broker;  // the pair's real-broker scenario; "" any
  std::string_view client;       // preset name ("go"); "" any
  // Which side gives which verdict when this difference shows ("" any).
  std::string_view conformance_verdict, real_broker_verdict;
  Resolution resolution;
  std::string_view why;
};
std::span<const KnownDifference> known_differences();
// "fixed in the conformance broker: ..." / "deliberate simplification: ..."
std::string explain(const KnownDifference& d);

struct FidelityRow {
  std::string client;  // "go@v0.21.0"
  const FidelityPair* pair = nullptr;
  SideVerdict conformance, real_broker;
  bool same = false;
  const KnownDifference* known = nullptr;  // the difference's explanation, when not same
};

// Compares the two verdicts of `client` (a preset name, optionally @VERSION) on `pair`.
FidelityRow compare_verdicts(std::string client, const FidelityPair& pair,
                             SideVerdict conformance, SideVerdict real_broker);

// Every row is the same or explained by a known difference.
bool fidelity_holds(const std::vector<FidelityRow>& rows);

// The table, markdown: client | scenarios | conformance | real broker | same | difference.
// Two INCOMPLETE verdicts are the same but measure nothing: "no verdict on either".
std::string render_fidelity_table(const std::vector<FidelityRow>& rows);

struct FidelityOptions {
  std::string client_command;  // placeholders as run.h's RealBrokerRun::client_command
  std::string client_name;     // "go@v0.21.0"
  std::int64_t q = 10;
  std::optional<std::int64_t> t;
  bool knows_message_permits = false;
  std::vector<std::string> scenarios;  // real-broker scenario names; empty: every pair
  std::uint16_t tap_port = 0;
  std::chrono::milliseconds real_broker_timeout{60000};
  std::chrono::milliseconds conformance_timeout{30000};
  std::chrono::milliseconds startup{10000};  // the client's, conformance side
  std::string log_dir = "/tmp";
};

using FidelityProgress = std::function<void(std::string_view line)>;

// Runs each pair's real-broker run on `broker` and its conformance run (a conformance broker
// of its own), and compares them. A scenario name without a pair is skipped with a line to
// `progress`.
std::vector<FidelityRow> run_fidelity(BrokerControl& broker, const FidelityOptions& options,
                                      const FidelityProgress& progress = {});

}  // namespace permitcheck::realbroker

#endif  // PERMITCHECK_REALBROKER_FIDELITY_H_
