// One scenario run: broker up, client started, the scenario's window opened under bounded
// waits, the drain phase, quiescence, client stopped, trace judged (scenario_judge.cc).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "conformance/internal/process.h"
#include "conformance/internal/scenario_judge.h"
#include "conformance/scenario.h"

namespace permitcheck::conformance {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using K = ScenarioKind;

class Run {
 public:
  Run(const ClientSpec& client, const ScenarioParams& params, ConformanceBroker& broker,
      internal::ClientProcess& proc, ScenarioOutcome& out)
      : client_(client), p_(params), broker_(broker), proc_(proc), out_(out),
        deadline_(Clock::now() + client.timeout) {}

  // Everything up to quiescence. False when the client never subscribed.
  bool drive() {
    if (!wait(ready(1), client_.startup)) return false;
    switch (p_.kind) {
      case K::kHeldCloseConsumer:
      case K::kHeldReconnect: held(); break;
      case K::kFlowAroundClose: flow_around_close(); break;
      case K::kStartMessageId: start_message_id(); break;
      case K::kDuplicateRedelivery: duplicate_redelivery(); break;
      default: entries_with_disruption(); break;
    }
    if (p_.kind == K::kNegativeAck) redeliver_nacked();
    // The scenario's own quiescence (E5/E6 judged here, numbers reported from here), then
    // the drain and a second quiescence.
    settle();
    BrokerView v = broker_.view();
    out_.granted = v.granted;
    out_.debited = v.debited;
    out_.never_acked = v.unacked_entries;
    broker_.mark_quiescent();
    drain();
    settle();
    broker_.mark_quiescent();
    return true;
  }

 private:
  // A bounded wait that also gives up when the client process is gone.
  bool wait(const std::function<bool(const BrokerView&)>& pred, milliseconds max) {
    const auto until = std::min(deadline_, Clock::now() + max);
    while (Clock::now() < until) {
      if (broker_.wait_until(pred, milliseconds(50))) return true;
      if (!proc_.running()) return broker_.wait_until(pred, milliseconds(0));
    }
    return false;
  }
  static bool idle_for(const BrokerView& v, milliseconds d) {
    return Clock::now() - v.last_activity >= d;
  }
  // Quiescence: everything acknowledged and a short silence (a third of the long one), or a
  // long silence. Keep-alives are not activity (the broker does not count them).
  void settle() {
    const milliseconds quiet = client_.idle / 3;
    wait([&](const BrokerView& v) {
      return (v.outstanding == 0 && idle_for(v, quiet)) || idle_for(v, client_.idle);
    }, client_.timeout);
  }
  static std::function<bool(const BrokerView&)> ready(int incarnation) {
    return [incarnation](const BrokerView& v) {
      return v.subscribed && v.subscribes >= incarnation && v.flows >= 1;
    };
  }
  bool wait_available() {
    return wait([](const BrokerView& v) { return v.subscribed && v.available > 0; },
                milliseconds(5000));
  }
  static Delivery to_delivery(const EntrySpec& e, std::uint64_t id) {
    return Delivery{.entry = id, .batch_size = e.batch_size, .batched = e.batched,
                    .ack_set = ack_set_of(e), .fault = e.fault, .truncate_at = e.truncate_at,
                    .extra_messages = e.extra_messages};
  }
  // Delivers `e` once the broker may (available > 0); false when it stalled or is gone.
  bool deliver(const EntrySpec& e) {
    if (!wait_available()) return false;
    const std::uint64_t id = next_entry_++;
    if (!broker_.deliver(to_delivery(e, id)).ok()) return false;
    delivered_.emplace_back(id, e);
    return true;
  }
  void disrupt(bool same_connection) {
    if (same_connection) (void)broker_.close_consumer();
    else (void)broker_.drop_connection();
    ++incarnation_;
  }
  std::string across(bool same_connection) const {
    return same_connection ? "CLOSE_CONSUMER on the same connection"
                           : "a connection drop (the replacement on a new connection)";
  }

  void entries_with_disruption() {
    for (std::size_t i = 0; i <= p_.entries.size(); ++i) {
      if (static_cast<int>(i) == p_.disrupt_after) {
        if (p_.kind == K::kCloseConsumer || p_.kind == K::kReconnect) {
          settle();
          disrupt(p_.kind == K::kCloseConsumer);
          if (!wait(ready(incarnation_), client_.startup)) return;
          out_.windows.push_back(absl::StrCat("replaced the consumer after ", i,
                                              " entr(ies), all processed, by ",
                                              across(p_.kind == K::kCloseConsumer)));
        } else if (p_.kind == K::kUnknownConsumer) {
          (void)broker_.deliver(Delivery{.entry = 900 + next_entry_, .batch_size = 3,
                                         .batched = true, .consumer = p_.foreign_consumer});
          (void)broker_.deliver(Delivery{.entry = 950 + next_entry_,
                                         .consumer = p_.foreign_consumer});
          out_.windows.push_back(absl::StrCat("4 messages for consumer ", p_.foreign_consumer,
                                              ", never subscribed"));
        }
      }
      if (i == p_.entries.size()) break;
      if (!deliver(p_.entries[i])) break;  // stalled or gone: quiescence reports it (E6)
    }
    for (const EntrySpec& e : p_.entries) {
      if (e.fault == EntryFault::kNone) continue;
      out_.windows.push_back(absl::StrCat(e.batched ? absl::StrCat("b", e.batch_size) : "single",
                                          e.cleared.empty() ? "" : " (partial)", " with ",
                                          std::string(entry_fault_name(e.fault)), " fault delivered"));
    }
  }

  // The application still holds messages when the consumer is replaced: they finish after
  // the replacement subscribed (L6 on a new connection, L7 on the same one).
  void held() {
    const bool same = p_.kind == K::kHeldCloseConsumer;
    for (const EntrySpec& e : p_.entries) {
      if (!deliver(e)) return;
    }
    // Replace as soon as the application acknowledged its first message: the rest is held.
    const milliseconds budget(2000 + 2 * p_.delay_ms);
    wait([](const BrokerView& v) { return v.acked_messages >= 1 || v.outstanding == 0; },
         budget);
    const BrokerView v = broker_.view();
    const auto at = Clock::now();
    if (v.held_units < 2) {
      out_.not_opened.push_back(absl::StrCat(
          "the client held ", v.held_units, " unacknowledged message(s) when the consumer was "
          "to be replaced (need 2: one in processing, one after it); raise {delay_ms} or make "
          "the consumer process messages one by one"));
      return;
    }
    disrupt(same);
    if (!wait(ready(incarnation_), client_.startup)) return;
    const auto subscribed_after = Clock::now() - at;
    const milliseconds processing(v.held_units * p_.delay_ms);
    if (subscribed_after >= processing) {
      out_.not_opened.push_back(absl::StrCat(
          "the replacement subscribed ",
          std::chrono::duration_cast<milliseconds>(subscribed_after).count(),
          " ms after the replacement began, after the ", v.held_units,
          " held message(s) would have finished (", processing.count(), " ms)"));
      return;
    }
    out_.windows.push_back(absl::StrCat("held ", v.held_units, " message(s) across ",
                                        across(same), "; they finish after the replacement "
                                        "subscribed"));
    out_.held_across = v.held_units;
    // Let the held messages finish (bounded by their processing time).
    std::this_thread::sleep_for(processing + milliseconds(300));
  }

  // A Flow comes due on the message in processing when CLOSE_CONSUMER arrives (L11): T
  // singles on a fresh accumulator, the consumer closed once T - 1 are acknowledged.
  void flow_around_close() {
    for (const EntrySpec& e : p_.entries) {
      if (!deliver(e)) return;
    }
    settle();
    const std::int64_t t = client_.threshold();
    const BrokerView v0 = broker_.view();
    const bool fresh = v0.granted == client_.q && v0.debited == 0;
    for (std::int64_t i = 0; i < t; ++i) {
      if (!deliver(EntrySpec{})) return;
    }
    const std::int64_t acked0 = v0.acked_messages;
    wait([&](const BrokerView& v) { return v.acked_messages - acked0 >= t - 1; },
         milliseconds(2000 + t * p_.delay_ms));
    const BrokerView v = broker_.view();
    disrupt(/*same_connection=*/true);
    const std::int64_t acked = v.acked_messages - acked0;
    if (acked != t - 1 || v.held_units < 1 || !fresh) {
      out_.not_opened.push_back(absl::StrCat(
          "CLOSE_CONSUMER went out with ", acked, " of ", t, " messages acknowledged and ",
          v.held_units, " held", fresh ? "" : ", on an accumulator not known to be empty",
          ": no Flow was known to come due around it (need T - 1 acknowledged and the T-th "
          "in processing: raise {delay_ms})"));
    } else {
      out_.windows.push_back(absl::StrCat(
          "CLOSE_CONSUMER arrived while the message that makes a Flow of T = ", t,
          " due was in processing (", acked, " of ", t, " acknowledged), same connection"));
    }
    if (!wait(ready(incarnation_), client_.startup)) return;
    // Anything the old incarnation still writes arrives now, before any delivery.
    std::this_thread::sleep_for(milliseconds(300 + p_.delay_ms));
    const BrokerView after = broker_.view();
    out_.late_flow = after.granted - client_.q;
  }

  // Reconnect, then the entries at or before the Subscribe's start_message_id again (L9);
  // a client without one gets the acknowledged entries again as duplicates.
  void start_message_id() {
    for (const EntrySpec& e : p_.entries) {
      if (!deliver(e)) return;
    }
    settle();
    disrupt(/*same_connection=*/false);
    if (!wait(ready(incarnation_), client_.startup)) return;
    const BrokerView v = broker_.view();
    int again = 0, singles = 0;
    for (const auto& [id, e] : std::vector(delivered_)) {
      if (v.start_entry && id > *v.start_entry) continue;
      if (!wait_available()) break;
      Delivery dup = to_delivery(e, id);
      dup.already_acked = true;
      if (!broker_.deliver(dup).ok()) break;
      ++again;
      if (!e.batched) ++singles;
      if (v.start_entry) out_.before_start_singles += e.batched ? 0 : 1;
    }
    if (again == 0) {
      out_.not_opened.push_back("nothing was delivered before the reconnect");
      return;
    }
    out_.windows.push_back(
        v.start_entry
            ? absl::StrCat("resubscribed on a new connection with start_message_id entry ",
                           *v.start_entry, "; delivered ", again, " entr(ies) at or before it "
                           "again (", singles, " non-batched)")
            : absl::StrCat("resubscribed on a new connection without start_message_id; "
                           "delivered ", again, " acknowledged entr(ies) again as duplicates"));
  }

  // Rounds while the broker may deliver (at most 6): the entries (topped up with singles to T
  // messages), the client's Flow for them,
  // 20 ms (it has acknowledged them; Java and Go group acks for 100 ms), the same entries
  // again, as a broker that lost those acks in a restart redelivers them; then up to 300 ms
  // for a Flow returning them. A client that drops a duplicate must still return its P (K4).
  void duplicate_redelivery() {
    int rounds = 0, again = 0, returned = 0;
    for (int round = 0; round < 6; ++round) {
      if (broker_.view().available <= 0) break;
      const int flows0 = broker_.view().flows;
      const std::size_t first = delivered_.size();
      // Singles up to T messages in the round, so that the client's Flow tells it took them.
      std::vector<EntrySpec> round_entries = p_.entries;
      std::int64_t messages = 0;
      for (const EntrySpec& e : round_entries) {
        messages += e.batched ? e.batch_size - static_cast<std::int64_t>(e.cleared.size()) : 1;
      }
      for (; messages < client_.threshold(); ++messages) round_entries.push_back(EntrySpec{});
      for (const EntrySpec& e : round_entries) {
        if (!deliver(e)) break;
      }
      if (delivered_.size() == first ||
          !wait([&](const BrokerView& v) { return v.flows > flows0; }, milliseconds(2000))) {
        break;
      }
      std::this_thread::sleep_for(milliseconds(20));
      const int flows1 = broker_.view().flows;
      for (std::size_t i = first; i < delivered_.size(); ++i) {
        if (broker_.view().available <= 0) break;
        if (!broker_.deliver(to_delivery(delivered_[i].second, delivered_[i].first)).ok()) break;
        ++again;
      }
      ++rounds;
      if (wait([&](const BrokerView& v) { return v.flows > flows1; }, milliseconds(300))) {
        ++returned;
      }
    }
    if (again == 0) {
      out_.not_opened.push_back("no round got a Flow from the client within 2 s of its T "
                                "messages, so no duplicate was timed");
      return;
    }
    out_.windows.push_back(absl::StrCat(
        rounds, " round(s): entries delivered, then 20 ms after the client's Flow for them the "
        "same entries again (", again, " duplicate entr(ies)); ", returned,
        " round(s) saw a Flow after the duplicates"));
  }

  // Redeliver what the client names; a request without ids (Java's nack on Exclusive and
  // Failover) redelivers every unacknowledged entry. An entry some of whose indexes were
  // acknowledged goes out as a partial redelivery (ack_set). At most three rounds.
  void redeliver_nacked() {
    std::size_t handled = 0;
    int handled_all = 0;
    for (int round = 0; round < 3; ++round) {
      settle();
      const BrokerView v = broker_.view();
      if (v.redeliver_requests.size() == handled && v.redeliver_all_requests == handled_all) {
        break;
      }
      std::vector<std::uint64_t> ids(v.redeliver_requests.begin() + static_cast<long>(handled),
                                     v.redeliver_requests.end());
      handled = v.redeliver_requests.size();
      if (v.redeliver_all_requests > handled_all) {
        ids.insert(ids.end(), v.unacked_entries.begin(), v.unacked_entries.end());
        handled_all = v.redeliver_all_requests;
      }
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      int partial = 0;
      for (std::uint64_t entry : ids) {
        for (const auto& [id, spec] : delivered_) {
          if (id != entry) continue;
          if (!wait_available()) return;
          EntrySpec e = spec;
          if (auto it = v.acked_indexes.find(id); it != v.acked_indexes.end() && e.batched) {
            for (std::int64_t i : it->second) {
              if (std::find(e.cleared.begin(), e.cleared.end(), i) == e.cleared.end()) {
                e.cleared.push_back(i);
              }
            }
            ++partial;
          }
          Delivery d = to_delivery(e, id);
          d.redelivery_count = static_cast<std::uint32_t>(round + 1);
          (void)broker_.deliver(d);
        }
      }
      out_.windows.push_back(absl::StrCat("round ", round + 1, ": redelivered ", ids.size(),
                                          " nacked entr(ies), ", partial, " partial (ack_set)"));
    }
  }

  // The drain: single messages, one at a time, until the client flushes its accumulator (a
  // Flow); right after it, with everything acknowledged, available - Q is its exact surplus
  // or shortfall. At most T messages; a stall (available 0 first) bounds the shortfall.
  void drain() {
    ScenarioOutcome::Drain& d = out_.drain;
    BrokerView v = broker_.view();
    if (!v.subscribed || !proc_.running()) return;
    d.ran = true;
    const std::int64_t q = client_.q, t = client_.threshold();
    const milliseconds quiet(std::min<std::int64_t>(client_.idle.count() / 3, 100));
    // What the scenario delivered is processed first (bounded; never-acknowledged entries
    // stay outstanding and are reported).
    wait([&](const BrokerView& w) { return w.outstanding == 0 && idle_for(w, quiet); },
         client_.idle);
    v = broker_.view();
    const int flows0 = v.flows;
    for (std::int64_t i = 0; i < t; ++i) {
      v = broker_.view();
      if (!v.subscribed || v.available <= 0) break;
      const int outstanding = v.outstanding;
      const std::uint64_t id = next_entry_++;
      if (!broker_.deliver(Delivery{.entry = id}).ok()) break;
      ++d.messages;
      wait([&](const BrokerView& w) {
        return w.outstanding <= outstanding && idle_for(w, quiet);
      }, milliseconds(3000 + p_.delay_ms));
      v = broker_.view();
      if (v.flows > flows0) {
        d.measured = true;
        d.delta = v.available - q;
        d.text = absl::StrCat("drain: ", d.messages, " single message(s) until the client "
                              "flushed; then available ", v.available, " = Q ",
                              d.delta >= 0 ? "+ " : "- ", std::abs(d.delta));
        return;
      }
    }
    v = broker_.view();
    // No flush: everything acknowledged, the accumulator holds at least the drain's messages
    // and less than T, so Q - available - accumulator is short.
    d.short_max = q - v.available - d.messages;
    d.short_min = q - v.available - (t - 1);
    d.text = absl::StrCat("drain: ", d.messages, " single message(s), no Flow; available ",
                          v.available, ": between ", std::max<std::int64_t>(0, d.short_min),
                          " and ", d.short_max, " permit(s) short");
  }

  const ClientSpec& client_;
  const ScenarioParams& p_;
  ConformanceBroker& broker_;
  internal::ClientProcess& proc_;
  ScenarioOutcome& out_;
  const Clock::time_point deadline_;
  std::uint64_t next_entry_ = 1;
  int incarnation_ = 1;
  std::vector<std::pair<std::uint64_t, EntrySpec>> delivered_;
};

}  // namespace

std::string expand_command(const ClientSpec& client, const ScenarioParams& params,
                           const std::string& url) {
  return absl::StrReplaceAll(
      client.command, {{"{url}", url},
                       {"{topic}", "persistent://public/default/permitcheck"},
                       {"{subscription}", "permitcheck-sub"},
                       {"{q}", absl::StrCat(client.q)},
                       {"{delay_ms}", absl::StrCat(params.delay_ms)},
                       {"{nack_every}", absl::StrCat(params.nack_every)}});
}

ScenarioOutcome run_scenario(const ClientSpec& client, const ScenarioParams& params) {
  const auto start = Clock::now();
  ScenarioOutcome out;
  out.params = params;
  out.header = spec::TraceHeader{.source = spec::TraceSource::kBroker,
                                 .ruleset = spec::RulesetId::kRevD,
                                 .q = client.q,
                                 .t = client.t};
  const ScenarioInfo& info = scenario_info(params.kind);

  ConformanceBroker broker(BrokerOptions{.send_message_permits = params.send_field});
  if (absl::Status s = broker.start(); !s.ok()) {
    out.client_failure = absl::StrCat("broker could not start: ", s.message());
    out.client_never_started = true;
    return out;
  }
  static std::atomic<int> run_counter{0};
  const std::string log_path = absl::StrCat(client.log_dir, "/permitcheck-conform-", ::getpid(),
                                            "-", run_counter++, ".log");
  internal::ClientProcess proc;
  proc.keep_log(client.keep_log);
  if (absl::Status s = proc.start(expand_command(client, params, broker.url()), log_path);
      !s.ok()) {
    out.client_failure = absl::StrCat("client could not start: ", s.message());
    out.client_never_started = true;
    return out;
  }

  Run run(client, params, broker, proc, out);
  if (!run.drive()) {
    out.client_never_started = true;
    out.client_failure =
        absl::StrCat("hang or start failure: no Subscribe and Flow within ",
                     client.startup.count(), " ms (",
                     proc.exit_description().value_or("still running"), ")");
  } else {
    const BrokerView v = broker.view();
    out.incarnations = v.subscribes;
    if (!v.subscribed && !proc.crashed()) {
      out.violations.push_back(spec::Finding{
          info.primary, 0,
          absl::StrCat("at quiescence the client has no subscribed consumer (it closed its "
                       "consumer or connection during ", std::string(info.name), ")")});
    }
    for (const std::string& e : v.protocol_errors) {
      out.violations.push_back(spec::Finding{info.primary, 0,
                                             absl::StrCat("client sent a malformed frame: ", e)});
    }
  }
  const bool crashed = proc.crashed();
  const std::optional<std::string> exit = proc.exit_description();
  if (crashed) {
    broker.record_extension("x-client-crashed");
    const BrokerView v = broker.view();
    out.granted = v.granted;
    out.debited = v.debited;
    out.incarnations = v.subscribes;
  }
  proc.stop(milliseconds(500));
  broker.stop();
  out.client_log_tail = proc.log_tail(2000);
  out.events = broker.trace();
  if (crashed && !out.client_failure) {
    out.client_failure = absl::StrCat("crashed: ", exit.value_or("ended"));
  }
  internal::judge(client, out);
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace permitcheck::conformance
