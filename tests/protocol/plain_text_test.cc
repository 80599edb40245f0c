// The frame decoder's errors in plain words (issue 35): "1 byte after the command", "3 bytes
// after the command", never "byte(s)".
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "protocol/frame.h"

namespace permitcheck::protocol {
namespace {

// A Flow frame with `extra` bytes after its command, its size field counting them.
std::string flow_with_trailing_bytes(std::size_t extra) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::FLOW);
  c.mutable_flow()->set_consumer_id(1);
  c.mutable_flow()->set_messagepermits(10);
  std::string frame = encode_command(c) + std::string(extra, '\0');
  const auto total = static_cast<std::uint32_t>(frame.size() - 4);
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((total >> (24 - 8 * i)) & 0xFF);
  return frame;
}

TEST(ProtocolPlainText, BytesAfterTheCommandAreCountedInPlainWords) {
  const absl::StatusOr<Frame> one = decode_frame(flow_with_trailing_bytes(1));
  ASSERT_FALSE(one.ok());
  EXPECT_THAT(std::string(one.status().message()),
              ::testing::HasSubstr("1 byte after the command"));
  const absl::StatusOr<Frame> three = decode_frame(flow_with_trailing_bytes(3));
  ASSERT_FALSE(three.ok());
  EXPECT_THAT(std::string(three.status().message()),
              ::testing::HasSubstr("3 bytes after the command"));
}

}  // namespace
}  // namespace permitcheck::protocol
