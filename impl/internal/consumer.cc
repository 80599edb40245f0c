// ConsumerImpl: the Java client's consumer, in both modes. Rule IDs mark where the two modes
// differ; Pulsar's legacy behaviour is quoted from rulebook section 10.
#include <algorithm>
#include <bit>
#include <string>
#include <utility>

#include "impl/internal/client.h"
#include "impl/internal/mutant_point.h"

namespace permitcheck::impl::internal {
namespace {

using spec::Id;

using spec::kMaxPermits;  // B8, W2, N7 (spec/vocabulary.h)

std::uint64_t word_bits(std::int64_t w) { return static_cast<std::uint64_t>(w); }

std::int64_t popcount_all(const std::vector<std::int64_t>& words) {
  std::int64_t n = 0;
  for (std::int64_t w : words) n += std::popcount(word_bits(w));
  return n;
}

bool bit_set(const std::vector<std::int64_t>& words, std::int64_t i) {
  const auto w = static_cast<std::size_t>(i / 64);
  return w < words.size() && ((word_bits(words[w]) >> (i % 64)) & 1U) != 0;
}

std::int64_t popcount_below(const std::vector<std::int64_t>& words, std::int64_t b) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < b && i < static_cast<std::int64_t>(words.size()) * 64; ++i) {
    if (bit_set(words, i)) ++n;
  }
  return n;
}

std::string message_name(std::uint64_t cmd, std::int64_t index, char prefix = 'm') {
  return std::string(1, prefix) + std::to_string(cmd) + "." + std::to_string(index);
}

}  // namespace

std::int64_t CommandBudget::finish() {
  if (terminal_) return PC_MUTANT(kFinishTwice, remaining_, 0);  // K5: later transitions: 0
  terminal_ = true;
  const std::int64_t n = transferred_ ? 0 : remaining_;  // S1
  remaining_ = PC_MUTANT(kFinishTwice, remaining_, 0);
  return n;
}

// One CommandMessage through messageReceived.
class ConsumerImpl::Handling {
 public:
  Handling(ConsumerImpl& consumer, int cnx, const CommandMessage& m)
      : c_(consumer),
        mutant_(consumer.mutant_),
        cnx_(cnx),
        m_(m),
        pl_(*m.payload),
        cmd_(Id::number(m.cmd)),
        state_(consumer.permits_),
        budget_(1, consumer.mutant_) {}

  void run() {
    if (c_.legacy()) {
      run_legacy();
    } else {
      run_rev_d();
    }
  }

 private:
  // Revision B (F1): the legacy direct returns stay beside a budget that drains as well.
  bool beside_budget() const {
    return c_.behaviour().direct_returns == spec::DirectReturns::kBesideBudget;
  }

  // C5, or revision C (F4): an inconsistent command closes the pooled connection.
  void inconsistent_command(std::optional<std::int64_t> index, const std::string& reason) {
    if (c_.behaviour().inconsistent == spec::InconsistentHandling::kCloseConnection) {
      c_.record(spec::ProtocolError{.cnx = c_.cnx_id(cnx_), .reason = reason});
      c_.client_.close_connection(cnx_, spec::CloseReason::kProtocolError);
      return;
    }
    corrupt(spec::FailureStage::kInconsistent, index);
    ack_entry("InvalidPermits");
    settle(budget_.finish());
  }

  // ---- Final rules ----
  void run_rev_d() {
    const std::optional<std::uint64_t>& field = m_.message_permits;
    const bool in_range = field && *field >= 1 && *field <= static_cast<std::uint64_t>(kMaxPermits);
    // C2: resolve what can be resolved before the payload is read.
    std::int64_t early = 1;
    spec::PermitSource early_source = spec::PermitSource::kLegacy;
    if (in_range && !PC_MUTANT(kEarlyIgnoresExplicit, true, false)) {
      early = static_cast<std::int64_t>(*field);
      early_source = spec::PermitSource::kExplicit;
    } else if (const std::int64_t all = popcount_all(m_.ack_set); all > 0) {
      early = all;  // B unknown: every bit counts (X6)
      early_source = spec::PermitSource::kAckSet;
    }
    c_.record(spec::Resolve{.cmd = cmd_, .p = early, .source = early_source});
    // C4: an out-of-range explicit value is a protocol error; no credit, close the connection.
    if (field && !in_range && !PC_MUTANT(kProtocolErrorSettles, true, false)) {
      c_.record(spec::ProtocolError{
          .cnx = c_.cnx_id(cnx_),
          .reason = "message_permits = " + std::to_string(*field) + " outside 1..2^31-1"});
      c_.client_.close_connection(cnx_, spec::CloseReason::kProtocolError);
      return;
    }
    budget_ = CommandBudget(early, mutant_);
    // C7: failures before metadata settle the early value.
    if (!pl_.checksum_ok) return fail_early(spec::FailureStage::kChecksum, "ChecksumMismatch");
    if (!pl_.metadata_ok) return fail_early(spec::FailureStage::kMetadata, "UncompressedSizeCorruption");

    const std::int64_t b = pl_.batch_size;
    c_.record(spec::Metadata{.cmd = cmd_, .batch_size = b});
    // C3: validate against B before any message is handed off.
    const std::int64_t bounded = popcount_below(m_.ack_set, b);
    const std::int64_t expected = m_.ack_set.empty() ? b : bounded;
    const bool nothing_deliverable = b <= 0 || (!m_.ack_set.empty() && bounded == 0);
    std::int64_t p = expected;
    spec::PermitSource source =
        m_.ack_set.empty() ? spec::PermitSource::kBatch : spec::PermitSource::kAckSet;
    bool inconsistent = false;
    if (in_range) {
      p = static_cast<std::int64_t>(*field);
      source = spec::PermitSource::kExplicit;
      inconsistent = nothing_deliverable || p != expected;  // C5
    } else if (nothing_deliverable) {
      p = early;  // decision 2: corrupted data settles the early value
      source = early_source;
      inconsistent = true;
    }
    c_.record(spec::Resolve{.cmd = cmd_, .p = p, .source = source});
    budget_ = CommandBudget(PC_MUTANT(kBudgetOffByOne, p - 1, p), mutant_);  // K1
    if (inconsistent) {  // C5: corrupted-data handling, consumer and connection stay
      return inconsistent_command(std::nullopt, "inconsistent message_permits / ack_set / B");
    }
    if (c_.zero_queue() && pl_.batched) return close_zero_queue(p);
    if (!pl_.decompress_ok) return fail_early(spec::FailureStage::kDecompress, "DecompressionError");

    if (pl_.chunked()) return chunk_rev_d();
    if (pl_.encrypted && c_.client_.config().options.crypto_action != CryptoAction::kConsume) {
      return crypto_rev_d();
    }
    if (pl_.custom_format) return processor(true);
    if (pl_.batched) return batch_rev_d();
    single_rev_d({});
  }

  void fail_early(spec::FailureStage stage, const char* error) {
    corrupt(stage, std::nullopt);
    ack_entry(error);
    const std::int64_t n = budget_.finish();
    settle(PC_MUTANT(kEarlyFailureReturnsOne, 1, n));
  }

  void chunk_rev_d() {
    ChunkContext& chunk = c_.chunks_[pl_.chunk_uuid];
    if (pl_.chunk_id != chunk.next_chunk) {
      // X4: duplicate, out-of-order or context-less chunk: the chunk path returns nothing.
      budget_.transfer();
      c_.record(spec::Transfer{.cmd = cmd_, .path = spec::TransferPath::kChunk});
      c_.chunk_gap_ = true;
      if (chunk.next_chunk == 0) c_.chunks_.erase(pl_.chunk_uuid);
      return settle(budget_.finish());
    }
    ++chunk.next_chunk;
    chunk.entries.push_back(m_.entry);
    if (pl_.chunk_id + 1 < pl_.num_chunks) {
      // S1/S2: the chunk assembly owns the unit and returns 1 per non-final chunk.
      if (!PC_MUTANT(kChunkWithoutTransfer, true, false) && !beside_budget()) {
        budget_.transfer();
        c_.record(spec::Transfer{.cmd = cmd_, .path = spec::TransferPath::kChunk});
      }
      direct(1, "chunk");
      return settle(budget_.finish());
    }
    std::vector<std::int64_t> entries = std::move(chunk.entries);
    c_.chunks_.erase(pl_.chunk_uuid);
    single_rev_d(std::move(entries));  // the assembled message: a native single message
  }

  void crypto_rev_d() {
    if (c_.client_.config().options.crypto_action == CryptoAction::kDiscard) {
      // S3: discarded with its permit cardinality B (X2 for partial redeliveries).
      if (!PC_MUTANT(kCryptoDiscardWithoutTransfer, true, false) && !beside_budget()) {
        budget_.transfer();
        c_.record(spec::Transfer{.cmd = cmd_, .path = spec::TransferPath::kCrypto});
      }
      direct(pl_.batch_size, "crypto");
      ack_entry("DecryptionError");
      return settle(budget_.finish());
    }
    // S4: FAIL holds the message for redelivery and returns nothing (X3).
    budget_.transfer();
    c_.record(spec::Transfer{.cmd = cmd_, .path = spec::TransferPath::kCrypto});
    c_.held_.insert(m_.cmd);
    c_.crypto_debt_ = true;
    settle(budget_.finish());
  }

  void single_rev_d(std::vector<std::int64_t> chunk_entries) {
    const MessagePosition pos{m_.entry, 0};
    if (const std::optional<spec::SkipReason> reason = skip_reason(pos, 0)) {
      skip_rev_d(0, *reason, chunk_entries);
    } else if (pl_.handoff_fails_at == 0) {
      if (!failed_hand_off(0)) return inconsistent_at(0);
    } else if (!hand_off(0, pos, std::move(chunk_entries))) {
      return inconsistent_at(0);
    }
    settle(budget_.finish());
  }

  void batch_rev_d() {
    std::int64_t skipped = 0;
    for (std::int64_t i = 0; i < pl_.batch_size; ++i) {
      if (i == pl_.parse_fails_at) {
        corrupt(spec::FailureStage::kBatch, i);
        ack_entry("BatchDeSerializeError");
        const std::int64_t n = budget_.finish();  // K5: every unit still command-owned
        return settle(PC_MUTANT(kBatchFailureSkippedPlusOne, skipped + 1, n));
      }
      if (!m_.ack_set.empty() && !bit_set(m_.ack_set, i)) continue;  // K3
      const MessagePosition pos{m_.entry, i};
      if (const std::optional<spec::SkipReason> reason = skip_reason(pos, i)) {
        skip_rev_d(i, *reason);
        ++skipped;
      } else if (i == pl_.handoff_fails_at) {
        if (!failed_hand_off(i)) return inconsistent_at(i);
      } else if (!hand_off(i, pos, {})) {
        return inconsistent_at(i);  // K8: one more than P is malformed (C5)
      }
    }
    settle(budget_.finish());
  }

  // K4: a skip claims nothing; the unit stays command-owned.
  void skip_rev_d(std::int64_t index, spec::SkipReason reason,
                  const std::vector<std::int64_t>& chunk_entries = {}) {
    c_.record(spec::Skip{.cmd = cmd_, .index = index, .reason = reason});
    if (reason == spec::SkipReason::kBeforeStart &&
        PC_MUTANT(kBeforeStartReturnsNothing, true, false)) {
      budget_.forfeit(1);
    } else if (PC_MUTANT(kSkipClaimsUnit, true, false)) {
      budget_.forfeit(1);
    }
    if (reason == spec::SkipReason::kDuplicate && !pl_.batched &&
        PC_MUTANT(kDuplicateDoubleReturn, true, false)) {
      direct(1, "duplicate");
    } else if (beside_budget() && !pl_.batched &&
               (reason == spec::SkipReason::kDuplicate ||
                reason == spec::SkipReason::kDeadLetter)) {
      direct(1, std::string(spec::skip_reason_name(reason)));  // F1: the old early return stays
    }
    skip_side_effects(index, reason, chunk_entries);
  }

  // K2: claim, the hand-off fails, restore. False when no unit is left (K8).
  bool failed_hand_off(std::int64_t index) {
    if (!c_.legacy() && !budget_.can_claim()) return false;
    const Id msg = Id::text(message_name(m_.cmd, index));
    c_.record(spec::Claim{.cmd = cmd_, .msg = msg, .index = index});
    if (!c_.legacy()) budget_.claim();
    if (c_.legacy() || PC_MUTANT(kMissingRestore, false, true)) {
      c_.record(spec::Restore{.cmd = cmd_, .msg = msg});
      if (!c_.legacy()) budget_.restore();
    }
    return true;
  }

  // K2: one unit moves to the message about to enter its lifecycle.
  bool hand_off(std::int64_t index, MessagePosition pos, std::vector<std::int64_t> chunk_entries) {
    if (!c_.legacy() && !budget_.can_claim()) return false;
    ClientMessage msg{.msg_id = message_name(m_.cmd, index),
                      .cmd = m_.cmd,
                      .pos = pos,
                      .chunk_entries = std::move(chunk_entries),
                      .epoch = m_.epoch,
                      .state = state_,
                      .cnx = cnx_,
                      .bytes = pl_.bytes_per_message,
                      .processor_owned = false};
    c_.record(spec::Claim{.cmd = cmd_, .msg = Id::text(msg.msg_id), .index = index});
    if (!c_.legacy()) budget_.claim();
    c_.enqueue(std::move(msg));
    return true;
  }

  void inconsistent_at(std::int64_t index) {
    inconsistent_command(index, "more deliverable messages than P = " + std::to_string(budget_.p()));
  }

  // A custom MessagePayloadProcessor (S1, X5): it takes the command's permits and returns
  // them for the messages it produced.
  void processor(bool transfer) {
    if (transfer) {
      budget_.transfer();
      c_.record(spec::Transfer{.cmd = cmd_, .path = spec::TransferPath::kProcessor});
    }
    std::int64_t produced = 0;
    for (std::int64_t i = 0; i < pl_.batch_size; ++i) {
      if (!m_.ack_set.empty() && !bit_set(m_.ack_set, i)) continue;
      c_.enqueue(ClientMessage{.msg_id = message_name(m_.cmd, i, 'p'),
                               .cmd = m_.cmd,
                               .pos = {m_.entry, i},
                               .chunk_entries = {},
                               .epoch = m_.epoch,
                               .state = state_,
                               .cnx = cnx_,
                               .bytes = pl_.bytes_per_message,
                               .processor_owned = true});
      ++produced;
    }
    direct(produced, "processor");
    settle(c_.legacy() ? 0 : budget_.finish());
  }

  // ---- Legacy Pulsar (rulebook section 10) ----
  void run_legacy() {
    // The legacy client does not read message_permits; it keeps no budget.
    if (!pl_.checksum_ok) return legacy_early(spec::FailureStage::kChecksum, "ChecksumMismatch");  // L1
    if (!pl_.metadata_ok) {
      return legacy_early(spec::FailureStage::kMetadata, "UncompressedSizeCorruption");  // L2
    }
    c_.record(spec::Metadata{.cmd = cmd_, .batch_size = pl_.batch_size});
    if (c_.zero_queue() && pl_.batched) {
      return close_zero_queue(m_.ack_set.empty() ? pl_.batch_size
                                                 : popcount_below(m_.ack_set, pl_.batch_size));
    }
    if (!pl_.decompress_ok) return legacy_early(spec::FailureStage::kDecompress, "DecompressionError");  // L3
    if (pl_.chunked()) {
      ChunkContext& chunk = c_.chunks_[pl_.chunk_uuid];
      if (pl_.chunk_id != chunk.next_chunk) {
        c_.chunk_gap_ = true;
        if (chunk.next_chunk == 0) c_.chunks_.erase(pl_.chunk_uuid);
        return settle(0);
      }
      ++chunk.next_chunk;
      chunk.entries.push_back(m_.entry);
      if (pl_.chunk_id + 1 < pl_.num_chunks) {
        direct(1, "chunk");  // increaseAvailablePermits(cnx) for a non-final chunk
        return settle(0);
      }
      std::vector<std::int64_t> entries = std::move(chunk.entries);
      c_.chunks_.erase(pl_.chunk_uuid);
      return single_legacy(std::move(entries));
    }
    if (pl_.encrypted && c_.client_.config().options.crypto_action != CryptoAction::kConsume) {
      if (c_.client_.config().options.crypto_action == CryptoAction::kDiscard) {
        direct(pl_.batch_size, "crypto");  // discardMessage(..., batchSize) (L10)
        ack_entry("DecryptionError");
      } else {
        c_.held_.insert(m_.cmd);
        c_.crypto_debt_ = true;
      }
      return settle(0);
    }
    if (pl_.custom_format) return processor(false);
    if (pl_.batched) return batch_legacy();
    single_legacy({});
  }

  // discardMessage(..., 1): one permit whatever the batch held.
  void legacy_early(spec::FailureStage stage, const char* error) {
    corrupt(stage, std::nullopt);
    ack_entry(error);
    settle(1);
  }

  void single_legacy(std::vector<std::int64_t> chunk_entries) {
    const MessagePosition pos{m_.entry, 0};
    if (const std::optional<spec::SkipReason> reason = skip_reason(pos, 0)) {
      c_.record(spec::Skip{.cmd = cmd_, .index = 0, .reason = *reason});
      // Early returns of messageReceived: duplicate and dead letter return 1 directly; a
      // message before startMessageId returns nothing (L9).
      if (*reason == spec::SkipReason::kDuplicate || *reason == spec::SkipReason::kDeadLetter) {
        direct(1, std::string(spec::skip_reason_name(*reason)));
      }
      skip_side_effects(0, *reason, chunk_entries);
    } else if (pl_.handoff_fails_at == 0) {
      failed_hand_off(0);
    } else {
      hand_off(0, pos, std::move(chunk_entries));
    }
    settle(0);
  }

  void batch_legacy() {
    std::int64_t skipped = 0;
    for (std::int64_t i = 0; i < pl_.batch_size; ++i) {
      if (i == pl_.parse_fails_at) {
        corrupt(spec::FailureStage::kBatch, i);
        ack_entry("BatchDeSerializeError");
        return settle(skipped + 1);  // D + K + 1 with the D handed off (L4, L5)
      }
      if (!m_.ack_set.empty() && !bit_set(m_.ack_set, i)) continue;
      const MessagePosition pos{m_.entry, i};
      if (const std::optional<spec::SkipReason> reason = skip_reason(pos, i)) {
        c_.record(spec::Skip{.cmd = cmd_, .index = i, .reason = *reason});
        skip_side_effects(i, *reason);
        ++skipped;
      } else if (i == pl_.handoff_fails_at) {
        failed_hand_off(i);
      } else {
        hand_off(i, pos, {});
      }
    }
    settle(skipped);  // skipped batch messages return their permits at the end
  }

  // S7: ZeroQueueConsumerImpl.rejectBatchMessageByClosingConsumer closes the consumer, not
  // the connection; the command's units end with the incarnation.
  void close_zero_queue(std::int64_t p) {
    c_.end_incarnation(spec::CloseReason::kClosed);
    c_.record(spec::Drop{.cmd = cmd_, .n = p});
    c_.closed_ = true;
    c_.ready_ = false;
    c_.client_.execute(cnx_, [this_consumer = &c_, cnx = cnx_] {
      this_consumer->client_.send(cnx, CommandCloseConsumer{.consumer_id = this_consumer->id_});
    });
  }

  // ---- Shared steps ----
  std::optional<spec::SkipReason> skip_reason(MessagePosition pos, std::int64_t index) const {
    const ConsumerOptions& options = c_.client_.config().options;
    if (pl_.batched && std::find(pl_.compacted_out.begin(), pl_.compacted_out.end(), index) !=
                           pl_.compacted_out.end()) {
      return spec::SkipReason::kCompacted;
    }
    if (c_.acked_.contains(pos)) return spec::SkipReason::kDuplicate;
    if (options.start_message_id && pos < *options.start_message_id) {
      return spec::SkipReason::kBeforeStart;
    }
    if (options.max_redeliver_count && m_.redelivery_count > *options.max_redeliver_count) {
      return spec::SkipReason::kDeadLetter;
    }
    return std::nullopt;
  }

  // `chunk_entries`: the entries of an assembled chunked message, acknowledged with it.
  void skip_side_effects(std::int64_t index, spec::SkipReason reason,
                         const std::vector<std::int64_t>& chunk_entries = {}) {
    if (reason == spec::SkipReason::kBeforeStart) return;
    if (reason == spec::SkipReason::kDeadLetter) {
      ++c_.dead_lettered_;  // S5: dead-letter handling holds the message object
      if (c_.behaviour().skipped_release == spec::SkippedRelease::kAll) {
        // Revision B (F3): every skipped object is released, this one while still held.
        ++c_.released_while_held_;
        c_.record(spec::Extension{.ev = std::string(spec::kSkipReleaseEvent)});
      }
    }
    c_.send_acks(m_.cmd, MessagePosition{m_.entry, index}, chunk_entries);
  }

  void corrupt(spec::FailureStage stage, std::optional<std::int64_t> index) {
    c_.record(spec::Corrupt{.cmd = cmd_, .stage = stage, .index = index});
  }

  void ack_entry(const char* error) {
    c_.send_ack(m_.cmd, CommandAck{.consumer_id = c_.id_,
                                   .entry = m_.entry,
                                   .whole_entry = true,
                                   .validation_error = std::string(error)});
  }

  // N7: a return the accumulator cannot take is a protocol error instead of a credit; the
  // return itself is not recorded (the connection closes, ending the incarnation).
  bool overflows(std::int64_t n) const {
    return !c_.legacy() && n > 0 && state_ && state_->current && state_->accumulator > kMaxPermits - n;
  }

  // Units returned straight from the command (K6, S2, S3).
  void direct(std::int64_t n, std::string path) {
    if (overflows(n)) return credit(n);
    c_.record(spec::DirectReturn{.cmd = cmd_, .n = n, .path = std::move(path)});
    c_.returned_[m_.cmd] += n;
    credit(n);
  }

  // K5: the terminal transition; the cleanup after it returns whatever is left (nothing).
  void settle(std::int64_t n) {
    if (overflows(n)) return credit(n);
    c_.record(spec::Settle{.cmd = cmd_, .n = n});
    c_.returned_[m_.cmd] += n;
    credit(n);
    if (c_.legacy()) return;
    if (const std::int64_t again = budget_.finish(); again > 0) {
      if (overflows(again)) return credit(again);
      c_.record(spec::Settle{.cmd = cmd_, .n = again});
      c_.returned_[m_.cmd] += again;
      credit(again);
    }
  }

  void credit(std::int64_t n) {
    if (c_.legacy()) {
      c_.increase_available_permits(cnx_, n);
    } else {
      c_.credit(state_, n);
    }
  }

  using ChunkContext = ConsumerImpl::ChunkContext;
  ConsumerImpl& c_;
  [[maybe_unused]] Mutant mutant_;
  int cnx_;
  const CommandMessage& m_;
  const Payload& pl_;
  Id cmd_;
  std::shared_ptr<PermitState> state_;  // the incarnation the command arrived on
  CommandBudget budget_;
};

// ---- ConsumerImpl ----

ConsumerImpl::ConsumerImpl(Client& client, int index)
    : client_(client),
      mutant_(client.config().mutant),
      id_(static_cast<std::uint64_t>(index)),
      slot_(index % std::max(1, client.config().connections)) {}

bool ConsumerImpl::legacy() const { return client_.config().mode == Mode::kLegacy; }

const Behaviour& ConsumerImpl::behaviour() const { return client_.behaviour(); }

bool ConsumerImpl::zero_queue() const { return client_.config().options.zero_queue; }

bool ConsumerImpl::single_active() const {
  return client_.config().dispatcher == spec::DispatcherKind::kSingleActive;
}

Id ConsumerImpl::cnx_id(int cnx) const { return Id::text(client_.network().connection(cnx).name); }

void ConsumerImpl::record(spec::Event e) { client_.recorder().record(std::move(e)); }

std::optional<std::uint64_t> ConsumerImpl::current_inc() const {
  if (legacy()) return legacy_current_ ? std::optional(legacy_inc_) : std::nullopt;
  if (permits_ && permits_->current) return permits_->inc;
  return std::nullopt;
}

bool ConsumerImpl::flow_enabled() const {
  if (legacy()) return legacy_current_ && ready_;
  return permits_ && permits_->current && permits_->flow_enabled;
}

std::int64_t ConsumerImpl::accumulator() const {
  if (legacy()) return available_permits_;
  return permits_ ? permits_->accumulator : 0;
}

void ConsumerImpl::connect() {
  if (cnx_ >= 0 || closed_) return;
  connection_opened(client_.get_connection(slot_));
}

void ConsumerImpl::connection_opened(int cnx) {
  cnx_ = cnx;
  ready_ = false;
  chunk_gap_ = false;
  crypto_debt_ = false;
  const std::uint64_t inc = client_.next_inc();
  if (legacy()) {
    legacy_inc_ = inc;
    legacy_current_ = true;
    available_permits_ = 0;
  } else {
    // N1/N2: a new permit state per incarnation; nothing is copied from the old one.
    auto state = std::make_shared<PermitState>();
    state->inc = inc;
    state->cnx = cnx;
    state->accumulator = PC_MUTANT(kCopyAccumulator, permits_ ? permits_->accumulator : 0, 0);
    permits_ = std::move(state);
  }
  record(spec::IncOpen{.inc = Id::number(inc), .cnx = cnx_id(cnx), .consumer = id_});
  client_.execute(cnx, [this, cnx, inc] {
    if (!zero_queue()) {
      record(spec::Subscribe{.cnx = cnx_id(cnx), .consumer = id_, .inc = Id::number(inc)});
    }
    client_.send(cnx, CommandSubscribe{.consumer_id = id_, .epoch = epoch_});
    if (!legacy() && PC_MUTANT(kFlowBeforeSubscribeOk, true, false) && permits_->inc == inc) {
      permits_->flow_enabled = true;
      record(spec::IncFlowEnabled{.inc = Id::number(inc)});
      send_flow(permits_, client_.config().q);
    }
  });
}

void ConsumerImpl::on_subscribe_success(int cnx) {
  if (cnx != cnx_) return;
  if (!zero_queue()) record(spec::SubscribeOk{.cnx = cnx_id(cnx), .consumer = id_});
  ready_ = true;
  if (zero_queue()) {  // no initial grant: each receive() asks for one message
    const std::uint64_t inc = legacy() ? legacy_inc_ : permits_->inc;
    if (!legacy()) permits_->flow_enabled = true;
    record(spec::IncFlowEnabled{.inc = Id::number(inc)});
    return;
  }
  if (legacy()) {
    record(spec::IncFlowEnabled{.inc = Id::number(legacy_inc_)});
    increase_available_permits(cnx, client_.config().q);
    return;
  }
  if (!permits_->flow_enabled) {  // N4: Flow only from here; the initial grant is Q
    permits_->flow_enabled = true;
    record(spec::IncFlowEnabled{.inc = Id::number(permits_->inc)});
    send_flow(permits_, PC_MUTANT(kInitialGrantMissesOne, client_.config().q - 1,
                                  client_.config().q));
  }
}

void ConsumerImpl::on_subscribe_error(int cnx) {
  if (cnx != cnx_) return;
  record(spec::SubscribeFail{.cnx = cnx_id(cnx), .consumer = id_});
  end_incarnation(spec::CloseReason::kSubscribeFail);
  client_.scheduler().post(client_.timer_queue(), [this, cnx] {
    if (cnx_ == cnx && client_.open(cnx)) connection_opened(cnx);  // reconnectLater
  });
}

void ConsumerImpl::on_close_consumer(int cnx) {
  if (cnx != cnx_) return;
  record(spec::CloseConsumer{.cnx = cnx_id(cnx), .consumer = id_});
  end_incarnation(spec::CloseReason::kCloseConsumer);
  // The pooled connection is still open: the replacement subscribes on it at once, from this
  // event-loop task (so its Subscribe overtakes writes still queued on the loop: N6).
  connection_opened(cnx);
}

void ConsumerImpl::connection_closed(int cnx, spec::CloseReason reason) {
  if (cnx != cnx_) return;
  end_incarnation(reason);
  cnx_ = -1;
  if (closed_) return;
  client_.scheduler().post(client_.timer_queue(), [this] { connect(); });
}

void ConsumerImpl::end_incarnation(spec::CloseReason reason) {
  if (legacy()) {
    if (legacy_current_) {
      legacy_current_ = false;
      record(spec::IncClose{.inc = Id::number(legacy_inc_), .reason = reason});
    }
  } else if (permits_ && permits_->current) {
    permits_->current = false;  // N2: later returns to it are dropped
    record(spec::IncClose{.inc = Id::number(permits_->inc), .reason = reason});
  }
  ready_ = false;
  // Decision 7: queued messages of the ended incarnation are cleared; their units dropped.
  for (const ClientMessage& msg : incoming_) {
    close_gauges(msg);
    if (!msg.processor_owned) record(spec::Drop{.msg = Id::text(msg.msg_id), .n = 1});
  }
  incoming_.clear();
  chunks_.clear();
  held_.clear();
}

// ---- Receive pipeline ----

void ConsumerImpl::message_received(int cnx, const CommandMessage& m) {
  if (cnx != cnx_ || closed_) return;
  record(spec::Message{.cnx = cnx_id(cnx),
                       .consumer = id_,
                       .cmd = Id::number(m.cmd),
                       .message_permits = m.message_permits,
                       .ack_set = spec::AckSet(m.ack_set),
                       .batch_size = std::nullopt,
                       .epoch = m.epoch});
  const std::optional<std::uint64_t> inc = current_inc();
  record(spec::Recv{.inc = Id::number(inc.value_or(0)),
                    .cmd = Id::number(m.cmd),
                    .message_permits = m.message_permits,
                    .ack_set = spec::AckSet(m.ack_set)});
  Handling(*this, cnx, m).run();
}

void ConsumerImpl::enqueue(ClientMessage msg) {
  ++prefetched_count_;
  prefetched_bytes_ += msg.bytes;
  incoming_.push_back(std::move(msg));
}

void ConsumerImpl::close_gauges(const ClientMessage& msg) {
  --prefetched_count_;
  prefetched_bytes_ -= msg.bytes;
}

// ---- Returns and Flow ----

void ConsumerImpl::credit(const std::shared_ptr<PermitState>& state, std::int64_t n) {
  if (n <= 0 || !state || !state->current) return;
  if (state->accumulator > kMaxPermits - n) {  // N7: checked addition
    record(spec::ProtocolError{.cnx = cnx_id(state->cnx), .reason = "permit accumulator overflow"});
    client_.close_connection(state->cnx, spec::CloseReason::kProtocolError);
    return;
  }
  state->accumulator += n;
  if (zero_queue()) return;  // its grants come from receive(), not from returns
  const std::int64_t t = client_.config().threshold();
  if (state->accumulator >= PC_MUTANT(kThresholdStrict, t + 1, t)) {  // N5
    const std::int64_t flow = state->accumulator;
    state->accumulator = PC_MUTANT(kNoSwapOnFlow, state->accumulator, 0);
    send_flow(state, flow);
  }
}

void ConsumerImpl::send_flow(const std::shared_ptr<PermitState>& state, std::int64_t n) {
  if (!client_.open(state->cnx)) {
    record(spec::Drop{.n = n});
    return;
  }
  client_.execute(state->cnx, [this, state, n] {
    // N5/N6: right before writing, the state must still be this consumer's current one.
    const bool current = state == permits_ && state->current && state->flow_enabled;
    if (!PC_MUTANT(kNoIdentityRecheck, true, current)) {
      record(spec::Drop{.n = n});
      return;
    }
    record(spec::Flow{.cnx = cnx_id(state->cnx), .consumer = id_, .permits = n,
                      .inc = Id::number(state->inc)});
    client_.send(state->cnx, CommandFlow{.consumer_id = id_, .permits = n});
  });
}

void ConsumerImpl::increase_available_permits(int cnx, std::int64_t n) {
  available_permits_ += n;
  if (zero_queue()) return;
  const std::int64_t t = client_.config().threshold();
  if (available_permits_ < t) return;
  const std::int64_t flow = std::exchange(available_permits_, 0);
  // sendFlowPermitsToBroker(cnx, n): no identity check (L11); nothing without a connection.
  if (cnx < 0 || !client_.open(cnx)) return;
  const std::uint64_t inc = legacy_inc_;
  client_.execute(cnx, [this, cnx, flow, inc] {
    record(spec::Flow{.cnx = cnx_id(cnx), .consumer = id_, .permits = flow, .inc = Id::number(inc)});
    client_.send(cnx, CommandFlow{.consumer_id = id_, .permits = flow});
  });
}

void ConsumerImpl::return_message(const ClientMessage& msg,
                                  const std::shared_ptr<PermitState>& target) {
  // M1/N3: to the state retained at hand-off, only while it is current; else dropped.
  // Revision A (F5): a message of the current connection credits the current state.
  const bool same_connection = behaviour().return_scope == spec::ReturnScope::kSameConnection &&
                               target && !target->current && permits_ && permits_->current &&
                               msg.cnx == cnx_;
  if (same_connection) {
    record(spec::MsgReturn{.msg = Id::text(msg.msg_id), .n = 1});
    credit(permits_, 1);
  } else if (target && target->current) {
    record(spec::MsgReturn{.msg = Id::text(msg.msg_id), .n = 1});
    credit(target, 1);
  } else {
    record(spec::Drop{.msg = Id::text(msg.msg_id), .n = 1});
  }
}

}  // namespace permitcheck::impl::internal
