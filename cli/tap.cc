#include "cli/tap.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/options.h"
#include "nlohmann/json.hpp"
#include "report/json.h"
#include "spec/outcome.h"
#include "spec/plain_text.h"
#include "validate/junit.h"
#include "validate/report.h"
#include "validate/validate.h"
#ifdef PERMITCHECK_HAVE_TAP
#include "tap/tap.h"
#endif

namespace permitcheck::cli {

#ifdef PERMITCHECK_HAVE_TAP
namespace {

// The tap's run as a JUnit report: one test case, failing with the violations (FAIL), in error
// when it is INCOMPLETE or checked nothing (as validate's), the known deviations and the
// settings in its system-out.
std::string tap_junit(const std::string& listen, const std::string& upstream,
                      const std::string& verdict, const capture::WireMonitor& checker,
                      const std::string& why_not, double idle) {
  validate::JunitSuite suite{.name = "permitcheck tap", .suite = "tap"};
  validate::JunitCase c{.classname = "permitcheck.tap", .name = absl::StrCat(listen, " -> ", upstream)};
  if (!checker.violations().empty()) {
    std::string body;
    for (const spec::Finding& f : checker.violations()) {
      absl::StrAppend(&body, spec::format_finding(f), "\n");
    }
    c.failure = validate::JunitCase::Failure{
        "violation",
        absl::StrCat(spec::count_noun(checker.violations().size(), "violation"), "; first: ",
                     spec::format_finding(checker.violations().front())),
        body};
  } else if (verdict == "INCOMPLETE") {
    std::string body;
    for (const capture::NotUnderstood& n : checker.not_understood()) {
      absl::StrAppend(&body, "connection ", n.connection, " from ",
                      capture::format_capture_time(n.time), ": ", n.reason, "\n");
    }
    c.error = validate::JunitCase::Failure{"incomplete", "a connection was not understood to its end", body};
  } else if (verdict == "NOT-EXERCISED") {
    c.error = validate::JunitCase::Failure{"nothing checked", why_not, ""};
  }
  absl::StrAppend(&c.system_out, "verdict: ", verdict, "\nsettings: --idle ", idle, "\n");
  for (const spec::Finding& f : checker.deviations()) {
    absl::StrAppend(&c.system_out, "known deviation: ", spec::format_finding(f), "\n");
  }
  suite.cases.push_back(std::move(c));
  return validate::format_junit(suite);
}

// A lookup answered with another address sends the client's consumer past the tap.
std::string bypass_text(const std::string& address) {
  return absl::StrCat("the client was sent to ", address,
                      ", bypassing the tap: that traffic is not checked");
}

// What the summary at the end of a run reports, in every format.
struct TapSummary {
  const tap::TapStats& stats;
  const capture::WireMonitor& checker;
  spec::Outcome outcome;
  std::string verdict;  // PASS, FAIL, INCOMPLETE or NOT-EXERCISED
  std::string why_not;  // why nothing was exercised, when nothing was
  double idle_seconds;
  std::string max_memory;
};

// The summary as the last JSON line: {"summary":{...,"findings":[...]}}.
std::string summary_json(const TapSummary& s) {
  using Json = nlohmann::ordered_json;
  const tap::TapStats& st = s.stats;
  const capture::WireMonitor& checker = s.checker;
  Json summary = {{"ok", s.outcome == spec::Outcome::kPass},
                  {"verdict", s.verdict},
                  {"idle_seconds", s.idle_seconds},
                  {"connections", st.connections},
                  {"pulsar_connections", st.pulsar_connections},
                  {"bytes_to_broker", st.bytes_to_broker},
                  {"bytes_to_client", st.bytes_to_client},
                  {"events", checker.events()},
                  {"consumers", checker.consumers()},
                  {"flows", checker.flows()},
                  {"messages", checker.messages()},
                  {"acks", checker.acks()},
                  {"lookups", st.lookups},
                  {"bypassed", st.bypassed},
                  {"violations", checker.violations().size()},
                  {"deviations", checker.deviations().size()},
                  {"not_understood", checker.not_understood().size()}};
  if (s.verdict == "NOT-EXERCISED") summary["not_exercised"] = s.why_not;
  // The findings once more, as every JSON report writes them (docs/schemas/finding.schema.json).
  summary["findings"] = Json::array();
  for (const spec::Finding& f : checker.violations()) {
    summary["findings"].push_back(validate::finding_object(f));
  }
  return report::json_line(Json{{"summary", std::move(summary)}});
}

// The summary as text: settings, counts, what was checked, bypasses and the verdict.
std::string summary_text(const TapSummary& s) {
  const tap::TapStats& st = s.stats;
  const capture::WireMonitor& checker = s.checker;
  std::ostringstream out;
  out << "settings: --idle " << s.idle_seconds << " --max-memory " << s.max_memory << "\n";
  out << "tap: " << spec::count_noun(st.connections, "connection") << " ("
      << st.pulsar_connections << " Pulsar), " << st.bytes_to_broker << " bytes to the broker, "
      << st.bytes_to_client << " to clients, " << checker.events() << " wire events, "
      << spec::count_noun(checker.violations().size(), "violation") << ", "
      << spec::count_noun(checker.deviations().size(), "known deviation") << ", "
      << checker.not_understood().size() << " not understood\n"
      << "checked: " << spec::count_noun(checker.consumers(), "consumer") << " subscribed, "
      << spec::count_noun(checker.flows(), "flow") << ", "
      << spec::count_noun(checker.messages(), "message") << ", "
      << spec::count_noun(checker.acks(), "ack") << "; "
      << spec::count_noun(st.lookups, "lookup") << " answered";
  if (!st.bypassed.empty()) {
    out << ", sending clients past the tap to " << absl::StrJoin(st.bypassed, ", ");
  }
  out << "\n";
  for (const std::string& a : st.bypassed) out << "warning: " << bypass_text(a) << "\n";
  out << "verdict: " << s.verdict;
  if (s.outcome == spec::Outcome::kIncomplete) {
    const std::size_t n = checker.not_understood().size();
    out << ": " << spec::count_noun(n, "connection") << " not understood to "
        << (n == 1 ? "its" : "their") << " end (above): not everything was checked";
  } else if (s.verdict == "NOT-EXERCISED") {
    out << ": " << s.why_not << ": nothing was checked";
  }
  out << "\n";
  return out.str();
}

}  // namespace
#endif

std::string_view TapCommand::description() const {
  return "Transparent TCP proxy between a Pulsar client and a broker: forwards every byte "
      "unchanged, checks a decoded copy live and prints each finding when it happens. TLS is "
      "not decoded (forwarded, reported as not understood). SIGINT/SIGTERM ends it with a "
      "summary. Exit 0 PASS (no violation, a consumer checked, every connection followed to "
      "its end), 1 FAIL (a violation), 3 INCOMPLETE (a connection not understood to its end: "
      "the checker fell behind, a gap, the memory limit), 2 usage or NOT-EXERCISED (no "
      "consumer subscribed through the tap).";
}

std::string_view TapCommand::examples() const {
  return "  permitcheck tap --listen 127.0.0.1:6651 --upstream broker.example:6650 --threshold 5\n"
      "  # then point the client at pulsar://127.0.0.1:6651; SIGINT ends it with a summary\n"
      "  permitcheck tap --listen 127.0.0.1:6651 --upstream broker.example:6650 --format junit \\\n"
      "    --trace-out tap.jsonl --pcap tap.pcap > tap.xml";
}

void TapCommand::add_options(CLI::App& sub) {
  command_ = &sub;
  command_->add_option("--listen", listen_, "ADDR:PORT to accept clients on (port 0: any)")
      ->required();
  command_->add_option("--upstream", upstream_, "HOST:PORT of the broker")->required();
  command_->add_option("--format", format_,
                       "text and json (one JSON object a line) print each finding when it "
                       "happens and a summary at the end; junit writes one JUnit XML report at "
                       "the end (for CI test reports)")
      ->check(CLI::IsMember({"text", "json", "junit"}))
      ->capture_default_str();
  CLI::Option* trace_out =
      command_->add_option("--trace-out", trace_, "Write the wire trace (trace format) to this file");
  add_deprecated_alias(command_, trace_out, "--trace", trace_);
  command_->add_option("--pcap", pcap_, "Write a capture (pcap, raw IP) of the traffic here");
  command_->add_option("--idle", idle_,
                       "Seconds of silence that, with everything acknowledged, make a consumer "
                       "quiescent (the same default in conform, matrix and validate; the "
                       "summary prints it)")
      ->check(FiniteRange(0.0, 3600.0))
      ->capture_default_str();
  command_->add_option("--max-memory", max_memory_,
                       "Most the decoding may hold for all connections together (bytes waiting "
                       "behind a hole, frames kept whole while they come): BYTES, or N with K, "
                       "M or G; past it the connection that grew is no longer checked and the "
                       "verdict is INCOMPLETE")
      ->capture_default_str();
  command_->add_option("--q", q_, "Receiver queue size Q (default: the first Flow)");
  command_->add_option("--threshold", t_, "The client's Flow threshold T");
}

int TapCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
#ifndef PERMITCHECK_HAVE_TAP
  (void)out;
  err << "permitcheck tap: not built in this configuration (needs libpcap, protobuf, asio)\n";
  return spec::kExitBadInput;
#else
  const std::optional<std::size_t> max_memory = validate::parse_memory_limit(max_memory_);
  if (!max_memory) {
    err << "permitcheck tap: --max-memory \"" << max_memory_
        << "\": expected BYTES or N followed by K, M or G\n";
    return spec::kExitBadInput;
  }
  std::ofstream trace_file;
  if (!trace_.empty()) {
    trace_file.open(trace_, std::ios::binary);
    if (!trace_file.is_open()) {
      err << "permitcheck tap: --trace-out: cannot write " << trace_ << "\n";
      return spec::kExitBadInput;
    }
  }
  const bool json = format_ == "json";
  using Json = nlohmann::ordered_json;  // every JSON line is written by report::json_line
  const bool junit = format_ == "junit";  // one report at the end, nothing printed live
  const spec::TraceHeader header{.source = spec::TraceSource::kWire, .q = q_, .t = t_};
  capture::WireMonitor checker(
      header, trace_file.is_open() ? &trace_file : nullptr,
      [&](const capture::WireFinding& f) {
        const char* kind = f.deviation ? "deviation" : "violation";
        if (junit) {
        } else if (json) {
          const Json line = {{"finding", kind},
                             {"rule", std::string(spec::rule_name(f.finding.rule))},
                             {"line", f.finding.line},
                             {"connection", f.connection},
                             {"time", capture::format_capture_time(f.time)},
                             {"text", f.finding.explanation}};
          out << report::json_line(line) << std::flush;
        } else {
          out << kind << ": " << spec::format_finding(f.finding) << "\n" << std::flush;
        }
        if (trace_file.is_open()) trace_file.flush();
      },
      [&](const capture::NotUnderstood& n) {
        if (junit) {
        } else if (json) {
          const Json line = {{"not_understood", n.connection},
                             {"time", capture::format_capture_time(n.time)},
                             {"reason", n.reason}};
          out << report::json_line(line) << std::flush;
        } else {
          out << "not understood: connection " << n.connection << " from "
              << capture::format_capture_time(n.time) << ": " << n.reason
              << " (still forwarded)\n"
              << std::flush;
        }
      });
  auto on_bypass = [&](const tap::LookupBypass& b) {
    if (junit) {
    } else if (json) {
      const Json line = {{"warning", "lookup_bypass"},
                         {"address", b.address},
                         {"connection", b.connection},
                         {"time", capture::format_capture_time(b.time)},
                         {"text", bypass_text(b.address)}};
      out << report::json_line(line) << std::flush;
    } else {
      out << "warning: lookup answered on connection " << b.connection << ": "
          << bypass_text(b.address) << "\n"
          << std::flush;
    }
  };
  tap::Tap tap(tap::TapOptions{.listen = listen_,
                                       .upstream = upstream_,
                                       .decode = capture::CaptureOptions{.idle_seconds = idle_,
                                                                         .max_memory = *max_memory},
                                       .pcap_path = pcap_,
                                       .on_bypass = on_bypass},
                   &checker);
  if (absl::Status s = tap.start(); !s.ok()) {
    err << "permitcheck tap: " << s.message() << "\n";
    return spec::kExitBadInput;
  }
  tap.handle_signals();
  err << "permitcheck tap: listening on " << listen_.substr(0, listen_.rfind(':')) << ":"
      << tap.port() << ", forwarding to " << upstream_ << "\n"
      << std::flush;
  tap.run();
  checker.finish();
  const tap::TapStats st = tap.stats();
  // A pass means everything was checked: a connection not understood to its end (the checker
  // fell behind and dropped copies, a gap, the memory limit) makes the run INCOMPLETE (exit 3);
  // without a subscribed consumer no permit rule was exercised, so such a run is NOT-EXERCISED
  // (exit 2, as conform's client that never subscribed), never a clean pass. A violation
  // still decides first.
  const spec::Outcome outcome = capture::checked_outcome(checker);
  const TapSummary summary{
      .stats = st,
      .checker = checker,
      .outcome = outcome,
      .verdict = outcome == spec::Outcome::kNotApplicable ? std::string("NOT-EXERCISED")
                                                          : std::string(spec::outcome_name(outcome)),
      .why_not = st.bypassed.empty()
                     ? std::string("no consumer subscribed through the tap")
                     : absl::StrCat("no consumer subscribed through the tap; lookups sent the "
                                    "client to ", absl::StrJoin(st.bypassed, ", ")),
      .idle_seconds = idle_,
      .max_memory = max_memory_};
  if (json) {
    out << summary_json(summary);
  } else if (junit) {
    out << tap_junit(listen_, upstream_, summary.verdict, checker, summary.why_not, idle_);
  } else {
    out << summary_text(summary);
  }
  out << std::flush;
  return spec::exit_code(outcome);  // 0 PASS, 1 FAIL, 3 INCOMPLETE, 2 nothing checked
#endif
}

}  // namespace permitcheck::cli
