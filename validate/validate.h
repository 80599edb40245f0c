// validate (the library behind `permitcheck validate`): checks permit traces (trace-format.md) against the specification's Monitor, as a
// stream: memory is bounded by the longest line and what is in flight, never by the length of
// the trace.
//
//   ValidateOptions options;
//   FileResult r = validate_stream(std::cin, "-", options);
//   std::cout << format_validate({r}, ReportFormat::kText);   // report.h
//   return validate_exit_code({r});   // spec/outcome.h: 0 pass, 1 violation, 2 error, 3 incomplete
//
// Which rules a trace is checked against depends on the events it holds (trace-format.md,
// "What validate checks"): FileResult::families records what was present, so the report can
// say which rule families applied.
#ifndef PERMITCHECK_VALIDATE_VALIDATE_H_
#define PERMITCHECK_VALIDATE_VALIDATE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "spec/events.h"
#include "spec/monitor.h"
#include "spec/outcome.h"
#include "spec/ruleset.h"

namespace permitcheck::validate {

// 16 MiB: the longest line `validate` reads by default. The reader itself would take up to
// 128 MiB, but a line that long costs about 1 GiB to parse; --max-line-bytes raises it.
inline constexpr std::size_t kValidateMaxLineBytes = std::size_t{16} << 20;

// 1 GiB: what the monitor may hold by default (its own estimate, spec::MonitorSize::bytes)
// before `validate` stops the file with exit 2, naming what filled it; --max-memory changes it.
// A trace in which everything is acknowledged holds a few MiB whatever its length: the
// limit stops traces whose commands, messages or incarnations are never released.
inline constexpr std::size_t kValidateMaxMemory = std::size_t{1} << 30;

struct ValidateOptions {
  // Check against this ruleset instead of the header's (--ruleset).
  std::optional<spec::RulesetId> ruleset;
  std::size_t max_line_bytes = kValidateMaxLineBytes;
  // Past this many bytes held by the monitor (checked every 1024 events), the file stops
  // with an error naming the largest part; 0 means no limit. Running out of memory anyway
  // (std::bad_alloc) is an error too, never a crash.
  std::size_t max_memory = kValidateMaxMemory;
  // Called every `progress_every` events with (events so far, current line); may be empty.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  std::uint64_t progress_every = std::uint64_t{1} << 20;
  // 2: parse on a second thread while this one checks (same result, higher throughput);
  // 1: everything on the calling thread. Progress is reported from the calling thread.
  int threads = 2;
  // With 2 threads: events handed over at a time (two such blocks are in flight).
  std::size_t block_events = 8192;
};

// Which kinds of events a trace held (trace-format.md's three tables).
struct EventFamilies {
  std::uint64_t wire = 0;       // connect .. quiescent
  std::uint64_t client = 0;     // inc_open .. protocol_error
  std::uint64_t broker = 0;     // send, consumer_removed
  std::uint64_t extension = 0;  // x-...
  std::uint64_t quiescent = 0;  // quiescent points (E5/E6 checked there)
  std::uint64_t sized_messages = 0;  // wire messages with batch_size (B2/B7 checked)
  // Events that open a consumer's incarnation (subscribe, subscribe_ok, inc_open, send): a
  // trace without one checked nothing (docs/cli.md, "Outcomes and exit codes").
  std::uint64_t consumers = 0;
};

// One rule family that applied, for the report: "client accounting" and its rules.
struct AppliedRules {
  std::string family;  // "wire", "client accounting", "broker accounting"
  std::string rules;   // "C1-C7, K1-K8, S1-S7, M1-M3, N1-N7, E1-E3 (exact, per command)"
};

// The verdict on one input.
struct FileResult {
  std::string name;                // as given on the command line ("-" for stdin)
  std::optional<std::string> error;  // "line 7: field ..." when the input could not be read
  std::optional<spec::TraceHeader> header;  // as read (ruleset: the one checked)
  std::uint64_t events = 0;
  std::uint64_t last_line = 0;
  EventFamilies families;
  std::vector<spec::Finding> violations;
  std::vector<spec::Finding> deviations;
  // What in scope could not be seen or understood, each saying what, where and when (a gap in
  // a capture's connection, a frame cut by the capture's end): nothing broken in what was
  // seen, but not everything was seen, so the verdict is INCOMPLETE rather than PASS.
  std::vector<std::string> incomplete;
  double seconds = 0;
  // A capture's quiescence silence (--idle), printed so the run can be repeated; none for a trace.
  std::optional<double> idle_seconds;

  // "<stdin>" for "-", else the name.
  std::string display_name() const;
  bool ok() const { return !error && violations.empty(); }
  // Read to the end, nothing broken, nothing unseen, and not one consumer: nothing checked.
  bool nothing_checked() const {
    return !error && violations.empty() && incomplete.empty() && families.consumers == 0;
  }
  // FAIL (a violation), INCOMPLETE, else PASS; an error or nothing checked is exit 2, apart.
  spec::Outcome outcome() const {
    if (!violations.empty()) return spec::Outcome::kFail;
    if (!incomplete.empty()) return spec::Outcome::kIncomplete;
    return spec::Outcome::kPass;
  }
};

// "1.5 GiB", "12.0 MiB", "900 bytes": a byte count as the messages print it.
std::string format_bytes(std::size_t bytes);

// Parses --max-memory: BYTES, or N with a suffix K, M or G (KiB, MiB, GiB); N a whole number
// above 0, at most 1 TiB in all. nullopt when malformed.
std::optional<std::size_t> parse_memory_limit(const std::string& text);

// Reads and checks one trace. Never throws; an unreadable input gives `error` (and the
// findings up to the failing line are kept, but do not decide the verdict).
FileResult validate_stream(std::istream& in, const std::string& name,
                           const ValidateOptions& options);

// Opens `path` ("-": `stdin`) and validates it; a file that cannot be opened is an error.
FileResult validate_path(const std::string& path, std::istream& stdin_stream,
                         const ValidateOptions& options);

// The rule families that applied to a trace with these events and header.
std::vector<AppliedRules> applied_rules(const EventFamilies& families,
                                        const spec::TraceHeader& header);

// 2 if any input could not be read or checked nothing, else 1 if any has a violation, else 3
// if any is INCOMPLETE, else 0 (spec/outcome.h).
int validate_exit_code(const std::vector<FileResult>& results);

}  // namespace permitcheck::validate

#endif  // PERMITCHECK_VALIDATE_VALIDATE_H_
