#include "capture/checker.h"

#include <cmath>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "trace/writer.h"

namespace permitcheck::capture {

std::string format_capture_time(double t) {
  const double whole = std::floor(t);
  const std::time_t secs = static_cast<std::time_t>(whole);
  const auto micros = static_cast<int>(std::lround((t - whole) * 1e6) % 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
}

WireChecker::WireChecker(const spec::TraceHeader& header, std::ostream* trace_out,
                         std::function<void(const WireFinding&)> on_finding,
                         std::function<void(const NotUnderstood&)> on_not_understood)
    : header_(header),
      monitor_(header, spec::MonitorOptions{.retain_ledger = false}),
      trace_out_(trace_out),
      on_finding_(std::move(on_finding)),
      on_not_understood_(std::move(on_not_understood)) {
  if (trace_out_) *trace_out_ << trace::write_header(header_) << "\n";
}

WireSink WireChecker::sink() {
  return WireSink{
      .event = [this](const std::string& c, const TimedEvent& e) { on_event(c, e); },
      .not_understood = [this](const std::string& c, double t,
                               const std::string& r) { on_not_understood(c, t, r); }};
}

void WireChecker::on_event(const std::string& connection, const TimedEvent& event) {
  ++events_;
  if (std::holds_alternative<spec::Quiescent>(event.event)) ++quiescent_;
  if (const auto* m = std::get_if<spec::Message>(&event.event); m && m->batch_size) {
    ++sized_messages_;
  }
  if (trace_out_) {
    line_.clear();
    trace::append_event(&line_, event.event);
    line_ += '\n';
    *trace_out_ << line_;
  }
  monitor_.on_event(event.event, events_ + 1);  // line 1 is the header
  collect(connection, event.time);
}

void WireChecker::collect(const std::string& connection, double time) {
  auto annotate = [&](const spec::Finding& f, bool deviation, std::vector<spec::Finding>* into) {
    spec::Finding g = f;
    if (!connection.empty()) {
      absl::StrAppend(&g.explanation, " [connection ", connection, ", capture time ",
                      format_capture_time(time), "]");
    }
    into->push_back(g);
    if (on_finding_) {
      on_finding_(WireFinding{.finding = g, .connection = connection, .time = time,
                              .deviation = deviation});
    }
  };
  const std::vector<spec::Finding>& v = monitor_.violations();
  for (; seen_violations_ < v.size(); ++seen_violations_) {
    annotate(v[seen_violations_], false, &violations_);
  }
  const std::vector<spec::Finding>& d = monitor_.deviations();
  for (; seen_deviations_ < d.size(); ++seen_deviations_) {
    annotate(d[seen_deviations_], true, &deviations_);
  }
}

void WireChecker::on_not_understood(const std::string& connection, double time,
                                    const std::string& reason) {
  NotUnderstood n{connection, time, reason};
  if (on_not_understood_) on_not_understood_(n);
  if (not_understood_.size() < 1000) not_understood_.push_back(std::move(n));
}

void WireChecker::finish() {
  monitor_.finish();
  collect("", 0);
}

}  // namespace permitcheck::capture
