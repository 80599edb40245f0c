// Monitor: the single oracle. It consumes trace events one at a time, keeps the state of every
// connection, incarnation, command and message, and reports each violation of the ruleset as
// {rule ID, line, explanation with the numbers}; known deviations (X1-X6) are kept apart.
//
// Which rules apply depends on the events present (trace-format.md, "What validate checks"):
// wire events give W2, B2/B7, N4, the per-incarnation over-grant bound and E5/E6 at
// `quiescent`; client accounting events give the exact per-command and per-incarnation checks;
// broker accounting events give B1-B8 and E4. Work per event is constant (amortized, and
// linear in the event's own size: ack_set words, send entries).
//
//   Monitor m(TraceHeader{.source = TraceSource::kClient, .q = 4, .t = 2});
//   for (std::size_t i = 0; i < events.size(); ++i) m.on_event(events[i], i + 2);
//   m.finish();
//   for (const Finding& f : m.violations()) std::cout << format_finding(f) << "\n";
//
// The checks compare what the trace shows with what the header's ruleset prescribes at each
// decision point, so a legacy trace passes the legacy ruleset (and its ledger shows the legacy
// numbers) while the same trace checked against rev-d reports the rule it breaks.
#ifndef PERMITCHECK_SPEC_MONITOR_H_
#define PERMITCHECK_SPEC_MONITOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/events.h"
#include "spec/rule_id.h"

namespace permitcheck::spec {

// One violation or known deviation.
struct Finding {
  RuleId rule;
  std::uint64_t line = 0;    // line (or event index) of the event that exposed it
  std::string explanation;   // "command 7 returned 9 permits but its P is 8 (over-return by 1)"
};

// "line 14: E2 command 7 returned 9 ..." (trace-format.md, Verdicts).
std::string format_finding(const Finding& finding);

// The accounting of one command, as the monitor saw it.
struct CommandLedger {
  Id cmd;
  std::optional<Id> inc;               // client incarnation it arrived on
  std::optional<std::int64_t> p;       // debited P: broker/wire value, else the client's
  std::int64_t claimed = 0;            // hand-offs net of restores
  std::int64_t returned = 0;           // credited: direct + settle + message returns
  std::int64_t dropped = 0;            // dropped because the incarnation had ended
  bool settled = false;                // terminal transition seen (K5)
};

struct MonitorOptions {
  // Keep a ledger entry for every command (tests, reports). Off, a finished command's state
  // is released, so memory stays bounded by what is in flight.
  bool retain_ledger = true;
};

class Monitor {
 public:
  explicit Monitor(const TraceHeader& header, MonitorOptions options = {});
  ~Monitor();
  Monitor(Monitor&&) noexcept;
  Monitor& operator=(Monitor&&) noexcept;

  // Checks one event. `line` is reported in findings (1-based line of the trace file).
  void on_event(const Event& event, std::uint64_t line);

  // End of trace: checks that need the whole trace (E1 for finished commands still current,
  // X3/X4 holds). Call once, after the last event.
  void finish();

  const std::vector<Finding>& violations() const;
  const std::vector<Finding>& deviations() const;

  // The ledger of command `cmd`, if seen (and retained).
  std::optional<CommandLedger> ledger(const Id& cmd) const;

  const Ruleset& rules() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Runs a whole trace through a fresh monitor; lines are numbered as in a file whose line 1 is
// the header (event i is on line i + 2).
struct MonitorReport {
  std::vector<Finding> violations;
  std::vector<Finding> deviations;
};
MonitorReport check_trace(const TraceHeader& header, const std::vector<Event>& events);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_MONITOR_H_
