// Monitor: the single oracle. It consumes trace events one at a time, keeps the state of every
// connection, incarnation, command and message, and reports each violation of the ruleset as
// {rule ID, line, explanation with the numbers}; known deviations (X1-X7) are kept apart.
//
// Which rules apply depends on the events present (trace-format.md, "What validate checks"):
// wire events give W2, B2/B7, N4, B12, the per-incarnation over-grant bound and E5/E6 (and
// B13, when the recorder states the backlog) at `quiescent`; client accounting events give the
// exact per-command and per-incarnation checks; broker accounting events give B1-B12 and E4.
// Work per event is constant (amortized, and linear in the event's own size: ack_set words,
// send entries). Every sum saturates instead of wrapping. Streaming (retain_ledger = false)
// and whole-trace mode give the same findings: see MonitorSize for what is kept.
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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  // Keep a ledger entry for every command (tests, reports). Off, only the commands in flight
  // have one, and ended client permit states are compacted. Either way the verdict is the
  // same: the checks never read the retained ledgers, and a compacted state keeps what they read.
  bool retain_ledger = true;
  // The broker's sends are not in the trace and one send may write several MESSAGE frames
  // (a real broker seen through a tap: Pulsar writes every entry of a dispatch in one go). A
  // MESSAGE at available <= 0 that follows, with no other broker frame on its connection in
  // between, MESSAGEs to the same consumer the first of which was sent at available > 0 may
  // be a frame of that send (B9): B12 cannot be decided for it from the wire, and it is
  // reported as known deviation X7 with the overdraft. A run of frames that began at
  // available <= 0 is B12 as before. Off: every wire-only MESSAGE is judged as its own send.
  bool sends_span_frames = false;
};

// What the monitor holds now, for a caller that bounds its memory (validate --max-memory).
//
// Memory is bounded by what is in flight, plus what a finished client command and its
// messages leave, kept so that a reused id is seen in streaming mode too (K1, K2, K5, M3, E2):
// runs of consecutive finished ids whose values are alike or rise by one per id
// (spec/internal/id_runs.h), so commands and messages finishing in increasing id order cost
// almost nothing each (one run per command's messages: about 30 bytes per command in
// validate_bench's trace), and an id alone in its run about 32 bytes (48 for a message); each
// distinct finished-command record (P, returns, path; a numbered permit state is in runs
// beside it) is kept once, about 250 bytes; text ids cost a hash entry and their text.
// Wire-only commands are released when acknowledged or when their incarnation ends; wire
// incarnations when closed, refused or disconnected. An ended client permit state, in
// streaming mode and once no command in flight points to it, leaves only what a later event
// naming it is judged by, in runs too: nothing per state when states end alike, numbered in
// order, about 60 bytes alone in its runs (whole-trace mode keeps it whole, about 330 bytes).
// Measured peaks: docs/cli.md, "Memory of validate".
struct MonitorSize {
  std::size_t commands = 0;           // in flight (wire, broker or client)
  std::size_t finished_commands = 0;  // compact records of finished client commands
  std::size_t messages = 0;           // handed-off messages, returned ones included
  std::size_t incarnations = 0;       // client permit states, ended ones included
  std::size_t wire_consumers = 0;     // (connection, consumer) pairs on a live connection
  std::size_t connections = 0;        // live connections with wire or client state
  std::size_t ledgers = 0;            // retained ledgers of released commands (retain_ledger)
  std::size_t findings = 0;           // violations and deviations reported
  std::size_t bytes = 0;              // estimated heap bytes of all of the above

  // The part holding the most bytes: "commands in flight", "finished commands", "messages",
  // "incarnations", "wire consumers", "connections", "ledgers" or "findings".
  std::string_view largest() const;
  std::size_t part_bytes[8] = {};     // bytes per part, in the order above
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

  // What the monitor holds now: linear in the wire consumers and connections, constant in
  // the commands, messages and permit states.
  MonitorSize size() const;

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
