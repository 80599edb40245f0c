#include "cli/commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cli/capture.h"
#include "cli/check.h"
#include "cli/conform.h"
#include "cli/explain.h"
#include "cli/matrix.h"
#include "cli/options.h"
#include "cli/replay.h"
#include "cli/report.h"
#include "cli/review.h"
#include "cli/real_broker.h"
#include "cli/tap.h"
#include "trace/reader.h"
#include "validate/parallel.h"

namespace permitcheck::cli {
namespace {

// `check`, `conform`, `review` and `tap` (cli/check.h, conform.h, review.h, tap.h) each keep
// their options in their own object, registered with the app by the Commands constructor;
// one per process, like the app.
template <typename Command>
std::unique_ptr<Command>& command() {
  static std::unique_ptr<Command> instance;
  return instance;
}

const std::vector<std::string> kReportFormats = {"text", "json", "junit"};

// Reads a whole (counterexample) trace from `path` ("-": `in`); on failure prints
// "permitcheck CMD: FILE: line N: reason" and returns nullopt.
std::optional<trace::Trace> read_cex(const std::string& path, std::istream& in,
                                     std::string_view command, std::ostream& err) {
  const std::string shown = path == "-" ? "<stdin>" : path;
  trace::ReaderOptions options;
  options.max_line_bytes = kValidateMaxLineBytes;
  absl::StatusOr<trace::Trace> t;
  if (path == "-") {
    t = trace::read_trace(in, options);
  } else {
    std::ifstream file(path, std::ios::binary);
    if (!file.is_open()) {
      err << "permitcheck " << command << ": " << shown << ": cannot open: " << std::strerror(errno) << "\n";
      return std::nullopt;
    }
    t = trace::read_trace(file, options);
  }
  if (!t.ok()) {
    err << "permitcheck " << command << ": " << shown << ": " << t.status().message() << "\n";
    return std::nullopt;
  }
  return *std::move(t);
}

}  // namespace

Commands::Commands(CLI::App& app) : app_(&app) {
  progress_ = isatty(STDERR_FILENO) == 1;
  command<ConformCommand>() = std::make_unique<ConformCommand>(app);
  command<ReviewCommand>() = std::make_unique<ReviewCommand>(app);
  command<TapCommand>() = std::make_unique<TapCommand>(app);
  command<MatrixCommand>() = std::make_unique<MatrixCommand>(app);
  command<RealBrokerCommand>() = std::make_unique<RealBrokerCommand>(app);

  validate_ = app.add_subcommand(
      "validate",
      "Check permit traces (trace-format.md) against the specification. Streams: constant "
      "memory in the trace length. Violations as \"line N: RULE explanation\"; known deviations "
      "apart. Exit 0 no violation, 1 a violation, 3 incomplete (a capture not followed to its "
      "end: the report says what), 2 unreadable input.");
  validate_->add_option("traces", traces_,
                        "Trace files (JSON Lines) or packet captures (pcap, pcapng: by content); "
                        "- reads standard input")
      ->required();
  validate_->add_option("--format", validate_format_, "Report format")
      ->check(CLI::IsMember(kReportFormats))
      ->capture_default_str();
  validate_->add_option("--ruleset", validate_ruleset_,
                        "Check against this ruleset instead of the header's (legacy, rev-d)");
  validate_->add_option("-o,--output", output_, "Write the report to this file instead of stdout");
  validate_->add_option("--max-line-bytes", max_line_bytes_, "Longest line accepted, in bytes")
      ->check(CLI::Range(std::size_t{1}, trace::kDefaultMaxLineBytes))
      ->capture_default_str();
  validate_->add_option("--max-memory", max_memory_,
                        "Most the monitor may hold: BYTES, or N with K, M or G (KiB, MiB, GiB); "
                        "past it the file stops with exit 2, naming what filled it. For a "
                        "capture, the bytes held for its connections together: past it the "
                        "connection that grew is INCOMPLETE, named")
      ->capture_default_str();
  validate_->add_option(
                        "--threads", validate_threads_,
                        "2: parse on a second thread while checking (faster with a core to "
                        "spare); 1: one thread. A capture's second thread reads it with libpcap "
                        "(a pcap in this machine's byte order is read in place on one thread)")
      ->check(CLI::Range(1, 2))
      ->capture_default_str();
  validate_->add_option(
                        "-j,--jobs", validate_jobs_,
                        "Inputs validated at once, one per thread (default: the number of "
                        "cores); each input's report and messages keep the command line's "
                        "order. With more than one at once, each input is read on one thread. "
                        "--trace-out implies 1")
      ->check(CLI::Range(1, 1024));
  validate_->add_flag("--no-progress", no_progress_, "No progress line on stderr");
  add_capture_options(validate_);  // pcap/pcapng inputs (cli/capture.h)

  render_ = app.add_subcommand(
      "render",
      "Explain a counterexample trace: prose naming each rule and the numbers (text), a Mermaid "
      "sequence diagram (mermaid), or the canonical JSON Lines with the findings (json). Exit 0 "
      "rendered, 2 unreadable input.");
  render_->add_option("cex", cex_, "Counterexample trace file; - reads standard input")->required();
  render_->add_option("--format", render_format_, "Output format")
      ->check(CLI::IsMember({"text", "mermaid", "json"}))
      ->capture_default_str();
  render_->add_option("-o,--output", output_, "Write the rendering to this file instead of stdout");

  replay_ = app.add_subcommand(
      "replay",
      "Re-run a counterexample trace against the specification under every ruleset (and say "
      "whether the reference implementation could replay it). Exit 1 when the trace's own "
      "ruleset reports a violation, 0 otherwise, 2 unreadable input.");
  replay_->add_option("cex", cex_, "Counterexample trace file; - reads standard input")->required();
  replay_->add_option("--format", replay_format_, "Report format")
      ->check(CLI::IsMember(kReportFormats))
      ->capture_default_str();
  replay_->add_option("-o,--output", output_, "Write the report to this file instead of stdout");

  command<CheckCommand>() = std::make_unique<CheckCommand>(app);

  prove_ = app.add_subcommand(
      "prove",
      "Run the Z3 checks (conservation, finalization, isolation, induction). Exit 0 all proved, "
      "1 a counterexample or an undecided check, 2 usage.");
  prove_->add_option("--ruleset", prove_options_.ruleset, "Ruleset to prove")->capture_default_str();
  prove_->add_option("--check", prove_options_.checks, "Only these checks (repeatable)");
  prove_->add_option("--bound", prove_options_.bound, "Batch size bound B <= bound (8..65535)")
      ->capture_default_str();
  prove_->add_option("--depth", prove_options_.depth, "Unrolling depth of the isolation check")
      ->check(IntRange(1, 1000))
      ->capture_default_str();
  prove_->add_option("--timeout", prove_options_.timeout_seconds, "Seconds per solver query")
      ->check(FiniteRange(0.001, 86400.0))
      ->capture_default_str();
  prove_->add_option("--rlimit", prove_options_.rlimit,
                     "Z3 resource limit per solver query (deterministic: the verdict does not "
                     "depend on the machine's speed); 0 none")
      ->capture_default_str();
  prove_->add_option("--kmax", prove_options_.kmax, "Finalization: entries per send")
      ->check(IntRange(1, 64))
      ->capture_default_str();
  prove_->add_option("--induction-k", prove_options_.induction_k, "k of k-induction")
      ->check(IntRange(1, 16));
  prove_->add_option("--induction-bound", prove_options_.induction_bound,
                     "Induction: B of the commands inside the transition system (8..1024)")
      ->check(IntRange(8, 1024));
  prove_->add_option("--trace-dir", prove_options_.trace_dir,
                     "Write each counterexample as a trace file CHECK-RULESET-N.jsonl into DIR");
  prove_->add_flag("--vacuity", prove_options_.vacuity,
                   "Also check that every proof is not vacuous (assumptions satisfiable, false "
                   "variants refuted)");
  prove_->add_flag("--progress", prove_options_.progress,
                   "Progress line on stderr (checks done, elapsed, left) even when it is no terminal");
  prove_->add_flag("--no-progress", prove_options_.no_progress, "No progress line")
      ->excludes("--progress");
  prove_->add_option("--format", prove_options_.format, "Report format")
      ->check(CLI::IsMember(kReportFormats))
      ->capture_default_str();
}

std::optional<int> Commands::run(std::istream& in, std::ostream& out, std::ostream& err) {
  if (std::optional<std::string> both = deprecated_alias_conflict(*app_)) {
    err << *both << "\n";
    return kExitBadInput;
  }
  for (const std::string& warning : deprecation_warnings(*app_)) err << warning << "\n";
  if (validate_->parsed()) return run_validate(in, out, err);
  if (render_->parsed()) return run_render(in, out, err);
  if (replay_->parsed()) return run_replay(in, out, err);
  if (std::optional<int> code = command<CheckCommand>()->run(out, err)) return code;
  if (prove_->parsed()) return run_prove(prove_options_, out, err);
  if (std::optional<int> code = command<ConformCommand>()->run(out, err)) return code;
  if (std::optional<int> code = command<ReviewCommand>()->run(out, err)) return code;
  if (std::optional<int> code = command<TapCommand>()->run(out, err)) return code;
  if (std::optional<int> code = command<MatrixCommand>()->run(out, err)) return code;
  if (std::optional<int> code = command<RealBrokerCommand>()->run(out, err)) return code;
  return std::nullopt;
}

// validate never ends in std::bad_alloc: validate_stream turns it into the file's error, and
// anything left (the report's text) is exit 2 with a message here.
int Commands::run_validate(std::istream& in, std::ostream& out, std::ostream& err) {
  try {
    return run_validate_files(in, out, err);
  } catch (const std::bad_alloc&) {
    err << "permitcheck validate: out of memory (std::bad_alloc): the report could not be built\n";
    return kExitBadInput;
  }
}

int Commands::run_validate_files(std::istream& in, std::ostream& out, std::ostream& err) {
  ValidateOptions options;
  options.max_line_bytes = max_line_bytes_;
  options.threads = validate_threads_;
  if (std::optional<std::size_t> limit = validate::parse_memory_limit(max_memory_)) {
    options.max_memory = *limit;
  } else {
    err << "permitcheck validate: --max-memory \"" << max_memory_
        << "\": expected BYTES or N followed by K, M or G (a whole number above 0, at most "
           "1 TiB)\n";
    return kExitBadInput;
  }
  if (!validate_ruleset_.empty()) {
    absl::StatusOr<const spec::Ruleset*> r = spec::parse_ruleset(validate_ruleset_);
    if (!r.ok()) {
      err << "permitcheck validate: --ruleset: " << r.status().message() << "\n";
      return kExitBadInput;
    }
    options.ruleset = (*r)->id;
  }
  std::size_t stdin_uses = 0;
  for (const std::string& t : traces_) stdin_uses += t == "-";
  if (stdin_uses > 1) {
    err << "permitcheck validate: - (standard input) given more than once\n";
    return kExitBadInput;
  }
  if (std::optional<std::string> ignored = ignored_capture_option(*validate_, traces_)) {
    err << "permitcheck validate: " << *ignored
        << " applies to packet captures only, and no input is one (a trace's header gives Q "
           "and T); drop it\n";
    return kExitBadInput;
  }
  // Inputs are spread over the jobs, one per thread; with one job (or one input) the input
  // may use --threads. A capture's second thread (libpcap reading) pays off with a core to
  // spare (idle 2-core host: 0.61-0.63 of tcpdump's rate against 0.47-0.52 on one) and costs
  // when there is none (docs/cli.md): the same default as a trace's, --threads 1 for a busy
  // machine. --trace-out writes the first capture's trace: one job keeps "first" the input
  // order.
  int jobs = validate_jobs_ > 0 ? validate_jobs_ : validate::default_jobs();
  if (capture_trace_out()) jobs = 1;
  const bool parallel = jobs > 1 && traces_.size() > 1;
  const int threads_per_input = parallel ? 1 : validate_threads_;
  options.threads = threads_per_input;
  const bool progress = progress_ && !no_progress_;
  // Each input's messages: straight to stderr on one job; otherwise kept until the inputs
  // before it are done, then written in input order.
  std::vector<std::ostringstream> messages(parallel ? traces_.size() : 0);
  const auto validate_one = [&](std::size_t i) {
    const std::string& path = traces_[i];
    std::ostream& file_err = parallel ? messages[i] : err;
    ValidateOptions file_options = options;
    if (progress && !parallel) {
      const std::string shown = path == "-" ? "<stdin>" : path;
      file_options.progress = [&err, shown](std::uint64_t events, std::uint64_t line) {
        err << "\rvalidate " << shown << ": " << events << " events, line " << line << std::flush;
      };
    }
    FileResult r = capture_file(path)
                       ? validate_capture(path, file_options.ruleset, file_err, threads_per_input,
                                          file_options.max_memory)
                       : validate_path(path, in, file_options);
    if (progress && !parallel) err << "\r\033[K" << std::flush;
    return r;
  };
  const auto done = [&](std::size_t i, const FileResult& r) {
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
  std::vector<FileResult> results =
      validate::validate_all(traces_.size(), parallel ? jobs : 1, validate_one, done);
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].name.empty()) results[i].name = traces_[i];
  }
  const std::string report = format_validate(results, *parse_report_format(validate_format_));
  if (!write_report(output_, out, report, "validate", err)) return kExitBadInput;
  return validate_exit_code(results);
}

int Commands::run_render(std::istream& in, std::ostream& out, std::ostream& err) {
  std::optional<trace::Trace> t = read_cex(cex_, in, "render", err);
  if (!t) return kExitBadInput;
  const Explained e = explain(*std::move(t));
  std::string text;
  switch (*parse_render_format(render_format_)) {
    case RenderFormat::kText: text = render_text(e, cex_ == "-" ? "<stdin>" : cex_); break;
    case RenderFormat::kMermaid: text = render_mermaid(e); break;
    case RenderFormat::kJson: text = render_jsonl(e); break;
  }
  return write_report(output_, out, text, "render", err) ? kExitPass : kExitBadInput;
}

int Commands::run_replay(std::istream& in, std::ostream& out, std::ostream& err) {
  std::optional<trace::Trace> t = read_cex(cex_, in, "replay", err);
  if (!t) return kExitBadInput;
  const Replayed r = replay(*std::move(t));
  if (!write_report(output_, out, format_replay(r, cex_ == "-" ? "<stdin>" : cex_,
                                            *parse_report_format(replay_format_)),
                    "replay", err)) {
    return kExitBadInput;
  }
  return replay_exit_code(r);
}

}  // namespace permitcheck::cli
