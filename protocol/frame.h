// Pulsar binary-protocol frames: encoding and a decoder that never trusts its input.
//
// A simple command is [total size][command size][BaseCommand]; a command with a payload
// (MESSAGE) continues with [magic 0x0e01][crc32c][metadata size][MessageMetadata][payload].
// Sizes are big-endian uint32; the checksum covers everything after it. A native batch's
// payload is repeated [size][SingleMessageMetadata][message payload].
//
//   std::string bytes = encode_command(cmd);
//   FrameSplitter in;  in.append(bytes);
//   absl::StatusOr<std::optional<std::string>> f = in.next();   // one whole frame
//   absl::StatusOr<Frame> frame = decode_frame(**f);              // InvalidArgument on garbage
#ifndef PERMITCHECK_CONFORMANCE_FRAME_H_
#define PERMITCHECK_CONFORMANCE_FRAME_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/proto/pulsar_wire.pb.h"

namespace permitcheck::conformance {

// Largest frame accepted: Pulsar's default 5 MiB message plus room for the headers.
inline constexpr std::uint32_t kMaxFrameSize = 5 * 1024 * 1024 + 64 * 1024;
inline constexpr std::uint16_t kMagicCrc32c = 0x0e01;

// CRC-32C (Castagnoli), as Pulsar checksums metadata and payload.
std::uint32_t crc32c(std::string_view data);

// A decoded frame. For a payload command, `checksum_ok` tells whether the crc32c matched and
// `metadata_and_payload` holds the bytes after the checksum (not yet parsed: a client decides
// what a corrupt payload means, C7).
struct Frame {
  wire::BaseCommand command;
  bool has_payload = false;
  bool checksum_ok = true;
  std::string metadata_and_payload;
};

// Decodes one whole frame (starting with its total size). InvalidArgument naming the problem
// for anything malformed: sizes that disagree, a command that does not parse, a missing type,
// a bad magic number. Never crashes on any input.
absl::StatusOr<Frame> decode_frame(std::string_view frame);

// The same decoding without copying, for readers on a hot path (the capture reader, the tap):
// `metadata_and_payload` views `frame`, and a FrameView reused across calls reuses its
// command's allocations. REQUIRES: `frame` outlives the use of out->metadata_and_payload.
struct FrameView {
  wire::BaseCommand command;
  bool has_payload = false;
  bool checksum_ok = true;
  std::string_view metadata_and_payload;
};
absl::Status decode_frame_into(std::string_view frame, FrameView* out);

// A frame whose command is well formed but of a type this codec does not know: a Pulsar
// command the broker does not implement, to be answered with ERROR rather than taken for
// garbage. `request_id` is the command body's field 2 or else field 1 when it is a varint
// (where Pulsar's request commands keep it); none when the body has neither.
struct UnknownCommand {
  std::uint64_t type = 0;
  std::optional<std::uint64_t> request_id;
};
std::optional<UnknownCommand> unknown_command(std::string_view frame);

// Splits a byte stream into whole frames.
class FrameSplitter {
 public:
  void append(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame (with its size prefix), nullopt if more bytes are needed, or
  // InvalidArgument if the announced size is below 4 or above kMaxFrameSize.
  absl::StatusOr<std::optional<std::string>> next();
  std::size_t buffered() const { return buffer_.size() - offset_; }

  // Zero-copy splitting: calls `on_frame(std::string_view frame)` for every whole frame of the
  // bytes buffered so far followed by `bytes`, in order. Frames wholly inside `bytes` are
  // viewed where they are; only a frame begun earlier and an incomplete tail are copied. A
  // frame's view is valid during its call. `on_frame` returns false to stop (the rest of
  // `bytes` is dropped). InvalidArgument, as next(), for a size outside 4..kMaxFrameSize.
  template <typename F>
  absl::Status split(std::string_view bytes, F&& on_frame);

 private:
  static absl::Status bad_size(std::uint32_t total);
  static std::uint32_t size_at(const char* p) {
    return (std::uint32_t{static_cast<unsigned char>(p[0])} << 24) |
           (std::uint32_t{static_cast<unsigned char>(p[1])} << 16) |
           (std::uint32_t{static_cast<unsigned char>(p[2])} << 8) |
           std::uint32_t{static_cast<unsigned char>(p[3])};
  }
  std::string buffer_;
  std::size_t offset_ = 0;
};

template <typename F>
absl::Status FrameSplitter::split(std::string_view bytes, F&& on_frame) {
  // First the frames that begin in the buffer, topped up from `bytes` as they need.
  while (offset_ < buffer_.size()) {
    auto top_up = [&](std::size_t want) {
      const std::size_t have = buffer_.size() - offset_;
      if (have >= want) return true;
      const std::size_t take = std::min(want - have, bytes.size());
      buffer_.append(bytes.data(), take);
      bytes.remove_prefix(take);
      return have + take >= want;
    };
    if (!top_up(4)) return absl::OkStatus();
    const std::uint32_t total = size_at(buffer_.data() + offset_);
    if (total < 4 || total > kMaxFrameSize) return bad_size(total);
    buffer_.reserve(offset_ + total + 4);  // one allocation for a frame spanning many reads
    if (!top_up(std::size_t{total} + 4)) return absl::OkStatus();
    const std::string_view frame(buffer_.data() + offset_, std::size_t{total} + 4);
    offset_ += frame.size();
    if (!on_frame(frame)) return absl::OkStatus();
  }
  buffer_.clear();
  offset_ = 0;
  // Then the frames wholly inside `bytes`, in place.
  while (bytes.size() >= 4) {
    const std::uint32_t total = size_at(bytes.data());
    if (total < 4 || total > kMaxFrameSize) return bad_size(total);
    if (bytes.size() < std::size_t{total} + 4) break;
    const std::string_view frame = bytes.substr(0, std::size_t{total} + 4);
    bytes.remove_prefix(frame.size());
    if (!on_frame(frame)) return absl::OkStatus();
  }
  buffer_.assign(bytes.data(), bytes.size());
  return absl::OkStatus();
}

// [total][size][command].
std::string encode_command(const wire::BaseCommand& command);

// A MESSAGE frame. `metadata` is the serialized MessageMetadata (any bytes: a scenario may
// send unreadable metadata); the checksum is computed, then flipped when `corrupt_checksum`.
std::string encode_message(const wire::BaseCommand& command, std::string_view metadata,
                           std::string_view payload, bool corrupt_checksum = false);

// One message of a native batch.
struct BatchMessage {
  wire::SingleMessageMetadata metadata;
  std::string payload;
};

// The batch payload: repeated [size][SingleMessageMetadata][payload].
std::string encode_batch(const std::vector<BatchMessage>& messages);

// Splits metadata_and_payload into the MessageMetadata and the payload. InvalidArgument when
// the metadata size is out of bounds or the metadata does not parse.
struct MetadataAndPayload {
  wire::MessageMetadata metadata;
  std::string payload;
};
absl::StatusOr<MetadataAndPayload> parse_metadata_and_payload(std::string_view bytes);

// Parses the first `count` messages of a batch payload. Stops at the first message that does
// not parse; `failed_at` is its index then.
struct BatchParse {
  std::vector<BatchMessage> messages;
  std::optional<int> failed_at;
  int trailing_messages = 0;  // well-formed messages found after the first `count`
};
BatchParse parse_batch(std::string_view payload, int count);

}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_FRAME_H_
