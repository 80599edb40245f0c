// The hand-written decoder's size bounds, each tested right at its limit (limit - 1, limit,
// limit + 1): the frame size (4..kMaxFrameSize) in FrameSplitter::next() and split() and in
// decode_frame, the command size, the bytes after the command, the metadata size and a batch
// message's sizes; and the command-type peeks (peek_command_type, unknown_command) that read
// frames the codec does not parse. Issue 33: before these, the bounds were tested only far
// beyond the frame, and a one-off bound survived every test.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/frame.h"

namespace permitcheck::protocol {
namespace frame_bounds {

std::string u32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

wire::BaseCommand message_command() {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::MESSAGE);
  c.mutable_message()->set_consumer_id(1);
  c.mutable_message()->mutable_message_id()->set_ledgerid(7);
  c.mutable_message()->mutable_message_id()->set_entryid(1);
  return c;
}

// A well-formed MESSAGE frame announcing exactly `total` bytes after its size field.
std::string message_of_total(std::uint32_t total) {
  wire::MessageMetadata meta;
  meta.set_producer_name("p");
  meta.set_sequence_id(1);
  meta.set_publish_time(1);
  const std::string empty = encode_message(message_command(), meta.SerializeAsString(), "");
  const std::size_t payload = std::size_t{total} + 4 - empty.size();
  std::string frame =
      encode_message(message_command(), meta.SerializeAsString(), std::string(payload, 'x'));
  EXPECT_EQ(frame.size(), std::size_t{total} + 4);
  return frame;
}

// next(): a size of 3 or of kMaxFrameSize + 1 is refused as soon as the size is read; 4 and
// kMaxFrameSize are frames, returned once their last byte came and not one byte earlier.
TEST(FrameBounds, NextTakesSizesFrom4ToTheLimitAndReturnsAFrameAtItsLastByte) {
  for (std::uint32_t bad : {std::uint32_t{3}, kMaxFrameSize + 1}) {
    FrameSplitter s;
    s.append(u32(bad));
    absl::StatusOr<std::optional<std::string>> n = s.next();
    EXPECT_FALSE(n.ok()) << bad;
  }
  for (std::uint32_t good : {std::uint32_t{4}, std::uint32_t{5}, kMaxFrameSize - 1, kMaxFrameSize}) {
    FrameSplitter s;
    const std::string frame = u32(good) + std::string(good, 'a');
    s.append(frame.substr(0, frame.size() - 1));
    absl::StatusOr<std::optional<std::string>> n = s.next();
    ASSERT_TRUE(n.ok()) << good << " " << n.status();
    EXPECT_FALSE(n->has_value()) << good << ": a frame one byte short is not whole";
    s.append(frame.substr(frame.size() - 1));
    n = s.next();
    ASSERT_TRUE(n.ok()) << good;
    ASSERT_TRUE(n->has_value()) << good;
    EXPECT_EQ(**n, frame) << good;
    EXPECT_EQ(s.buffered(), 0u) << good;
  }
}

// split(): the same bounds for a frame inside the bytes and for one begun in an earlier call.
TEST(FrameBounds, SplitTakesSizesFrom4ToTheLimitInPlaceAndAcrossCalls) {
  for (std::uint32_t bad : {std::uint32_t{3}, kMaxFrameSize + 1}) {
    for (bool begun_earlier : {false, true}) {
      FrameSplitter s;
      const std::string bytes = u32(bad) + "abcd";
      absl::Status st = absl::OkStatus();
      if (begun_earlier) {
        st = s.split(bytes.substr(0, 2), [](std::string_view, const StreamedPayload*) { return true; });
        EXPECT_TRUE(st.ok());
        st = s.split(bytes.substr(2), [](std::string_view, const StreamedPayload*) { return true; });
      } else {
        st = s.split(bytes, [](std::string_view, const StreamedPayload*) { return true; });
      }
      EXPECT_FALSE(st.ok()) << bad << " " << begun_earlier;
    }
  }
  for (std::uint32_t good : {std::uint32_t{4}, kMaxFrameSize - 1, kMaxFrameSize}) {
    const std::string frame = u32(good) + std::string(good, 'a');
    for (std::size_t cut : {std::size_t{0}, std::size_t{2}, frame.size() - 1}) {
      FrameSplitter s;
      std::vector<std::size_t> sizes;
      auto on = [&](std::string_view f, const StreamedPayload*) {
        sizes.push_back(f.size());
        return true;
      };
      if (cut > 0) {
        ASSERT_TRUE(s.split(frame.substr(0, cut), on).ok()) << good;
        EXPECT_TRUE(sizes.empty()) << good << " " << cut;
        EXPECT_TRUE(s.in_frame()) << good << " " << cut;
      }
      ASSERT_TRUE(s.split(frame.substr(cut), on).ok()) << good << " " << cut;
      ASSERT_EQ(sizes.size(), 1u) << good << " " << cut;
      EXPECT_EQ(sizes[0], frame.size());
      EXPECT_FALSE(s.in_frame());
    }
  }
}

// decode_frame: a MESSAGE of exactly kMaxFrameSize bytes decodes, with its checksum; one byte
// more is refused naming the limit. (The splitter refuses it first; decode_frame holds the
// same bound for a frame handed to it whole.)
TEST(FrameBounds, DecodeTakesAFrameOfExactlyTheLimitAndRefusesOneByteMore) {
  for (std::uint32_t total : {kMaxFrameSize - 1, kMaxFrameSize}) {
    absl::StatusOr<Frame> f = decode_frame(message_of_total(total));
    ASSERT_TRUE(f.ok()) << total << " " << f.status();
    EXPECT_TRUE(f->has_payload);
    EXPECT_TRUE(f->checksum_ok);
  }
  absl::StatusOr<Frame> over = decode_frame(message_of_total(kMaxFrameSize + 1));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("limit"), std::string::npos) << over.status();
}

// The command size may reach the frame's end (a command without payload), not one byte past;
// after the command, 6 bytes (magic and checksum) make a payload section, 5 do not.
TEST(FrameBounds, CommandSizeUpToTheFramesEndAndSixBytesForMagicAndChecksum) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::FLOW);
  c.mutable_flow()->set_consumer_id(1);
  c.mutable_flow()->set_messagepermits(3);
  const std::string body = c.SerializeAsString();
  const std::string exact = u32(static_cast<std::uint32_t>(body.size() + 4)) +
                            u32(static_cast<std::uint32_t>(body.size())) + body;
  absl::StatusOr<Frame> f = decode_frame(exact);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->has_payload);
  EXPECT_EQ(f->command.flow().messagepermits(), 3u);
  std::string past = exact;
  past.replace(4, 4, u32(static_cast<std::uint32_t>(body.size() + 1)));
  EXPECT_FALSE(decode_frame(past).ok());
  EXPECT_FALSE(unknown_command(past).has_value());

  // Magic 0x0e01 and the checksum of nothing (CRC32C of no bytes is 0).
  const std::string six = std::string("\x0e\x01\x00\x00\x00\x00", 6);
  auto with_rest = [&](const std::string& rest) {
    return u32(static_cast<std::uint32_t>(4 + body.size() + rest.size())) +
           u32(static_cast<std::uint32_t>(body.size())) + body + rest;
  };
  absl::StatusOr<Frame> g = decode_frame(with_rest(six));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->has_payload);
  EXPECT_TRUE(g->checksum_ok);
  EXPECT_TRUE(g->metadata_and_payload.empty());
  absl::StatusOr<Frame> five = decode_frame(with_rest(six.substr(0, 5)));
  ASSERT_FALSE(five.ok());
  EXPECT_NE(five.status().message().find("too short"), std::string::npos) << five.status();
  // Frames shorter than the 8-byte header are refused; the header alone is a size mismatch
  // or an empty command, never a crash.
  EXPECT_FALSE(decode_frame(exact.substr(0, 7)).ok());
}

// The metadata size may take every byte left (an empty payload), not one more; three bytes
// cannot hold the size field.
TEST(FrameBounds, MetadataSizeUpToTheBytesLeft) {
  wire::MessageMetadata meta;
  meta.set_producer_name("p");
  meta.set_sequence_id(9);
  meta.set_publish_time(1);
  const std::string m = meta.SerializeAsString();
  absl::StatusOr<MetadataAndPayload> all =
      parse_metadata_and_payload(u32(static_cast<std::uint32_t>(m.size())) + m);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->metadata.sequence_id(), 9u);
  EXPECT_TRUE(all->payload.empty());
  EXPECT_FALSE(parse_metadata_and_payload(u32(static_cast<std::uint32_t>(m.size() + 1)) + m).ok());
  absl::StatusOr<MetadataAndPayload> one = parse_metadata_and_payload(u32(static_cast<std::uint32_t>(m.size())) + m + "z");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->payload, "z");
  // Three bytes cannot hold the size; four can, and then the size is judged (0: an empty
  // metadata, which does not parse; 1: more than the bytes left).
  absl::StatusOr<MetadataAndPayload> three = parse_metadata_and_payload(std::string(3, '\0'));
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.status().message().find("no room"), std::string::npos) << three.status();
  absl::StatusOr<MetadataAndPayload> zero = parse_metadata_and_payload(u32(0));
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("does not parse"), std::string::npos) << zero.status();
  absl::StatusOr<MetadataAndPayload> past = parse_metadata_and_payload(u32(1));
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("exceeds the 0 bytes left"), std::string::npos)
      << past.status();
}

// A batch message's metadata and payload sizes may reach the end of the batch payload, not
// one byte past; a last message with an empty payload parses.
TEST(FrameBounds, BatchMessageSizesUpToTheEndOfThePayload) {
  std::vector<BatchMessage> batch(2);
  for (BatchMessage& b : batch) {
    b.payload = "abc";
    b.metadata.set_payload_size(3);
  }
  const std::string payload = encode_batch(batch);
  BatchParse whole = parse_batch(payload, 2);
  EXPECT_EQ(whole.messages.size(), 2u);
  EXPECT_FALSE(whole.failed_at.has_value());
  EXPECT_EQ(whole.trailing_messages, 0);
  // One byte of the last payload missing: the last message fails.
  BatchParse short_one = parse_batch(payload.substr(0, payload.size() - 1), 2);
  EXPECT_EQ(short_one.messages.size(), 1u);
  EXPECT_EQ(short_one.failed_at, 1);
  // A last message with an empty payload ends exactly at the end: it parses.
  std::vector<BatchMessage> with_empty = batch;
  with_empty[1].payload.clear();
  with_empty[1].metadata.set_payload_size(0);
  BatchParse empty_last = parse_batch(encode_batch(with_empty), 2);
  EXPECT_EQ(empty_last.messages.size(), 2u);
  EXPECT_FALSE(empty_last.failed_at.has_value());
  // Three bytes where a size field should be: no message.
  BatchParse three = parse_batch(payload.substr(0, payload.size() / 2) + std::string(3, '\0'), 2);
  EXPECT_EQ(three.failed_at, 1);
  // A message after the count is counted as trailing, as are empty ones.
  BatchParse trailing = parse_batch(payload, 1);
  EXPECT_EQ(trailing.messages.size(), 1u);
  EXPECT_EQ(trailing.trailing_messages, 1);
}

// The type peek reads the varint of field 1 however many bytes it takes, and needs the 9th
// byte to be field 1's tag.
TEST(FrameBounds, PeekCommandTypeReadsField1sVarintOfAnyLength) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::FLOW);
  c.mutable_flow()->set_consumer_id(1);
  c.mutable_flow()->set_messagepermits(1);
  const std::string flow = encode_command(c);
  EXPECT_EQ(peek_command_type(flow), std::optional<std::uint64_t>(wire::BaseCommand::FLOW));
  // A two-byte varint (type 200) and a ten-byte one (2^63).
  const std::string head = std::string(8, '\0') + "\x08";
  EXPECT_EQ(peek_command_type(head + "\xc8\x01"), std::optional<std::uint64_t>(200));
  EXPECT_EQ(peek_command_type(head + std::string(9, '\x80') + "\x01"),
            std::optional<std::uint64_t>(std::uint64_t{1} << 63));
  // Eleven bytes (past 64 bits) is no varint of a type.
  EXPECT_FALSE(peek_command_type(head + std::string(10, '\x80') + "\x01").has_value());
  // A varint cut short, a frame of 8 bytes, another first field: no type.
  EXPECT_FALSE(peek_command_type(head + "\xc8").has_value());
  EXPECT_FALSE(peek_command_type(std::string(8, '\0')).has_value());
  EXPECT_FALSE(peek_command_type(std::string(8, '\0') + "\x10\x02").has_value());
}

// A well-formed command of a type the codec does not know: its type, and its request id from
// the body's field 2, else field 1; none for a known type.
TEST(FrameBounds, UnknownCommandNamesItsTypeAndRequestIdField2ThenField1) {
  auto frame_of = [](const std::string& command) {
    return u32(static_cast<std::uint32_t>(command.size() + 4)) +
           u32(static_cast<std::uint32_t>(command.size())) + command;
  };
  // type 120 (tag 0x08, varint 0x78); body field 120 length-delimited: tag (120 << 3) | 2 =
  // 962 = 0xc2 0x07.
  auto command_with_body = [](const std::string& body) {
    return std::string("\x08\x78\xc2\x07", 4) + static_cast<char>(body.size()) + body;
  };
  // Field 1 = 5, field 2 = 9 (tags 0x08, 0x10): field 2 wins.
  std::optional<UnknownCommand> both = unknown_command(frame_of(command_with_body("\x08\x05\x10\x09")));
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->type, 120u);
  EXPECT_EQ(both->request_id, std::optional<std::uint64_t>(9));
  // Field 2 before field 1 in the body: field 2 still wins.
  std::optional<UnknownCommand> order = unknown_command(frame_of(command_with_body("\x10\x09\x08\x05")));
  ASSERT_TRUE(order.has_value());
  EXPECT_EQ(order->request_id, std::optional<std::uint64_t>(9));
  std::optional<UnknownCommand> only1 = unknown_command(frame_of(command_with_body("\x08\x05")));
  ASSERT_TRUE(only1.has_value());
  EXPECT_EQ(only1->request_id, std::optional<std::uint64_t>(5));
  // Field 3 only: no request id. A length-delimited field 1: not an id.
  std::optional<UnknownCommand> none = unknown_command(frame_of(command_with_body("\x18\x05")));
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->request_id.has_value());
  std::optional<UnknownCommand> ld = unknown_command(frame_of(command_with_body("\x0a\x01\x05")));
  ASSERT_TRUE(ld.has_value());
  EXPECT_FALSE(ld->request_id.has_value());
  // Without a body: the type, no id. A type given as a length-delimited field 1: not a type.
  std::optional<UnknownCommand> bare = unknown_command(frame_of(std::string("\x08\x78", 2)));
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->type, 120u);
  EXPECT_FALSE(unknown_command(frame_of(std::string("\x0a\x01\x78", 3))).has_value());
  // A known type (FLOW) is not unknown.
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::FLOW);
  c.mutable_flow()->set_consumer_id(1);
  c.mutable_flow()->set_messagepermits(1);
  EXPECT_FALSE(unknown_command(encode_command(c)).has_value());
}

}  // namespace frame_bounds
}  // namespace permitcheck::protocol
