#include "wire/observer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace permitcheck::wire {

std::optional<std::string> validation_error_name(CommandAck::ValidationError error) {
  switch (error) {
    case CommandAck::UncompressedSizeCorruption: return "uncompressed_size";
    case CommandAck::DecompressionError: return "decompression";
    case CommandAck::ChecksumMismatch: return "checksum";
    case CommandAck::BatchDeSerializeError: return "batch_deserialize";
    case CommandAck::DecryptionError: return "decryption";
  }
  return std::nullopt;
}

FrameFacts Observer::on_frame(Direction direction, double time, std::string_view frame,
                              const protocol::StreamedPayload* streamed,
                              std::vector<TimedEvent>* out, const ServerKnowledge* server) {
  FrameFacts facts;
  if (closed_) return facts;
  ++frames_;
  const std::optional<std::uint64_t> type = protocol::peek_command_type(frame);
  if (type && *type > 0 && *type < 1000 &&
      !BaseCommand::Type_IsValid(static_cast<int>(*type))) {
    // A command of the protocol we do not follow (producer, admin): no permits.
    facts.unsupported_type = type;
    return facts;
  }
  if (absl::Status s = protocol::decode_frame_into(frame, &frame_, streamed); !s.ok()) {
    const char* side = direction == Direction::kToServer ? "client" : "broker";
    facts.not_understood = absl::StrCat(side, " frame ", frames_, ": ", s.message());
    return facts;
  }
  if (frame_.hot_decoded || protocol::hot_command_from(frame_.command, &frame_.hot)) {
    const protocol::HotCommand& hot = frame_.hot;
    if (direction == Direction::kToClient) {
      if (hot.type == BaseCommand::MESSAGE) on_message(time, hot, frame_, out);
    } else if (hot.type == BaseCommand::ACK) {
      on_ack(time, hot, server, out);
    } else if (hot.type == BaseCommand::FLOW) {
      on_flow(time, hot, out);
    }
  } else if (direction == Direction::kToServer) {
    client_frame(time, frame_, out);
  } else {
    server_frame(time, frame_, out);
  }
  return facts;
}

bool Observer::Entry::settled() const {
  for (std::uint64_t w : unacked) {
    if (w != 0) return false;
  }
  return true;
}

void Observer::client_frame(double time, const protocol::FrameView& frame,
                            std::vector<TimedEvent>* out) {
  const BaseCommand& in = frame.command;
  switch (in.type()) {
    case BaseCommand::CONNECT:
      out->push_back({time, spec::Connect{cnx_}});
      return;
    case BaseCommand::SUBSCRIBE: {
      const std::uint64_t consumer = in.subscribe().consumer_id();
      pending_subscribes_[in.subscribe().request_id()] = consumer;
      if (pending_subscribes_.size() > 4096) pending_subscribes_.erase(pending_subscribes_.begin());
      out->push_back({time, spec::Subscribe{cnx_, consumer, std::nullopt}});
      return;
    }
    case BaseCommand::REDELIVER_UNACKNOWLEDGED_MESSAGES: {
      const auto& r = in.redeliverunacknowledgedmessages();
      out->push_back({time, spec::Extension{"x-redeliver"}});
      auto it = consumers_.find(r.consumer_id());
      if (it == consumers_.end()) return;
      if (r.message_ids_size() == 0) {
        it->second.entries.clear();  // everything unacknowledged comes again, as new
      }
      for (const MessageIdData& id : r.message_ids()) {
        it->second.entries.erase({id.ledgerid(), id.entryid()});
      }
      return;
    }
    case BaseCommand::CLOSE_CONSUMER:
    case BaseCommand::UNSUBSCRIBE: {
      const std::uint64_t consumer = in.type() == BaseCommand::CLOSE_CONSUMER
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

void Observer::on_flow(double time, const protocol::HotCommand& flow,
                       std::vector<TimedEvent>* out) {
  auto it = consumers_.find(flow.consumer_id);
  if (it != consumers_.end() && it->second.subscribed) ++it->second.flows;
  out->push_back({time, spec::Flow{cnx_, flow.consumer_id, static_cast<std::int64_t>(flow.permits),
                                   std::nullopt}});
}

void Observer::on_ack(double time, const protocol::HotCommand& ack, const ServerKnowledge* server,
                      std::vector<TimedEvent>* out) {
  auto it = consumers_.find(ack.consumer_id);
  const bool cumulative = ack.ack_type == CommandAck::Cumulative;
  for (std::size_t n = 0; n < ack.id_count; ++n) {
    const protocol::HotMessageId& id = ack.ids[n];
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
    // The server's name for it when it gives one, else ours; an id nobody named is "e<entry>".
    // (Not value_or: its argument would be built for every ack.)
    spec::Id acked;
    if (server != nullptr) {
      const bool named = n < server->acked_cmds.size() && server->acked_cmds[n].has_value();
      acked = named ? *server->acked_cmds[n] : spec::Id::text(absl::StrCat("e", id.entry));
    } else {
      acked = cmd ? std::move(*cmd) : spec::Id::text(absl::StrCat("e", id.entry));
    }
    out->push_back({time, spec::Ack{cnx_, ack.consumer_id, std::move(acked), error}});
  }
}

void Observer::server_frame(double time, const protocol::FrameView& frame,
                            std::vector<TimedEvent>* out) {
  const BaseCommand& in = frame.command;
  switch (in.type()) {
    case BaseCommand::SUCCESS:
    case BaseCommand::ERROR: {
      const bool ok = in.type() == BaseCommand::SUCCESS;
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
    case BaseCommand::LOOKUP_RESPONSE: {
      const CommandLookupTopicResponse& r = in.lookuptopicresponse();
      if (lookups_.size() < 64) {
        lookups_.push_back(LookupAnswer{
            .time = time,
            .broker_url = r.has_brokerserviceurl() ? r.brokerserviceurl() : r.brokerserviceurltls(),
            .proxy_through = r.proxy_through_service_url()});
      }
      return;
    }
    case BaseCommand::CLOSE_CONSUMER: {
      const std::uint64_t consumer = in.close_consumer().consumer_id();
      consumers_.erase(consumer);
      out->push_back({time, spec::CloseConsumer{cnx_, consumer}});
      return;
    }
    default:
      return;
  }
}

void Observer::on_message(double time, const protocol::HotCommand& m,
                          const protocol::FrameView& frame, std::vector<TimedEvent>* out) {
  spec::AckSet ack_set({m.ack_set.begin(), m.ack_set.end()});
  // B from the metadata, when it is intact (a corrupt payload's B is not trusted).
  std::optional<std::int64_t> b;
  if (frame.has_payload && frame.checksum_ok && frame.metadata_and_payload.size() >= 4) {
    // [metadata size][MessageMetadata]: parsed in place, the payload is not needed; by hand
    // when the hand decoder takes it (protocol/hot_command.h), else by protobuf.
    const std::string_view rest(frame.metadata_and_payload);
    const std::uint32_t size = protocol::read_be32(rest);
    if (size <= rest.size() - 4) {
      if (std::optional<std::int32_t> hot = protocol::hot_batch_size(rest.substr(4, size))) {
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

void Observer::on_close(double time, std::vector<TimedEvent>* out) {
  if (closed_) return;
  closed_ = true;
  consumers_.clear();
  out->push_back({time, spec::Disconnect{cnx_}});
}

void Observer::quiescent(double time, double silence, const Patience& patience,
                         std::vector<TimedEvent>* out) {
  if (closed_) return;
  for (const auto& [id, c] : consumers_) {
    if (c.subscribed && c.flows > 0 &&
        wire::quiescent(static_cast<std::int64_t>(c.entries.size()), silence, patience)) {
      out->push_back({time, spec::Quiescent{cnx_, id}});
    }
  }
}

}  // namespace permitcheck::wire
