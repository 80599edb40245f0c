// The three commands a consumer's traffic is mostly made of (MESSAGE, ACK, FLOW), and the
// batch size in a MESSAGE's metadata, decoded by hand from the protobuf wire format for readers
// on a hot path (the capture reader, the tap). The hand decoder takes only the shapes it
// understands completely (known fields, known enum values, every required field, no
// duplicates) and says "not hot" for anything else, which the caller then gives to protobuf:
// whatever it accepts, protobuf accepts with the same values (tests/protocol/hot_command_test.cc,
// fuzz/frame_decoder_fuzz.cc).
//
//   HotCommand hot;
//   if (decode_hot_command(base_command_bytes, &hot)) use(hot);               // no protobuf
//   else if (cmd.ParseFromArray(...) && hot_command_from(cmd, &hot)) use(hot); // the same
#ifndef PERMITCHECK_PROTOCOL_HOT_COMMAND_H_
#define PERMITCHECK_PROTOCOL_HOT_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "protocol/proto/pulsar_wire.pb.h"

namespace permitcheck::protocol {

// A MessageIdData, as far as permits are concerned.
struct HotMessageId {
  std::uint64_t ledger = 0, entry = 0;
  std::int32_t batch_index = -1;     // -1 when absent
  std::vector<std::int64_t> ack_set;  // reused: allocation-free once grown
  friend bool operator==(const HotMessageId&, const HotMessageId&) = default;
};

// A MESSAGE, ACK or FLOW. Only the fields of `type` are meaningful.
struct HotCommand {
  wire::BaseCommand::Type type = wire::BaseCommand::FLOW;
  std::uint64_t consumer_id = 0;
  // MESSAGE
  HotMessageId message_id;
  std::vector<std::int64_t> ack_set;
  std::optional<std::uint32_t> message_permits;
  // ACK: ids[0, id_count) (the vector keeps its slots, so their ack sets keep their memory)
  wire::CommandAck::AckType ack_type = wire::CommandAck::Individual;
  std::optional<wire::CommandAck::ValidationError> validation_error;
  std::vector<HotMessageId> ids;
  std::size_t id_count = 0;
  // FLOW
  std::uint32_t permits = 0;

  // The fields of `type` equal (the test's and the fuzzer's comparison).
  bool same_as(const HotCommand& other) const;
};

// Decodes the serialized BaseCommand `bytes` when it is a MESSAGE, ACK or FLOW of a shape the
// hand decoder takes; false otherwise (*out is unspecified then: give the bytes to protobuf).
bool decode_hot_command(std::string_view bytes, HotCommand* out);

// The same fields from a BaseCommand protobuf parsed; false when it is none of the three.
bool hot_command_from(const wire::BaseCommand& command, HotCommand* out);

// B of a serialized MessageMetadata: num_messages_in_batch, 1 when absent. nullopt when the
// hand decoder does not take it (give it to protobuf); never a value protobuf would not give.
std::optional<std::int32_t> hot_batch_size(std::string_view metadata);

}  // namespace permitcheck::protocol

#endif  // PERMITCHECK_PROTOCOL_HOT_COMMAND_H_
