#include "cli/capture.h"

#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/options.h"
#include "spec/plain_text.h"
#include "validate/validate.h"
#ifdef PERMITCHECK_HAVE_CAPTURE
#include "capture/capture_file.h"
#include "capture/wire_monitor.h"
#endif

namespace permitcheck::cli {
#ifndef PERMITCHECK_HAVE_CAPTURE
void add_capture_options(CLI::App*) {}
std::optional<std::string> ignored_capture_option(const CLI::App&, const std::vector<std::string>&) {
  return std::nullopt;
}
bool capture_trace_out() { return false; }
bool capture_file(const std::string&) { return false; }
validate::FileResult validate_capture(const std::string& path, std::optional<spec::RulesetId>,
                            std::ostream&, int, std::size_t) {
  validate::FileResult r;
  r.name = path;
  r.error = "captures are not read in this build (libpcap missing)";
  return r;
}
#else
namespace {

struct CaptureFlags {
  std::optional<std::uint16_t> port;
  double idle = kDefaultIdleSeconds;
  std::optional<std::int64_t> q;
  std::optional<std::int64_t> t;
  std::string trace_out;
  int captures_written = 0;
};

CaptureFlags& flags() {
  static CaptureFlags f;
  return f;
}

}  // namespace

void add_capture_options(CLI::App* validate) {
  CaptureFlags& f = flags();
  f = CaptureFlags{};  // a new command line (tests parse several in one process) starts afresh
  validate->add_option("--port", f.port,
                       "Captures: only TCP connections with this port on either side (default: "
                       "any connection whose client starts with a Pulsar CONNECT)");
  validate->add_option("--idle", f.idle,
                       "Captures: seconds of silence after which a consumer with every entry "
                       "acknowledged is quiescent (E5/E6 checked there)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  validate->add_option("--q", f.q, "Captures: receiver queue size Q (default: the first Flow "
                                   "after a successful subscribe)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 31));
  validate->add_option("--threshold", f.t, "Captures: the client's Flow threshold T")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 31));
  CLI::Option* trace_out =
      validate->add_option("--trace-out", f.trace_out,
                           "Captures: write the derived wire trace (trace format) to this file");
  add_deprecated_alias(validate, trace_out, "--emit-trace", f.trace_out);
}

std::optional<std::string> ignored_capture_option(const CLI::App& validate,
                                                  const std::vector<std::string>& inputs) {
  for (const std::string& path : inputs) {
    if (capture_file(path)) return std::nullopt;
  }
  for (const char* name : 
       {"--port", "--idle", "--q", "--threshold", "--trace-out", "--emit-trace"}) {
    const CLI::Option* o = validate.get_option_no_throw(name);
    if (o != nullptr && o->count() > 0) return std::string(name);
  }
  return std::nullopt;
}
bool capture_trace_out() { return !flags().trace_out.empty(); }

bool capture_file(const std::string& path) {
  return path != "-" && capture::looks_like_capture(path);
}

validate::FileResult validate_capture(const std::string& path, std::optional<spec::RulesetId> ruleset,
                            std::ostream& err, int threads, std::size_t max_memory) {
  const auto start = std::chrono::steady_clock::now();
  CaptureFlags& f = flags();
  validate::FileResult result;
  result.name = path;
  spec::TraceHeader header{.source = spec::TraceSource::kWire,
                           .ruleset = ruleset.value_or(spec::RulesetId::kRevD),
                           .q = f.q,
                           .t = f.t};
  result.header = header;
  result.idle_seconds = f.idle;
  std::ofstream trace_file;
  if (!f.trace_out.empty()) {
    if (++f.captures_written > 1) {
      result.error = "--trace-out takes one capture (a trace file has one header)";
      return result;
    }
    trace_file.open(f.trace_out, std::ios::binary);
    if (!trace_file.is_open()) {
      result.error = absl::StrCat("--trace-out: cannot write ", f.trace_out);
      return result;
    }
  }
  capture::WireMonitor checker(header, trace_file.is_open() ? &trace_file : nullptr, {},
                               [&](const capture::NotUnderstood& n) {
                                 err << "permitcheck validate: " << path << ": connection "
                                     << n.connection << " not understood from "
                                     << capture::format_capture_time(n.time) << ": " << n.reason
                                     << "\n";
                               });
  capture::WireTraceBuilder builder(
      capture::CaptureOptions{.port = f.port, .idle_seconds = f.idle, .max_memory = max_memory},
      checker.sink());
  const absl::Status read = capture::read_capture_file(path, &builder, threads >= 2);
  checker.finish();
  result.events = checker.events();
  result.last_line = checker.last_line();
  result.families.wire = checker.events();
  result.families.extension = 0;
  result.families.quiescent = checker.quiescent();
  result.families.sized_messages = checker.sized_messages();
  result.families.consumers = checker.consumers();
  result.violations = checker.violations();
  result.deviations = checker.deviations();
  // A connection (or stream) not followed to its end was not all seen: INCOMPLETE, not PASS.
  for (const capture::NotUnderstood& n : checker.not_understood()) {
    result.incomplete.push_back(absl::StrCat("connection ", n.connection, " not understood from ",
                                             capture::format_capture_time(n.time), ": ",
                                             n.reason));
  }
  const capture::CaptureStats& s = builder.stats();
  if (s.clock_steps_back > 0) {
    err << "permitcheck validate: " << path << ": the capture's clock stepped back "
        << spec::count_noun(s.clock_steps_back, "time")
        << "; taken in capture order, times after a step shifted "
        << absl::StrFormat("%.6f", s.clock_shift) << " s in all\n";
  }
  if (s.uncompared_copies > 0) {
    err << "permitcheck validate: " << path << ": "
        << spec::count_noun(s.uncompared_copies, "copy", "copies") << " of bytes sent more than "
        << capture::StreamReassembler::kCompareBytes
        << " bytes earlier, not compared with the first (retransmissions from far back; "
           "believed identical)\n";
  }
  if (s.bad_checksums > 0) {
    err << "permitcheck validate: " << path << ": "
        << spec::count_noun(s.bad_checksums, "segment")
        << " with a bad TCP checksum skipped (their side's checksums are otherwise good: the "
           "receiver dropped them too)\n";
  }
  if (!read.ok()) {
    result.error = absl::StrCat("capture: ", read.message());
  } else if (s.pulsar == 0) {
    result.error = absl::StrCat("capture: no Pulsar connection found (", s.packets,
                                " TCP segments, ", s.connections, " TCP connections",
                                f.port ? absl::StrCat(" on port ", *f.port) : "",
                                "; a connection counts when its client's first frame is a "
                                "CONNECT)");
  }
  if (trace_file.is_open()) {
    trace_file.flush();
    if (!trace_file.good() && !result.error) {
      result.error = absl::StrCat("--trace-out: cannot write ", f.trace_out);
    }
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}
#endif  // PERMITCHECK_HAVE_CAPTURE

}  // namespace permitcheck::cli
