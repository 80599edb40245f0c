// Permit states and returns (N1-N7, M1-M3, E3, C5, C6, S7): inc_*, msg_return, drop,
// protocol_error, and where a returned unit is credited.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "spec/internal/monitor_state.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {

// Credits n units returned for command `c` (or a message of it) to the permit state the
// ruleset routes it to. `what` names the return in diagnostics.
void Monitor::State::credit(Command& c, std::int64_t n, const Label& what) {
  if (n == 0) return;
  ClientIncarnation* inc = inc_of(c);
  if (inc == nullptr) return;
  if (!inc->current) {
    auto cur = current_inc.find(inc->key.consumer);
    ClientIncarnation* replacement =
        cur == current_inc.end() ? nullptr : find_inc(cur->second);
    if (rules->return_scope == ReturnScope::kIncarnation) {
      if (replacement != nullptr) {
        // E3: the unit reaches the replacement's Flow (legacy L6/L7, revision A's F5).
        violation(RuleId::kE3,
                  absl::StrCat(what.str(), " of ", cmd_name(c), " credits ",
                               count_noun(n, "permit"), " debited to incarnation ",
                               inc->inc.to_string(), " after it ended; incarnation ",
                               replacement->inc.to_string(), " is current (credit crosses into the replacement; must be "
                               "dropped)"));
      } else {
        violation(RuleId::kN3,
                  absl::StrCat(what.str(), " of ", cmd_name(c), " credits ",
                               count_noun(n, "permit"), " to incarnation ", inc->inc.to_string(),
                               ", which has ended (must be dropped)"));
      }
      return;
    }
    // Legacy: the consumer object's accumulator, whatever incarnation is current now.
    // Revision A (F5): the same, but only on the connection the return came through.
    if (replacement == nullptr) return;
    if (rules->return_scope == ReturnScope::kSameConnection &&
        !(replacement->key.cnx == inc->key.cnx)) {
      violation(RuleId::kN3,
                absl::StrCat(what.str(), " of ", cmd_name(c), " credits ", count_noun(n, "permit"),
                             " of incarnation ", inc->inc.to_string(),
                             " on connection ", inc->key.cnx.to_string(),
                             ", which has ended; the current connection differs (must be "
                             "dropped)"));
      return;
    }
    if (rules->return_scope == ReturnScope::kSameConnection && invariants()) {
      // The revision's rule allows it; the invariant every revision promises does not.
      violation(RuleId::kE3,
                absl::StrCat(what.str(), " of ", cmd_name(c), " credits ", count_noun(n, "permit"),
                             " debited to incarnation ", inc->inc.to_string(),
                             " to the same-connection replacement ",
                             replacement->inc.to_string(), " (connection-scoped credit, F5)"));
    }
    inc = replacement;
  }
  const std::int64_t credited = sat_add(inc->accumulator, n);
  if (credited > kMaxPermits) {
    violation(RuleId::kN7,
              absl::StrCat("accumulator of incarnation ", inc->inc.to_string(), " holds ",
                           inc->accumulator, "; adding ", n, " exceeds 2^31-1 (overflow must "
                           "close the connection, not credit)"));
  }
  inc->accumulator = credited;
}

// An ended permit state keeps only what a late event naming it is judged by (its key,
// balance and totals): its list of commands and its place on the connection are released,
// since quiescence and protocol errors look at current states only. In streaming mode it is
// compacted after the event (EndedShape) once no command in flight points to it, and its
// consumer forgets it when nothing is left for a next state to inherit (N2: an accumulator
// of 0 is what a consumer with no previous state passes on; an ended state's accumulator
// never grows, as credit goes to the current state or nowhere).
void Monitor::State::end_inc(ClientIncarnation& inc) {
  if (!inc.current) return;
  inc.current = false;
  auto cur = current_inc.find(inc.key.consumer);
  if (cur != current_inc.end() && cur->second == inc.inc) current_inc.erase(cur);
  if (compacting()) {
    if (inc.holders == 0) compact_due.push_back(inc.inc);
    auto last = last_inc.find(inc.key.consumer);
    if (inc.accumulator == 0 && last != last_inc.end() && last->second == inc.inc) {
      last_inc.erase(last);
    }
  }
  std::vector<Id>().swap(inc.commands);
  inc.commands_after_prune = 0;
  if (auto on = incs_on_cnx.find(inc.key.cnx); on != incs_on_cnx.end()) {
    std::vector<Id>& ids = on->second;
    // The state ended is mostly the latest opened: searched from the back.
    for (std::size_t i = ids.size(); i-- > 0;) {
      if (!(ids[i] == inc.inc)) continue;
      if (i + 1 != ids.size()) ids[i] = std::move(ids.back());
      ids.pop_back();
      break;
    }
    if (ids.empty()) incs_on_cnx.erase(on);
  }
}

monitor_internal::ClientIncarnation* Monitor::State::revive_inc(const Id& id) {
  std::optional<ClientIncarnation> ended = ended_incs.take(id);
  if (!ended) return nullptr;
  compact_due.push_back(id);
  return &incs.emplace(id, std::move(*ended)).first->second;
}

void Monitor::State::compact_ended() {
  for (const Id& id : compact_due) {
    auto it = incs.find(id);
    if (it == incs.end() || it->second.current || it->second.holders > 0) continue;
    ended_incs.insert(it->second);
    incs.erase(it);
  }
  compact_due.clear();
}

void Monitor::State::end_client_incs_on(const Id& cnx) {
  auto it = incs_on_cnx.find(cnx);
  if (it == incs_on_cnx.end()) return;
  const std::vector<Id> ids = std::move(it->second);
  incs_on_cnx.erase(it);
  for (const Id& id : ids) {
    if (ClientIncarnation* inc = find_inc(id)) end_inc(*inc);
  }
}

// Client side of a Flow carrying `inc` (N4-N6, E2). Returns true when it reported.
bool Monitor::State::client_flow(const Flow& e, const Id& id) {
  ClientIncarnation* inc = find_inc(id);
  if (inc == nullptr) {
    violation(RuleId::kN1, absl::StrCat("Flow for permit state ", id.to_string(),
                                        ", which was never opened"));
    return true;
  }
  if (!inc->flow_enabled) {
    violation(RuleId::kN4, absl::StrCat("Flow of ", e.permits, " for incarnation ",
                                        id.to_string(), " before its Subscribe succeeded"));
    return true;
  }
  if (!inc->current && rules->flow_recheck == FlowRecheck::kIdentity) {
    auto cur = current_inc.find(inc->key.consumer);
    if (cur != current_inc.end()) {
      violation(RuleId::kN6,
                absl::StrCat("Flow of ", e.permits, " for ended incarnation ", id.to_string(),
                             " written after the Subscribe of its replacement ",
                             cur->second.to_string(), " (old credit must be dropped)"));
    } else {
      violation(RuleId::kN5, absl::StrCat("Flow of ", e.permits, " for incarnation ",
                                          id.to_string(), " written after it ended (the "
                                          "identity re-check must drop it)"));
    }
    return true;
  }
  inc->granted = sat_add(inc->granted, e.permits);
  if (!inc->initial_granted) {
    inc->initial_granted = true;
    if (header.q && e.permits != *header.q && invariants()) {
      const RuleId rule = (e.permits > *header.q && inc->predecessor_accumulator > 0)
                              ? RuleId::kN2
                              : RuleId::kN4;
      violation(rule, absl::StrCat("initial Flow of incarnation ", id.to_string(), " is ",
                                   e.permits, ", the initial grant must be Q = ", *header.q));
      return true;
    }
    return false;
  }
  if (e.permits > inc->accumulator && invariants()) {
    violation(RuleId::kE2,
              absl::StrCat("Flow of ", e.permits, " for incarnation ", id.to_string(),
                           " but its accumulator holds ", inc->accumulator,
                           " (over-grant by ", sat_sub(e.permits, inc->accumulator), ")"));
    inc->accumulator = 0;
    return true;
  }
  inc->accumulator -= std::min(e.permits, inc->accumulator);
  return false;
}

// At quiescence every delivered command of the incarnation is terminal (K5) and every
// handed-off message has returned (M1).
void Monitor::State::quiescent_commands(ClientIncarnation& inc) {
  if (!invariants()) return;
  prune_finished(inc);
  for (const Id& id : inc.commands) {
    Command* found = find_live(id);
    if (found == nullptr) continue;
    Command& c = *found;
    if (c.protocol_error_due) {
      check_protocol_error_raised(c);
      continue;
    }
    if (c.path) continue;
    if (!c.settled) {
      const std::int64_t room = hand_off_room(c.progress());
      violation(RuleId::kK5,
                absl::StrCat(cmd_name(c), " never finished (no terminal transition) by quiescence",
                             room > 0 ? absl::StrCat("; ", room, " of its permits were neither "
                                                     "handed to a message nor returned")
                                      : ""));
      c.settled = true;  // report once
    } else if (c.live_messages > 0) {
      violation(RuleId::kM1,
                absl::StrCat(count_noun(c.live_messages, "message"), " of ", cmd_name(c),
                             c.live_messages == 1 ? " never returned its permit by quiescence"
                                                  : " never returned their permits by quiescence"));
      c.live_messages = 0;
    }
  }
}

// Drops finished commands from the incarnation's list, so per-event work stays bounded by
// what is in flight.
void Monitor::State::prune_finished(ClientIncarnation& inc) {
  std::erase_if(inc.commands, [this](const Id& id) {
    const Command* c = find_live(id);
    return c == nullptr || (c->complete_checked && !c->protocol_error_due);
  });
}

void Monitor::State::on(const IncOpen& e) {
  if (inc_opened(e.inc)) {
    violation(RuleId::kN1, absl::StrCat("permit state ", e.inc.to_string(), " opened twice"));
    return;
  }
  ClientIncarnation inc{.inc = e.inc, .key = {e.cnx, e.consumer}};
  if (auto last = last_inc.find(e.consumer); last != last_inc.end()) {
    // N2: the replacement starts empty; the old state stops being current.
    if (ClientIncarnation* old = find_inc(last->second)) {
      inc.predecessor_accumulator = old->accumulator;
      end_inc(*old);
    }
  }
  last_inc[e.consumer] = e.inc;
  current_inc[e.consumer] = e.inc;
  incs_on_cnx[e.cnx].push_back(e.inc);
  incs.emplace(e.inc, std::move(inc));
}

void Monitor::State::on(const IncFlowEnabled& e) {
  ClientIncarnation* inc = find_inc(e.inc);
  if (inc == nullptr) {
    violation(RuleId::kN1, absl::StrCat("permit state ", e.inc.to_string(),
                                        " enabled but never opened"));
    return;
  }
  inc->flow_enabled = true;
}

void Monitor::State::on(const IncClose& e) {
  ClientIncarnation* inc = find_inc(e.inc);
  if (inc == nullptr) {
    violation(RuleId::kN1, absl::StrCat("permit state ", e.inc.to_string(),
                                        " closed but never opened"));
    return;
  }
  end_inc(*inc);
}

void Monitor::State::on(const MsgReturn& e) {
  auto it = msgs.find(e.msg);
  if (it == msgs.end()) {
    if (std::optional<Id> cmd = finished_msgs.find(e.msg)) {
      if (e.n != 0) {
        violation(RuleId::kM3, absl::StrCat("message ", e.msg.to_string(), " returned ", e.n,
                                            " again; a second return is a no-op"));
        if (Command* c = find_command(*cmd)) {
          c->msg_returned = sat_add(c->msg_returned, e.n);
          credit(*c, e.n, {"second return of message", &e.msg});
          check_over_return(*c);
        }
      }
      return;
    }
    violation(RuleId::kM1,
              absl::StrCat("message ", e.msg.to_string(), " returned but never handed off"));
    return;
  }
  const Id cmd = std::move(it->second.cmd);
  msgs.erase(it);
  finished_msgs.insert(e.msg, cmd);
  Command* c = find_command(cmd);
  if (c == nullptr) return;
  if (e.n != 1) {
    violation(RuleId::kM1, absl::StrCat("message ", e.msg.to_string(), " of ", cmd_name(*c),
                                        " returned ", count_noun(e.n, "permit"),
                                        "; a message returns exactly 1"));
  }
  --c->live_messages;
  c->msg_returned = sat_add(c->msg_returned, e.n);
  credit(*c, e.n, {"return of message", &e.msg});
  check_over_return(*c);
  check_complete(*c);
}

void Monitor::State::on(const Drop& e) {
  if (e.msg) {
    auto it = msgs.find(*e.msg);
    if (it == msgs.end()) {
      violation(RuleId::kM1, absl::StrCat("message ", e.msg->to_string(),
                                          " dropped but not outstanding"));
      return;
    }
    const Id cmd = std::move(it->second.cmd);
    msgs.erase(it);
    finished_msgs.insert(*e.msg, cmd);
    Command* c = find_command(cmd);
    if (c == nullptr) return;
    drop_units(*c, e.n, {"message", &*e.msg});
    --c->live_messages;
    check_complete(*c);
    return;
  }
  if (e.cmd) {
    Command* c = find_command(*e.cmd);
    if (c == nullptr) {
      violation(RuleId::kN3, absl::StrCat("drop of command ", e.cmd->to_string(),
                                          ", which was never received"));
      return;
    }
    drop_units(*c, e.n, {"command", &c->cmd});
    c->settled = true;
    check_complete(*c);
  }
}

void Monitor::State::drop_units(Command& c, std::int64_t n, const Label& what) {
  c.dropped = sat_add(c.dropped, n);
  ClientIncarnation* inc = inc_of(c);
  if (inc && inc->current && invariants()) {
    violation(RuleId::kM1, absl::StrCat(what.str(), " dropped ", count_noun(n, "permit"),
                                        " while incarnation ", inc->inc.to_string(),
                                        " is current (lost)"));
  }
}

void Monitor::State::on(const ProtocolError& e) {
  bool c4_due = false;
  bool inconsistent_field_absent = false;
  bool inconsistent_field_present = false;
  bool zero_queue = false;
  // C5 (C7): a command the client had to settle as corrupted data, the first one found: a
  // payload failure or too many deliverable messages, with the field present or absent.
  const Command* unsettled_failure = nullptr;
  if (auto on_cnx = incs_on_cnx.find(e.cnx); on_cnx != incs_on_cnx.end()) {
    for (const Id& inc_id : on_cnx->second) {
      ClientIncarnation* inc = find_inc(inc_id);
      if (inc == nullptr || !inc->current) continue;
      prune_finished(*inc);
      for (const Id& id : inc->commands) {
        Command* c = find_live(id);
        if (c == nullptr || c->settled) continue;
        if (c->protocol_error_due) {
          c4_due = true;
          c->protocol_error_due = false;
          c->settled = true;
        } else if (c->inconsistent) {
          (c->message_permits ? inconsistent_field_present : inconsistent_field_absent) = true;
        } else if (c->failure || (c->budget_p > 0 && c->claimed > c->budget_p)) {
          if (unsettled_failure == nullptr) unsettled_failure = c;
        } else if (c->zero_queue_batch) {
          zero_queue = true;
        }
      }
    }
  }
  if (!c4_due && rules->inconsistent == InconsistentHandling::kCorruptedData) {
    if (inconsistent_field_absent) {
      violation(RuleId::kC6, absl::StrCat("connection ", e.cnx.to_string(), " closed (", e.reason,
                                          ") over an old-protocol ambiguity; the field is "
                                          "absent, so the client must fall back, not close"));
    } else if (inconsistent_field_present) {
      violation(RuleId::kC5, absl::StrCat("connection ", e.cnx.to_string(), " closed (", e.reason,
                                          ") over inconsistent data; corrupted-data handling "
                                          "keeps the connection"));
    } else if (unsettled_failure != nullptr) {
      // C5: corrupted data (a payload failure, C7, or more deliverable messages than P, K8)
      // is acknowledged with a validation error and settles P; nothing is closed. With the
      // field absent the client falls back and never closes either (C6).
      const Command& c = *unsettled_failure;
      std::string what;
      if (!c.failure) {
        what = absl::StrCat(c.claimed, " messages handed off for P = ", c.budget_p);
      } else if (*c.failure == FailureStage::kInconsistent) {
        what = "inconsistent data (more deliverable messages than P, or another C5 case)";
      } else {
        what = absl::StrCat("a payload failure (", to_absl(failure_stage_name(*c.failure)), ")");
      }
      violation(c.message_permits ? RuleId::kC5 : RuleId::kC6,
                absl::StrCat("connection ", e.cnx.to_string(), " closed (", e.reason, ") while ",
                             cmd_name(c), " had ", what, " to settle; corrupted data is "
                             "acknowledged with a validation error and settles P = ", c.budget_p,
                             ", closing neither the consumer nor the connection"));
    } else if (zero_queue) {
      violation(RuleId::kS7, absl::StrCat("connection ", e.cnx.to_string(), " closed (", e.reason,
                                          ") for a batch sent to a zero-queue consumer; S7 "
                                          "closes the consumer only"));
    }
  }
  end_client_incs_on(e.cnx);
}

}  // namespace permitcheck::spec
