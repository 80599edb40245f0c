#include "cli/validate_command.h"

#include <unistd.h>

#include <new>
#include <optional>
#include <sstream>

#include "cli/capture.h"
#include "report/output.h"
#include "spec/outcome.h"
#include "spec/ruleset.h"
#include "trace/reader.h"
#include "validate/parallel.h"
#include "validate/report.h"

namespace permitcheck::cli {

ValidateCommand::ValidateCommand() : progress_(isatty(STDERR_FILENO) == 1) {}

std::string_view ValidateCommand::description() const {
  return "Check permit traces (trace-format.md) against the specification. Streams: constant "
      "memory in the trace length. Violations as \"line N: RULE explanation\"; known deviations "
      "apart. Exit 0 no violation, 1 a violation, 3 incomplete (a capture not followed to its "
      "end: the report says what), 2 unreadable input.";
}

std::string_view ValidateCommand::examples() const {
  return "  permitcheck validate client.jsonl\n"
         "  permitcheck validate --format junit -o validate.xml traces/*.jsonl\n"
         "  permitcheck validate run.pcap --threshold 5 --trace-out wire.jsonl";
}

void ValidateCommand::add_options(CLI::App& sub) {
  sub_ = &sub;
  sub_->add_option("traces", traces_,
                        "Trace files (JSON Lines) or packet captures (pcap, pcapng: by content); "
                        "- reads standard input")
      ->required();
  sub_->add_option("--format", format_, "Report format")
      ->check(CLI::IsMember(std::vector<std::string>{"text", "json", "junit"}))
      ->capture_default_str();
  sub_->add_option("--ruleset", ruleset_,
                        "Check against this ruleset instead of the header's (legacy, rev-d)");
  sub_->add_option("-o,--output", output_, "Write the report to this file instead of stdout");
  sub_->add_option("--max-line-bytes", max_line_bytes_, "Longest line accepted, in bytes")
      ->check(CLI::Range(std::size_t{1}, trace::kDefaultMaxLineBytes))
      ->capture_default_str();
  sub_->add_option("--max-memory", max_memory_,
                        "Most the monitor may hold: BYTES, or N with K, M or G (KiB, MiB, GiB); "
                        "past it the file stops with exit 2, naming what filled it. For a "
                        "capture, the bytes held for its connections together: past it the "
                        "connection that grew is INCOMPLETE, named")
      ->capture_default_str();
  sub_->add_option(
                        "--threads", threads_,
                        "2: parse on a second thread while checking (faster with a core to "
                        "spare); 1: one thread. A capture's second thread reads it with libpcap "
                        "(a pcap in this machine's byte order is read in place on one thread)")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
  sub_->add_option(
                        "-j,--jobs", jobs_,
                        "Inputs validated at once, one per thread (default: the number of "
                        "cores); each input's report and messages keep the command line's "
                        "order. With more than one at once, each input is read on one thread. "
                        "--trace-out implies 1")
      ->check(CLI::Range(1, 1024));
  sub_->add_flag("--no-progress", no_progress_, "No progress line on stderr");
  add_capture_options(sub_);  // pcap/pcapng inputs (cli/capture.h)

}

// validate never ends in std::bad_alloc: validate_stream turns it into the file's error, and
// anything left (the report's text) is exit 2 with a message here.
int ValidateCommand::run(std::istream& in, std::ostream& out, std::ostream& err) {
  try {
    return run_files(in, out, err);
  } catch (const std::bad_alloc&) {
    err << "permitcheck validate: out of memory (std::bad_alloc): the report could not be built\n";
    return spec::kExitBadInput;
  }
}

int ValidateCommand::run_files(std::istream& in, std::ostream& out, std::ostream& err) {
  validate::ValidateOptions options;
  options.max_line_bytes = max_line_bytes_;
  options.threads = threads_;
  if (std::optional<std::size_t> limit = validate::parse_memory_limit(max_memory_)) {
    options.max_memory = *limit;
  } else {
    err << "permitcheck validate: --max-memory \"" << max_memory_
        << "\": expected BYTES or N followed by K, M or G (a whole number above 0, at most "
           "1 TiB)\n";
    return spec::kExitBadInput;
  }
  if (!ruleset_.empty()) {
    absl::StatusOr<const spec::Ruleset*> r = spec::parse_ruleset(ruleset_);
    if (!r.ok()) {
      err << "permitcheck validate: --ruleset: " << r.status().message() << "\n";
      return spec::kExitBadInput;
    }
    options.ruleset = (*r)->id;
  }
  std::size_t stdin_uses = 0;
  for (const std::string& t : traces_) stdin_uses += t == "-";
  if (stdin_uses > 1) {
    err << "permitcheck validate: - (standard input) given more than once\n";
    return spec::kExitBadInput;
  }
  if (std::optional<std::string> ignored = ignored_capture_option(*sub_, traces_)) {
    err << "permitcheck validate: " << *ignored
        << " applies to packet captures only, and no input is one (a trace's header gives Q "
           "and T); drop it\n";
    return spec::kExitBadInput;
  }
  // Inputs are spread over the jobs, one per thread; with one job (or one input) the input
  // may use --threads. A capture's second thread (libpcap reading) pays off with a core to
  // spare (idle 2-core host: 0.61-0.63 of tcpdump's rate against 0.47-0.52 on one) and costs
  // when there is none (docs/cli.md): the same default as a trace's, --threads 1 for a busy
  // machine. --trace-out writes the first capture's trace: one job keeps "first" the input
  // order.
  int jobs = jobs_ > 0 ? jobs_ : validate::default_jobs();
  if (capture_trace_out()) jobs = 1;
  const bool parallel = jobs > 1 && traces_.size() > 1;
  const int threads_per_input = parallel ? 1 : threads_;
  options.threads = threads_per_input;
  const bool progress = progress_ && !no_progress_;
  // Each input's messages: straight to stderr on one job; otherwise kept until the inputs
  // before it are done, then written in input order.
  std::vector<std::ostringstream> messages(parallel ? traces_.size() : 0);
  const auto validate_one = [&](std::size_t i) {
    const std::string& path = traces_[i];
    std::ostream& file_err = parallel ? messages[i] : err;
    validate::ValidateOptions file_options = options;
    if (progress && !parallel) {
      const std::string shown = path == "-" ? "<stdin>" : path;
      file_options.progress = [&err, shown](std::uint64_t events, std::uint64_t line) {
        err << "\rvalidate " << shown << ": " << events << " events, line " << line << std::flush;
      };
    }
    validate::FileResult r = capture_file(path)
                       ? validate_capture(path, file_options.ruleset, file_err, threads_per_input,
                                          file_options.max_memory)
                       : validate::validate_path(path, in, file_options);
    if (progress && !parallel) err << "\r\033[K" << std::flush;
    return r;
  };
  const auto done = [&](std::size_t i, const validate::FileResult& r) {
    if (progress && parallel) err << "\r\033[K" << std::flush;
    if (parallel) err << messages[i].str();
    if (r.error) {
      err << "permitcheck validate: " << (traces_[i] == "-" ? "<stdin>" : traces_[i]) << ": "
          << *r.error << "\n";
    }
    if (progress && parallel && i + 1 < traces_.size()) {
      err << "\rvalidate: " << i + 1 << " of " << traces_.size() << " inputs done" << std::flush;
    }
  };
  std::vector<validate::FileResult> results =
      validate::validate_all(traces_.size(), parallel ? jobs : 1, validate_one, done);
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].name.empty()) results[i].name = traces_[i];
  }
  const std::string report = validate::format_validate(results, *validate::parse_report_format(format_));
  if (!report::write_report(output_, out, report, "validate", err)) return spec::kExitBadInput;
  return validate::validate_exit_code(results);
}

}  // namespace permitcheck::cli
