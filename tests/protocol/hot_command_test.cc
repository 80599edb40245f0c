// Tests of protocol/hot_command.h against protobuf: every MESSAGE, ACK and FLOW protobuf
// serializes is taken by the hand decoder with the same values, and whatever bytes the hand
// decoder takes (valid ones mutated, arbitrary ones), protobuf parses to the same values. The
// shapes it leaves to protobuf are left, and protobuf's verdict on them stands.
#include "protocol/hot_command.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

namespace permitcheck::protocol {
namespace {

// A message id with random values, every optional field present or not.
void random_id(wire::MessageIdData* id) {
  id->set_ledgerid(*rc::gen::arbitrary<std::uint64_t>());
  id->set_entryid(*rc::gen::arbitrary<std::uint64_t>());
  if (*rc::gen::arbitrary<bool>()) id->set_partition(*rc::gen::arbitrary<std::int32_t>());
  if (*rc::gen::arbitrary<bool>()) id->set_batch_index(*rc::gen::inRange(-3, 70));
  if (*rc::gen::arbitrary<bool>()) id->set_batch_size(*rc::gen::arbitrary<std::int32_t>());
  for (std::int64_t w : *rc::gen::container<std::vector<std::int64_t>>(
           *rc::gen::inRange(0, 3), rc::gen::arbitrary<std::int64_t>())) {
    id->add_ack_set(w);
  }
}

wire::BaseCommand random_hot_command() {
  wire::BaseCommand c;
  switch (*rc::gen::inRange(0, 3)) {
    case 0: {
      c.set_type(wire::BaseCommand::MESSAGE);
      auto* m = c.mutable_message();
      m->set_consumer_id(*rc::gen::arbitrary<std::uint64_t>());
      random_id(m->mutable_message_id());
      if (*rc::gen::arbitrary<bool>()) m->set_redelivery_count(*rc::gen::arbitrary<std::uint32_t>());
      for (std::int64_t w : *rc::gen::container<std::vector<std::int64_t>>(
               *rc::gen::inRange(0, 3), rc::gen::arbitrary<std::int64_t>())) {
        m->add_ack_set(w);
      }
      if (*rc::gen::arbitrary<bool>()) m->set_consumer_epoch(*rc::gen::arbitrary<std::uint64_t>());
      if (*rc::gen::arbitrary<bool>()) m->set_message_permits(*rc::gen::arbitrary<std::uint32_t>());
      break;
    }
    case 1: {
      c.set_type(wire::BaseCommand::ACK);
      auto* a = c.mutable_ack();
      a->set_consumer_id(*rc::gen::arbitrary<std::uint64_t>());
      a->set_ack_type(*rc::gen::arbitrary<bool>() ? wire::CommandAck::Cumulative
                                                 : wire::CommandAck::Individual);
      const int ids = *rc::gen::inRange(0, 5);
      for (int i = 0; i < ids; ++i) random_id(a->add_message_id());
      if (*rc::gen::arbitrary<bool>()) {
        a->set_validation_error(static_cast<wire::CommandAck::ValidationError>(*rc::gen::inRange(0, 5)));
      }
      if (*rc::gen::arbitrary<bool>()) a->set_request_id(*rc::gen::arbitrary<std::uint64_t>());
      break;
    }
    default:
      c.set_type(wire::BaseCommand::FLOW);
      c.mutable_flow()->set_consumer_id(*rc::gen::arbitrary<std::uint64_t>());
      c.mutable_flow()->set_messagepermits(*rc::gen::arbitrary<std::uint32_t>());
      break;
  }
  return c;
}

// When the hand decoder takes `bytes`, protobuf parses them to the same command.
void agrees_with_protobuf(const std::string& bytes) {
  HotCommand hot;
  if (!decode_hot_command(bytes, &hot)) return;
  wire::BaseCommand parsed;
  RC_ASSERT(parsed.ParseFromString(bytes));
  RC_ASSERT(parsed.has_type());
  HotCommand expected;
  RC_ASSERT(hot_command_from(parsed, &expected));
  RC_ASSERT(hot.same_as(expected));
}

RC_GTEST_PROP(HotCommand, TakesEveryHotCommandProtobufWritesWithItsValues, ()) {
  const wire::BaseCommand c = random_hot_command();
  const std::string bytes = c.SerializeAsString();
  HotCommand hot, expected;
  RC_ASSERT(decode_hot_command(bytes, &hot));
  RC_ASSERT(hot_command_from(c, &expected));
  RC_ASSERT(hot.same_as(expected));
  // Its slots reused for the next command give the same answer as fresh ones.
  const std::string other = random_hot_command().SerializeAsString();
  HotCommand fresh;
  RC_ASSERT(decode_hot_command(other, &hot) == decode_hot_command(other, &fresh));
  RC_ASSERT(hot.same_as(fresh));
}

RC_GTEST_PROP(HotCommand, WhatItTakesFromMutatedBytesProtobufParsesTheSame, ()) {
  std::string bytes = random_hot_command().SerializeAsString();
  const int edits = *rc::gen::inRange(1, 4);
  for (int i = 0; i < edits && !bytes.empty(); ++i) {
    const auto at = static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, bytes.size()));
    switch (*rc::gen::inRange(0, 4)) {
      case 0: bytes[at] = static_cast<char>(*rc::gen::arbitrary<std::uint8_t>()); break;
      case 1: bytes.erase(at, 1); break;
      case 2: bytes.insert(at, 1, static_cast<char>(*rc::gen::arbitrary<std::uint8_t>())); break;
      default: bytes.resize(at); break;
    }
  }
  agrees_with_protobuf(bytes);
}

RC_GTEST_PROP(HotCommand, WhatItTakesFromArbitraryBytesProtobufParsesTheSame,
              (const std::string& bytes)) {
  agrees_with_protobuf(bytes);
  agrees_with_protobuf("\x08\x0b\x5a" + bytes);  // type FLOW, then a body of arbitrary bytes
}

// Shapes it leaves to protobuf, each with protobuf's own verdict.
TEST(HotCommand, LeavesUnusualShapesToProtobuf) {
  auto flow = [] {
    wire::BaseCommand c;
    c.set_type(wire::BaseCommand::FLOW);
    c.mutable_flow()->set_consumer_id(3);
    c.mutable_flow()->set_messagepermits(10);
    return c;
  };
  HotCommand hot;
  wire::BaseCommand parsed;
  ASSERT_TRUE(decode_hot_command(flow().SerializeAsString(), &hot));
  EXPECT_EQ(hot.permits, 10u);

  // An unknown field (number 900, varint): protobuf keeps it aside and parses.
  const std::string unknown = flow().SerializeAsString() + "\xa0\x38\x01";
  EXPECT_FALSE(decode_hot_command(unknown, &hot));
  EXPECT_TRUE(parsed.ParseFromString(unknown));

  // A required field missing (the permits): protobuf refuses.
  wire::BaseCommand partial = flow();
  partial.mutable_flow()->clear_messagepermits();
  const std::string missing = partial.SerializePartialAsString();
  EXPECT_FALSE(decode_hot_command(missing, &hot));
  EXPECT_FALSE(parsed.ParseFromString(missing));

  // Another command's body beside the type's own.
  wire::BaseCommand both = flow();
  both.mutable_success()->set_request_id(1);
  EXPECT_FALSE(decode_hot_command(both.SerializeAsString(), &hot));
  EXPECT_TRUE(parsed.ParseFromString(both.SerializeAsString()));

  // A type whose body is not there (FLOW's body under MESSAGE's type).
  std::string mismatched = flow().SerializeAsString();
  mismatched[1] = static_cast<char>(wire::BaseCommand::MESSAGE);
  EXPECT_FALSE(decode_hot_command(mismatched, &hot));

  // An ack with properties (KeyValue's required fields are protobuf's to check).
  wire::BaseCommand ack;
  ack.set_type(wire::BaseCommand::ACK);
  ack.mutable_ack()->set_consumer_id(1);
  ack.mutable_ack()->set_ack_type(wire::CommandAck::Individual);
  auto* kv = ack.mutable_ack()->add_properties();
  kv->set_key("k");
  kv->set_value("v");
  EXPECT_FALSE(decode_hot_command(ack.SerializeAsString(), &hot));
  EXPECT_TRUE(parsed.ParseFromString(ack.SerializeAsString()));

  // A singular field twice (protobuf: the last wins).
  const std::string twice = flow().SerializeAsString() + "\x5a\x02\x10\x07";
  EXPECT_FALSE(decode_hot_command(twice, &hot));
  EXPECT_TRUE(parsed.ParseFromString(twice));
}

// The batch size of a MessageMetadata: protobuf's value whenever the hand decoder gives one,
// and always one for what protobuf writes without properties.
RC_GTEST_PROP(HotBatchSize, AgreesWithProtobuf, ()) {
  wire::MessageMetadata meta;
  meta.set_producer_name(*rc::gen::arbitrary<std::string>());
  meta.set_sequence_id(*rc::gen::arbitrary<std::uint64_t>());
  meta.set_publish_time(*rc::gen::arbitrary<std::uint64_t>());
  if (*rc::gen::arbitrary<bool>()) meta.set_num_messages_in_batch(*rc::gen::arbitrary<std::int32_t>());
  if (*rc::gen::arbitrary<bool>()) meta.set_uncompressed_size(*rc::gen::arbitrary<std::uint32_t>());
  if (*rc::gen::arbitrary<bool>()) meta.set_compression(wire::ZSTD);
  std::string bytes = meta.SerializeAsString();
  if (*rc::gen::arbitrary<bool>()) bytes += "\x28\x05\x32\x01z";  // unknown fields 5 and 6
  const std::optional<std::int32_t> b = hot_batch_size(bytes);
  RC_ASSERT(b.has_value());
  RC_ASSERT(*b == meta.num_messages_in_batch());

  const int edits = *rc::gen::inRange(1, 4);
  for (int i = 0; i < edits && !bytes.empty(); ++i) {
    const auto at = static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, bytes.size()));
    if (*rc::gen::arbitrary<bool>()) bytes[at] = static_cast<char>(*rc::gen::arbitrary<std::uint8_t>());
    else bytes.resize(at);
  }
  if (const std::optional<std::int32_t> mutated = hot_batch_size(bytes)) {
    wire::MessageMetadata parsed;
    RC_ASSERT(parsed.ParseFromString(bytes));
    RC_ASSERT(*mutated == parsed.num_messages_in_batch());
  }
}

TEST(HotBatchSize, LeavesPropertiesAndMissingFieldsToProtobuf) {
  wire::MessageMetadata meta;
  meta.set_producer_name("p");
  meta.set_sequence_id(1);
  meta.set_publish_time(2);
  meta.set_num_messages_in_batch(7);
  EXPECT_EQ(hot_batch_size(meta.SerializeAsString()), 7);
  wire::MessageMetadata with_properties = meta;
  auto* kv = with_properties.add_properties();
  kv->set_key("k");
  kv->set_value("v");
  EXPECT_EQ(hot_batch_size(with_properties.SerializeAsString()), std::nullopt);
  meta.clear_publish_time();
  EXPECT_EQ(hot_batch_size(meta.SerializePartialAsString()), std::nullopt);
  wire::MessageMetadata parsed;
  EXPECT_FALSE(parsed.ParseFromString(meta.SerializePartialAsString()));
}

}  // namespace
}  // namespace permitcheck::protocol
