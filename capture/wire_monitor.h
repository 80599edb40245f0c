// WireMonitor: the Monitor run live on a derived wire trace. Each event is checked as it
// arrives (constant memory: the monitor keeps no ledger); each finding is annotated with the
// connection (client address:port > broker address:port) and the capture time of the event
// that exposed it, and reported at once. Optionally writes the trace (trace-format.md), so
// `render` and `replay` work on what the wire showed.
//
//   WireMonitor checker(header, &trace_file, [](const WireFinding& f) { print(f); });
//   WireTraceBuilder builder(options, checker.sink());
//   read_capture_file(path, &builder);
//   checker.finish();
//   bool passed = checker.violations().empty();
#ifndef PERMITCHECK_CAPTURE_WIRE_MONITOR_H_
#define PERMITCHECK_CAPTURE_WIRE_MONITOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "capture/wire_trace.h"
#include "spec/events.h"
#include "spec/monitor.h"
#include "spec/outcome.h"

namespace permitcheck::capture {

// A finding with where and when on the wire.
struct WireFinding {
  spec::Finding finding;  // explanation already names the connection and the time
  std::string connection;
  double time = 0;
  bool deviation = false;
};

// A connection given up on, and why.
struct NotUnderstood {
  std::string connection;
  double time = 0;
  std::string reason;
};

// "2026-12-01T21:14:19.123456Z".
std::string format_capture_time(double seconds_since_epoch);

class WireMonitor {
 public:
  // `trace_out`, when not null, receives the header and every event (one per line).
  // `on_finding`, when set, is called for every finding as it is found. `sends_span_frames`:
  // the broker may write one send as several MESSAGE frames (spec::MonitorOptions).
  WireMonitor(const spec::TraceHeader& header, std::ostream* trace_out,
              std::function<void(const WireFinding&)> on_finding = {},
              std::function<void(const NotUnderstood&)> on_not_understood = {},
              bool sends_span_frames = false);

  ~WireMonitor();

  // From now on, the events given to sink() are checked on a thread of this checker's, in
  // batches (at most two waiting: memory stays constant), so decoding and checking overlap;
  // finish() waits for it. Callbacks then run on that thread. Call before sink().
  void check_on_own_thread();

  // Hooks for a WireTraceBuilder. REQUIRES: this checker outlives the builder.
  WireSink sink();

  void on_event(const std::string& connection, const TimedEvent& event);
  void on_not_understood(const std::string& connection, double time, const std::string& reason);
  // End of the trace (Monitor::finish); findings it makes are reported too.
  void finish();

  const std::vector<spec::Finding>& violations() const { return violations_; }
  const std::vector<spec::Finding>& deviations() const { return deviations_; }
  const std::vector<NotUnderstood>& not_understood() const { return not_understood_; }
  std::uint64_t events() const { return events_; }
  std::uint64_t quiescent() const { return quiescent_; }
  std::uint64_t sized_messages() const { return sized_messages_; }
  // What was checked, by kind: consumers subscribed (subscribe_ok), flows, messages, acks.
  std::uint64_t consumers() const { return consumers_; }
  std::uint64_t flows() const { return flows_; }
  std::uint64_t messages() const { return messages_; }
  std::uint64_t acks() const { return acks_; }
  std::uint64_t last_line() const { return events_ + 1; }
  const spec::TraceHeader& header() const { return header_; }

 private:
  struct Worker;
  void collect(const std::string& connection, double time);

  spec::TraceHeader header_;
  spec::Monitor monitor_;
  std::ostream* trace_out_;
  std::function<void(const WireFinding&)> on_finding_;
  std::function<void(const NotUnderstood&)> on_not_understood_;
  std::vector<spec::Finding> violations_, deviations_;
  std::vector<NotUnderstood> not_understood_;
  std::size_t seen_violations_ = 0, seen_deviations_ = 0;
  std::uint64_t events_ = 0, quiescent_ = 0, sized_messages_ = 0;
  std::uint64_t consumers_ = 0, flows_ = 0, messages_ = 0, acks_ = 0;
  std::string line_;
  std::unique_ptr<Worker> worker_;
};

// What a finished checker's run comes to (spec/outcome.h), for the tap: FAIL on a violation;
// else INCOMPLETE when a connection was not understood to its end (a gap, the checker falling
// behind, a full table, the memory limit); else PASS when a consumer was checked; else
// NOT-APPLICABLE (nothing checked: no consumer subscribed).
spec::Outcome checked_outcome(const WireMonitor& checker);

}  // namespace permitcheck::capture

#endif  // PERMITCHECK_CAPTURE_WIRE_MONITOR_H_
