#include "properties/harness.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "rapidcheck.h"
#include "base/absl_view.h"
#include "spec/driver_verdict.h"
#include "spec/finalize.h"
#include "spec/prefetch_gauge.h"

namespace permitcheck::properties {
namespace {

// impl's reason for an N7 protocol error (internal/consumer.cc).
constexpr std::string_view kOverflowReason = "permit accumulator overflow";

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

// Rulebook section 11: which review finding a violation of an implementation of revision A-D
// is an instance of (checked against rev-d).
std::optional<std::string> Harness::review_signature(const spec::Finding& f,
                                                     const spec::Event& e) const {
  auto cmd_of = [](const spec::Event& ev) -> std::optional<std::uint64_t> {
    if (const auto* s = std::get_if<spec::Settle>(&ev)) return cmd_number(s->cmd);
    if (const auto* d = std::get_if<spec::DirectReturn>(&ev)) return cmd_number(d->cmd);
    return std::nullopt;
  };
  switch (f.rule) {
    case spec::RuleId::kK5:
    case spec::RuleId::kK6:
    case spec::RuleId::kK7:
    case spec::RuleId::kE1:
    case spec::RuleId::kE2:
      // F1: a direct return beside a budget that drains as well.
      if (const std::optional<std::uint64_t> cmd = cmd_of(e);
          cmd && direct_cmds_.contains(*cmd) && !stage_of_.contains(*cmd) &&
          !world_->corrupted_on_wire(*cmd)) {
        return "F1";
      }
      return std::nullopt;
    case spec::RuleId::kB6:
      // F2: a sticky-key aggregate debited with the pre-admission count.
      if (const auto* s = std::get_if<spec::Send>(&e);
          s != nullptr && s->dispatcher && spec::is_sticky_key(*s->dispatcher)) {
        for (const spec::SentEntry& entry : s->entries) {
          if (!entry.entry.admitted) return "F2";
        }
      }
      return std::nullopt;
    case spec::RuleId::kS5:
      // F3: a dead-letter message object released while dead-letter handling holds it.
      if (const auto* x = std::get_if<spec::Extension>(&e);
          x != nullptr && x->ev == spec::kSkipReleaseEvent) {
        return "F3";
      }
      return std::nullopt;
    case spec::RuleId::kC5:
    case spec::RuleId::kC6: {
      // F4: the pooled connection closed over inconsistent data (rev-d keeps it, C5/C6): every
      // incarnation on it ends, the consumer's own and those of unrelated consumers sharing it.
      // One ended incarnation is already the widened disconnect; a plain `check` seldom pools
      // two consumers on the corrupted connection. An N7 overflow closes the connection by the
      // rulebook (section 12, item 6): not F4.
      const auto* pe = std::get_if<spec::ProtocolError>(&e);
      if (pe == nullptr || pe->reason == kOverflowReason) return std::nullopt;
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
      if (!ended.empty()) return "F4";
      return std::nullopt;
    }
    case spec::RuleId::kE3: {
      // F5: connection-scoped credit crosses into a same-connection replacement: the message
      // came on the connection the consumer's current incarnation is on.
      const auto* r = std::get_if<spec::MsgReturn>(&e);
      if (r == nullptr) return std::nullopt;
      const auto cmd = cmd_of_msg_.find(r->msg.to_string());
      if (cmd == cmd_of_msg_.end()) return std::nullopt;
      const auto cnx = cnx_of_cmd_.find(cmd->second);
      const auto consumer = consumer_of_cmd_.find(cmd->second);
      if (cnx == cnx_of_cmd_.end() || consumer == consumer_of_cmd_.end()) return std::nullopt;
      const auto current = trace_consumers_.find(consumer->second);
      if (current != trace_consumers_.end() && current->second.cnx.to_string() == cnx->second) return "F5";
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// Rulebook section 10: which legacy bug a finding is an instance of.
std::optional<std::string> Harness::legacy_signature(const spec::Finding& f, bool deviation) const {
  const spec::Event* e = event_at(f.line);
  if (e == nullptr) return std::nullopt;
  if (config_.mode != impl::Mode::kLegacy) {
    return deviation ? std::nullopt : review_signature(f, *e);
  }
  if (deviation) {
    if (f.rule == spec::RuleId::kX2 && std::holds_alternative<spec::DirectReturn>(*e)) return "L10";
    return std::nullopt;
  }
  // A command whose wire value was rewritten by an injected fault is no legacy bug's instance.
  if (const auto* s = std::get_if<spec::Settle>(e); s != nullptr && world_->corrupted_on_wire(cmd_number(s->cmd))) {
    return std::nullopt;
  }
  auto stage = [this](const spec::Id& cmd) -> std::optional<spec::FailureStage> {
    auto it = stage_of_.find(cmd_number(cmd));
    if (it == stage_of_.end()) return std::nullopt;
    return it->second;
  };
  switch (f.rule) {
    case spec::RuleId::kC7:
      if (const auto* s = std::get_if<spec::Settle>(e)) {
        switch (stage(s->cmd).value_or(spec::FailureStage::kInconsistent)) {
          case spec::FailureStage::kChecksum:
            return "L1";
          case spec::FailureStage::kMetadata:
            return "L2";
          case spec::FailureStage::kDecompress:
            return "L3";
          case spec::FailureStage::kBatch:
            return "L4";
          case spec::FailureStage::kInconsistent:
            return std::nullopt;
        }
      }
      return std::nullopt;
    case spec::RuleId::kK7:
    case spec::RuleId::kE2:
      if (const auto* s = std::get_if<spec::Settle>(e);
          s != nullptr && stage(s->cmd) == spec::FailureStage::kBatch) {
        return "L5";
      }
      return std::nullopt;
    case spec::RuleId::kK4:
      if (const auto* s = std::get_if<spec::Settle>(e);
          s != nullptr && before_start_.contains(cmd_number(s->cmd))) {
        return "L9";
      }
      return std::nullopt;
    case spec::RuleId::kE3:
      if (std::holds_alternative<spec::MsgReturn>(*e)) {
        const spec::Event* before = event_at(f.line - 1);
        const auto* x = before ? std::get_if<spec::Extension>(before) : nullptr;
        return (x != nullptr && x->ev == "x-stale-epoch-discard") ? "L6" : "L7";
      }
      return std::nullopt;
    case spec::RuleId::kB4:
    case spec::RuleId::kB6:
      if (const auto* s = std::get_if<spec::Send>(e)) {
        for (const spec::SentEntry& entry : s->entries) {
          if (!entry.entry.admitted) return "L8";
        }
      }
      return std::nullopt;
    case spec::RuleId::kN6:
      if (std::holds_alternative<spec::Flow>(*e)) return "L11";
      return std::nullopt;
    default:
      return std::nullopt;
  }
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
    if (e != nullptr && (f.rule == spec::RuleId::kX1 || f.rule == spec::RuleId::kX2 ||
                         f.rule == spec::RuleId::kX5 || f.rule == spec::RuleId::kX6)) {
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
         .legacy = legacy_signature(f, true)});
  }
  const std::vector<spec::Finding>& violations = monitor_->violations();
  for (; violations_seen_ < violations.size(); ++violations_seen_) {
    const spec::Finding& f = violations[violations_seen_];
    const spec::Event* e = event_at(f.line);
    bool explained = false;
    if (e != nullptr) {
      if (const auto* m = std::get_if<spec::Message>(e);
          m != nullptr && (f.rule == spec::RuleId::kW2 || f.rule == spec::RuleId::kE4) &&
          world_->corrupted_on_wire(cmd_number(m->cmd))) {
        explained = true;  // the injected fault itself (out of range: W2; in range: E4)
      }
      // Legacy Pulsar credits a late return on the same pooled connection to the replacement
      // and may write that Flow before the replacement's Subscribe succeeded (the L7 path);
      // the monitor checks N4 under every ruleset, so a legacy run against the legacy ruleset
      // shows it.
      if (rules_ == spec::RulesetId::kLegacy && config_.mode == impl::Mode::kLegacy &&
          f.rule == spec::RuleId::kN4 && std::holds_alternative<spec::Flow>(*e)) {
        explained = true;
      }
      // An injected in-range value near 2^31 - 1, settled as C5 says, overflows the
      // accumulator: the connection closes by N7, which the monitor reads as a C5 close.
      if (const auto* pe = std::get_if<spec::ProtocolError>(e);
          pe != nullptr && f.rule == spec::RuleId::kC5 && !corrupted_consumers_.empty() &&
          pe->reason == kOverflowReason) {
        explained = true;
      }
      // The monitor keeps a Flow that is due but not yet written (queued on the event loop) in
      // the accumulator, while N5 swaps it to 0 when T is reached: a settle of an injected
      // 2^31 - 1 then reads as an N7 overflow. Only an injected value gets near 2^31 - 1; the
      // model (spec::PermitState) still checks the accumulator. Reported to the monitor's owner.
      if (const auto* st = std::get_if<spec::Settle>(e);
          st != nullptr && f.rule == spec::RuleId::kN7 && !corrupted_consumers_.empty()) {
        explained = true;
      }
      // B12/B13 judge the available permits the monitor derives from the serialized values; an
      // injected wire value (or an accepted inexactness) shifts them away from the broker's own
      // balance, which is what the broker dispatches on.
      if (f.rule == spec::RuleId::kB12 || f.rule == spec::RuleId::kB13) {
        const std::optional<std::uint64_t> consumer = consumer_of_event(*e);
        if (consumer && (corrupted_consumers_.contains(*consumer) ||
                         deviated_consumers_.contains(*consumer))) {
          explained = true;
        }
      }
      if (f.rule == spec::RuleId::kE2 || f.rule == spec::RuleId::kE5 || f.rule == spec::RuleId::kE6) {
        const std::optional<std::uint64_t> consumer = consumer_of_event(*e);
        if (consumer && deviated_consumers_.contains(*consumer) &&
            (std::holds_alternative<spec::Flow>(*e) || std::holds_alternative<spec::Quiescent>(*e))) {
          explained = true;  // the balance carries an accepted inexactness (X1, X2, X5, X6)
        }
        // An in-range wrong message_permits makes the client settle the value it was told
        // (C5), not what the broker debited: the balance carries the injected difference.
        if (consumer && corrupted_consumers_.contains(*consumer) &&
            (std::holds_alternative<spec::Flow>(*e) || std::holds_alternative<spec::Quiescent>(*e))) {
          explained = true;
        }
      }
    }
    add({.source = "monitor",
         .rule = f.rule,
         .explained = explained,
         .text = spec::format_finding(f),
         .step = step,
         .line = f.line,
         .legacy = legacy_signature(f, false)});
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
