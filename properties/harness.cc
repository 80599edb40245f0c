#include "properties/harness.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "rapidcheck.h"
#include "base/absl_view.h"
#include "spec/bug_signature.h"
#include "spec/driver_excuse.h"
#include "spec/driver_verdict.h"
#include "spec/finalize.h"
#include "spec/prefetch_gauge.h"

namespace permitcheck::properties {
namespace {

std::uint64_t cmd_number(const spec::Id& id) { return id.is_number() ? id.as_number() : 0; }

}  // namespace

std::string format_problem(const Problem& p) {
  std::string out = absl::StrCat("[step ", p.step, "] ", p.source);
  if (p.rule) absl::StrAppend(&out, " ", to_absl(spec::rule_name(*p.rule)));
  if (p.deviation) absl::StrAppend(&out, " (known deviation)");
  if (p.explained) absl::StrAppend(&out, " (explained)");
  if (p.legacy) absl::StrAppend(&out, " [", *p.legacy, " signature]");
  absl::StrAppend(&out, ": ", p.text);
  return out;
}

bool Goal::fails(const Problem& p) const {
  switch (kind) {
    case Kind::kConform:
      return !p.deviation && !p.explained;
    case Kind::kFindLegacy:
      return p.legacy == legacy_id;
    case Kind::kNever:
      return false;
  }
  return false;
}

Harness::Harness(const impl::WorldConfig& config, Goal goal, spec::RulesetId rules,
                 std::optional<CaseRecord>* last_failure)
    : config_(config), goal_(std::move(goal)), rules_(rules), last_failure_(last_failure) {
  model_ = std::make_unique<SpecModel>(rules, config_);
  world_ = std::make_unique<impl::World>(config_, model_.get());
  model_->follow_trace(&world_->events());
  monitor_ = std::make_unique<spec::Monitor>(rulebook_header(config_, rules),
                                             spec::MonitorOptions{.retain_ledger = false});
}

Harness::~Harness() = default;

void Harness::start() {
  world_->start();
  collect();
}

void Harness::publish(const std::vector<impl::EntrySpec>& entries, std::string shown) {
  if (coverage_ != nullptr) coverage_->publish(entries);
  for (const impl::EntrySpec& e : entries) {
    const std::int64_t b = std::max<std::int64_t>(1, e.payload.batch_size);
    const std::set<std::int64_t> acked(e.pre_acked.begin(), e.pre_acked.end());
    std::int64_t left = b;
    for (std::int64_t i : acked) left -= (i >= 0 && i < b) ? 1 : 0;
    if (left > 0) ++deliverable_published_;  // B3: a fully acknowledged entry is never sent
  }
  world_->publish(entries);
  after_step(std::move(shown));
}
void Harness::step(std::uint64_t choice, std::string shown) {
  world_->step(choice);
  after_step(std::move(shown));
}
void Harness::run_all(std::string shown) {
  world_->run_all();
  if (!world_->idle()) {
    add({.source = "quiesce", .text = "run_all did not become idle (livelock)",
         .step = steps_.size() + 1});
  }
  after_step(std::move(shown));
  // B13 while the application still holds what it was sent (settle() would consume it, and
  // the acknowledgements trigger reads of their own): idle, so any read due has run.
  if (world_->idle()) check_dispatch_progress();
}
void Harness::consume(int consumer, int n, std::string shown) {
  world_->consume(consumer % world_->consumers(), n);
  after_step(std::move(shown));
}
void Harness::receive_async(int consumer, std::string shown) {
  world_->receive_async(consumer % world_->consumers());
  after_step(std::move(shown));
}
void Harness::redeliver(int consumer, std::string shown) {
  forget_chunks(consumer % world_->consumers());
  world_->redeliver(consumer % world_->consumers());
  after_step(std::move(shown));
}
void Harness::redeliver_after_close(int closed, int consumer, std::string shown) {
  world_->close_consumer(closed % world_->consumers(), /*graceful=*/false);
  forget_chunks(consumer % world_->consumers());
  world_->redeliver(consumer % world_->consumers());
  after_step(std::move(shown));
}
void Harness::forget_chunks(int consumer) {
  // A redelivery clears the client's chunk contexts with its queue (S2 follows them).
  auto tc = trace_consumers_.find(static_cast<std::uint64_t>(consumer));
  if (tc != trace_consumers_.end()) chunk_next_.erase(tc->second.inc);
}
void Harness::close_consumer(int consumer, bool graceful, std::string shown) {
  world_->close_consumer(consumer % world_->consumers(), graceful);
  after_step(std::move(shown));
}
void Harness::drop_connection(int slot, std::string shown) {
  world_->drop_connection(slot);
  after_step(std::move(shown));
}
void Harness::fail_next_subscribe(std::string shown) {
  world_->fail_next_subscribe();
  after_step(std::move(shown));
}
void Harness::corrupt_next_field(std::uint64_t value, std::string shown) {
  world_->corrupt_next_field(value);
  after_step(std::move(shown));
}
void Harness::follow_consumers(const spec::Event& e) {
  auto of_inc = [this](std::uint64_t inc) -> TraceConsumer* {
    for (auto& [consumer, c] : trace_consumers_) {
      if (c.inc == inc) return &c;
    }
    return nullptr;
  };
  const auto forgive_cnx = [this](const spec::Id& cnx) {
    std::erase_if(unacked_inconsistent_, [&](const auto& kv) { return kv.second == cnx.to_string(); });
  };
  const std::size_t step = current_step();
  if (const auto* o = std::get_if<spec::IncOpen>(&e)) {
    if (auto old = trace_consumers_.find(o->consumer); old != trace_consumers_.end()) {
      add_quiesce(spec::resubscribed_after_close_verdict(old->second.closed, o->consumer,
                                                         old->second.inc, o->inc.to_string()),
                  step);
    }
    trace_consumers_[o->consumer] = TraceConsumer{.inc = o->inc.as_number(), .cnx = o->cnx, .live = true};
    cnx_of_inc_[o->inc.as_number()] = o->cnx.to_string();
  } else if (const auto* f = std::get_if<spec::IncFlowEnabled>(&e)) {
    if (TraceConsumer* c = of_inc(f->inc.as_number())) c->flow_enabled = true;
  } else if (const auto* c = std::get_if<spec::IncClose>(&e)) {
    chunk_next_.erase(c->inc.as_number());  // its chunk contexts end with it
    if (TraceConsumer* tc = of_inc(c->inc.as_number())) {
      tc->live = false;
      tc->closed = c->reason == spec::CloseReason::kClosed;
    }
  } else if (const auto* fl = std::get_if<spec::Flow>(&e); fl != nullptr && fl->inc) {
    // N5 from the trace: after the initial grant, a Flow drains an accumulator that reached T,
    // so it carries at least T (an early Flow returns permits the threshold should batch).
    TraceConsumer* tc = of_inc(fl->inc->as_number());
    if (tc == nullptr) return;  // an ended incarnation's Flow: the monitor judges it (N5, N6)
    const std::int64_t t = rulebook_threshold(config_);  // T from the rulebook, not impl
    add_quiesce(spec::flow_below_threshold_verdict(fl->permits, tc->inc, t, tc->flowed,
                                                   config_.options.zero_queue),
                step);
    tc->flowed = true;
  } else if (const auto* fl = std::get_if<spec::Flow>(&e); fl != nullptr && !fl->inc) {
    // A zero-queue receive() grants without naming the incarnation (its Flows are outside
    // the monitor's wire checks): N4 from the trace, only while the consumer's latest
    // incarnation is live and Flow-enabled.
    auto tc = trace_consumers_.find(fl->consumer);
    if (config_.options.zero_queue) {
      const bool enabled =
          tc != trace_consumers_.end() && tc->second.live && tc->second.flow_enabled;
      add_quiesce(spec::zero_queue_flow_verdict(enabled, fl->consumer, fl->permits,
                                                fl->cnx.to_string()),
                  step);
    }
  } else if (const auto* d = std::get_if<spec::Disconnect>(&e)) {
    for (auto& [consumer, tc] : trace_consumers_) {
      if (tc.cnx == d->cnx) tc.live = false;
    }
    forgive_cnx(d->cnx);
    unwritten_cmds_.clear();
    // K5: when the connection ends, every command received so far made its terminal
    // transition (a settle, or S7's drop; a protocol error forgives the one being handled).
    std::optional<std::uint64_t> unsettled;
    if (!unsettled_cmds_.empty()) unsettled = *unsettled_cmds_.begin();
    add_quiesce(spec::unsettled_at_disconnect_verdict(unsettled), step);
    unsettled_cmds_.clear();
  } else if (const auto* m = std::get_if<spec::Message>(&e)) {
    unwritten_cmds_.erase(cmd_number(m->cmd));
  } else if (const auto* dp = std::get_if<spec::Drop>(&e); dp != nullptr && dp->cmd) {
    unsettled_cmds_.erase(cmd_number(*dp->cmd));  // its units end with the incarnation (S7)
  } else if (const auto* pe = std::get_if<spec::ProtocolError>(&e)) {
    forgive_cnx(pe->cnx);
    unsettled_cmds_.clear();
  } else if (const auto* ack = std::get_if<spec::Ack>(&e)) {
    if (ack->validation_error) unacked_inconsistent_.erase(cmd_number(ack->cmd));
  } else if (const auto* s = std::get_if<spec::Send>(&e)) {
    for (const spec::SentEntry& entry : s->entries) {
      if (!entry.p) continue;
      unwritten_cmds_.insert(cmd_number(entry.cmd));
      if (const std::shared_ptr<const impl::Payload> p = world_->payload_of(cmd_number(entry.cmd))) {
        redeliveries_of_cmd_[cmd_number(entry.cmd)] = sends_of_entry_[p.get()]++;
      }
    }
  } else if (const auto* r = std::get_if<spec::Recv>(&e)) {
    inc_of_cmd_[cmd_number(r->cmd)] = r->inc.as_number();
    unsettled_cmds_.insert(cmd_number(r->cmd));
  } else if (const auto* cl = std::get_if<spec::Claim>(&e)) {
    cmds_with_progress_.insert(cmd_number(cl->cmd));
    last_claim_ = *cl;
    check_dead_letter(cmd_number(cl->cmd), /*dead_lettered=*/false, step);
  } else if (const auto* rs = std::get_if<spec::Restore>(&e)) {
    left_unacknowledged_ = true;  // a failed hand-off: the message waits for a redelivery
    check_restore(cmd_number(rs->cmd), rs->msg, step);
  } else if (const auto* sk = std::get_if<spec::Skip>(&e)) {
    cmds_with_progress_.insert(cmd_number(sk->cmd));  // a skip is no X3/X4 hold
    // Skipped before startMessageId: never acknowledged, as a reader's.
    if (sk->reason == spec::SkipReason::kBeforeStart) left_unacknowledged_ = true;
    if (sk->reason == spec::SkipReason::kDeadLetter) check_dead_letter(cmd_number(sk->cmd), true, step);
  } else if (const auto* dr = std::get_if<spec::DirectReturn>(&e)) {
    cmds_with_progress_.insert(cmd_number(dr->cmd));
  } else if (const auto* co = std::get_if<spec::Corrupt>(&e)) {
    cmds_with_progress_.insert(cmd_number(co->cmd));
    if (co->stage == spec::FailureStage::kInconsistent) {
      if (auto inc = inc_of_cmd_.find(cmd_number(co->cmd)); inc != inc_of_cmd_.end()) {
        if (auto cnx = cnx_of_inc_.find(inc->second); cnx != cnx_of_inc_.end()) {
          unacked_inconsistent_[cmd_number(co->cmd)] = cnx->second;
        }
      }
    }
  } else if (const auto* st = std::get_if<spec::Settle>(&e)) {
    // What the run was given decides whether the command holds its units: an encrypted
    // payload under cryptoFailureAction FAIL (X3), or a chunk that neither returned nor
    // delivered anything (the X4 failure branch).
    const std::uint64_t cmd = cmd_number(st->cmd);
    unsettled_cmds_.erase(cmd);
    const std::shared_ptr<const impl::Payload> payload = world_->payload_of(cmd);
    auto inc = inc_of_cmd_.find(cmd);
    if (payload != nullptr && payload->chunked() && inc != inc_of_cmd_.end() && !stage_of_.contains(cmd)) {
      follow_chunk(cmd, *payload, inc->second, st->n);
    }
    if (payload == nullptr || inc == inc_of_cmd_.end() || cmds_with_progress_.contains(cmd)) return;
    const bool crypto_fail = payload->encrypted && !payload->chunked() &&
                             config_.options.crypto_action == impl::CryptoAction::kFail;
    if (crypto_fail || payload->chunked()) {
      if (TraceConsumer* tc = of_inc(inc->second)) tc->holding = true;
    }
  }
}

bool Harness::quiesce_from_trace() {
  if (!world_->settle()) return false;
  collect();  // follow what settling recorded
  for (int k = 0; k < world_->consumers(); ++k) {
    const auto consumer = static_cast<std::uint64_t>(k);
    auto it = trace_consumers_.find(consumer);
    if (it != trace_consumers_.end() && it->second.closed) continue;  // S7: closed, not stalled
    const spec::StallCause stall = it == trace_consumers_.end() ? spec::StallCause::kNeverSubscribed
                                   : !it->second.live ? spec::StallCause::kEndedWithoutReplacement
                                   : !it->second.flow_enabled ? spec::StallCause::kNeverFlowEnabled
                                                              : spec::StallCause::kNone;
    if (stall != spec::StallCause::kNone) {
      const std::uint64_t inc = it == trace_consumers_.end() ? 0 : it->second.inc;
      add_quiesce(spec::stalled_verdict(stall, k, inc), current_step());
      continue;
    }
    // N4: the initial grant of Q is written as soon as the state is Flow-enabled (rulebook
    // 12.5); a Flow-enabled incarnation that never wrote one is never sent anything.
    add_quiesce(spec::initial_grant_verdict(it->second.flowed, config_.options.zero_queue, k,
                                            it->second.inc, config_.q),
                current_step());
    if (it->second.holding) continue;  // X3/X4 hold units until the incarnation ends
    // A zero-queue consumer's broker permits are its waiting receive()s, not Q - accumulator,
    // so the monitor's E5 does not apply to it (its Flows carry no incarnation); judged below.
    if (config_.options.zero_queue) continue;
    world_->declare_quiescent(consumer, it->second.cnx);
  }
  // E5 for zero-queue consumers (Q = 0): a receive() grants one permit and waits for its
  // message, so at quiescence no live broker consumer holds more than 1 (one receive waiting):
  // more is a permit invented. (Fewer is not judged: a batch the client could not recognise as
  // one, its metadata lost to a checksum failure, leaves B9's debt where S7 cannot close it.)
  if (config_.options.zero_queue) {
    for (const impl::World::BrokerConsumerView& b : world_->broker_consumers()) {
      add_quiesce(spec::zero_queue_available_verdict(b.available, b.inc, b.consumer_id),
                  current_step());
    }
  }
  check_dispatch_progress();
  check_drained();
  // C5: an inconsistent command is acknowledged with a validation error (its connection open).
  for (const auto& [cmd, cnx] : unacked_inconsistent_) {
    add_quiesce(spec::unacknowledged_inconsistent_finding(cmd, cnx), current_step());
  }
  unacked_inconsistent_.clear();
  // B7: settled, every command a send finalized was written to its consumer.
  std::optional<std::uint64_t> unwritten;
  if (!unwritten_cmds_.empty()) unwritten = *unwritten_cmds_.begin();
  add_quiesce(spec::unwritten_command_verdict(unwritten), current_step());
  unwritten_cmds_.clear();
  return true;
}

void Harness::quiesce(std::string shown) {
  steps_.push_back(std::move(shown));
  const bool settled = quiesce_from_trace();
  if (!settled) {
    add({.source = "quiesce", .text = "the system did not settle (livelock)", .step = steps_.size()});
  }
  collect();
}

void Harness::finish() {
  if (finished_) return;
  finished_ = true;
  const bool settled = quiesce_from_trace();
  if (!settled) {
    add({.source = "quiesce", .text = "the system did not settle (livelock)",
         .step = steps_.size() + 1});
  }
  collect();
  monitor_->finish();
  collect();
  if (coverage_ != nullptr) coverage_->finish(steps_.size());
}

std::size_t Harness::current_step() const { return finished_ ? steps_.size() + 1 : steps_.size(); }

void Harness::after_step(std::string shown) {
  steps_.push_back(std::move(shown));
  collect();
}

const spec::Event* Harness::event_at(std::uint64_t line) const {
  if (line < 2) return nullptr;
  const std::size_t i = static_cast<std::size_t>(line - 2);
  return i < world_->events().size() ? &world_->events()[i] : nullptr;
}

std::optional<std::uint64_t> Harness::consumer_of_event(const spec::Event& e) const {
  auto by_cmd = [this](const spec::Id& cmd) -> std::optional<std::uint64_t> {
    auto it = consumer_of_cmd_.find(cmd_number(cmd));
    if (it == consumer_of_cmd_.end()) return std::nullopt;
    return it->second;
  };
  if (const auto* f = std::get_if<spec::Flow>(&e)) return f->consumer;
  if (const auto* q = std::get_if<spec::Quiescent>(&e)) return q->consumer;
  if (const auto* s = std::get_if<spec::Settle>(&e)) return by_cmd(s->cmd);
  if (const auto* d = std::get_if<spec::DirectReturn>(&e)) return by_cmd(d->cmd);
  if (const auto* m = std::get_if<spec::Message>(&e)) return m->consumer;
  if (const auto* sd = std::get_if<spec::Send>(&e)) return sd->consumer;
  return std::nullopt;
}

spec::DriverFacts Harness::facts_at(const spec::Finding& f, const spec::Event& e) const {
  spec::DriverFacts d{.legacy_implementation = config_.mode == impl::Mode::kLegacy,
                      .ruleset = rules_,
                      .previous = event_at(f.line - 1),
                      .any_consumer_corrupted = !corrupted_consumers_.empty()};
  std::optional<std::uint64_t> cmd;
  if (const auto* s = std::get_if<spec::Settle>(&e)) cmd = cmd_number(s->cmd);
  if (const auto* r = std::get_if<spec::DirectReturn>(&e)) cmd = cmd_number(r->cmd);
  if (const auto* m = std::get_if<spec::Message>(&e)) cmd = cmd_number(m->cmd);
  if (cmd) {
    if (auto it = stage_of_.find(*cmd); it != stage_of_.end()) d.injected_stage = it->second;
    d.corrupted_on_wire = world_->corrupted_on_wire(*cmd);
    d.direct_return = direct_cmds_.contains(*cmd);
    d.before_start = before_start_.contains(*cmd);
  }
  if (const std::optional<std::uint64_t> consumer = consumer_of_event(e)) {
    d.consumer_corrupted = corrupted_consumers_.contains(*consumer);
    d.consumer_inexact = deviated_consumers_.contains(*consumer);
  }
  if (std::holds_alternative<spec::ProtocolError>(e)) {
    // The incarnations the connection close after the protocol error ended.
    std::set<std::uint64_t> ended;
    const std::vector<spec::Event>& events = world_->events();
    for (std::size_t i = static_cast<std::size_t>(f.line - 1); i < events.size(); ++i) {
      const auto* c = std::get_if<spec::IncClose>(&events[i]);
      if (c == nullptr) continue;
      if (c->reason != spec::CloseReason::kProtocolError) break;
      if (auto it = consumer_of_inc_.find(c->inc.to_string()); it != consumer_of_inc_.end()) {
        ended.insert(it->second);
      }
    }
    d.consumers_ended_by_close = ended.size();
  }
  if (const auto* r = std::get_if<spec::MsgReturn>(&e)) {
    // Whether the message came on the connection its consumer's current incarnation is on.
    const auto msg_cmd = cmd_of_msg_.find(r->msg.to_string());
    if (msg_cmd != cmd_of_msg_.end()) {
      const auto cnx = cnx_of_cmd_.find(msg_cmd->second);
      const auto consumer = consumer_of_cmd_.find(msg_cmd->second);
      if (cnx != cnx_of_cmd_.end() && consumer != consumer_of_cmd_.end()) {
        const auto current = trace_consumers_.find(consumer->second);
        d.returned_on_current_connection =
            current != trace_consumers_.end() && current->second.cnx.to_string() == cnx->second;
      }
    }
  }
  return d;
}

std::optional<std::string> Harness::signature(const spec::Finding& f, bool deviation) const {
  const spec::Event* e = event_at(f.line);
  if (e == nullptr) return std::nullopt;
  return spec::legacy_signature(f, deviation, *e, facts_at(f, *e));
}

void Harness::add_quiesce(std::optional<spec::Finding> f, std::size_t step) {
  if (!f) return;
  add({.source = "quiesce", .rule = f->rule, .text = std::move(f->explanation), .step = step});
}

void Harness::add(Problem p) {
  problems_.push_back(std::move(p));
  const Problem& added = problems_.back();
  if (!goal_.fails(added)) return;
  if (last_failure_ != nullptr) {
    *last_failure_ = CaseRecord{.config = config_,
                                .steps = steps_,
                                .problem = added,
                                .header = rulebook_header(config_, spec::RulesetId::kRevD),
                                .events = world_->events()};
  }
  RC_FAIL(format_problem(added));
}

void Harness::collect() {
  const std::size_t step = current_step();
  // M2's facts: the prefetch gauges are client state no wire event shows, so a reading that
  // differs from what the consumer holds is recorded in the trace (spec/prefetch_gauge.h) and
  // the monitor judges it like any event; once per consumer, as one leak is one finding.
  for (int k = 0; k < world_->consumers(); ++k) {
    const impl::World::ClientConsumerView v = world_->client_consumer(k);
    const std::int64_t held = v.queued + v.in_listener;
    if (v.prefetched != held && !gauge_reported_.contains(k)) {
      gauge_reported_.insert(k);
      world_->record_fact(spec::Extension{.ev = spec::prefetch_gauge_event(
                                              {.consumer = static_cast<std::uint64_t>(k),
                                               .gauge = v.prefetched,
                                               .held = held})});
    }
  }
  const std::vector<spec::Event>& events = world_->events();
  for (; next_event_ < events.size(); ++next_event_) {
    const spec::Event& e = events[next_event_];
    if (const auto* c = std::get_if<spec::Corrupt>(&e)) {
      stage_of_[cmd_number(c->cmd)] = c->stage;
    } else if (const auto* s = std::get_if<spec::Skip>(&e)) {
      if (s->reason == spec::SkipReason::kBeforeStart) before_start_.insert(cmd_number(s->cmd));
    } else if (const auto* cl = std::get_if<spec::Claim>(&e)) {
      cmd_of_msg_[cl->msg.to_string()] = cmd_number(cl->cmd);
    } else if (const auto* m = std::get_if<spec::Message>(&e)) {
      consumer_of_cmd_[cmd_number(m->cmd)] = m->consumer;
      cnx_of_cmd_[cmd_number(m->cmd)] = m->cnx.to_string();
      if (world_->corrupted_on_wire(cmd_number(m->cmd))) corrupted_consumers_.insert(m->consumer);
    } else if (const auto* d = std::get_if<spec::DirectReturn>(&e)) {
      direct_cmds_.insert(cmd_number(d->cmd));
    } else if (const auto* o = std::get_if<spec::IncOpen>(&e)) {
      consumer_of_inc_[o->inc.to_string()] = o->consumer;
    }
    follow_consumers(e);
    if (coverage_ != nullptr) coverage_->observe(e, *world_);
    monitor_->on_event(e, next_event_ + 2);
    if (!model_diverged_) model_->on_event(e, *world_);
  }

  // Known deviations first: they explain the balance findings that follow from them.
  const std::vector<spec::Finding>& deviations = monitor_->deviations();
  for (; deviations_seen_ < deviations.size(); ++deviations_seen_) {
    const spec::Finding& f = deviations[deviations_seen_];
    const spec::Event* e = event_at(f.line);
    if (e != nullptr && spec::leaves_balance_inexact(f)) {
      if (std::optional<std::uint64_t> consumer = consumer_of_event(*e)) {
        deviated_consumers_.insert(*consumer);
      }
    }
    add({.source = "monitor",
         .rule = f.rule,
         .deviation = true,
         .text = spec::format_finding(f),
         .step = step,
         .line = f.line,
         .legacy = signature(f, true)});
  }
  const std::vector<spec::Finding>& violations = monitor_->violations();
  for (; violations_seen_ < violations.size(); ++violations_seen_) {
    const spec::Finding& f = violations[violations_seen_];
    // An injected fault or an accepted inexactness explains it (spec/driver_excuse.h).
    const spec::Event* e = event_at(f.line);
    const bool explained = e != nullptr && spec::explained_by_driver(f, *e, facts_at(f, *e));
    add({.source = "monitor",
         .rule = f.rule,
         .explained = explained,
         .text = spec::format_finding(f),
         .step = step,
         .line = f.line,
         .legacy = signature(f, false)});
  }

  if (!model_diverged_) {
    std::vector<ModelMismatch> mismatches;
    model_->compare(*world_, &mismatches);
    if (!mismatches.empty()) {
      model_diverged_ = true;  // one report: afterwards the two accounts are apart anyway
      for (ModelMismatch& m : mismatches) {
        add({.source = "model", .rule = m.rule, .text = std::move(m.text), .step = step});
      }
    }
  }

}

std::vector<Problem> Harness::failures() const {
  std::vector<Problem> out;
  for (const Problem& p : problems_) {
    if (!p.deviation && !p.explained) out.push_back(p);
  }
  return out;
}

}  // namespace permitcheck::properties
