// ConsumerImpl, the application side: receive (synchronous, listener, zero-queue grants),
// processing and acknowledging a message, redeliverUnacknowledgedMessages. The receive
// pipeline and the permit accounting are in consumer.cc.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "impl/internal/client.h"
#include "impl/internal/mutant_point.h"

namespace permitcheck::impl::internal {

using spec::Id;

// ---- Application ----

bool ConsumerImpl::receive() {
  if (incoming_.empty()) {
    // ZeroQueueConsumerImpl.internalReceive: grant one permit, then wait for the message.
    const std::uint64_t inc = legacy() ? legacy_inc_ : (permits_ ? permits_->inc : 0);
    if (zero_queue() && ready_ && cnx_ >= 0 && client_.open(cnx_) && zero_queue_waiting_ != inc) {
      zero_queue_waiting_ = inc;
      const int cnx = cnx_;
      client_.execute(cnx, [this, cnx, inc] {
        // N4/N6: right before writing, the incarnation that asked must still be the ready one
        // (a CloseConsumer handled meanwhile ends it; its replacement is not yet subscribed).
        const std::uint64_t now = legacy() ? legacy_inc_ : (permits_ ? permits_->inc : 0);
        if (!ready_ || cnx_ != cnx || now != inc) {
          if (zero_queue_waiting_ == inc) zero_queue_waiting_.reset();
          return;
        }
        const std::int64_t grant = PC_MUTANT(kZeroQueueGrantsTwo, 2, 1);  // one per receive()
        record(spec::Flow{.cnx = cnx_id(cnx), .consumer = id_, .permits = grant});
        client_.send(cnx, CommandFlow{.consumer_id = id_, .permits = grant});
      });
    }
    return false;
  }
  ClientMessage msg = std::move(incoming_.front());
  incoming_.pop_front();
  zero_queue_waiting_.reset();
  process(msg);
  return true;
}

bool ConsumerImpl::receive_async() {
  if (incoming_.empty()) return false;
  ClientMessage msg = std::move(incoming_.front());
  incoming_.pop_front();
  ++in_listener_;
  client_.scheduler().post(client_.listener_queue(), [this, msg = std::move(msg)] {
    --in_listener_;
    process(msg);
  });
  return true;
}

void ConsumerImpl::process(const ClientMessage& msg) {
  if (single_active() && msg.epoch < epoch_) {
    // M2: a message of an older consumer epoch is discarded after hand-off.
    record(spec::Extension{.ev = "x-stale-epoch-discard"});
    if (legacy()) {
      // increaseAvailablePermits(cnx()) through the current connection; gauges not closed (L6).
      if (!msg.processor_owned) {
        record(spec::MsgReturn{.msg = Id::text(msg.msg_id), .n = 1});
        increase_available_permits(cnx_, 1);
      }
      return;
    }
    if (!PC_MUTANT(kStaleKeepsGauges, true, false)) close_gauges(msg);
    if (!msg.processor_owned) return_message(msg, PC_MUTANT(kStaleEpochToCurrent, permits_, msg.state));
    return;
  }
  close_gauges(msg);  // messageProcessed
  if (!msg.processor_owned) {
    if (legacy()) {
      // Connection-scoped credit: a message of another connection is ignored; one of the same
      // pooled connection credits whatever incarnation is current now (L7).
      if (msg.cnx == cnx_) {
        record(spec::MsgReturn{.msg = Id::text(msg.msg_id), .n = 1});
        increase_available_permits(cnx_, 1);
      } else {
        record(spec::Drop{.msg = Id::text(msg.msg_id), .n = 1});
      }
    } else {
      return_message(msg, PC_MUTANT(kReturnToCurrentState, permits_, msg.state));
    }
  }
  acknowledge(msg);
}

namespace {

// What acknowledging a message covers: its own position, or each chunk's entry of an assembled
// chunked message.
std::vector<MessagePosition> acknowledged_positions(MessagePosition pos,
                                                    const std::vector<std::int64_t>& chunk_entries) {
  if (chunk_entries.empty()) return {pos};
  std::vector<MessagePosition> out;
  for (std::int64_t entry : chunk_entries) out.push_back(MessagePosition{entry, 0});
  return out;
}

}  // namespace

void ConsumerImpl::acknowledge(const ClientMessage& msg) {
  for (const MessagePosition& p : acknowledged_positions(msg.pos, msg.chunk_entries)) acked_.insert(p);
  send_acks(msg.cmd, msg.pos, msg.chunk_entries);
}

void ConsumerImpl::send_acks(std::uint64_t cmd, MessagePosition pos,
                             const std::vector<std::int64_t>& chunk_entries) {
  for (const MessagePosition& p : acknowledged_positions(pos, chunk_entries)) {
    send_ack(cmd, CommandAck{.consumer_id = id_, .entry = p.entry, .indexes = {p.index}});
  }
}

void ConsumerImpl::send_ack(std::uint64_t cmd, CommandAck ack) {
  const int cnx = cnx_;
  if (cnx < 0 || !client_.open(cnx)) return;
  client_.execute(cnx, [this, cnx, cmd, ack = std::move(ack)]() mutable {
    record(spec::Ack{.cnx = cnx_id(cnx), .consumer = id_, .cmd = Id::number(cmd),
                     .validation_error = ack.validation_error});
    client_.send(cnx, std::move(ack));
  });
}

void ConsumerImpl::redeliver_unacknowledged_messages() {
  for (const ClientMessage& msg : incoming_) {
    close_gauges(msg);
    if (msg.processor_owned) continue;
    // M1: a message cleared from the queue returns its unit.
    if (legacy()) {
      record(spec::MsgReturn{.msg = Id::text(msg.msg_id), .n = 1});
      increase_available_permits(cnx_, 1);
    } else if (!PC_MUTANT(kRedeliverClearsWithoutReturn, true, false)) {
      return_message(msg, msg.state);
    }
  }
  incoming_.clear();
  chunks_.clear();
  held_.clear();
  const int cnx = cnx_;
  if (cnx < 0 || !ready_ || !client_.open(cnx)) return;
  // Failover/Exclusive consumers start a new epoch, only with the command that tells the
  // broker: one raised while reconnecting would be ahead of the epoch the replacement
  // subscribed with, and every later message would be discarded as stale.
  if (single_active()) ++epoch_;
  const std::int64_t epoch = epoch_;
  client_.execute(cnx, [this, cnx, epoch] {
    client_.send(cnx, CommandRedeliverUnacknowledgedMessages{.consumer_id = id_, .epoch = epoch});
  });
}

}  // namespace permitcheck::impl::internal
