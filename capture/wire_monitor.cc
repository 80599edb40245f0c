#include "capture/wire_monitor.h"

#include <cmath>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <mutex>
#include <thread>

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

WireMonitor::WireMonitor(const spec::TraceHeader& header, std::ostream* trace_out,
                         std::function<void(const WireFinding&)> on_finding,
                         std::function<void(const NotUnderstood&)> on_not_understood,
                         bool sends_span_frames)
    : header_(header),
      monitor_(header, spec::MonitorOptions{.retain_ledger = false,
                                            .sends_span_frames = sends_span_frames}),
      trace_out_(trace_out),
      on_finding_(std::move(on_finding)),
      on_not_understood_(std::move(on_not_understood)) {
  if (trace_out_) *trace_out_ << trace::write_header(header_) << "\n";
}

// What the decoding thread hands to the checking thread, in order.
struct WireMonitor::Worker {
  struct Item {
    std::optional<TimedEvent> event;  // else a connection not understood
    NotUnderstood not_understood;
    std::string connection;           // empty: the previous item's
  };
  static constexpr std::size_t kBatch = 4096;
  static constexpr std::size_t kWaiting = 2;

  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::vector<Item>> full;
  std::vector<Item> filling;
  std::string last_connection;  // of the decoding thread's last item
  bool done = false;
  std::thread thread;

  void add(Item item, const std::string& connection) {
    if (connection != last_connection || filling.empty()) {
      item.connection = connection;
      last_connection = connection;
    }
    filling.push_back(std::move(item));
    if (filling.size() >= kBatch) hand_over();
  }
  void hand_over() {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait(lock, [&] { return full.size() < kWaiting; });
    full.push_back(std::move(filling));
    filling = {};
    filling.reserve(kBatch);
    changed.notify_one();
  }
};

WireMonitor::~WireMonitor() {
  if (worker_ && worker_->thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(worker_->mu);
      worker_->done = true;
    }
    worker_->changed.notify_one();
    worker_->thread.join();
  }
}

void WireMonitor::check_on_own_thread() {
  worker_ = std::make_unique<Worker>();
  worker_->filling.reserve(Worker::kBatch);
  worker_->thread = std::thread([this] {
    Worker& w = *worker_;
    std::string connection;
    while (true) {
      std::vector<Worker::Item> batch;
      {
        std::unique_lock<std::mutex> lock(w.mu);
        w.changed.wait(lock, [&] { return !w.full.empty() || w.done; });
        if (w.full.empty()) return;
        batch = std::move(w.full.front());
        w.full.pop_front();
        w.changed.notify_one();
      }
      for (Worker::Item& item : batch) {
        if (!item.connection.empty()) connection = std::move(item.connection);
        if (item.event) {
          on_event(connection, *item.event);
        } else {
          const NotUnderstood& n = item.not_understood;
          on_not_understood(n.connection, n.time, n.reason);
        }
      }
    }
  });
}

WireSink WireMonitor::sink() {
  if (worker_) {
    return WireSink{
        .event = [this](const std::string& c, TimedEvent&& e) {
          worker_->add(Worker::Item{.event = std::move(e), .not_understood = {}, .connection = {}}, c);
        },
        .not_understood = [this](const std::string& c, double t, const std::string& r) {
          worker_->add(Worker::Item{.event = std::nullopt, .not_understood = {c, t, r}, .connection = {}}, c);
        }};
  }
  return WireSink{
      .event = [this](const std::string& c, TimedEvent&& e) { on_event(c, e); },
      .not_understood = [this](const std::string& c, double t,
                               const std::string& r) { on_not_understood(c, t, r); }};
}

void WireMonitor::on_event(const std::string& connection, const TimedEvent& event) {
  ++events_;
  if (std::holds_alternative<spec::Quiescent>(event.event)) ++quiescent_;
  if (std::holds_alternative<spec::SubscribeOk>(event.event)) ++consumers_;
  if (std::holds_alternative<spec::Flow>(event.event)) ++flows_;
  if (std::holds_alternative<spec::Ack>(event.event)) ++acks_;
  if (const auto* m = std::get_if<spec::Message>(&event.event)) {
    ++messages_;
    if (m->batch_size) ++sized_messages_;
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

void WireMonitor::collect(const std::string& connection, double time) {
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

void WireMonitor::on_not_understood(const std::string& connection, double time,
                                    const std::string& reason) {
  NotUnderstood n{connection, time, reason};
  if (on_not_understood_) on_not_understood_(n);
  if (not_understood_.size() < 1000) not_understood_.push_back(std::move(n));
}

void WireMonitor::finish() {
  if (worker_ && worker_->thread.joinable()) {
    if (!worker_->filling.empty()) worker_->hand_over();
    {
      std::lock_guard<std::mutex> lock(worker_->mu);
      worker_->done = true;
    }
    worker_->changed.notify_one();
    worker_->thread.join();  // every event checked
  }
  monitor_.finish();
  collect("", 0);
}

spec::Outcome checked_outcome(const WireMonitor& checker) {
  if (!checker.violations().empty()) return spec::Outcome::kFail;
  if (!checker.not_understood().empty()) return spec::Outcome::kIncomplete;
  return checker.consumers() > 0 ? spec::Outcome::kPass : spec::Outcome::kNotApplicable;
}

}  // namespace permitcheck::capture
