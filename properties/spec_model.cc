#include "properties/spec_model.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spec/client_command.h"
#include "spec/finalize.h"
#include "spec/model_verdict.h"

namespace permitcheck::properties {
namespace {

using spec::IndexFate;

IndexFate fate_of(spec::SkipReason reason) {
  switch (reason) {
    case spec::SkipReason::kDuplicate:
      return IndexFate::kDuplicate;
    case spec::SkipReason::kCompacted:
      return IndexFate::kCompacted;
    case spec::SkipReason::kBeforeStart:
      return IndexFate::kBeforeStart;
    case spec::SkipReason::kDeadLetter:
      return IndexFate::kDeadLetter;
  }
  return IndexFate::kDeliver;
}

// A verdict of spec/model_verdict.h, when there is one, as a mismatch.
void mismatch(std::optional<spec::Finding> f, std::vector<ModelMismatch>* out) {
  if (f) out->push_back({f->rule, std::move(f->explanation)});
}

}  // namespace

std::int64_t rulebook_threshold(const impl::WorldConfig& config) {
  return config.t > 0 ? config.t : spec::default_threshold(config.q);
}

spec::TraceHeader rulebook_header(const impl::WorldConfig& config, spec::RulesetId rules) {
  return spec::TraceHeader{.source = spec::TraceSource::kModel,
                           .ruleset = rules,
                           .q = config.q,
                           .t = rulebook_threshold(config)};
}

SpecModel::SpecModel(spec::RulesetId rules, const impl::WorldConfig& config)
    : rules_(spec::ruleset(rules)), config_(config) {}

void SpecModel::consumer_added(const std::string& inc, std::uint64_t) {
  report({.kind = BrokerFact::Kind::kAdded, .inc = inc});
}

void SpecModel::flow_applied(const std::string& inc, std::int64_t permits) {
  report({.kind = BrokerFact::Kind::kFlow, .inc = inc, .permits = permits});
}

void SpecModel::consumer_removed(const std::string& inc) {
  report({.kind = BrokerFact::Kind::kRemoved, .inc = inc});
}

void SpecModel::report(BrokerFact fact) {
  if (trace_ == nullptr) return apply(fact);
  fact.at = trace_->size();
  facts_.push_back(std::move(fact));
}

void SpecModel::apply(const BrokerFact& fact) {
  switch (fact.kind) {
    case BrokerFact::Kind::kAdded:
      broker_[fact.inc] = {};
      break;
    case BrokerFact::Kind::kFlow:
      (void)broker_[fact.inc].balance.flow(fact.permits);  // B10
      break;
    case BrokerFact::Kind::kRemoved:
      broker_[fact.inc].live = false;  // B11
      broker_[fact.inc].balance.remove();
      break;
  }
}

void SpecModel::apply_facts() {
  std::size_t i = 0;
  for (; i < facts_.size() && facts_[i].at <= events_seen_; ++i) apply(facts_[i]);
  facts_.erase(facts_.begin(), facts_.begin() + static_cast<std::ptrdiff_t>(i));
}

SpecModel::ClientInc* SpecModel::inc(std::uint64_t id) {
  auto it = incs_.find(id);
  return it == incs_.end() ? nullptr : &it->second;
}

void SpecModel::credit(std::uint64_t id, std::int64_t n) {
  ClientInc* ci = inc(id);
  if (ci == nullptr || n <= 0 || !ci->state.current()) return;
  (void)credit_units(*ci, n);
}

bool SpecModel::credit_units(ClientInc& ci, std::int64_t n) {
  if (config_.options.zero_queue) {
    if (ci.zero_queue_returned > spec::kMaxPermits - n) return false;  // N7: checked addition
    ci.zero_queue_returned += n;
    return true;
  }
  return !absl::IsOutOfRange(ci.state.credit(n).status());  // N5: swaps to 0 at T; N7
}

void SpecModel::end_incs_on(const spec::Id& cnx) {
  for (auto& [id, ci] : incs_) {
    if (ci.cnx == cnx && ci.state.current()) {
      ci.state.end();
      if (auto cur = current_.find(ci.consumer); cur != current_.end() && cur->second == id) {
        current_.erase(cur);
      }
    }
  }
}

void SpecModel::on_event(const spec::Event& event, const impl::World& world) {
  apply_facts();
  ++events_seen_;
  const bool send = std::holds_alternative<spec::Send>(event);
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, spec::Send>) {
          if (!e.inc) return;
          std::vector<spec::SendEntry> entries;
          for (const spec::SentEntry& s : e.entries) entries.push_back(s.entry);
          // B8: an overflowing send keeps (and debits) the entries before the overflowing one.
          const spec::SendResult r = spec::finalize_permits(
              rules_, e.dispatcher.value_or(spec::DispatcherKind::kSingleActive), entries);
          BrokerInc& b = broker_[e.inc->as_text()];
          // B12: a send starts only while the consumer's available permits are positive.
          mismatch(spec::send_start_verdict(rules_.id, e.inc->as_text(), b.balance.available()),
                   &command_mismatches_);
          // B12: and, for a dispatcher with an aggregate, while the aggregate (the sum over
          // the live consumers, B6) is positive: judged at the first send of a dispatch round
          // (a read serves several consumers in turn, and the sends of one round are recorded
          // back to back; a later one may follow an overdraft of B9 within the round).
          // Only the persistent dispatchers read (a round starts at a read); the non-persistent
          // ones dispatch each published entry at once to a consumer with permits, or drop it.
          const bool round_start = !last_event_was_send_;
          const bool reads = e.dispatcher && spec::has_aggregate(*e.dispatcher) &&
                             *e.dispatcher != spec::DispatcherKind::kNonPersistentShared &&
                             *e.dispatcher != spec::DispatcherKind::kNonPersistentKeyShared;
          if (round_start && reads) {
            std::int64_t aggregate = 0;
            for (const auto& [name, m] : broker_) {
              if (m.live) aggregate += m.balance.available();
            }
            mismatch(spec::round_start_verdict(rules_.id, e.inc->as_text(),
                                               spec::dispatcher_name(*e.dispatcher), aggregate),
                     &command_mismatches_);
          }
          (void)b.balance.debit(r.consumer_debit, r.unacked_increase);  // B4, B5, B9
          b.unacked_total += r.unacked_increase;
        } else if constexpr (std::is_same_v<T, spec::IncOpen>) {
          const std::uint64_t id = e.inc.as_number();
          if (auto cur = current_.find(e.consumer); cur != current_.end()) {
            if (ClientInc* old = inc(cur->second)) old->state.end();  // N2
          }
          incs_.emplace(id, ClientInc{spec::PermitState(config_.q, rulebook_threshold(config_)),
                                      e.consumer, e.cnx});
          current_[e.consumer] = id;
        } else if constexpr (std::is_same_v<T, spec::IncFlowEnabled>) {
          if (ClientInc* ci = inc(e.inc.as_number())) (void)ci->state.enable_flow();
        } else if constexpr (std::is_same_v<T, spec::IncClose>) {
          if (ClientInc* ci = inc(e.inc.as_number())) {
            ci->state.end();
            if (auto cur = current_.find(ci->consumer);
                cur != current_.end() && cur->second == e.inc.as_number()) {
              current_.erase(cur);
            }
          }
        } else if constexpr (std::is_same_v<T, spec::Disconnect>) {
          end_incs_on(e.cnx);
        } else if constexpr (std::is_same_v<T, spec::Message>) {
          last_cnx_ = e.cnx;
        } else if constexpr (std::is_same_v<T, spec::Recv>) {
          PendingCommand p;
          p.inc = e.inc.as_number();
          p.cnx = last_cnx_;
          p.message_permits = e.message_permits;
          p.ack_set = e.ack_set;
          pending_[e.cmd.as_number()] = std::move(p);
        } else if constexpr (std::is_same_v<T, spec::Skip>) {
          if (auto it = pending_.find(e.cmd.as_number()); it != pending_.end()) {
            it->second.fates[e.index] = static_cast<int>(fate_of(e.reason));
          }
        } else if constexpr (std::is_same_v<T, spec::Corrupt>) {
          if (auto it = pending_.find(e.cmd.as_number()); it != pending_.end()) {
            it->second.corrupt_stages.insert(static_cast<int>(e.stage));
          }
        } else if constexpr (std::is_same_v<T, spec::Claim>) {
          if (auto it = pending_.find(e.cmd.as_number()); it != pending_.end()) {
            it->second.claim_index[e.msg.as_text()] = e.index.value_or(0);
            it->second.handed_off.insert(e.msg.as_text());
          }
        } else if constexpr (std::is_same_v<T, spec::Restore>) {
          if (auto it = pending_.find(e.cmd.as_number()); it != pending_.end()) {
            PendingCommand& p = it->second;
            p.fates[p.claim_index[e.msg.as_text()]] = static_cast<int>(IndexFate::kHandoffFails);
            p.handed_off.erase(e.msg.as_text());
          }
        } else if constexpr (std::is_same_v<T, spec::Transfer>) {
          if (auto it = pending_.find(e.cmd.as_number());
              it != pending_.end() && e.path == spec::TransferPath::kChunk) {
            it->second.chunk_transfer = true;
          }
        } else if constexpr (std::is_same_v<T, spec::DirectReturn>) {
          if (auto it = pending_.find(e.cmd.as_number());
              it != pending_.end() && e.path == "chunk") {
            it->second.chunk_direct = true;
          }
        } else if constexpr (std::is_same_v<T, spec::Settle>) {
          if (auto it = pending_.find(e.cmd.as_number()); it != pending_.end()) {
            PendingCommand p = std::move(it->second);
            pending_.erase(it);
            complete(e.cmd.as_number(), p, world);
          }
        } else if constexpr (std::is_same_v<T, spec::Drop>) {
          // S7: a zero-queue consumer's batch ends with the incarnation it closes (no settle).
          if (!e.cmd) return;
          if (auto it = pending_.find(e.cmd->as_number()); it != pending_.end()) {
            PendingCommand p = std::move(it->second);
            pending_.erase(it);
            complete(e.cmd->as_number(), p, world);
          }
        } else if constexpr (std::is_same_v<T, spec::ProtocolError>) {
          // C4 ends the command being handled on that connection without a settle.
          for (auto it = pending_.begin(); it != pending_.end();) {
            if (it->second.cnx == e.cnx) {
              PendingCommand p = std::move(it->second);
              p.protocol_error = true;
              const std::uint64_t cmd = it->first;
              it = pending_.erase(it);
              complete(cmd, p, world);
            } else {
              ++it;
            }
          }
          end_incs_on(e.cnx);
        } else if constexpr (std::is_same_v<T, spec::MsgReturn>) {
          auto it = message_inc_.find(e.msg.as_text());
          if (it == message_inc_.end()) return;
          if (rules_.return_scope == spec::ReturnScope::kIncarnation) {
            credit(it->second, e.n);  // only while that incarnation is current (N3)
          } else if (ClientInc* ci = inc(it->second)) {
            // Legacy: the consumer's current incarnation, whichever it is.
            if (auto cur = current_.find(ci->consumer); cur != current_.end()) {
              credit(cur->second, e.n);
            }
          }
        }
      },
      event);
  last_event_was_send_ = send;
}

void SpecModel::complete(std::uint64_t cmd, PendingCommand& p, const impl::World& world) {
  const std::shared_ptr<const impl::Payload> payload = world.payload_of(cmd);
  if (payload == nullptr) return;
  const impl::ConsumerOptions& options = config_.options;
  spec::CommandSituation s{.inc = spec::Id::number(p.inc),
                           .cmd = spec::Id::number(cmd),
                           .cnx = p.cnx,
                           .message_permits = p.message_permits,
                           .ack_set = p.ack_set,
                           .batch_size = payload->batch_size,
                           .batched = payload->batched};
  s.zero_queue = options.zero_queue;  // S7
  if (!payload->checksum_ok) {
    s.early_failure = spec::FailureStage::kChecksum;
  } else if (!payload->metadata_ok) {
    s.early_failure = spec::FailureStage::kMetadata;
  } else if (!payload->decompress_ok) {
    s.early_failure = spec::FailureStage::kDecompress;
  }
  s.fates.assign(static_cast<std::size_t>(std::max<std::int64_t>(1, payload->batch_size)),
                 IndexFate::kDeliver);
  if (payload->parse_fails_at >= 0 && payload->parse_fails_at < payload->batch_size) {
    s.fates[static_cast<std::size_t>(payload->parse_fails_at)] = IndexFate::kParseFails;
  }
  for (const auto& [index, fate] : p.fates) {
    if (index >= 0 && index < static_cast<std::int64_t>(s.fates.size())) {
      s.fates[static_cast<std::size_t>(index)] = static_cast<IndexFate>(fate);
    }
  }
  // The specialised path the payload takes (S1-S4).
  bool processor = false;
  bool chunk_gap = false;  // X4: a chunk failure branch returns nothing
  if (payload->chunked()) {
    // The X4 branch returns nothing and hands nothing off (rev-d marks it with a transfer).
    chunk_gap = !p.chunk_direct && p.handed_off.empty() && p.fates.empty();
    s.path = payload->chunk_id + 1 < payload->num_chunks ? spec::PayloadPath::kChunkNonFinal
                                                         : spec::PayloadPath::kChunkFinal;
  } else if (payload->encrypted) {
    s.path = options.crypto_action == impl::CryptoAction::kDiscard ? spec::PayloadPath::kCryptoDiscard
             : options.crypto_action == impl::CryptoAction::kFail  ? spec::PayloadPath::kCryptoFail
                                                                   : spec::PayloadPath::kCryptoConsume;
  } else if (payload->custom_format) {
    processor = true;
  }

  spec::CommandRun run = spec::handle_command(rules_, s);
  const bool failed_before_path =
      run.closes_connection || run.closes_consumer ||  // S7 closes before any path
      std::any_of(run.events.begin(), run.events.end(),
                  [](const spec::Event& e) { return std::holds_alternative<spec::Corrupt>(e); });
  std::vector<std::int64_t> returns;  // credits in order
  std::set<std::string> handed_off;
  if ((processor || chunk_gap) && !failed_before_path) {
    if (processor) {  // X5: the processor returns what it produced
      std::int64_t produced = 0;
      for (std::int64_t i = 0; i < payload->batch_size; ++i) {
        if (p.ack_set.absent() || p.ack_set.is_deliverable(i)) ++produced;
      }
      returns.push_back(produced);
    }
  } else {
    // C7: the failures the command records are those the specification's run records.
    std::multiset<int> stages;
    for (const spec::Event& e : run.events) {
      if (const auto* c = std::get_if<spec::Corrupt>(&e)) stages.insert(static_cast<int>(c->stage));
    }
    // Judged when the implementation runs the rules the model checks (a legacy implementation
    // checked against rev-d fails differently by design: its L-rows are found by the returns).
    if (impl::ruleset_of(config_.mode) == rules_.id && !p.protocol_error &&
        !run.closes_connection) {
      mismatch(spec::failure_record_verdict(cmd, p.corrupt_stages, stages), &command_mismatches_);
    }
    for (const spec::Event& e : run.events) {
      if (const auto* d = std::get_if<spec::DirectReturn>(&e)) returns.push_back(d->n);
      if (const auto* st = std::get_if<spec::Settle>(&e)) returns.push_back(st->n);
    }
    for (const spec::Id& m : run.handed_off) handed_off.insert(m.as_text());
  }
  // N7: a return the accumulator cannot take closes the connection instead of crediting;
  // the returns before it are credited, it and the rest are not made.
  std::int64_t expected = 0;
  bool overflow = false;
  ClientInc* ci = inc(p.inc);
  for (std::int64_t n : returns) {
    if (ci != nullptr && ci->state.current() && n > 0) {
      if (!credit_units(*ci, n)) {
        overflow = true;
        break;
      }
    }
    expected += n;
  }

  const std::int64_t actual = world.command_returned(cmd).value_or(0);
  mismatch(spec::command_return_verdict(cmd, actual, expected), &command_mismatches_);
  mismatch(spec::handoff_verdict(cmd, p.handed_off, handed_off), &command_mismatches_);
  mismatch(spec::connection_close_verdict(cmd, run.closes_connection, overflow, p.protocol_error),
           &command_mismatches_);
  for (const std::string& m : handed_off) message_inc_[m] = p.inc;
}

void SpecModel::compare(const impl::World& world, std::vector<ModelMismatch>* out) {
  out->insert(out->end(), command_mismatches_.begin(), command_mismatches_.end());
  command_mismatches_.clear();
  apply_facts();  // those reported after the last event

  // Broker: every live incarnation's balance and unacked increases; the aggregate.
  std::int64_t live_sum = 0;
  std::set<std::string> live;
  for (const impl::World::BrokerConsumerView& b : world.broker_consumers()) {
    live.insert(b.inc);
    auto it = broker_.find(b.inc);
    if (it == broker_.end()) {
      mismatch(spec::unknown_broker_consumer_finding(b.inc), out);
      continue;
    }
    const BrokerInc& m = it->second;
    live_sum += m.balance.available();
    mismatch(spec::available_verdict(b.inc, b.available, m.balance.available()), out);
    mismatch(spec::unacked_verdict(b.inc, b.unacked_total, m.unacked_total), out);
  }
  for (const auto& [name, m] : broker_) {
    mismatch(spec::removed_broker_consumer_verdict(name, m.live, live.contains(name)), out);
  }
  if (const std::optional<std::int64_t> aggregate = world.dispatcher_aggregate()) {
    mismatch(spec::aggregate_verdict(*aggregate, live_sum), out);
  }

  // Client: the current incarnation of every consumer and its accumulator. The legacy
  // ruleset's PermitState keeps the initial grant apart from the accumulator, while Java's one
  // counter folds a pre-Subscribe credit into the initial Flow: only the final rules have a
  // per-incarnation accumulator to compare.
  if (rules_.id != spec::RulesetId::kRevD) return;
  for (int k = 0; k < world.consumers(); ++k) {
    const impl::World::ClientConsumerView v = world.client_consumer(k);
    auto cur = current_.find(static_cast<std::uint64_t>(k));
    const std::optional<std::uint64_t> model_inc =
        cur == current_.end() ? std::nullopt : std::optional(cur->second);
    if (std::optional<spec::Finding> f = spec::current_incarnation_verdict(k, v.inc, model_inc)) {
      mismatch(std::move(f), out);
      continue;
    }
    if (!model_inc) continue;
    const ClientInc& ci = incs_.at(*model_inc);
    const std::int64_t accumulator =
        config_.options.zero_queue ? ci.zero_queue_returned : ci.state.accumulator();
    mismatch(spec::accumulator_verdict(k, *model_inc, v.accumulator, accumulator), out);
  }
}

}  // namespace permitcheck::properties
