// unknown_command (protocol/frame.h): a well-formed command of a type the broker does not
// implement is told apart from garbage, with the request id the broker answers ERROR to.
#include <gtest/gtest.h>

#include <string>

#include "protocol/frame.h"

namespace permitcheck::conformance {
namespace {

std::string varint(std::uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return s + static_cast<char>(v);
}

std::string u32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// A frame holding BaseCommand{type = TYPE, field TYPE = BODY}.
std::string frame_of(std::uint64_t type, const std::string& body) {
  std::string command = "\x08" + varint(type) + varint(type << 3 | 2) + varint(body.size()) + body;
  return u32(static_cast<std::uint32_t>(command.size() + 4)) +
         u32(static_cast<std::uint32_t>(command.size())) + command;
}

TEST(UnknownCommand, TypeOutsideOurProtoIsRecognisedWithItsRequestId) {
  // GET_TOPICS_OF_NAMESPACE (32), not in our .proto: request_id = 1, namespace = 2.
  const std::string frame = frame_of(32, "\x08\x07" + std::string("\x12\x01n"));
  EXPECT_FALSE(protocol::decode_frame(frame).ok());
  std::optional<protocol::UnknownCommand> u = protocol::unknown_command(frame);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->type, 32u);
  ASSERT_TRUE(u->request_id.has_value());
  EXPECT_EQ(*u->request_id, 7u);
}

TEST(UnknownCommand, BodyWithoutARequestIdHasNone) {
  const std::string frame = frame_of(40, "\x0a\x01t");
  std::optional<protocol::UnknownCommand> u = protocol::unknown_command(frame);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->type, 40u);
  EXPECT_FALSE(u->request_id.has_value());
}

TEST(UnknownCommand, KnownTypesAndGarbageAreNotUnknownCommands) {
  // FLOW (11) without its required body fields: malformed, not unsupported.
  EXPECT_FALSE(protocol::unknown_command(frame_of(11, "")).has_value());
  EXPECT_FALSE(protocol::unknown_command(u32(6) + u32(2) + "\xff\xff").has_value());
  EXPECT_FALSE(protocol::unknown_command("abc").has_value());
}

}  // namespace
}  // namespace permitcheck::conformance
