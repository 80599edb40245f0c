// One command, recv .. settle (C1-C4, C7, K1-K8, S1-S3, E1, E2 per command).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "spec/internal/monitor_state.h"
#include "spec/client_exit.h"
#include "spec/plain_text.h"
#include "spec/prefetch_gauge.h"

namespace permitcheck::spec {

void Monitor::State::set_budget_p(Command& c, std::int64_t p) {
  if (ClientIncarnation* inc = inc_of(c)) inc->debited = sat_add(inc->debited, p - c.budget_p);
  c.budget_p = p;
}

// E2/K7: a command never returns more than P.
void Monitor::State::check_over_return(Command& c) {
  if (!invariants() || c.path) return;
  if (c.returned() > c.budget_p) {
    violation(RuleId::kE2, absl::StrCat(cmd_name(c), " returned ", c.returned(),
                                        " permits but its P is ", c.budget_p,
                                        " (over-return by ", c.returned() - c.budget_p, ")"));
  }
}

// E1 once a command is finished: terminal and every handed-off message returned.
void Monitor::State::check_complete(Command& c) {
  if (c.complete_checked || !c.settled || c.live_messages > 0) return;
  c.complete_checked = true;
  ClientIncarnation* inc = inc_of(c);
  const bool in_scope = invariants() && inc != nullptr && inc->current && !c.path &&
                        !c.protocol_error_due && c.dropped == 0;
  if (in_scope && c.returned() < c.budget_p) {
    violation(RuleId::kE1,
              absl::StrCat(cmd_name(c), " finished having returned ", c.returned(),
                           " of its P = ", c.budget_p, " (",
                           count_noun(sat_sub(c.budget_p, c.returned()), "permit"), " lost)"));
  }
  transferred_deviations(c, inc);
  // Released, in both modes alike; what a later event naming it needs stays in `retired`.
  if (!c.protocol_error_due) retire(c);
}

// A finished command leaves `cmds` for a compact record; under retain_ledger its ledger stays.
void Monitor::State::retire(Command& c) {
  if (c.wire_key) {
    if (auto w = wire.find(*c.wire_key); w != wire.end()) w->second.in_flight.erase(c.cmd);
  }
  if (options.retain_ledger) ledgers.insert_or_assign(c.cmd, ledger_of(c));
  const bool numbered = c.inc && c.inc->is_number();
  if (numbered) retired_incs.insert(c.cmd, c.inc->as_number());
  Retired r{.numbered_inc = numbered,
            .inc = numbered ? std::nullopt : c.inc,
            .budget_p = c.budget_p,
            .claimed = c.claimed,
            .direct_returned = c.direct_returned,
            .other_returned = sat_add(c.settle_returned, c.msg_returned),
            .dropped = c.dropped,
            .path = c.path};
  // Consecutive commands mostly finish alike: the latest record is tried before the table.
  std::uint32_t index = 0;
  if (!shapes.empty() && shapes.back() == r) {
    index = static_cast<std::uint32_t>(shapes.size() - 1);
  } else {
    auto [it, inserted] = shape_index.try_emplace(r, static_cast<std::uint32_t>(shapes.size()));
    if (inserted) shapes.push_back(std::move(r));
    index = it->second;
  }
  retired.insert(c.cmd, index);
  erase_command(c);
}

// A finished command named again: back in `cmds`, terminal and checked, as it finished.
monitor_internal::Command* Monitor::State::revive(const Id& id) {
  const std::optional<std::uint32_t> index = retired.take(id);
  if (!index) return nullptr;
  const Retired& r = shapes[*index];
  auto [at, inserted] = cmds.try_emplace(id);
  last_command = nullptr;
  Command& c = at->second;
  c.cmd = id;
  c.inc = r.numbered_inc ? std::optional<Id>(Id::number(*retired_incs.take(id))) : r.inc;
  c.received = true;
  c.settled = true;
  c.complete_checked = true;
  c.budget_p = r.budget_p;
  c.claimed = r.claimed;
  c.direct_returned = r.direct_returned;
  c.settle_returned = r.other_returned;
  c.dropped = r.dropped;
  c.path = r.path;
  return &c;
}

CommandLedger Monitor::State::ledger_of(const Command& c) const {
  return CommandLedger{.cmd = c.cmd,
                       .inc = c.inc,
                       .p = c.debited_p(),
                       .claimed = c.claimed,
                       .returned = c.returned(),
                       .dropped = c.dropped,
                       .settled = c.settled};
}

// C4: a command whose explicit value is out of range must end in a protocol error.
void Monitor::State::check_protocol_error_raised(Command& c) {
  ClientIncarnation* inc = inc_of(c);
  if (!c.protocol_error_due || inc == nullptr || !inc->current) return;
  violation(RuleId::kC4, absl::StrCat(cmd_name(c), " has message_permits = ",
                                      *c.message_permits, " but its connection ",
                                      inc->key.cnx.to_string(), " was never closed (C4: "
                                      "protocol error)"));
  c.protocol_error_due = false;  // report once
}

void Monitor::State::on(const Recv& e) {
  ClientIncarnation* inc = find_inc(e.inc);
  if (inc == nullptr) {
    violation(RuleId::kN1, absl::StrCat("command ", e.cmd.to_string(),
                                        " received for permit state ", e.inc.to_string(),
                                        ", which was never opened"));
  }
  Command& c = command(e.cmd);
  if (c.received) {
    violation(RuleId::kK1, absl::StrCat(cmd_name(c), " received twice"));
    return;
  }
  c.received = true;
  c.inc = e.inc;
  if (inc != nullptr && inc->current) {  // an ended state's commands are not walked again
    inc->commands.push_back(e.cmd);
    // Amortized pruning keeps the list at what is in flight without quiescent events.
    if (inc->commands.size() >= 2 * inc->commands_after_prune + 64) {
      prune_finished(*inc);
      inc->commands_after_prune = inc->commands.size();
    }
  }
  if (!c.message_permits) c.message_permits = e.message_permits;
  if (c.ack_set.absent()) c.ack_set = e.ack_set;
  c.validated.reset();
  const Resolution early = resolve_early(*rules, c.message_permits, c.ack_set);
  set_budget_p(c, early.p);
  if (c.message_permits && rules->client_reads_message_permits &&
      !message_permits_in_range(*c.message_permits)) {
    c.protocol_error_due = true;  // C4: checked when the client acts on the command
  }
}

void Monitor::State::on(const Resolve& e) {
  Command* c = find_command(e.cmd);
  if (c == nullptr || !c->received) {
    violation(RuleId::kC1, absl::StrCat("command ", e.cmd.to_string(),
                                        " resolved before it was received"));
    return;
  }
  if (c->protocol_error_due) return;
  Resolution expected;
  RuleId rule = RuleId::kC2;
  if (c->batch_size) {
    if (!c->validated) {
      c->validated =
          validate_permits(*rules, c->message_permits, c->ack_set, *c->batch_size).resolution;
    }
    expected = *c->validated;
    rule = RuleId::kC1;
  } else {
    expected = resolve_early(*rules, c->message_permits, c->ack_set);
  }
  if (e.p != expected.p || e.source != expected.source) {
    violation(rule, absl::StrCat(cmd_name(*c), " resolved P = ", e.p, " from ",
                                 to_absl(permit_source_name(e.source)), "; the ladder gives ", expected.p,
                                 " from ", to_absl(permit_source_name(expected.source))));
  }
}

void Monitor::State::on(const Metadata& e) {
  Command* c = find_command(e.cmd);
  if (c == nullptr || !c->received) {
    violation(RuleId::kC3, absl::StrCat("metadata for command ", e.cmd.to_string(),
                                        ", which was never received"));
    return;
  }
  c->batch_size = e.batch_size;
  c->validated.reset();
  if (c->protocol_error_due) {
    violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                        *c->message_permits, " but was processed; an "
                                        "out-of-range value is a protocol error"));
    c->protocol_error_due = false;  // report once
    return;
  }
  if (header.q && *header.q == 0 && e.batch_size > 1) c->zero_queue_batch = true;
  const Validation v = validate_permits(*rules, c->message_permits, c->ack_set, e.batch_size);
  c->validated = v.resolution;
  if (v.verdict == Verdict::kInconsistent) {
    c->inconsistent = true;
    c->inconsistent_reason = v.reason;
  }
  if (v.verdict != Verdict::kProtocolError) set_budget_p(*c, v.resolution.p);
}

void Monitor::State::on(const Corrupt& e) {
  Command* c = find_command(e.cmd);
  if (c == nullptr || !c->received) {
    violation(RuleId::kC7, absl::StrCat("corrupt for command ", e.cmd.to_string(),
                                        ", which was never received"));
    return;
  }
  c->failure = e.stage;
  if (c->protocol_error_due) {
    violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                        *c->message_permits, " but was treated as corrupted "
                                        "data; an out-of-range value is a protocol error"));
    c->protocol_error_due = false;
  }
}

void Monitor::State::on(const Claim& e) {
  Command* c = find_command(e.cmd);
  if (c == nullptr || !c->received) {
    violation(RuleId::kK2, absl::StrCat("message ", e.msg.to_string(), " claimed from command ",
                                        e.cmd.to_string(), ", which was never received"));
    return;
  }
  // A message handed off before (returned or not) is claimed twice; a new one is entered now.
  if (finished_msgs.find(e.msg) || !msgs.try_emplace(e.msg, Msg{.cmd = e.cmd}).second) {
    violation(RuleId::kK2, absl::StrCat("message ", e.msg.to_string(), " claimed twice"));
    return;
  }
  if (c->protocol_error_due) {
    violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                        *c->message_permits, " but handed off message ",
                                        e.msg.to_string(), " (C4: protocol error, no hand-off)"));
    c->protocol_error_due = false;
  } else if (c->settled) {
    violation(RuleId::kK5, absl::StrCat(cmd_name(*c), " hands off message ", e.msg.to_string(),
                                        " after its terminal transition"));
  } else if (c->path) {
    violation(RuleId::kS1, absl::StrCat(cmd_name(*c), " hands off message ", e.msg.to_string(),
                                        " from the generic budget after ownership moved to the ",
                                        to_absl(transfer_path_name(*c->path)), " path"));
  } else if (c->zero_queue_batch) {
    violation(RuleId::kS7, absl::StrCat("zero-queue consumer hands off message ",
                                        e.msg.to_string(), " of batch ", cmd_name(*c),
                                        " (a batch must close the consumer)"));
  } else if (c->inconsistent && rules->budget_tracked) {
    violation(RuleId::kC3, absl::StrCat(cmd_name(*c), " hands off message ", e.msg.to_string(),
                                        " although validation failed: ",
                                        c->inconsistent_reason));
  } else if (e.index && c->batch_size && (*e.index < 0 || *e.index >= *c->batch_size)) {
    // K2: only a deliverable index is claimed, and a batch's indexes are 0..B-1.
    violation(RuleId::kK2, absl::StrCat(cmd_name(*c), " hands off index ", *e.index,
                                        ", outside its batch of B = ", *c->batch_size));
  } else if (e.index && !c->ack_set.absent() && !c->ack_set.is_deliverable(*e.index)) {
    violation(RuleId::kK3, absl::StrCat(cmd_name(*c), " hands off index ", *e.index,
                                        ", which its ack_set clears (outside P)"));
  } else if (rules->budget_tracked && hand_off_room(c->progress()) < 1) {
    violation(RuleId::kK8, absl::StrCat(cmd_name(*c), " hands off message ",
                                        c->claimed + 1, " but its P is ", c->budget_p,
                                        " (more messages than P is malformed, C5)"));
  }
  ++c->claimed;
  ++c->live_messages;
}

void Monitor::State::on(const Restore& e) {
  auto it = msgs.find(e.msg);
  Command* c = find_command(e.cmd);
  if (it == msgs.end() || c == nullptr || !(it->second.cmd == e.cmd)) {
    violation(RuleId::kK2, absl::StrCat("message ", e.msg.to_string(), " restored to command ",
                                        e.cmd.to_string(), " without an open claim from it"));
    return;
  }
  if (c->settled) {
    // The restored unit is command-owned again, but the terminal transition is over.
    violation(c->path ? RuleId::kS1 : RuleId::kK5,
              absl::StrCat("message ", e.msg.to_string(), " restored to ", cmd_name(*c),
                           " after its terminal transition (its permit can never be returned)"));
  }
  --c->claimed;
  --c->live_messages;
  msgs.erase(it);
  check_complete(*c);
}

void Monitor::State::on(const Skip& e) {
  Command* c = find_command(e.cmd);
  if (c == nullptr || !c->received) {
    violation(RuleId::kK4, absl::StrCat("skip in command ", e.cmd.to_string(),
                                        ", which was never received"));
    return;
  }
  ++c->skipped;
  last_skip = e;
}

void Monitor::State::on(const Transfer& e) {
  Command* c = find_command(e.cmd);
  if (c == nullptr || !c->received) {
    violation(RuleId::kS1, absl::StrCat("transfer of command ", e.cmd.to_string(),
                                        ", which was never received"));
    return;
  }
  c->path = e.path;
}

void Monitor::State::on(const DirectReturn& e) {
  Command* c = find_command(e.cmd);
  if (c == nullptr || !c->received) {
    violation(RuleId::kK6, absl::StrCat("direct return from command ", e.cmd.to_string(),
                                        ", which was never received"));
    return;
  }
  if (e.n < 0) {
    violation(RuleId::kK6, absl::StrCat(cmd_name(*c), " returns ", e.n,
                                        " permits directly (a negative count)"));
    return;
  }
  if (c->protocol_error_due) {
    violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                        *c->message_permits, " but returns ",
                                        count_noun(e.n, "permit"), "; C4 allows no credit"));
  }
  // The specialised paths own their returns (S1): crypto DISCARD returns B (S3, X2),
  // a non-final chunk returns 1 (S2).
  const std::optional<std::int64_t> prescribed =
      e.path ? specialised_return(e.path->kind(),
                                  c->batch_size.value_or(c->wire_batch_size.value_or(c->budget_p)))
             : std::nullopt;
  if (e.path == DirectPath::kCrypto) {
    c->path = TransferPath::kCrypto;
    const std::int64_t b = *prescribed;
    if (e.n != b) {
      violation(RuleId::kS3, absl::StrCat(cmd_name(*c), " crypto DISCARD returned ", e.n,
                                          "; it returns B = ", b));
    } else if (e.n > c->budget_p) {
      deviation(RuleId::kX2, absl::StrCat(cmd_name(*c), " crypto DISCARD of a partial "
                                          "redelivery returned B = ", e.n, " for P = ",
                                          c->budget_p, " (over-return by ",
                                          e.n - c->budget_p, ")"));
      if (ClientIncarnation* inc = inc_of(*c)) {
        inc->deviation = RuleId::kX2;
        inc->deviation_delta = sat_add(inc->deviation_delta, e.n - c->budget_p);
      }
    }
  } else if (e.path == DirectPath::kChunk) {
    c->path = TransferPath::kChunk;
    if (e.n != *prescribed) {
      violation(RuleId::kS2, absl::StrCat(cmd_name(*c), " non-final chunk returned ", e.n,
                                          "; each non-final chunk returns 1"));
    }
  } else if (c->path) {
    // Returns of a processor or other transferred path: accounted, judged at completion.
  } else if (rules->direct_returns == DirectReturns::kFromBudget) {
    const std::int64_t owned = c->settled ? 0 : command_owned(*rules, c->progress());
    if (e.n > owned) {
      violation(RuleId::kK6,
                absl::StrCat(cmd_name(*c), " returns ", count_noun(e.n, "permit"), " directly",
                             e.path ? absl::StrCat(" (", to_absl(e.path->name()), ")") : "",
                             " but only ", owned,
                             " of its permits were left to return (returned twice)"));
    }
  }
  c->direct_returned = sat_add(c->direct_returned, e.n);
  credit(*c, e.n, {"direct return"});
  check_over_return(*c);
}

void Monitor::State::on(const Settle& e) {
  Command* c = find_command(e.cmd);
  if (c == nullptr || !c->received) {
    violation(RuleId::kK5, absl::StrCat("settle of command ", e.cmd.to_string(),
                                        ", which was never received"));
    return;
  }
  if (c->settled) {
    if (e.n != 0) {
      violation(RuleId::kK5, absl::StrCat(cmd_name(*c), " finished a second time (second terminal "
                                          "transition) and returned ", count_noun(e.n, "permit"),
                                          "; only the first returns any"));
    }
  } else if (c->protocol_error_due) {
    if (e.n != 0) {
      violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                          *c->message_permits, " but settles ",
                                          count_noun(e.n, "permit"), "; C4 allows no credit"));
    }
  } else {
    check_settle(*c, e.n);
  }
  c->settled = true;
  c->settle_returned = sat_add(c->settle_returned, e.n);
  credit(*c, e.n, {"terminal transition"});
  check_over_return(*c);
  check_complete(*c);
}

// K5/K4/K7/C7: the first terminal transition returns what the ruleset prescribes.
void Monitor::State::check_settle(Command& c, std::int64_t n) {
  const std::int64_t expected = settle_amount(*rules, c.progress());
  early_failure_deviations(c);
  if (n == expected) return;
  std::string text = absl::StrCat(cmd_name(c), " returned ", count_noun(n, "permit"),
                                   " when it finished (its terminal transition) where the rule "
                                   "returns ", expected, " (P = ",
                                   c.budget_p, ", ", c.claimed, " handed to messages, ", c.skipped,
                                   " skipped, ", c.direct_returned, " returned directly",
                                   c.failure ? absl::StrCat(", failed at ",
                                                            to_absl(failure_stage_name(*c.failure)))
                                             : "",
                                   ")");
  if (n > expected) {
    const std::int64_t total = sat_add(sat_add(c.claimed, c.direct_returned), n);
    if (rules->budget_tracked && total > c.budget_p) {
      violation(RuleId::kK7, absl::StrCat(text, "; the command returns ", total, " > P"));
    } else {
      violation(RuleId::kK5, std::move(text));
    }
    return;
  }
  const RuleId rule = c.failure == FailureStage::kInconsistent ? RuleId::kC5
                      : c.failure                              ? RuleId::kC7
                      : c.skipped > 0                          ? RuleId::kK4
                                                               : RuleId::kK5;
  violation(rule, absl::StrCat(text, "; ", count_noun(sat_sub(expected, n), "permit"), " lost"));
}

// S5/S6: the message object of the skip just before was released at skip time. A
// dead-letter message is still held by dead-letter handling (revision B's F3).
// M2: a recorder's reading of a prefetch count gauge (spec/prefetch_gauge.h). A client that
// ended during a scenario: the scenario's primary rule (spec/client_exit.h). A scenario
// driver's other facts: monitor_scenario.cc.
void Monitor::State::on(const Extension& e) {
  if (std::optional<ClientExit> x = parse_client_exit_event(e.ev)) {
    violation(x->rule, client_exit_text(*x));
    driver_fact_lines.push_back(line);
    return;
  }
  if (on_scenario_fact(e.ev)) return;
  if (std::optional<PrefetchGauge> g = parse_prefetch_gauge_event(e.ev)) {
    if (std::optional<std::string> leak = prefetch_gauge_leak(*rules, *g)) {
      violation(RuleId::kM2, *std::move(leak));
    }
    return;
  }
  if (e.ev != kSkipReleaseEvent || !last_skip) return;
  if (last_skip->reason == SkipReason::kDeadLetter &&
      rules->skipped_release == SkippedRelease::kDuplicateOnly) {
    violation(RuleId::kS5,
              absl::StrCat("dead-letter message at index ", last_skip->index, " of command ",
                           last_skip->cmd.to_string(), " released at skip time while dead-letter "
                           "handling still holds it (use after release when it is published)"));
  }
}

}  // namespace permitcheck::spec
