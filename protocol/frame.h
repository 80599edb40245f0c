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
//
// Guarantees: no decoder crashes or reads out of bounds on any input; decoding a frame is
// O(its size); a FrameSplitter holds at most one frame (kMaxFrameSize) plus the bytes of one
// append, or only a streamed frame's head. Namespace permitcheck::protocol; the messages of
// our .proto are permitcheck::wire (proto/pulsar_wire.proto).
#ifndef PERMITCHECK_PROTOCOL_FRAME_H_
#define PERMITCHECK_PROTOCOL_FRAME_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "protocol/hot_command.h"
#include "protocol/proto/pulsar_wire.pb.h"

namespace permitcheck::protocol {

// Largest frame accepted: Pulsar's default 5 MiB message plus room for the headers.
inline constexpr std::uint32_t kMaxFrameSize = 5 * 1024 * 1024 + 64 * 1024;
inline constexpr std::uint16_t kMagicCrc32c = 0x0e01;

// CRC-32C (Castagnoli), as Pulsar checksums metadata and payload.
std::uint32_t crc32c(std::string_view data);
// The CRC-32C of bytes A followed by `data`, given crc = crc32c(A): crc32c(A + B) ==
// crc32c_extend(crc32c(A), B), and crc32c(B) == crc32c_extend(0, B).
std::uint32_t crc32c_extend(std::uint32_t crc, std::string_view data);

// A payload frame that FrameSplitter streamed (see stream_payloads_above): its head (size,
// command, magic, checksum, metadata size and metadata) was kept, its payload only checksummed.
struct StreamedPayload {
  std::uint32_t frame_size = 0;  // the whole frame's, with its 4-byte size prefix
  std::uint32_t crc = 0;         // crc32c of everything after the checksum field
};

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
// With `streamed`, `frame` is the head of a streamed frame: metadata_and_payload then holds
// [metadata size][MessageMetadata] only, the checksum is judged by streamed->crc.
struct FrameView {
  wire::BaseCommand command;  // not filled when hot_decoded
  // Set by the caller: a MESSAGE, ACK or FLOW of a shape protocol/hot_command.h takes is then
  // decoded by hand into `hot` (hot_decoded), anything else by protobuf into `command`.
  bool decode_hot = false;
  bool hot_decoded = false;
  HotCommand hot;
  bool has_payload = false;
  bool checksum_ok = true;
  bool payload_streamed = false;  // metadata_and_payload lacks the payload (streamed)
  std::string_view metadata_and_payload;
};
absl::Status decode_frame_into(std::string_view frame, FrameView* out,
                               const StreamedPayload* streamed = nullptr);

// A frame whose command is well formed but of a type this codec does not know: a Pulsar
// command the broker does not implement, to be answered with ERROR rather than taken for
// garbage. `request_id` is the command body's field 2 or else field 1 when it is a varint
// (where Pulsar's request commands keep it); none when the body has neither.
struct UnknownCommand {
  std::uint64_t type = 0;
  std::optional<std::uint64_t> request_id;
};
std::optional<UnknownCommand> unknown_command(std::string_view frame);

// A big-endian uint32 at the start of `bytes` (the frame's size fields).
// REQUIRES: bytes.size() >= 4.
inline std::uint32_t read_be32(std::string_view bytes) {
  return (std::uint32_t{static_cast<unsigned char>(bytes[0])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(bytes[1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(bytes[2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(bytes[3])};
}

// The command type of a whole frame without parsing its command: field 1 of the BaseCommand,
// which Pulsar serializes first. Works for types our .proto does not know (protobuf would
// reject those). nullopt when the frame is shorter than 9 bytes or its command does not start
// with the type. O(1).
std::optional<std::uint64_t> peek_command_type(std::string_view frame);

// Splits a byte stream into whole frames.
class FrameSplitter {
 public:
  void append(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame (with its size prefix), nullopt if more bytes are needed, or
  // InvalidArgument if the announced size is below 4 or above kMaxFrameSize.
  absl::StatusOr<std::optional<std::string>> next();
  std::size_t buffered() const { return buffer_.size() - offset_; }
  // Inside a frame: some of its bytes came, not all (buffered, or a streamed payload going on).
  bool in_frame() const { return buffered() > 0 || streaming_; }

  // Zero-copy splitting: calls `on_frame(std::string_view frame, const StreamedPayload* s)`
  // for every whole frame of the bytes buffered so far followed by `bytes`, in order (s is
  // null but for a streamed frame). Frames wholly inside `bytes` are viewed where they are;
  // only a frame begun earlier and an incomplete tail are copied. A frame's view is valid
  // during its call. `on_frame` returns false to stop (the rest of `bytes` is dropped).
  // InvalidArgument, as next(), for a size outside 4..kMaxFrameSize.
  template <typename F>
  absl::Status split(std::string_view bytes, F&& on_frame);

  // From now on, split() streams a payload frame of more than `n` bytes that begins in one
  // call and ends in a later one: it keeps the head (up to the end of the metadata) and only
  // checksums the payload as it passes, so such a frame costs no copy and no buffer of its
  // size. 0 (the default): never. A frame whose head is malformed is kept whole (decoding
  // then says why).
  void stream_payloads_above(std::size_t n) { stream_above_ = n; }

 private:
  static absl::Status bad_size(std::uint32_t total);
  static std::uint32_t size_at(const char* p) {
    return (std::uint32_t{static_cast<unsigned char>(p[0])} << 24) |
           (std::uint32_t{static_cast<unsigned char>(p[1])} << 16) |
           (std::uint32_t{static_cast<unsigned char>(p[2])} << 8) |
           std::uint32_t{static_cast<unsigned char>(p[3])};
  }
  // For the frame of `want` bytes at offset_ (its first 8 bytes, and fewer than `want`,
  // buffered): the length of its head (then buffered) when it can stream, 0 when it is kept
  // whole; -1 when more bytes are needed first.
  template <typename TopUp>
  std::int64_t stream_head(std::size_t want, TopUp& top_up);
  std::size_t stream_above_ = 0;
  bool streaming_ = false;
  std::size_t stream_left_ = 0;   // payload bytes of the streamed frame still to come
  std::size_t head_size_ = 0;     // its head, buffered at offset_
  StreamedPayload streamed_;
  std::string buffer_;
  std::size_t offset_ = 0;
};

template <typename TopUp>
std::int64_t FrameSplitter::stream_head(std::size_t want, TopUp& top_up) {
  const std::size_t command = size_at(buffer_.data() + offset_ + 4);
  const std::size_t fixed = 8 + command + 6 + 4;  // ... magic, checksum, metadata size
  if (command > want - 8 || fixed > want) return 0;
  if (!top_up(fixed)) return -1;
  const char* f = buffer_.data() + offset_;
  if (static_cast<unsigned char>(f[8 + command]) != (kMagicCrc32c >> 8) ||
      static_cast<unsigned char>(f[8 + command + 1]) != (kMagicCrc32c & 0xFF)) {
    return 0;
  }
  const std::size_t head = fixed + size_at(f + 8 + command + 6);
  if (head > want) return 0;
  if (!top_up(head)) return -1;
  return static_cast<std::int64_t>(head);
}

template <typename F>
absl::Status FrameSplitter::split(std::string_view bytes, F&& on_frame) {
  auto top_up = [&](std::size_t want) {
    const std::size_t have = buffer_.size() - offset_;
    if (have >= want) return true;
    const std::size_t take = std::min(want - have, bytes.size());
    buffer_.append(bytes.data(), take);
    bytes.remove_prefix(take);
    return have + take >= want;
  };
  // First the frames that begin in the buffer, topped up from `bytes` as they need.
  while (streaming_ || offset_ < buffer_.size()) {
    if (streaming_) {
      const std::size_t take = std::min(stream_left_, bytes.size());
      streamed_.crc = crc32c_extend(streamed_.crc, bytes.substr(0, take));
      bytes.remove_prefix(take);
      stream_left_ -= take;
      if (stream_left_ > 0) return absl::OkStatus();
      streaming_ = false;
      const std::string_view head(buffer_.data() + offset_, head_size_);
      offset_ += head_size_;
      if (!on_frame(head, &streamed_)) return absl::OkStatus();
      continue;
    }
    if (!top_up(4)) return absl::OkStatus();
    const std::uint32_t total = size_at(buffer_.data() + offset_);
    if (total < 4 || total > kMaxFrameSize) return bad_size(total);
    const std::size_t want = std::size_t{total} + 4;
    if (stream_above_ > 0 && want > stream_above_ && buffer_.size() - offset_ < want) {
      if (!top_up(8)) return absl::OkStatus();
      const std::int64_t head = stream_head(want, top_up);
      if (head < 0) return absl::OkStatus();
      if (head > 0) {
        // Bytes buffered past the head (a tail left by the last call) are checksummed and
        // dropped like the rest of the payload.
        const std::size_t have = buffer_.size() - offset_;
        const std::size_t checked = 8 + size_at(buffer_.data() + offset_ + 4) + 6;
        streaming_ = true;
        head_size_ = static_cast<std::size_t>(head);
        stream_left_ = want - have;
        streamed_ = StreamedPayload{
            .frame_size = static_cast<std::uint32_t>(want),
            .crc = crc32c(std::string_view(buffer_.data() + offset_ + checked, have - checked))};
        buffer_.resize(offset_ + head_size_);
        continue;
      }
    }
    buffer_.reserve(offset_ + want);  // one allocation for a frame spanning many reads
    if (!top_up(want)) return absl::OkStatus();
    const std::string_view frame(buffer_.data() + offset_, want);
    offset_ += frame.size();
    if (!on_frame(frame, static_cast<const StreamedPayload*>(nullptr))) return absl::OkStatus();
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
    if (!on_frame(frame, static_cast<const StreamedPayload*>(nullptr))) return absl::OkStatus();
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

}  // namespace permitcheck::protocol

#endif  // PERMITCHECK_PROTOCOL_FRAME_H_
