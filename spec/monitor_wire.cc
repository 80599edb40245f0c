// Wire events: subscribe .. quiescent (W1-W3, B2, B3, B7, N4, E2 on the wire, E5, E6).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "spec/internal/monitor_state.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {

monitor_internal::WireIncarnation& Monitor::State::fresh_wire(const ConsumerKey& key) {
  auto [it, inserted] = wire.try_emplace(key);
  if (inserted) {
    wire_consumers_on_cnx[key.cnx].push_back(key.consumer);
  } else {
    release_in_flight(it->second);  // the previous incarnation ended with this subscribe
  }
  bool replaces_closed = false;  // rulebook 12.12: the replacement of a closed incarnation
  if (auto closed = closed_on_cnx.find(key.cnx); closed != closed_on_cnx.end()) {
    replaces_closed = closed->second.take(Id::number(key.consumer)).has_value();
    if (closed->second.empty()) closed_on_cnx.erase(closed);
  }
  it->second = WireIncarnation{.replaces_closed = replaces_closed, .q = header.q};
  wire_of_consumer.insert_or_assign(key.consumer, key);
  return it->second;
}

void Monitor::State::end_wire(const ConsumerKey& key) {
  auto it = wire.find(key);
  if (it == wire.end()) return;
  it->second.ended = true;
  release_in_flight(it->second);
}

// An incarnation ended by close_consumer or subscribe_fail is released, as a disconnect
// releases its connection's: nothing later is judged against it (a Flow for it finds no
// Subscribe on record, N4), so 1 million subscribe/close cycles cost what is live.
void Monitor::State::release_wire(const ConsumerKey& key) {
  auto it = wire.find(key);
  if (it == wire.end()) return;
  release_in_flight(it->second);
  wire.erase(it);
  if (auto on = wire_consumers_on_cnx.find(key.cnx); on != wire_consumers_on_cnx.end()) {
    std::vector<std::uint64_t>& consumers = on->second;
    // The consumer closed is mostly the latest subscribed: searched from the back.
    if (auto at = std::find(consumers.rbegin(), consumers.rend(), key.consumer);
        at != consumers.rend()) {
      *at = consumers.back();
      consumers.pop_back();
    }
    if (consumers.empty()) wire_consumers_on_cnx.erase(on);
  }
  if (auto w = wire_of_consumer.find(key.consumer);
      w != wire_of_consumer.end() && w->second == key) {
    wire_of_consumer.erase(w);
  }
}

// A wire-only command (no client event names it) leaves with its acknowledgement or its
// incarnation: nothing later can judge it. Under retain_ledger its ledger stays.
void Monitor::State::release_wire_command(Command& c) {
  if (c.wire_key) {
    if (auto w = wire.find(*c.wire_key); w != wire.end()) w->second.in_flight.erase(c.cmd);
    c.wire_key.reset();
  }
  if (c.received) return;  // the client side finishes it
  if (options.retain_ledger) ledgers.insert_or_assign(c.cmd, ledger_of(c));
  erase_command(c);
}

void Monitor::State::release_in_flight(WireIncarnation& w) {
  absl::flat_hash_set<Id> in_flight = std::move(w.in_flight);
  w.in_flight.clear();
  for (const Id& id : in_flight) {
    if (Command* c = find_live(id)) {
      c->wire_key.reset();
      release_wire_command(*c);
    }
  }
}

monitor_internal::WireIncarnation* Monitor::State::live_wire(const ConsumerKey& key) {
  auto it = wire.find(key);
  if (it == wire.end() || it->second.ended) return nullptr;
  return &it->second;
}

void Monitor::State::on(const Connect&) {}

void Monitor::State::on(const Subscribe& e) {
  saw_subscribe = true;
  removed_broker_consumers.erase(removed_key(e.consumer, std::nullopt));
  fresh_wire({e.cnx, e.consumer});
}

void Monitor::State::on(const SubscribeOk& e) {
  saw_subscribe = true;  // the trace records subscriptions, as with a subscribe
  auto it = wire.find(ConsumerKey{e.cnx, e.consumer});
  WireIncarnation& w = (it == wire.end() || it->second.ended) ? fresh_wire({e.cnx, e.consumer})
                                                              : it->second;
  w.subscribed_ok = true;
}

void Monitor::State::on(const SubscribeFail& e) { release_wire({e.cnx, e.consumer}); }

// The one decision on a Flow for a consumer whose wire incarnation on this connection is not
// live and subscribed (`w`: its incarnation on record, if any), under the permit-state rules:
// - none on record, the consumer closed by close_consumer and not yet subscribed again: an
//   old Flow written before the replacement's Subscribe (N6 allows it; rulebook 12.12: the
//   wire cannot tell it crossed the close, and the broker credits it to nobody): no violation;
// - none on record otherwise (never subscribed here, or the Subscribe failed): N4;
// - a Subscribe on record that has not succeeded, which replaced a closed incarnation: the
//   Flow arrived after the replacement's Subscribe, N6 (if it is the replacement's own, N4
//   is broken instead: the text says both);
// - a Subscribe on record that has not succeeded, or an ended one: N4.
std::optional<RuleId> Monitor::State::flow_before_subscribed(const ConsumerKey& key,
                                                            const WireIncarnation* w) const {
  if (w == nullptr) {
    if (auto closed = closed_on_cnx.find(key.cnx);
        closed != closed_on_cnx.end() && closed->second.find(Id::number(key.consumer))) {
      return std::nullopt;  // 12.12, N6
    }
    // Only in a trace that records Subscribes (a wire trace, or one with any subscribe).
    const bool records_subscribes = header.source == TraceSource::kWire || saw_subscribe;
    return records_subscribes ? std::optional<RuleId>(RuleId::kN4) : std::nullopt;
  }
  if (!w->ended && w->replaces_closed) return RuleId::kN6;
  return RuleId::kN4;
}

std::string Monitor::State::unsubscribed_flow_text(RuleId rule, std::int64_t permits,
                                                   const ConsumerKey& key,
                                                   const WireIncarnation* w) const {
  const std::string flow = absl::StrCat("Flow of ", permits, " for ", describe(key));
  if (w == nullptr) {
    return absl::StrCat(flow, " with no Subscribe on record on that connection, or only an "
                              "ended one");
  }
  if (rule == RuleId::kN6) {
    return absl::StrCat(flow, " after the Subscribe of the incarnation replacing the closed "
                              "one and before it succeeded: an old Flow written after the "
                              "replacement's Subscribe (N6), or the replacement's own before "
                              "its Subscribe succeeded (N4)");
  }
  return absl::StrCat(flow, " before its Subscribe succeeded");
}

void Monitor::State::on(const Flow& e) {
  const ConsumerKey key{e.cnx, e.consumer};
  if (e.permits < 0) {
    violation(RuleId::kB10, absl::StrCat("Flow for ", describe(key), " carries ", e.permits,
                                         " permits; Flow only adds"));
    return;
  }
  bool reported = false;
  if (e.inc) reported = client_flow(e, *e.inc);
  auto it = wire.find(key);
  WireIncarnation* w = it == wire.end() ? nullptr : &it->second;
  if (w == nullptr || w->ended || !w->subscribed_ok) {
    // N4 and N6 are rules of the permit-state rulesets; legacy writes such Flows (L11).
    if (!reported && rules->flow_recheck == FlowRecheck::kIdentity) {
      if (std::optional<RuleId> rule = flow_before_subscribed(key, w)) {
        violation(*rule, unsubscribed_flow_text(*rule, e.permits, key, w));
      }
    }
    // The broker has the consumer from its Subscribe on and credits the Flow (B10), so the
    // wire-derived available that B12 and E2 judge counts it; Q is still the first Flow
    // after the Subscribe succeeded. A Flow with no live incarnation is credited to nobody.
    if (w != nullptr && !w->ended) w->granted = sat_add(w->granted, e.permits);
    return;
  }
  WireIncarnation& live = *w;
  live.granted = sat_add(live.granted, e.permits);
  if (!live.q) {
    live.q = e.permits;  // trace-format: the first Flow after subscribe_ok is Q
    return;
  }
  const std::int64_t available = sat_sub(live.granted, live.debited);
  if (live.precise && invariants() && !reported && available > *live.q) {
    std::string text = absl::StrCat("Flow of ", e.permits,
                                    " raises the broker's available permits of ", describe(key),
                                    " to ", available, ", above Q = ", *live.q, " (over-grant by ",
                                    available - *live.q, ")");
    const ClientIncarnation* inc = current_client_inc(key);
    if (inc && inc->deviation && explained(*inc, available - *live.q)) {
      deviation(*inc->deviation, absl::StrCat(text, "; explained by known deviation ",
                                              to_absl(rule_name(*inc->deviation))));
    } else {
      violation(RuleId::kE2, std::move(text));
    }
  }
}

// The client incarnation now current for `key`, if the trace has client events for it.
monitor_internal::ClientIncarnation* Monitor::State::current_client_inc(const ConsumerKey& key) {
  auto cur = current_inc.find(key.consumer);
  if (cur == current_inc.end()) return nullptr;
  ClientIncarnation* inc = find_inc(cur->second);
  return inc && inc->key == key ? inc : nullptr;
}

void Monitor::State::on(const Message& e) {
  const ConsumerKey key{e.cnx, e.consumer};
  Command& c = command(e.cmd);
  c.message_permits = e.message_permits;
  c.ack_set = e.ack_set;
  c.validated.reset();
  c.wire_batch_size = e.batch_size;

  if (e.message_permits) {
    cnx_sent_field[e.cnx] = true;
    if (!message_permits_in_range(*e.message_permits)) {
      violation(RuleId::kW2, absl::StrCat(cmd_name(c), " carries message_permits = ",
                                          *e.message_permits, ", outside 1..2^31-1"));
    }
  } else if (rules->broker_sends_message_permits && cnx_sent_field.contains(e.cnx)) {
    violation(RuleId::kW3, absl::StrCat(cmd_name(c), " lacks message_permits although the "
                                        "broker sent it earlier on connection ",
                                        e.cnx.to_string()));
  }

  std::optional<std::int64_t> debit;
  if (e.batch_size) {
    const std::int64_t candidate = candidate_permits(*e.batch_size, e.ack_set);
    if (candidate == 0) {
      violation(RuleId::kB3, absl::StrCat(cmd_name(c), " was sent with nothing to deliver "
                                          "(B = ", *e.batch_size, ", deliverable 0)"));
    } else if (e.message_permits && rules->broker_sends_message_permits &&
               message_permits_in_range(*e.message_permits) &&
               static_cast<std::int64_t>(*e.message_permits) != candidate) {
      violation(RuleId::kB7, absl::StrCat(cmd_name(c), " serialized message_permits = ",
                                          *e.message_permits, " but B = ", *e.batch_size,
                                          e.ack_set.absent()
                                              ? std::string(" (no ack_set)")
                                              : absl::StrCat(", ", acknowledged_text(
                                                                       e.ack_set, *e.batch_size)),
                                          " give P = ", candidate));
    }
    debit = candidate;
  }
  if (e.message_permits && message_permits_in_range(*e.message_permits)) {
    debit = static_cast<std::int64_t>(*e.message_permits);
    if (c.broker_p && *c.broker_p != *debit) {
      violation(RuleId::kE4, absl::StrCat(cmd_name(c), " serialized message_permits = ",
                                          *debit, " but its send finalized P = ",
                                          *c.broker_p));
    }
  } else if (c.broker_p) {
    debit = c.broker_p;
  }
  if (WireIncarnation* w = live_wire(key); w != nullptr && w->subscribed_ok) {
    // A command of a recorded send was judged at the send's start (B9, B12).
    if (!c.send_judged) {
      if (options.sends_span_frames) {
        check_frame_back_pressure(*w, key, cmd_name(c));
      } else {
        check_back_pressure(*w, key, cmd_name(c));
      }
    }
    if (debit) {
      w->debited = sat_add(w->debited, *debit);
    } else {
      w->precise = false;
    }
    if (!c.received && !(c.wire_key == key)) {
      if (c.wire_key) {
        if (auto old = wire.find(*c.wire_key); old != wire.end()) old->second.in_flight.erase(c.cmd);
      }
      c.wire_key = key;
      w->in_flight.insert(c.cmd);
    }
  }
  if (!c.received && !c.wire_key) unattached_on_cnx[e.cnx].insert(c.cmd);
}

void Monitor::State::check_back_pressure(const WireIncarnation& w, const ConsumerKey& key,
                                         const std::string& what) {
  if (!w.precise) return;
  const std::int64_t available = sat_sub(w.granted, w.debited);
  if (available > 0) return;
  violation(RuleId::kB12, absl::StrCat(what, " sent to ", describe(key),
                                       " while its available permits are ", available,
                                       " (not positive: a send starts only while available > 0; "
                                       "B9's overdraft happens only inside a send that started "
                                       "positive)"));
}

// B12 when a send may span several frames (MonitorOptions::sends_span_frames): a frame that
// continues a run begun at positive available may belong to that send (B9), so its start is
// not known and B12 is not decided: known deviation X7 with the overdraft. A run's first frame
// is judged as a send's start.
void Monitor::State::check_frame_back_pressure(const WireIncarnation& w, const ConsumerKey& key,
                                               const std::string& what) {
  const std::int64_t available = sat_sub(w.granted, w.debited);
  auto run = frame_runs.find(key.cnx);
  if (run == frame_runs.end() || !(run->second.key == key)) {
    frame_runs.insert_or_assign(key.cnx, FrameRun{key, available, what});
    check_back_pressure(w, key, what);
    return;
  }
  if (!w.precise || available > 0) return;
  if (run->second.start_available <= 0) {
    check_back_pressure(w, key, what);
    return;
  }
  deviation(RuleId::kX7,
            absl::StrCat(what, " sent to ", describe(key), " at available permits ", available,
                         " follows ", run->second.first, ", sent at ",
                         run->second.start_available, ", with no other broker frame between: "
                         "it may be a frame of that send (B9), so B12 is not decided from the "
                         "wire (the trace records no sends)"));
}

// The command is acknowledged: a wire-only one is done (released).
void Monitor::State::on(const Ack& e) {
  if (auto u = unattached_on_cnx.find(e.cnx); u != unattached_on_cnx.end()) {
    u->second.erase(e.cmd);
    if (u->second.empty()) unattached_on_cnx.erase(u);
  }
  if (Command* c = find_live(e.cmd)) release_wire_command(*c);
}

// The incarnation ends; until its replacement's Subscribe, a Flow it wrote before the close
// reached it may still arrive (rulebook 12.12), so the consumer is remembered as closed.
void Monitor::State::on(const CloseConsumer& e) {
  release_wire({e.cnx, e.consumer});
  closed_on_cnx[e.cnx].insert(Id::number(e.consumer), 0);
}

void Monitor::State::on(const Disconnect& e) {
  if (auto it = wire_consumers_on_cnx.find(e.cnx); it != wire_consumers_on_cnx.end()) {
    // The connection's wire state ends with it (memory bounded by what is live).
    for (std::uint64_t consumer : it->second) {
      end_wire({e.cnx, consumer});
      wire.erase(ConsumerKey{e.cnx, consumer});
      if (auto w = wire_of_consumer.find(consumer);
          w != wire_of_consumer.end() && w->second.cnx == e.cnx) {
        wire_of_consumer.erase(w);
      }
    }
    wire_consumers_on_cnx.erase(it);
  }
  if (auto u = unattached_on_cnx.find(e.cnx); u != unattached_on_cnx.end()) {
    const absl::flat_hash_set<Id> ids = std::move(u->second);
    unattached_on_cnx.erase(u);
    for (const Id& id : ids) {
      if (Command* c = find_live(id); c != nullptr && !c->wire_key) release_wire_command(*c);
    }
  }
  cnx_sent_field.erase(e.cnx);
  closed_on_cnx.erase(e.cnx);
  end_client_incs_on(e.cnx);
}

void Monitor::State::on(const Quiescent& e) {
  const ConsumerKey key{e.cnx, e.consumer};
  ClientIncarnation* inc = nullptr;
  if (auto cur = current_inc.find(e.consumer); cur != current_inc.end()) {
    inc = find_inc(cur->second);
    if (inc && !(inc->key == key)) inc = nullptr;
  }
  WireIncarnation* w = live_wire(key);
  if (w && !w->subscribed_ok) w = nullptr;
  if (inc) quiescent_commands(*inc);

  const std::optional<std::int64_t> q = w && w->q ? w->q : header.q;
  if (!q || !invariants()) return;
  std::optional<std::int64_t> available;
  if (w && w->precise) available = sat_sub(w->granted, w->debited);
  else if (inc) available = sat_sub(inc->granted, inc->debited);
  if (!available) return;

  // B13 (E6): backlog at the broker and positive permits, yet nothing is sent.
  if (e.backlog && *e.backlog > 0 && *available > 0) {
    violation(RuleId::kB13, absl::StrCat(describe(key), " is quiescent with backlog ", *e.backlog,
                                         " and broker available ", *available,
                                         " (positive permits and backlog but no dispatch; E6)"));
  }
  if (*available <= 0) {
    std::string text = absl::StrCat(describe(key), " is quiescent with broker available ",
                                    *available, " (stalled: no Flow can come)");
    // A stall is excused only by a deviation that withholds units (X3/X4) and accounts for
    // the whole shortfall, or by one whose amount is unknown (X1/X6).
    const bool excused =
        inc && inc->deviation &&
        (!inc->deviation_delta_known ||
         (inc->deviation_delta < 0 && explained(*inc, sat_sub(sat_add(*available, inc->accumulator), *q))));
    if (excused) {
      deviation(*inc->deviation, absl::StrCat(text, "; explained by known deviation ",
                                              to_absl(rule_name(*inc->deviation))));
    } else {
      violation(RuleId::kE6, std::move(text));
    }
  }
  if (inc) {
    const std::int64_t total = sat_add(*available, inc->accumulator);
    if (total != *q) {
      std::string text = absl::StrCat(
          describe(key), " at quiescence: broker available ", *available, " + accumulator ",
          inc->accumulator, " = ", total, ", expected Q = ", *q, " (",
          total < *q ? absl::StrCat(count_noun(sat_sub(*q, total), "permit"), " lost")
                     : absl::StrCat(count_noun(sat_sub(total, *q), "permit"), " invented"),
          ")");
      if (inc->deviation && explained(*inc, sat_sub(total, *q))) {
        deviation(*inc->deviation, absl::StrCat(text, "; explained by known deviation ",
                                                to_absl(rule_name(*inc->deviation))));
      } else {
        if (inc->deviation) {
          absl::StrAppend(&text, "; known deviation ", to_absl(rule_name(*inc->deviation)),
                          " accounts for ", inc->deviation_delta, " of it");
        }
        violation(RuleId::kE5, std::move(text));
      }
    }
    return;
  }
  // Wire only: the accumulator is Q - available and must be below T (or the weaker bound).
  const std::int64_t accumulator = sat_sub(*q, *available);
  const bool ok = header.t ? (accumulator >= 0 && accumulator < *header.t)
                           : (*available > 0 && *available <= *q);
  if (!ok) {
    violation(RuleId::kE5,
              absl::StrCat(describe(key), " at quiescence: broker available ", *available,
                           " with Q = ", *q,
                           !header.t ? std::string(" (must be in 1..Q)")
                           : accumulator < 0
                               ? absl::StrCat(" is ", count_noun(-accumulator, "permit"),
                                              " above Q: the client returned ",
                                              count_noun(-accumulator, "permit"), " too many")
                               : absl::StrCat(" leaves ", count_noun(accumulator, "permit"),
                                              " unreturned, where fewer than T = ", *header.t,
                                              " may be")));
  }
}

}  // namespace permitcheck::spec
