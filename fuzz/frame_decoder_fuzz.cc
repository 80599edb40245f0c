// libFuzzer target: the Pulsar frame decoder (protocol/frame.h). Whatever
// bytes a client sends, splitting, decoding and parsing payloads must return a status, never
// crash, hang or read out of bounds. And the hand decoder of MESSAGE, ACK, FLOW and the batch
// size (protocol/hot_command.h) never takes bytes protobuf would read otherwise: a
// disagreement aborts.
//
// Built by fuzz/CMakeLists.txt (which generates the protocol code) with clang; ci/fuzz runs it:
//   cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPERMITCHECK_FUZZ=ON
//   cmake --build build-fuzz --target frame_decoder_fuzz
//   build-fuzz/frame_decoder_fuzz -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <cstdlib>

#include "protocol/frame.h"
#include "protocol/hot_command.h"

namespace {

namespace protocol = permitcheck::protocol;

// `bytes` as a BaseCommand and as a MessageMetadata: what the hand decoder takes, protobuf
// parses to the same values.
void hot_agrees_with_protobuf(std::string_view bytes) {
  protocol::HotCommand hot;
  if (protocol::decode_hot_command(bytes, &hot)) {
    permitcheck::wire::BaseCommand parsed;
    protocol::HotCommand expected;
    if (!parsed.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
        !parsed.has_type() || !protocol::hot_command_from(parsed, &expected) || !hot.same_as(expected)) {
      std::abort();
    }
  }
  if (const std::optional<std::int32_t> b = protocol::hot_batch_size(bytes)) {
    permitcheck::wire::MessageMetadata parsed;
    if (!parsed.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
        parsed.num_messages_in_batch() != *b) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  hot_agrees_with_protobuf(bytes);
  if (size > 0) hot_agrees_with_protobuf(bytes.substr(1));
  protocol::FrameSplitter splitter;
  splitter.append(bytes);
  for (int i = 0; i < 64; ++i) {
    auto next = splitter.next();
    if (!next.ok() || !next->has_value()) break;
    auto frame = protocol::decode_frame(**next);
    if (!frame.ok()) (void)protocol::unknown_command(**next);
    if (!frame.ok() || !frame->has_payload) continue;
    auto mp = protocol::parse_metadata_and_payload(frame->metadata_and_payload);
    if (!mp.ok()) continue;
    const int count = mp->metadata.num_messages_in_batch();
    (void)protocol::parse_batch(mp->payload, count > 0 && count < 4096 ? count : 1);
  }
  (void)protocol::decode_frame(bytes);
  // The zero-copy splitter, streaming every payload frame over 32 bytes, fed in pieces whose
  // sizes the first byte picks: each frame (or streamed head) decodes to a status.
  protocol::FrameSplitter streaming;
  streaming.stream_payloads_above(32);
  protocol::FrameView view;
  view.decode_hot = bytes.size() % 2 == 0;  // by hand or by protobuf, both never crash
  const std::size_t piece = bytes.empty() ? 1 : 1 + static_cast<unsigned char>(bytes[0]) % 64;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    const absl::Status s = streaming.split(
        bytes.substr(at, piece),
        [&](std::string_view frame, const protocol::StreamedPayload* streamed) {
          (void)protocol::decode_frame_into(frame, &view, streamed);
          return true;
        });
    if (!s.ok()) break;
  }
  return 0;
}
