// The scenario driver (the contract: conformance/internal/scenario_driver.h): the scenario's
// window opened under bounded waits, the drain phase, quiescence. The run around it (broker,
// client process, judging) is scenario_attempt.cc.
#include <algorithm>
#include <thread>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "conformance/internal/process.h"
#include "conformance/internal/scenario_driver.h"
#include "conformance/scenario.h"
#include "spec/plain_text.h"
#include "wire/quiescence.h"

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
      case K::kStaleEpoch: stale_epoch(); break;
      case K::kStartMessageId: start_message_id(); break;
      case K::kDuplicateRedelivery: duplicate_redelivery(); break;
      case K::kActiveConsumerChange: active_consumer_change(); break;
      case K::kDropBeforeAck: drop_before_ack(); break;
      default: entries_with_disruption(); break;
    }
    if (p_.kind == K::kNegativeAck) redeliver_nacked();
    // The scenario's own quiescence (E5/E6 judged here, numbers reported from here), then
    // the drain and a second quiescence.
    settle();
    report_redeliveries();
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
  // What the broker wrote again to a replacement after connections the client closed (as a
  // Pulsar broker redelivers a closed consumer's unacknowledged entries), and each entry the
  // client closed its connection on every time it came back: it loops on it (reported here,
  // not judged).
  void report_redeliveries() {
    const BrokerView v = broker_.view();
    if (v.redelivered_after_client_close > 0) {
      out_.windows.push_back(absl::StrCat(
          "the client closed its connection with entries unacknowledged: written again ",
          spec::count_noun(v.redelivered_after_client_close, "time"),
          " to its replacement, as a Pulsar broker redelivers them"));
    }
    for (std::uint64_t entry : v.redelivery_loops) {
      out_.windows.push_back(absl::StrCat(
          "the client loops on entry ", entry, ": it closed its connection again each time the "
          "entry was written again, and the broker stopped redelivering it"));
    }
  }

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
  // The silence after the client's last acknowledgement in which a Flow it made due must
  // come: `base`, longer for a client this machine runs slowly: three times the longest it
  // took to write a Flow after its previous command (BrokerView::slowest_flow), at most twice
  // the long silence. On a busy machine a client can be off the CPU between an
  // acknowledgement and its Flow; judging in that gap would blame it for the machine (E5).
  // A client that looks at its queue only now and then (pulsar-flex: once a second) is slow
  // to pick a delivery up, not to write a Flow, so its silences stay short.
  milliseconds flow_patience(milliseconds base) const {
    return std::clamp(3 * broker_.view().slowest_flow, base, std::max(base, 2 * client_.idle));
  }
  // The silence that counts as quiescence while entries are still unacknowledged: the long
  // silence, longer for a client slow to finish an entry (three times the longest it took,
  // its application delay aside, BrokerView::slowest_ack), at most twice the long silence.
  milliseconds ack_patience() const {
    const milliseconds slow = broker_.view().slowest_ack - milliseconds(p_.delay_ms);
    return std::clamp(3 * slow, client_.idle, 2 * client_.idle);
  }
  // Quiescence (wire/quiescence.h decides it, as for a capture): everything acknowledged and a
  // short silence (a third of the long one), or a long silence. Keep-alives are not activity
  // (the broker does not count them).
  void settle() {
    const milliseconds quiet = flow_patience(client_.idle / 3);
    const milliseconds long_silence = std::max(quiet, ack_patience());
    const wire::Patience patience{.settled = seconds_of(quiet),
                                  .unsettled = seconds_of(long_silence)};
    wait([&](const BrokerView& v) {
      return wire::quiescent(v.outstanding, seconds_of(Clock::now() - v.last_activity), patience);
    }, client_.timeout);
  }
  template <typename Duration>
  static double seconds_of(Duration d) {
    return std::chrono::duration<double>(d).count();
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
                    .cut = e.cut, .extra_messages = e.extra_messages};
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
          out_.windows.push_back(absl::StrCat("replaced the consumer after ",
                                              spec::count_noun(i, "entry", "entries"),
                                              ", all processed, by ",
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
                                          std::string(entry_fault_name(e.fault)),
                                          e.fault == EntryFault::kTruncatedBatch
                                              ? absl::StrCat(" (cut ", std::string(cut_name(e.cut)),
                                                             " of index ", e.truncate_at, ")")
                                              : "",
                                          " fault delivered"));
    }
  }

  // A window that did not open is tried again on the replacement, at most this often in one
  // run; the attempts that failed are reported with the one that opened.
  static constexpr int kAttempts = 3;
  // Another attempt only while the run has time for it and for the drain after it (the
  // entries' processing twice over, T drain messages, 3 s for the replacement and the
  // quiescences), so a retry never runs the run into its timeout.
  bool time_for_attempt() const {
    std::int64_t units = 0;
    for (const EntrySpec& e : p_.entries) units += e.batched ? e.batch_size : 1;
    const milliseconds need(3000 + 2 * units * p_.delay_ms +
                            client_.threshold() * (p_.delay_ms + 300));
    return Clock::now() + need < deadline_;
  }

  // Delivers the scenario's entries, then waits until an acknowledgement proves the
  // application is processing while later deliveries are still unacknowledged (bounded by the
  // client's startup allowance plus its processing time). The view then; nullopt when a
  // delivery stalled or the client is gone.
  std::optional<BrokerView> deliver_and_hold() {
    const std::int64_t acked0 = broker_.view().acked_messages;
    std::int64_t units = 0;
    for (const EntrySpec& e : p_.entries) {
      if (!deliver(e)) return std::nullopt;
      units += e.batched ? e.batch_size : 1;
    }
    wait([&](const BrokerView& v) { return v.acked_messages > acked0 || v.outstanding == 0; },
         client_.startup + milliseconds(units * p_.delay_ms));
    return broker_.view();
  }
  std::string too_few_held(const BrokerView& v, std::int64_t need) const {
    return absl::StrCat("the client held ", v.held_units, " unacknowledged ",
                        spec::noun(v.held_units, "message"), " when the consumer was to be "
                        "replaced (need ", need, ": one in processing, the rest after it); "
                        "raise {delay_ms} or make the consumer process messages "
                        "one by one");
  }
  // Reports the window that opened (after the attempts in `failed`), or, when none did, why.
  void conclude(std::optional<std::string> window, std::vector<std::string> failed) {
    if (!window) {
      for (std::string& f : failed) out_.not_opened.push_back(std::move(f));
      return;
    }
    if (!failed.empty()) {
      absl::StrAppend(&*window, " (attempt ", failed.size() + 1, "; before: ",
                      absl::StrJoin(failed, "; "), ")");
    }
    out_.windows.push_back(std::move(*window));
  }

  // The application still holds messages when the consumer is replaced: they finish after
  // the replacement subscribed (L6 on a new connection, L7 on the same one). The window is
  // event-driven: the broker replaces the consumer right after the first acknowledgement, and
  // it counts as opened only when the replacement acknowledges a held message (it finished
  // after the replacement subscribed), never by guessing from {delay_ms}.
  void held() {
    const bool same = p_.kind == K::kHeldCloseConsumer;
    std::vector<std::string> failed;
    for (int attempt = 1; attempt <= kAttempts && (attempt == 1 || time_for_attempt());
         ++attempt) {
      const std::optional<BrokerView> held = deliver_and_hold();
      if (!held) break;
      const BrokerView& v = *held;
      if (v.held_units < 2) {
        failed.push_back(too_few_held(v, 2));
        continue;
      }
      const auto at = Clock::now();
      disrupt(same);
      if (!wait(ready(incarnation_), client_.startup)) break;
      const auto subscribed_after =
          std::chrono::duration_cast<milliseconds>(Clock::now() - at);
      const milliseconds processing(v.held_units * p_.delay_ms);
      wait([](const BrokerView& w) {
        return w.previous_acked_late >= 1 || w.previous_held_units == 0;
      }, processing + milliseconds(2000));
      const std::int64_t late = broker_.view().previous_acked_late;
      // Let the held messages finish (bounded by their processing time).
      wait([](const BrokerView& w) { return w.previous_held_units == 0; },
           processing + milliseconds(300));
      if (late == 0) {
        // No sign that any finished after the replacement subscribed (a client that drops
        // its queued messages on the replacement, or acknowledges them nowhere).
        failed.push_back(absl::StrCat(
            "held ", spec::count_noun(v.held_units, "message"), " across ", across(same),
            ", but the replacement (subscribed after ", subscribed_after.count(),
            " ms) acknowledged "
            "none of them within their ", processing.count(), " ms of processing + 2 s"));
        continue;
      }
      out_.held_across = v.held_units;
      conclude(absl::StrCat("held ", spec::count_noun(v.held_units, "message"), " across ",
                            across(same), "; ", late,
                            " of them acknowledged after the replacement subscribed"),
               std::move(failed));
      return;
    }
    conclude(std::nullopt, std::move(failed));
  }

  // The connection drops (CLOSE_CONSUMER with same_connection) right after the entries were
  // written, before the client acknowledged any of them: the messages wait inside the client
  // (its receiver queue, or its application). Whatever it does with them, clears them or
  // processes them late and acknowledges them on the replacement's connection, their units
  // belong to the incarnation that ended: none may reach the replacement (E3, N3; rulebook
  // 12.7; 12.12: an old Flow that crossed CLOSE_CONSUMER is credited to nobody, as this broker
  // does). Unlike the held windows it needs no acknowledgement before the drop, nor one after.
  void drop_before_ack() {
    const bool same = p_.same_connection;
    std::vector<std::string> failed;
    for (int attempt = 1; attempt <= kAttempts && (attempt == 1 || time_for_attempt());
         ++attempt) {
      const std::int64_t acked0 = broker_.view().acked_messages;
      const std::size_t mark = broker_.trace().size();
      bool all = true;
      for (const EntrySpec& e : p_.entries) all = all && deliver(e);
      if (!all) break;  // stalled or gone: quiescence reports it
      const BrokerView v = broker_.view();
      if (v.acked_messages > acked0) {
        failed.push_back(absl::StrCat(
            "the client acknowledged ", spec::count_noun(v.acked_messages - acked0, "message"),
            " before the last entry was delivered (", v.held_units,
            " still inside it): not a drop before "
            "any acknowledgement (raise {delay_ms}, or fewer units than Q)"));
        settle();
        continue;
      }
      const int old_cnx = v.connection;
      disrupt(same);
      if (!wait(ready(incarnation_), client_.startup)) break;
      const BrokerView r = broker_.view();
      // What becomes of the old incarnation's messages: processed and acknowledged late, or
      // cleared (never acknowledged); bounded by their processing time.
      const milliseconds processing(v.held_units * p_.delay_ms);
      wait([](const BrokerView& w) { return w.previous_held_units == 0; },
           processing + milliseconds(2000));
      const BrokerView after = broker_.view();
      out_.held_across = v.held_units;
      std::string window = absl::StrCat(
          spec::count_noun(v.held_units, "message"), " delivered on c", old_cnx,
          " and none acknowledged when ",
          same ? "CLOSE_CONSUMER went out" : "the broker dropped the connection",
          "; the replacement subscribed on c", r.connection, "; ", after.previous_acked_late,
          " of them acknowledged after that, ",
          v.held_units - after.previous_acked_late - after.previous_held_units,
          " settled otherwise (nacked, or acknowledged before it subscribed), ",
          after.previous_held_units, " never (cleared)");
      if (same) {
        // Rulebook 12.12: a Flow of the old incarnation between CLOSE_CONSUMER and the
        // replacement's Subscribe on that connection is credited to nobody.
        std::int64_t old_flow = 0;
        bool closed = false;
        const std::vector<spec::Event> trace = broker_.trace();
        for (std::size_t i = mark; i < trace.size(); ++i) {
          if (std::holds_alternative<spec::CloseConsumer>(trace[i])) closed = true;
          if (closed && std::holds_alternative<spec::Subscribe>(trace[i])) break;
          if (const auto* f = std::get_if<spec::Flow>(&trace[i]); f && closed) {
            old_flow += f->permits;
          }
        }
        if (old_flow > 0) {
          absl::StrAppend(&window, "; an old Flow of ", old_flow, " between CLOSE_CONSUMER "
                          "and the Subscribe, credited to nobody (rulebook 12.12)");
        }
      }
      conclude(std::move(window), std::move(failed));
      return;
    }
    conclude(std::nullopt, std::move(failed));
  }

  // The consumer epoch (M2, L6): messages of the old epoch are held across a connection
  // drop; after the replacement subscribed the client raises its epoch (a REDELIVER with a
  // newer consumer_epoch, here from a negative acknowledgement), so the held ones are stale:
  // discarded, each unit returned through the state it retained (dropped: that incarnation
  // ended). Event-driven: the drop follows the first acknowledgement, the count is taken when
  // the REDELIVER arrives, and what is acknowledged after it was processed, not discarded.
  // A client that names no consumer epoch, or never raises it on a negative acknowledgement,
  // cannot open this window (NOT-APPLICABLE: ScenarioOutcome::cannot_open), whatever the timing.
  void stale_epoch() {
    std::vector<std::string> failed, cannot;
    for (int attempt = 1; attempt <= kAttempts && (attempt == 1 || time_for_attempt());
         ++attempt) {
      const std::optional<std::uint64_t> old_epoch = broker_.view().epoch;
      if (!old_epoch) {  // nothing delivered: the drain still checks the client
        cannot.push_back("the client's Subscribe named no consumer epoch, so its messages "
                         "would carry none and none could become stale");
        break;
      }
      const std::optional<BrokerView> held = deliver_and_hold();
      if (!held) break;
      const BrokerView& v = *held;
      if (v.held_units < 3) {
        failed.push_back(too_few_held(v, 3));
        continue;
      }
      disrupt(p_.same_connection);
      if (!wait(ready(incarnation_), client_.startup)) break;
      // The replacement is a new incarnation: any epoch request it counts came after its
      // Subscribe.
      const milliseconds processing(v.held_units * p_.delay_ms);
      wait([&](const BrokerView& w) {
        return w.epoch_requests > 0 || w.previous_held_units == 0;
      }, processing + milliseconds(2000));
      const BrokerView r = broker_.view();
      if (r.epoch_requests == 0 || !r.epoch || *r.epoch <= *old_epoch) {
        cannot.push_back(absl::StrCat(
            "no REDELIVER with a consumer epoch newer than ", *old_epoch, " came from the "
            "replacement while ", r.previous_held_units, " older-epoch ",
            r.previous_held_units == 1 ? "message was" : "messages were", " held "
            "(the client nacks every {nack_every}-th message; a nack must raise the epoch)"));
        continue;
      }
      // Discards take no processing time; what is still acknowledged was processed.
      wait([](const BrokerView& w) { return w.previous_held_units == 0; },
           processing + milliseconds(300));
      const std::int64_t processed = broker_.view().previous_acked_late - r.previous_acked_late;
      const std::int64_t stale = r.previous_held_units - processed;
      if (stale < 1) {
        failed.push_back(absl::StrCat(
            "after REDELIVER with epoch ", *r.epoch, " the client acknowledged all ",
            r.previous_held_units, " held older-epoch ",
            spec::noun(r.previous_held_units, "message"), ": none was discarded"));
        continue;
      }
      out_.stale_discards = stale;
      out_.held_across = v.held_units;
      conclude(absl::StrCat("REDELIVER with epoch ", *r.epoch, " on the replacement's "
                            "connection found ", spec::count_noun(stale, "message"),
                            " of epoch ", *old_epoch,
                            " held across ", across(p_.same_connection), "; none of them "
                            "acknowledged after it: stale-epoch discards", processed > 0 ? absl::StrCat(
                                " (", spec::count_noun(processed, "other"), " acknowledged)") : ""),
               std::move(failed));
      return;
    }
    // Timing failures beside it leave the window one a later run might open: not opened.
    if (failed.empty()) {
      for (std::string& c : cannot) out_.cannot_open.push_back(std::move(c));
    } else {
      failed.insert(failed.end(), cannot.begin(), cannot.end());
    }
    conclude(std::nullopt, std::move(failed));
  }

  // A Flow comes due on the message in processing when CLOSE_CONSUMER arrives (L11): T
  // singles on a fresh accumulator, the consumer closed once T - 1 are acknowledged. Whether
  // the T-th was still unacknowledged when CLOSE_CONSUMER went out is read from the trace's
  // order, not guessed; an attempt that missed it is repeated on the replacement.
  void flow_around_close() {
    for (const EntrySpec& e : p_.entries) {
      if (!deliver(e)) return;
    }
    settle();
    std::vector<std::string> failed;
    for (int attempt = 1; attempt <= kAttempts && (attempt == 1 || time_for_attempt());
         ++attempt) {
      std::optional<std::string> why;
      if (!flow_attempt(why)) break;
      if (!why) {
        conclude(absl::StrCat("CLOSE_CONSUMER arrived while the message that makes a Flow of "
                              "T = ", client_.threshold(), " due was in processing (",
                              client_.threshold() - 1, " of ", client_.threshold(),
                              " acknowledged), same connection"),
                 std::move(failed));
        return;
      }
      failed.push_back(std::move(*why));
    }
    conclude(std::nullopt, std::move(failed));
  }
  // One attempt; false when the run cannot go on. `why` is set when the window did not open.
  bool flow_attempt(std::optional<std::string>& why) {
    const std::int64_t t = client_.threshold();
    const BrokerView v0 = broker_.view();
    const bool fresh = v0.granted == client_.q && v0.debited == 0;
    const std::size_t mark = broker_.trace().size();
    for (std::int64_t i = 0; i < t; ++i) {
      if (!deliver(EntrySpec{})) return false;
    }
    const std::int64_t acked0 = v0.acked_messages;
    wait([&](const BrokerView& v) { return v.acked_messages - acked0 >= t - 1; },
         client_.startup + milliseconds(t * p_.delay_ms));
    disrupt(/*same_connection=*/true);
    // The acknowledgements that reached the broker before its CLOSE_CONSUMER.
    std::int64_t acked = 0;
    const std::vector<spec::Event> trace = broker_.trace();
    for (std::size_t i = mark; i < trace.size(); ++i) {
      if (std::holds_alternative<spec::CloseConsumer>(trace[i])) break;
      if (const auto* a = std::get_if<spec::Ack>(&trace[i]); a && !a->validation_error) ++acked;
    }
    if (acked != t - 1 || !fresh) {
      why = absl::StrCat(
          "CLOSE_CONSUMER went out with ", acked, " of ", t, " messages acknowledged",
          fresh ? "" : ", on an accumulator not known to be empty",
          ": no Flow was known to come due around it (need T - 1 acknowledged and the T-th "
          "in processing: raise {delay_ms})");
    }
    if (!wait(ready(incarnation_), client_.startup)) return false;
    // Anything the old incarnation still writes arrives now, before any delivery.
    wait([&](const BrokerView& v) { return v.granted > client_.q; },
         milliseconds(300 + p_.delay_ms));
    if (!why) out_.late_flow = broker_.view().granted - client_.q;
    return true;
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
                           *v.start_entry, "; delivered ",
                           spec::count_noun(again, "entry", "entries"), " at or before it again (",
                           singles, " non-batched)")
            : absl::StrCat("resubscribed on a new connection without start_message_id; "
                           "delivered ", again, " acknowledged ",
                           spec::noun(again, "entry", "entries"), " again as duplicates"));
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
        spec::count_noun(rounds, "round"), ": entries delivered, then 20 ms after the client's "
        "Flow for them the same entries again (", again, " duplicate ",
        spec::noun(again, "entry", "entries"), "); ", returned, " ",
        returned == 1 ? "round saw" : "rounds saw", " a Flow after the duplicates"));
  }

  // Each entry, then two ACTIVE_CONSUMER_CHANGE (is_active true: the consumer stays the
  // active one, as a broker re-tells every Failover consumer on a membership change), then
  // more until 2T were written: a client that counts them as messages returns at least T
  // permits too many, so it Flows them and the drain measures the surplus (E2).
  void active_consumer_change() {
    const int before = broker_.view().active_consumer_changes;
    int sent = 0;
    auto notify = [&] {
      if (broker_.notify_active_consumer(true).ok()) ++sent;
    };
    for (const EntrySpec& e : p_.entries) {
      if (!deliver(e)) break;
      notify();
      notify();
    }
    while (sent < 2 * client_.threshold()) notify();
    const bool written = wait(
        [&](const BrokerView& v) { return v.active_consumer_changes - before >= sent; },
        milliseconds(2000));
    const BrokerView v = broker_.view();
    if (sent == 0 || !written) {
      out_.not_opened.push_back(absl::StrCat("only ", v.active_consumer_changes - before, " of ",
                                             sent, " ACTIVE_CONSUMER_CHANGE written"));
      return;
    }
    out_.windows.push_back(absl::StrCat(sent, " ACTIVE_CONSUMER_CHANGE written to the ",
                                        subscription_type_name(v.subscription_type),
                                        " consumer between and after ",
                                        spec::count_noun(delivered_.size(), "entry", "entries")));
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
                                          " nacked ", spec::noun(ids.size(), "entry", "entries"),
                                          ", ", partial,
                                          " of them partial batches (with an ack_set)"));
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
      // Its acknowledgement, then a silence: a Flow it made due comes in that silence.
      const bool acked = wait([&](const BrokerView& w) { return w.outstanding <= outstanding; },
                              milliseconds(3000 + p_.delay_ms));
      if (acked) {
        const milliseconds after_ack = flow_patience(quiet);
        wait([&](const BrokerView& w) { return idle_for(w, after_ack); },
             milliseconds(3000 + p_.delay_ms) + after_ack);
      }
      v = broker_.view();
      if (v.flows > flows0) {
        d.measured = true;
        d.delta = v.available - q;
        d.text = absl::StrCat("drain: ", d.messages, " single ", spec::noun(d.messages, "message"),
                              " until the client flushed; then available ", v.available, " = Q ",
                              d.delta >= 0 ? "+ " : "- ", std::abs(d.delta));
        return;
      }
    }
    v = broker_.view();
    // No flush: everything acknowledged, the accumulator holds at least the drain's messages
    // and less than T, so Q - available - accumulator is short.
    d.short_max = q - v.available - d.messages;
    d.short_min = q - v.available - (t - 1);
    d.text = absl::StrCat("drain: ", d.messages, " single ", spec::noun(d.messages, "message"),
                          ", no Flow; available ", v.available, ": ",
                          std::max<std::int64_t>(0, d.short_min) == d.short_max
                              ? spec::count_noun(d.short_max, "permit")
                              : absl::StrCat("between ", std::max<std::int64_t>(0, d.short_min),
                                             " and ", d.short_max, " permits"),
                          " short");
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

namespace internal {

bool drive_scenario(const ClientSpec& client, const ScenarioParams& params,
                    ConformanceBroker& broker, ClientProcess& proc, ScenarioOutcome& out) {
  return Run(client, params, broker, proc, out).drive();
}

}  // namespace internal
}  // namespace permitcheck::conformance
