#include "realbroker/run.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "capture/wire_monitor.h"
#include "tap/tap.h"
#include "realbroker/producer.h"
#include "base/absl_view.h"
#include "spec/rule_id.h"
#include "trace/reader.h"

namespace permitcheck::realbroker {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The tap's trace, kept in memory (the checker writes it on its own thread): the stats
// comparison reads the complete lines written so far.
class TraceBuffer : public std::streambuf {
 public:
  std::string complete_lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return text_.substr(0, text_.rfind('\n') + 1);
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return text_.size();
  }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) {
      std::lock_guard<std::mutex> lock(mu_);
      text_.push_back(static_cast<char>(c));
    }
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard<std::mutex> lock(mu_);
    text_.append(s, static_cast<std::size_t>(n));
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::string text_;
};

std::string unique_topic(const std::string& scenario) {
  static std::atomic<int> counter{0};
  return absl::StrCat("persistent://public/default/permitcheck-", scenario, "-", ::getpid(), "-",
                      counter++, "-", std::chrono::duration_cast<milliseconds>(
                                          Clock::now().time_since_epoch()).count() % 100000000);
}

}  // namespace

const std::vector<ScenarioInfo>& real_broker_scenarios() {
  static const std::vector<ScenarioInfo> all = {
      {.name = "batches",
       .what = "a batching producer's entries consumed and acknowledged one by one (Shared)"},
      {.name = "exclusive",
       .what = "the batches scenario on an Exclusive subscription",
       .sub_type = "Exclusive"},
      {.name = "failover",
       .what = "the batches scenario on a Failover subscription",
       .sub_type = "Failover"},
      {.name = "key_shared",
       .what = "the batches scenario on a Key_Shared subscription (messages without keys)",
       .sub_type = "Key_Shared"},
      {.name = "batch_index_acks",
       .what = "the batches scenario with the client's batch-index acknowledgement on (Shared)",
       .batch_index_ack = true},
      {.name = "partial_redelivery",
       .what = "every 3rd message negatively acknowledged with batch-index acknowledgement on: "
               "partial batches redelivered with an ack_set (Shared)",
       .nack_every = 3,
       .batch_index_ack = true},
      {.name = "partial_redelivery_failover",
       .what = "partial_redelivery on a Failover subscription",
       .sub_type = "Failover",
       .nack_every = 3,
       .batch_index_ack = true},
      {.name = "reopen",
       .what = "the consumer closed after 25 messages (mid-batch) and subscribed again on the "
               "same client, so on the same pooled connection (Shared)",
       .reopen_after = 25},
      {.name = "unload",
       .what = "the topic unloaded mid-stream: the broker closes the consumer (CLOSE_CONSUMER), "
               "the client subscribes again, more entries follow"},
      {.name = "restart",
       .what = "the broker restarted on the same data mid-stream: the client reconnects through "
               "the tap, more entries follow",
       .needs_restart = true},
  };
  return all;
}

const ScenarioInfo* find_real_broker_scenario(std::string_view name) {
  for (const ScenarioInfo& s : real_broker_scenarios()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

namespace {

constexpr char kSubscription[] = "permitcheck-sub";

// The state of one run: the tap, its checker, the client, and the steps scenarios take.
class Session {
 public:
  Session(BrokerControl& broker, const RealBrokerRun& run, const ScenarioInfo& info,
          RealBrokerOutcome& out)
      : broker_(broker),
        run_(run),
        info_(info),
        out_(out),
        topic_(unique_topic(info.name)),
        deadline_(Clock::now() + run.timeout),
        trace_stream_(&trace_) {}

  ~Session() { shut_down(); }

  absl::Status open_producer();
  absl::Status open_topic();
  absl::Status publish(int entries);
  absl::Status start_tap();
  absl::Status start_client();
  // Waits until the subscription has no backlog and nothing unacknowledged.
  absl::Status drain(const std::string& what);
  // Waits until the wire is quiet, then compares the broker's stats with it.
  absl::Status settle(const std::string& when);
  // Waits until `n` consumers have subscribed on the wire in all.
  absl::Status await_subscribes(std::uint64_t n, const std::string& what);
  // The unload closes the producer too (CLOSE_PRODUCER): it is opened again.
  absl::Status unload() {
    if (absl::Status s = admin().unload(topic_); !s.ok()) return s;
    producer_.reset();
    return open_producer();
  }
  absl::Status restart();
  void shut_down();
  // Why the run did not exercise the scenario (the client ignored an input), or "".
  std::string not_exercised() const;

 private:
  PulsarAdmin admin() const { return PulsarAdmin(broker_.endpoint().admin); }
  bool time_left() const { return Clock::now() < deadline_; }
  WireBalance balance() const;
  std::uint64_t subscribes() const;
  absl::Status client_gone(const std::string& what);

  BrokerControl& broker_;
  const RealBrokerRun& run_;
  const ScenarioInfo& info_;
  RealBrokerOutcome& out_;
  std::string topic_;
  Clock::time_point deadline_;
  TraceBuffer trace_;
  std::ostream trace_stream_;
  std::mutex findings_mu_;
  std::unique_ptr<capture::WireMonitor> checker_;
  std::unique_ptr<tap::Tap> tap_;
  std::thread tap_thread_;
  std::unique_ptr<BatchProducer> producer_;
  std::unique_ptr<GroupProcess> client_;
  std::string client_log_;
  bool shut_ = false;
};

absl::Status Session::open_producer() {
  const BrokerEndpoint e = broker_.endpoint();
  absl::Status last;
  // The broker refuses a producer (ServiceNotReady) until it owns the topic's bundle, which a
  // lookup starts; after a restart that can take a few tries.
  for (int attempt = 0; attempt < 20 && time_left(); ++attempt) {
    if (absl::Status s = admin().lookup(topic_); !s.ok()) {
      last = s;
    } else {
      absl::StatusOr<std::unique_ptr<BatchProducer>> p =
          BatchProducer::open(e.service_host, e.service_port, topic_);
      if (p.ok()) {
        producer_ = *std::move(p);
        return absl::OkStatus();
      }
      last = p.status();
    }
    std::this_thread::sleep_for(milliseconds(500));
  }
  return last.ok() ? absl::DeadlineExceededError("no time left to open the producer") : last;
}

absl::Status Session::open_topic() {
  if (absl::Status s = open_producer(); !s.ok()) return s;
  return admin().create_subscription(topic_, kSubscription);
}

absl::Status Session::publish(int entries) {
  for (int i = 0; i < entries; ++i) {
    absl::StatusOr<EntryPosition> at = producer_->send_batch(run_.batch_size);
    if (!at.ok()) return at.status();
    out_.published += run_.batch_size;
  }
  return absl::OkStatus();
}

absl::Status Session::start_tap() {
  const spec::TraceHeader header{.source = spec::TraceSource::kWire, .q = run_.q, .t = run_.t};
  checker_ = std::make_unique<capture::WireMonitor>(
      header, &trace_stream_,
      [this](const capture::WireFinding& f) {
        std::lock_guard<std::mutex> lock(findings_mu_);
        if (f.deviation) {
          out_.deviations.push_back(spec::format_finding(f.finding));
          return;
        }
        out_.findings.push_back(spec::format_finding(f.finding));
        const std::string rule(spec::rule_name(f.finding.rule));
        if (std::find(out_.rules.begin(), out_.rules.end(), rule) == out_.rules.end()) {
          out_.rules.push_back(rule);
        }
      },
      std::function<void(const capture::NotUnderstood&)>{},
      /*sends_span_frames=*/true);  // Pulsar writes a dispatch's entries in one go (X7)
  const BrokerEndpoint e = broker_.endpoint();
  tap_ = std::make_unique<tap::Tap>(
      tap::TapOptions{.listen = absl::StrCat("127.0.0.1:", run_.tap_port),
                          .upstream = absl::StrCat(e.service_host, ":", e.service_port),
                          .decode = capture::CaptureOptions{.idle_seconds = 1.0},
                          .pcap_path = run_.pcap_path,
                          .on_bypass =
                              [this](const tap::LookupBypass& b) {
                                std::lock_guard<std::mutex> lock(findings_mu_);
                                out_.notes.push_back(absl::StrCat(
                                    "a lookup sent the client to ", b.address,
                                    ", past the tap: that traffic is not checked"));
                              }},
      checker_.get());
  if (absl::Status s = tap_->start(); !s.ok()) return s;
  tap_thread_ = std::thread([this] { tap_->run(); });
  return absl::OkStatus();
}

absl::Status Session::start_client() {
  std::string command = absl::StrReplaceAll(
      run_.client_command, {{"{url}", absl::StrCat("pulsar://127.0.0.1:", tap_->port())},
                            {"{topic}", topic_},
                            {"{subscription}", kSubscription},
                            {"{q}", absl::StrCat(run_.q)},
                            {"{delay_ms}", "0"},
                            {"{nack_every}", absl::StrCat(info_.nack_every)}});
  command = with_client_inputs(command, info_);
  client_log_ = absl::StrCat(run_.log_dir, "/permitcheck-real-broker-", ::getpid(), "-",
                             info_.name, ".log");
  client_ = std::make_unique<GroupProcess>();
  return client_->start_shell(command, client_log_);
}

absl::Status Session::client_gone(const std::string& what) {
  return absl::AbortedError(absl::StrCat("the client ",
                                         client_->exit_description().value_or("ended"),
                                         " while ", what));
}

std::uint64_t Session::subscribes() const {
  trace::ReaderOptions options;
  absl::StatusOr<trace::Trace> t = trace::read_trace_text(trace_.complete_lines(), options);
  if (!t.ok()) return 0;
  std::uint64_t n = 0;
  for (const spec::Event& e : t->events) n += std::holds_alternative<spec::SubscribeOk>(e);
  return n;
}

WireBalance Session::balance() const {
  WireBalance b;
  absl::StatusOr<trace::Trace> t = trace::read_trace_text(trace_.complete_lines());
  if (t.ok()) {
    for (const spec::Event& e : t->events) b.on_event(e);
  }
  return b;
}

absl::Status Session::await_subscribes(std::uint64_t n, const std::string& what) {
  while (time_left()) {
    if (subscribes() >= n) return absl::OkStatus();
    if (!client_->running()) return client_gone(what);
    std::this_thread::sleep_for(milliseconds(200));
  }
  return absl::DeadlineExceededError(absl::StrCat("timed out waiting for ", what));
}

absl::Status Session::drain(const std::string& what) {
  PulsarAdmin a = admin();
  while (time_left()) {
    if (!client_->running()) return client_gone(what);
    absl::StatusOr<TopicStats> s = a.topic_stats(topic_);
    if (s.ok()) {
      for (const SubscriptionStats& sub : s->subscriptions) {
        if (sub.name != kSubscription) continue;
        for (const ConsumerStats& c : sub.consumers) {
          out_.broker_peak_available = std::max(out_.broker_peak_available, c.available_permits);
        }
        if (!sub.consumers.empty() && sub.backlog == 0 && sub.unacked_messages == 0) {
          return absl::OkStatus();
        }
      }
    }
    std::this_thread::sleep_for(milliseconds(300));
  }
  return absl::DeadlineExceededError(absl::StrCat("timed out ", what));
}

absl::Status Session::settle(const std::string& when) {
  PulsarAdmin a = admin();
  while (time_left()) {
    // Quiet: no trace line for 1.5 s (the tap's checker trails the forwarding slightly).
    const std::size_t before = trace_.size();
    std::this_thread::sleep_for(milliseconds(1500));
    if (trace_.size() != before) continue;
    absl::StatusOr<TopicStats> s = a.topic_stats(topic_);
    if (!s.ok()) return s.status();
    if (trace_.size() != before) continue;  // the wire moved while the stats were read
    for (const SubscriptionStats& sub : s->subscriptions) {
      if (sub.name != kSubscription) continue;
      if (!sub.type.empty()) out_.sub_type = sub.type;
      StatsComparison c = compare_with_stats(when, balance(), sub);
      for (const ConsumerStats& cs : sub.consumers) {
        out_.broker_peak_available = std::max(out_.broker_peak_available, cs.available_permits);
      }
      if (const std::string f = c.finding(); !f.empty()) {
        std::lock_guard<std::mutex> lock(findings_mu_);
        out_.findings.push_back(f);
        const std::string rule = f.substr(0, f.find(':'));
        if (std::find(out_.rules.begin(), out_.rules.end(), rule) == out_.rules.end()) {
          out_.rules.push_back(rule);
        }
      }
      out_.comparisons.push_back(std::move(c));
      return absl::OkStatus();
    }
    return absl::NotFoundError(absl::StrCat("the broker's stats have no subscription ",
                                            kSubscription));
  }
  return absl::DeadlineExceededError(absl::StrCat("timed out waiting for a quiet wire ", when));
}

absl::Status Session::restart() {
  producer_.reset();  // its connection dies with the broker
  const Clock::time_point begin = Clock::now();
  if (absl::Status s = broker_.restart(); !s.ok()) return s;
  deadline_ += Clock::now() - begin;  // the restart's own time is not the client's
  return open_producer();
}

std::string Session::not_exercised() const {
  if (!out_.sub_type.empty() && out_.sub_type != info_.sub_type) {
    return absl::StrCat("the broker's stats show a ", out_.sub_type, " subscription, the scenario "
                        "needs ", info_.sub_type, " (does the client take {sub_type}?)");
  }
  absl::StatusOr<trace::Trace> t = trace::read_trace_text(trace_.complete_lines());
  if (!t.ok()) return absl::StrCat("the tap's trace cannot be read: ", t.status().message());
  bool ack_set = false;
  absl::flat_hash_map<std::string, int> subscribes_per_connection;
  int most_subscribes = 0;
  for (const spec::Event& e : t->events) {
    if (const auto* m = std::get_if<spec::Message>(&e)) ack_set |= !m->ack_set.absent();
    if (const auto* ok = std::get_if<spec::SubscribeOk>(&e)) {
      most_subscribes = std::max(most_subscribes, ++subscribes_per_connection[ok->cnx.to_string()]);
    }
  }
  if (info_.batch_index_ack && info_.nack_every > 0 && !ack_set) {
    return "no partial batch was redelivered with an ack_set (is the client's batch-index "
           "acknowledgement on?)";
  }
  if (info_.reopen_after > 0 && most_subscribes < 2) {
    return "the client did not subscribe twice on one connection (does it close and reopen "
           "its consumer?)";
  }
  return "";
}

void Session::shut_down() {
  if (shut_) return;
  shut_ = true;
  if (client_) {
    client_->stop(milliseconds(3000));
    out_.client_log_tail = client_->log_tail(2000);
    if (!run_.keep_client_log) ::unlink(client_log_.c_str());
  }
  if (producer_) (void)producer_->close();
  if (tap_) {
    tap_->stop();
    if (tap_thread_.joinable()) tap_thread_.join();
  }
  if (checker_) {
    checker_->finish();
    out_.consumers = checker_->consumers();
    out_.flows = checker_->flows();
    out_.messages = checker_->messages();
    out_.acks = checker_->acks();
  }
  out_.peak_available = balance().peak_available();
  if (!run_.trace_path.empty()) {
    std::ofstream trace_file(run_.trace_path);
    trace_file << trace_.complete_lines();
    if (!trace_file) {
      out_.notes.push_back(absl::StrCat("the trace could not be written to ", run_.trace_path));
    }
  }
  (void)admin().delete_subscription(topic_, kSubscription);
}

// The steps of each scenario after the tap and the client are up.
absl::Status drive(Session& s, const ScenarioInfo& info, const RealBrokerRun& run) {
  const int half = std::max(1, run.entries / 2);
  if (info.name == "unload" || info.name == "restart") {
    if (absl::Status st = s.drain("draining the first entries"); !st.ok()) return st;
    if (absl::Status st = s.settle("after the first entries"); !st.ok()) return st;
    if (info.name == "unload") {
      if (absl::Status st = s.unload(); !st.ok()) return st;
    } else if (absl::Status st = s.restart(); !st.ok()) {
      return st;
    }
    if (absl::Status st = s.await_subscribes(2, "the client to subscribe again"); !st.ok()) {
      return st;
    }
    if (absl::Status st = s.publish(half); !st.ok()) return st;
    if (absl::Status st = s.drain("draining the later entries"); !st.ok()) return st;
    return s.settle(absl::StrCat("after the ", info.name == "unload" ? "unload" : "restart"));
  }
  if (absl::Status st = s.drain("draining the entries"); !st.ok()) return st;
  return s.settle("after draining");
}

std::string verdict_of(const RealBrokerOutcome& o, bool completed) {
  if (!o.findings.empty()) return "FAIL";
  if (!completed || o.consumers == 0 || o.comparisons.empty()) return "INCOMPLETE";
  return "PASS";
}

}  // namespace

RealBrokerOutcome run_on_real_broker(BrokerControl& broker, const RealBrokerRun& run) {
  const Clock::time_point start = Clock::now();
  RealBrokerOutcome out;
  out.scenario = run.scenario;
  out.client = run.client_name.empty() ? run.client_command : run.client_name;
  out.q = run.q;
  const ScenarioInfo* info = find_real_broker_scenario(run.scenario);
  if (info == nullptr) {
    out.notes.push_back(absl::StrCat("unknown scenario ", run.scenario));
    return out;
  }
  bool completed = false;
  {
    Session s(broker, run, *info, out);
    absl::Status st = s.open_topic();
    if (st.ok()) st = s.publish(info->needs_restart || info->name == "unload"
                                    ? std::max(1, run.entries / 2)
                                    : run.entries);
    if (st.ok()) st = s.start_tap();
    if (st.ok()) st = s.start_client();
    if (st.ok()) st = drive(s, *info, run);
    if (st.ok()) {
      if (const std::string why = s.not_exercised(); !why.empty()) {
        st = absl::FailedPreconditionError(why);
      }
    }
    completed = st.ok();
    if (!st.ok()) out.notes.push_back(std::string(st.message()));
    s.shut_down();
  }
  out.verdict = verdict_of(out, completed);
  if (out.consumers == 0) out.notes.push_back("no consumer subscribed through the tap");
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

std::string with_client_inputs(const std::string& command, const ScenarioInfo& info) {
  std::string out = absl::StrReplaceAll(
      command, {{"{sub_type}", info.sub_type},
                {"{batch_index_ack}", info.batch_index_ack ? "1" : "0"},
                {"{reopen_after}", absl::StrCat(info.reopen_after)}});
  // Exported only when the scenario needs them: the other scenarios run the client exactly
  // as `permitcheck conform` does.
  std::string exports;
  if (info.batch_index_ack) absl::StrAppend(&exports, " PERMITCHECK_BATCH_INDEX_ACK=1");
  if (info.reopen_after > 0) {
    absl::StrAppend(&exports, " PERMITCHECK_REOPEN_AFTER=", info.reopen_after);
  }
  return exports.empty() ? out : absl::StrCat("export", exports, "; ", out);
}

}  // namespace permitcheck::realbroker
