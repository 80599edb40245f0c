#include "capture/pulsar_connection.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace permitcheck::capture {
namespace {

using conformance::decode_frame;
using conformance::Frame;

std::optional<std::string> validation_error_name(wire::CommandAck::ValidationError e) {
  switch (e) {
    case wire::CommandAck::UncompressedSizeCorruption: return "uncompressed_size";
    case wire::CommandAck::DecompressionError: return "decompression";
    case wire::CommandAck::ChecksumMismatch: return "checksum";
    case wire::CommandAck::BatchDeSerializeError: return "batch_deserialize";
    case wire::CommandAck::DecryptionError: return "decryption";
  }
  return std::nullopt;
}

// The command type of a frame whose BaseCommand does not parse with our (consumer-side)
// subset of the protocol: field 1 is the type, serialized first. nullopt when unreadable.
std::optional<std::uint64_t> peek_type(std::string_view frame) {
  if (frame.size() < 9 || static_cast<unsigned char>(frame[8]) != 0x08) return std::nullopt;
  std::uint64_t v = 0;
  for (std::size_t i = 9, shift = 0; i < frame.size() && shift < 64; ++i, shift += 7) {
    const auto b = static_cast<unsigned char>(frame[i]);
    v |= std::uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
  return std::nullopt;
}

std::uint32_t be32(std::string_view b) {
  return (std::uint32_t{static_cast<unsigned char>(b[0])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(b[1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(b[2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(b[3])};
}

}  // namespace

FirstFrame classify_first_frame(std::string_view s) {
  if (s.size() < 4) return FirstFrame::kNeedMore;
  const std::uint32_t total = be32(s);
  if (total < 4 || total > conformance::kMaxFrameSize) return FirstFrame::kNotPulsar;
  if (s.size() < std::size_t{total} + 4) return FirstFrame::kNeedMore;
  const std::string_view frame = s.substr(0, std::size_t{total} + 4);
  // A command outside our subset (a producer's, say) is still a Pulsar command.
  const std::optional<std::uint64_t> type = peek_type(frame);
  if (type && *type > 0 && *type < 200 &&
      !wire::BaseCommand::Type_IsValid(static_cast<int>(*type))) {
    return FirstFrame::kOtherCommand;
  }
  absl::StatusOr<Frame> f = decode_frame(frame);
  if (!f.ok()) return FirstFrame::kNotPulsar;
  return f->command.type() == wire::BaseCommand::CONNECT ? FirstFrame::kConnect
                                                        : FirstFrame::kOtherCommand;
}

std::size_t PulsarConnection::buffered() const {
  return splitter_[0].buffered() + splitter_[1].buffered();
}

bool PulsarConnection::in_frame(Direction direction) const {
  const int d = static_cast<int>(direction);
  return !broken_[d] && !closed_ && splitter_[d].in_frame();
}

std::optional<std::string> PulsarConnection::on_bytes(Direction direction, double time,
                                                      std::string_view bytes,
                                                      std::vector<TimedEvent>* out) {
  const int d = static_cast<int>(direction);
  if (broken_[d] || closed_) return std::nullopt;
  const char* side = direction == Direction::kToServer ? "client" : "broker";
  std::optional<std::string> why;
  const absl::Status split = splitter_[d].split(bytes, [&](std::string_view frame,
                                                          const conformance::StreamedPayload* streamed) {
    ++frames_;
    const std::optional<std::uint64_t> type = peek_type(frame);
    if (type && *type > 0 && *type < 1000 &&
        !wire::BaseCommand::Type_IsValid(static_cast<int>(*type))) {
      return true;  // a command of the protocol we do not follow (producer, admin): no permits
    }
    if (absl::Status s = conformance::decode_frame_into(frame, &frame_, streamed); !s.ok()) {
      why = absl::StrCat(side, " frame ", frames_, ": ", s.message());
      return false;
    }
    if (frame_.hot_decoded || conformance::hot_command_from(frame_.command, &frame_.hot)) {
      const conformance::HotCommand& hot = frame_.hot;
      if (direction == Direction::kToClient) {
        if (hot.type == wire::BaseCommand::MESSAGE) on_message(time, hot, frame_, out);
      } else if (hot.type == wire::BaseCommand::ACK) {
        on_ack(time, hot, out);
      } else if (hot.type == wire::BaseCommand::FLOW) {
        on_flow(time, hot, out);
      }
    } else if (direction == Direction::kToServer) {
      client_frame(time, frame_, out);
    } else {
      server_frame(time, frame_, out);
    }
    return true;
  });
  if (!split.ok()) why = absl::StrCat(side, " stream: ", split.message());
  if (why) broken_[d] = true;
  return why;
}

bool PulsarConnection::Entry::settled() const {
  for (std::uint64_t w : unacked) {
    if (w != 0) return false;
  }
  return true;
}

void PulsarConnection::client_frame(double time, const conformance::FrameView& frame,
                                    std::vector<TimedEvent>* out) {
  const wire::BaseCommand& in = frame.command;
  switch (in.type()) {
    case wire::BaseCommand::CONNECT:
      out->push_back({time, spec::Connect{cnx_}});
      return;
    case wire::BaseCommand::SUBSCRIBE: {
      const std::uint64_t consumer = in.subscribe().consumer_id();
      pending_subscribes_[in.subscribe().request_id()] = consumer;
      if (pending_subscribes_.size() > 4096) pending_subscribes_.erase(pending_subscribes_.begin());
      out->push_back({time, spec::Subscribe{cnx_, consumer, std::nullopt}});
      return;
    }
    case wire::BaseCommand::REDELIVER_UNACKNOWLEDGED_MESSAGES: {
      const auto& r = in.redeliverunacknowledgedmessages();
      out->push_back({time, spec::Extension{"x-redeliver"}});
      auto it = consumers_.find(r.consumer_id());
      if (it == consumers_.end()) return;
      if (r.message_ids_size() == 0) {
        it->second.entries.clear();  // everything unacknowledged comes again, as new
      }
      for (const wire::MessageIdData& id : r.message_ids()) {
        it->second.entries.erase({id.ledgerid(), id.entryid()});
      }
      return;
    }
    case wire::BaseCommand::CLOSE_CONSUMER:
    case wire::BaseCommand::UNSUBSCRIBE: {
      const std::uint64_t consumer = in.type() == wire::BaseCommand::CLOSE_CONSUMER
                                         ? in.close_consumer().consumer_id()
                                         : in.unsubscribe().consumer_id();
      consumers_.erase(consumer);
      out->push_back({time, spec::CloseConsumer{cnx_, consumer}});
      return;
    }
    default:
      return;  // lookups, pings, stats: no permits
  }
}

void PulsarConnection::on_flow(double time, const conformance::HotCommand& flow,
                               std::vector<TimedEvent>* out) {
  auto it = consumers_.find(flow.consumer_id);
  if (it != consumers_.end() && it->second.subscribed) ++it->second.flows;
  out->push_back({time, spec::Flow{cnx_, flow.consumer_id, static_cast<std::int64_t>(flow.permits),
                                   std::nullopt}});
}

void PulsarConnection::on_ack(double time, const conformance::HotCommand& ack,
                              std::vector<TimedEvent>* out) {
  auto it = consumers_.find(ack.consumer_id);
  const bool cumulative = ack.ack_type == wire::CommandAck::Cumulative;
  for (std::size_t n = 0; n < ack.id_count; ++n) {
    const conformance::HotMessageId& id = ack.ids[n];
    std::optional<spec::Id> cmd;
    if (it != consumers_.end()) {
      auto& entries = it->second.entries;
      const std::pair<std::uint64_t, std::uint64_t> key{id.ledger, id.entry};
      // A cumulative ack settles every entry up to its own; an individual one only its own.
      // (btree iterators do not survive an erase: the bound is tested by key.)
      auto e = cumulative ? entries.begin() : entries.find(key);
      while (e != entries.end() && !(key < e->first)) {
        Entry& st = e->second;
        if (e->first == key) cmd = st.cmd;
        if (ack.validation_error || cumulative || st.any_ack_settles ||
            (id.batch_index < 0 && id.ack_set.empty())) {
          st.unacked.clear();
        } else if (id.batch_index >= 0) {
          const auto i = static_cast<std::uint64_t>(id.batch_index);
          if (i / 64 < st.unacked.size()) st.unacked[i / 64] &= ~(std::uint64_t{1} << (i % 64));
        } else {
          // The ack set is what remains unacknowledged: a bit it lacks is acknowledged.
          for (std::size_t w = 0; w < st.unacked.size(); ++w) {
            const auto remaining =
                w < id.ack_set.size() ? static_cast<std::uint64_t>(id.ack_set[w]) : 0;
            st.unacked[w] &= remaining;
          }
        }
        if (!cumulative) {
          if (st.settled()) entries.erase(e);
          break;
        }
        e = st.settled() ? entries.erase(e) : std::next(e);
      }
    }
    std::optional<std::string> error;
    if (ack.validation_error) error = validation_error_name(*ack.validation_error);
    // (Not value_or: its argument would be built for every ack.)
    spec::Id acked = cmd ? std::move(*cmd) : spec::Id::text(absl::StrCat("e", id.entry));
    out->push_back({time, spec::Ack{cnx_, ack.consumer_id, std::move(acked), error}});
  }
}

void PulsarConnection::server_frame(double time, const conformance::FrameView& frame,
                                    std::vector<TimedEvent>* out) {
  const wire::BaseCommand& in = frame.command;
  switch (in.type()) {
    case wire::BaseCommand::SUCCESS:
    case wire::BaseCommand::ERROR: {
      const bool ok = in.type() == wire::BaseCommand::SUCCESS;
      const std::uint64_t request = ok ? in.success().request_id() : in.error().request_id();
      auto it = pending_subscribes_.find(request);
      if (it == pending_subscribes_.end()) return;
      const std::uint64_t consumer = it->second;
      pending_subscribes_.erase(it);
      if (ok) {
        consumers_[consumer] = Consumer{.subscribed = true};
        out->push_back({time, spec::SubscribeOk{cnx_, consumer}});
      } else {
        out->push_back({time, spec::SubscribeFail{cnx_, consumer}});
      }
      return;
    }
    case wire::BaseCommand::LOOKUP_RESPONSE: {
      const wire::CommandLookupTopicResponse& r = in.lookuptopicresponse();
      if (lookups_.size() < 64) {
        lookups_.push_back(LookupAnswer{
            .time = time,
            .broker_url = r.has_brokerserviceurl() ? r.brokerserviceurl() : r.brokerserviceurltls(),
            .proxy_through = r.proxy_through_service_url()});
      }
      return;
    }
    case wire::BaseCommand::CLOSE_CONSUMER: {
      const std::uint64_t consumer = in.close_consumer().consumer_id();
      consumers_.erase(consumer);
      out->push_back({time, spec::CloseConsumer{cnx_, consumer}});
      return;
    }
    default:
      return;
  }
}

void PulsarConnection::on_message(double time, const conformance::HotCommand& m,
                                  const conformance::FrameView& frame,
                                  std::vector<TimedEvent>* out) {
  spec::AckSet ack_set({m.ack_set.begin(), m.ack_set.end()});
  // B from the metadata, when it is intact (a corrupt payload's B is not trusted).
  std::optional<std::int64_t> b;
  if (frame.has_payload && frame.checksum_ok && frame.metadata_and_payload.size() >= 4) {
    // [metadata size][MessageMetadata]: parsed in place, the payload is not needed; by hand
    // when the hand decoder takes it (protocol/hot_command.h), else by protobuf.
    const std::string_view rest(frame.metadata_and_payload);
    const std::uint32_t size = be32(rest);
    if (size <= rest.size() - 4) {
      if (std::optional<std::int32_t> hot = conformance::hot_batch_size(rest.substr(4, size))) {
        b = *hot;
      } else if (metadata_.ParseFromArray(rest.data() + 4, static_cast<int>(size))) {
        b = metadata_.has_num_messages_in_batch() ? metadata_.num_messages_in_batch() : 1;
      }
    }
  }
  const spec::Id cmd = spec::Id::number((*next_cmd_)++);
  auto it = consumers_.find(m.consumer_id);
  if (it != consumers_.end() && it->second.subscribed && (!b || *b >= 1)) {
    Entry e{.cmd = cmd, .unacked = {}, .any_ack_settles = !b};
    // The deliverable indexes below B (at most 65536 of them): all, or the ack set's.
    const auto count = static_cast<std::size_t>(std::min<std::int64_t>(b.value_or(1), 65536));
    e.unacked.assign((count + 63) / 64, ~std::uint64_t{0});
    if (count % 64 != 0) e.unacked.back() = (std::uint64_t{1} << (count % 64)) - 1;
    if (!ack_set.absent()) {
      const std::vector<std::int64_t>& words = ack_set.words();
      for (std::size_t w = 0; w < e.unacked.size(); ++w) {
        e.unacked[w] &= w < words.size() ? static_cast<std::uint64_t>(words[w]) : 0;
      }
    }
    if (!e.settled()) {
      it->second.entries[{m.message_id.ledger, m.message_id.entry}] = std::move(e);
    }
  }
  out->push_back({time, spec::Message{.cnx = cnx_,
                                      .consumer = m.consumer_id,
                                      .cmd = cmd,
                                      .message_permits = m.message_permits,
                                      .ack_set = std::move(ack_set),
                                      .batch_size = b,
                                      .epoch = std::nullopt}});
}

void PulsarConnection::on_close(double time, std::vector<TimedEvent>* out) {
  if (closed_) return;
  closed_ = true;
  consumers_.clear();
  out->push_back({time, spec::Disconnect{cnx_}});
}

void PulsarConnection::quiescent(double time, std::vector<TimedEvent>* out) {
  if (closed_) return;
  for (const auto& [id, c] : consumers_) {
    if (c.subscribed && c.flows > 0 && c.entries.empty()) {
      out->push_back({time, spec::Quiescent{cnx_, id}});
    }
  }
}

}  // namespace permitcheck::capture
