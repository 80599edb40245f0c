// The wire observer (wire/observer.h) on known-good frames (the events each one means) and
// known-bad ones (the facts it returns instead of events), and quiescence (wire/quiescence.h).
#include "wire/observer.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "protocol/frame.h"
#include "wire/quiescence.h"

namespace permitcheck::wire {
namespace {

std::string command(const BaseCommand& c) { return protocol::encode_command(c); }

std::string subscribe(std::uint64_t consumer, std::uint64_t request) {
  BaseCommand c;
  c.set_type(BaseCommand::SUBSCRIBE);
  c.mutable_subscribe()->set_topic("persistent://public/default/t");
  c.mutable_subscribe()->set_subscription("sub");
  c.mutable_subscribe()->set_subtype(1);
  c.mutable_subscribe()->set_consumer_id(consumer);
  c.mutable_subscribe()->set_request_id(request);
  return command(c);
}
std::string success(std::uint64_t request) {
  BaseCommand c;
  c.set_type(BaseCommand::SUCCESS);
  c.mutable_success()->set_request_id(request);
  return command(c);
}
std::string flow(std::uint64_t consumer, std::uint32_t permits) {
  BaseCommand c;
  c.set_type(BaseCommand::FLOW);
  c.mutable_flow()->set_consumer_id(consumer);
  c.mutable_flow()->set_messagepermits(permits);
  return command(c);
}
// A MESSAGE of entry `entry` on ledger 7: a batch of `b` when b > 1.
std::string message(std::uint64_t consumer, std::uint64_t entry, int b,
                    std::optional<std::uint32_t> permits = std::nullopt) {
  BaseCommand c;
  c.set_type(BaseCommand::MESSAGE);
  c.mutable_message()->set_consumer_id(consumer);
  c.mutable_message()->mutable_message_id()->set_ledgerid(7);
  c.mutable_message()->mutable_message_id()->set_entryid(entry);
  if (permits) c.mutable_message()->set_message_permits(*permits);
  MessageMetadata meta;
  meta.set_producer_name("p");
  meta.set_sequence_id(entry);
  meta.set_publish_time(1);
  std::string payload = "m";
  if (b > 1) {
    meta.set_num_messages_in_batch(b);
    std::vector<protocol::BatchMessage> msgs(static_cast<std::size_t>(b));
    for (auto& m : msgs) {
      m.payload = "x";
      m.metadata.set_payload_size(1);
    }
    payload = protocol::encode_batch(msgs);
  }
  return protocol::encode_message(c, meta.SerializeAsString(), payload);
}
std::string ack(std::uint64_t consumer, std::uint64_t entry,
                std::optional<CommandAck::ValidationError> error = std::nullopt) {
  BaseCommand c;
  c.set_type(BaseCommand::ACK);
  c.mutable_ack()->set_consumer_id(consumer);
  c.mutable_ack()->set_ack_type(CommandAck::Individual);
  if (error) c.mutable_ack()->set_validation_error(*error);
  c.mutable_ack()->add_message_id()->set_ledgerid(7);
  c.mutable_ack()->mutable_message_id(0)->set_entryid(entry);
  return command(c);
}
std::string u32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
// A well-formed command of `type` (< 128) with an empty body.
std::string command_of_type(std::uint8_t type) {
  const std::string body = {'\x08', static_cast<char>(type)};
  return u32(static_cast<std::uint32_t>(body.size() + 4)) +
         u32(static_cast<std::uint32_t>(body.size())) + body;
}

// One observer and what it emitted, fed frame by frame.
struct Feed {
  std::uint64_t next_cmd = 1;
  Observer observer{spec::Id::text("c1"), &next_cmd};
  std::vector<TimedEvent> out;
  FrameFacts client(const std::string& f, double t = 1, const ServerKnowledge* s = nullptr) {
    return observer.on_frame(Direction::kToServer, t, f, nullptr, &out, s);
  }
  FrameFacts broker(const std::string& f, double t = 1) {
    return observer.on_frame(Direction::kToClient, t, f, nullptr, &out);
  }
  // CONNECT, SUBSCRIBE of consumer 0 answered SUCCESS; `out` cleared.
  void subscribed() {
    BaseCommand c;
    c.set_type(BaseCommand::CONNECT);
    c.mutable_connect()->set_client_version("t");
    c.mutable_connect()->set_protocol_version(21);
    client(command(c));
    client(subscribe(0, 1));
    broker(success(1));
    out.clear();
  }
};

template <typename T>
const T& only(const std::vector<TimedEvent>& out) {
  EXPECT_EQ(out.size(), 1u);
  const T* e = out.empty() ? nullptr : std::get_if<T>(&out.front().event);
  if (e == nullptr) {
    ADD_FAILURE() << "not the event expected";
    static const T none{};
    return none;
  }
  return *e;
}

TEST(WireObserver, HandshakeAndSubscribeAreTheirEvents) {
  Feed g;
  BaseCommand c;
  c.set_type(BaseCommand::CONNECT);
  c.mutable_connect()->set_client_version("t");
  c.mutable_connect()->set_protocol_version(21);
  g.client(command(c));
  g.client(subscribe(3, 9));
  g.broker(success(9));
  ASSERT_EQ(g.out.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<spec::Connect>(g.out[0].event));
  EXPECT_EQ(std::get<spec::Subscribe>(g.out[1].event).consumer, 3u);
  EXPECT_EQ(std::get<spec::SubscribeOk>(g.out[2].event).consumer, 3u);
}

TEST(WireObserver, FlowIsAGrantOfItsPermits) {
  Feed f;
  f.subscribed();
  EXPECT_FALSE(f.client(flow(0, 25), 2.5).not_understood);
  const spec::Flow& g = only<spec::Flow>(f.out);
  EXPECT_EQ(g.cnx, spec::Id::text("c1"));
  EXPECT_EQ(g.consumer, 0u);
  EXPECT_EQ(g.permits, 25);
  EXPECT_EQ(f.out.front().time, 2.5);
}

TEST(WireObserver, MessageIsADebitWithItsBatchSizeAndNumber) {
  Feed f;
  f.subscribed();
  f.client(flow(0, 10));
  f.out.clear();
  EXPECT_FALSE(f.broker(message(0, 5, 4, 4u)).not_understood);
  const spec::Message& m = only<spec::Message>(f.out);
  EXPECT_EQ(m.consumer, 0u);
  EXPECT_EQ(m.cmd, spec::Id::number(1));
  EXPECT_EQ(m.batch_size, 4);
  EXPECT_EQ(m.message_permits, 4u);
  EXPECT_EQ(f.next_cmd, 2u);  // the next MESSAGE of the trace is number 2
}

TEST(WireObserver, AckNamesTheMessageItAcknowledgesAndItsValidationError) {
  Feed f;
  f.subscribed();
  f.client(flow(0, 10));
  f.broker(message(0, 5, 1));
  f.out.clear();
  f.client(ack(0, 5));
  EXPECT_EQ(only<spec::Ack>(f.out).cmd, spec::Id::number(1));
  f.out.clear();
  // An id no MESSAGE named: "e<entry>"; the error in the trace format's spelling.
  f.client(ack(0, 6, CommandAck::ChecksumMismatch));
  const spec::Ack& a = only<spec::Ack>(f.out);
  EXPECT_EQ(a.cmd, spec::Id::text("e6"));
  EXPECT_EQ(a.validation_error, "checksum");
}

TEST(WireObserver, ServerKnowledgeNamesTheAcknowledgedMessage) {
  Feed f;
  f.subscribed();
  const std::optional<spec::Id> names[] = {spec::Id::number(42)};
  const ServerKnowledge server{.acked_cmds = names};
  f.client(ack(0, 5), 1, &server);
  EXPECT_EQ(only<spec::Ack>(f.out).cmd, spec::Id::number(42));
}

TEST(WireObserver, UnknownCommandIsAFactWithoutEventsAndTheStreamGoesOn) {
  Feed f;
  f.subscribed();
  const FrameFacts facts = f.client(command_of_type(6));  // SEND: a producer's command
  EXPECT_EQ(facts.unsupported_type, 6u);
  EXPECT_FALSE(facts.not_understood);
  EXPECT_TRUE(f.out.empty());
  f.client(flow(0, 1));
  EXPECT_EQ(only<spec::Flow>(f.out).permits, 1);
}

TEST(WireObserver, TruncatedFrameIsNotUnderstood) {
  Feed f;
  f.subscribed();
  std::string cut = flow(0, 10);
  cut.pop_back();  // its sizes now announce one byte more than there is
  const FrameFacts facts = f.client(cut);
  ASSERT_TRUE(facts.not_understood.has_value());
  EXPECT_EQ(facts.not_understood->rfind("client frame 4: ", 0), 0u) << *facts.not_understood;
  EXPECT_FALSE(facts.unsupported_type);
  EXPECT_TRUE(f.out.empty());
}

TEST(WireObserver, GarbageFromTheBrokerIsNotUnderstood) {
  Feed f;
  const FrameFacts facts = f.broker(u32(6) + u32(2) + "\xff\xff");
  ASSERT_TRUE(facts.not_understood.has_value());
  EXPECT_EQ(facts.not_understood->rfind("broker frame 1: ", 0), 0u) << *facts.not_understood;
  EXPECT_TRUE(f.out.empty());
}

TEST(WireObserver, CloseIsOneDisconnectAndLaterFramesAreIgnored) {
  Feed f;
  f.subscribed();
  f.observer.on_close(3, &f.out);
  f.observer.on_close(4, &f.out);
  EXPECT_EQ(only<spec::Disconnect>(f.out).cnx, spec::Id::text("c1"));
  f.client(flow(0, 1));
  EXPECT_EQ(f.out.size(), 1u);
}

TEST(WireObserver, QuiescentOnlyForAFlowedConsumerAtRest) {
  Feed f;
  f.subscribed();
  const Patience idle{.settled = 1.0};
  f.observer.quiescent(5, 2.0, idle, &f.out);
  EXPECT_TRUE(f.out.empty()) << "no Flow yet";
  f.client(flow(0, 10));
  f.broker(message(0, 5, 1));
  f.out.clear();
  f.observer.quiescent(5, 2.0, idle, &f.out);
  EXPECT_TRUE(f.out.empty()) << "an entry in flight";
  f.client(ack(0, 5));
  f.out.clear();
  f.observer.quiescent(5, 0.5, idle, &f.out);
  EXPECT_TRUE(f.out.empty()) << "silence too short";
  f.observer.quiescent(5, 1.0, idle, &f.out);
  EXPECT_EQ(only<spec::Quiescent>(f.out).consumer, 0u);
}

TEST(WireQuiescence, SettledNeedsTheShortSilenceUnsettledTheLongOne) {
  const Patience p{.settled = 0.5, .unsettled = 1.5};
  EXPECT_TRUE(quiescent(0, 0.5, p));
  EXPECT_FALSE(quiescent(0, 0.49, p));
  EXPECT_FALSE(quiescent(2, 1.0, p));
  EXPECT_TRUE(quiescent(2, 1.5, p));
  EXPECT_FALSE(quiescent(1, 1e9, Patience{.settled = 0}));  // unsettled: never by default
  EXPECT_TRUE(quiescent(0, 0, Patience{.settled = 0}));
}

TEST(WireValidationErrorName, EveryValueHasTheTraceFormatsName) {
  EXPECT_EQ(validation_error_name(CommandAck::UncompressedSizeCorruption), "uncompressed_size");
  EXPECT_EQ(validation_error_name(CommandAck::DecompressionError), "decompression");
  EXPECT_EQ(validation_error_name(CommandAck::ChecksumMismatch), "checksum");
  EXPECT_EQ(validation_error_name(CommandAck::BatchDeSerializeError), "batch_deserialize");
  EXPECT_EQ(validation_error_name(CommandAck::DecryptionError), "decryption");
  EXPECT_EQ(validation_error_name(static_cast<CommandAck::ValidationError>(99)), std::nullopt);
}

}  // namespace
}  // namespace permitcheck::wire
