#include "protocol/frame.h"

#include <array>
#include <cstring>

#include "google/protobuf/unknown_field_set.h"

#include "absl/strings/str_cat.h"

namespace permitcheck::protocol {
namespace {

std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

std::uint32_t read_u32(std::string_view b, std::size_t at) {
  return (std::uint32_t{static_cast<unsigned char>(b[at])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(b[at + 1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(b[at + 2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(b[at + 3])};
}

void put_u32(std::string* out, std::uint32_t v) {
  out->push_back(static_cast<char>(v >> 24));
  out->push_back(static_cast<char>(v >> 16));
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}

#if defined(__x86_64__)
// a * b modulo the CRC-32C polynomial, bit-reflected as the CRC register is (bit 31 holds x^0).
std::uint32_t multiply_mod_p(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (int i = 0; i < 32; ++i, a <<= 1) {
    if (a & 0x80000000u) product ^= b;
    b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;  // b * x
  }
  return product;
}

// x^(8n) modulo the polynomial: what the register is multiplied by as n zero bytes pass.
std::uint32_t x_to_the_8n(std::size_t n) {
  std::uint32_t result = 0x80000000u, power = 0x00800000u;  // 1 and x^8
  for (; n > 0; n >>= 1, power = multiply_mod_p(power, power)) {
    if (n & 1) result = multiply_mod_p(result, power);
  }
  return result;
}

// Multiplying a register by one fixed power of x (a shift past n zero bytes), by table: the
// product is linear in the register, so it is the xor of one entry per register byte.
struct ShiftTable {
  explicit ShiftTable(std::size_t n) {
    const std::uint32_t power = x_to_the_8n(n);
    for (std::uint32_t k = 0; k < 4; ++k) {
      for (std::uint32_t b = 0; b < 256; ++b) t[k][b] = multiply_mod_p(b << (8 * k), power);
    }
  }
  std::uint32_t operator()(std::uint32_t c) const {
    return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24];
  }
  std::uint32_t t[4][256];
};

// Three crc32 streams over three adjacent blocks of `kBlock` bytes, joined: the register of A
// followed by B is reg(A) * x^(8|B|) + reg(B) from zero. Advances p and n past them.
template <std::size_t kBlock, typename Join>
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_three_streams(
    std::uint32_t c, const char*& p, std::size_t& n, const Join& join) {
  for (; n >= 3 * kBlock; p += 3 * kBlock, n -= 3 * kBlock) {
    std::uint64_t a = c, b = 0, d = 0;
    for (std::size_t i = 0; i < kBlock; i += 8) {
      std::uint64_t wa, wb, wd;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kBlock + i, 8);
      std::memcpy(&wd, p + 2 * kBlock + i, 8);
      a = __builtin_ia32_crc32di(a, wa);
      b = __builtin_ia32_crc32di(b, wb);
      d = __builtin_ia32_crc32di(d, wd);
    }
    c = join(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)) ^
        static_cast<std::uint32_t>(d);
  }
  return c;
}

// SSE 4.2's crc32 instruction computes CRC-32C, 8 bytes a step (a capture checksums every
// message payload it reads). One step waits for the last, so inputs of a few hundred bytes
// and more (a segment's share of a payload is at most 1448) run three streams at once: 1 KiB
// blocks joined by multiplying, then 128-byte blocks joined by table (the join must stay
// cheap next to 48 steps).
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t init,
                                                              std::string_view data) {
  constexpr std::size_t kLong = 1024, kShort = 128;
  static const std::uint32_t one_long = x_to_the_8n(kLong), two_long = x_to_the_8n(2 * kLong);
  static const ShiftTable one_short(kShort), two_short(2 * kShort);
  const char* p = data.data();
  std::size_t n = data.size();
  std::uint32_t c = crc32c_three_streams<kLong>(init, p, n, [](std::uint32_t a, std::uint32_t b) {
    return multiply_mod_p(a, two_long) ^ multiply_mod_p(b, one_long);
  });
  c = crc32c_three_streams<kShort>(c, p, n, [](std::uint32_t a, std::uint32_t b) {
    return two_short(a) ^ one_short(b);
  });
  std::uint64_t crc = c;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    crc = __builtin_ia32_crc32di(crc, word);
  }
  c = static_cast<std::uint32_t>(crc);
  for (; n > 0; ++p, --n) c = __builtin_ia32_crc32qi(c, static_cast<unsigned char>(*p));
  return c ^ 0xFFFFFFFFu;
}
#endif

}  // namespace

std::uint32_t crc32c_extend(std::uint32_t crc, std::string_view data) {
  const std::uint32_t init = crc ^ 0xFFFFFFFFu;
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return crc32c_sse42(init, data);
#endif
  static const std::array<std::uint32_t, 256> table = make_crc_table();
  std::uint32_t c = init;
  for (unsigned char ch : data) c = table[(c ^ ch) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::uint32_t crc32c(std::string_view data) { return crc32c_extend(0, data); }

absl::Status FrameSplitter::bad_size(std::uint32_t total) {
  return absl::InvalidArgumentError(absl::StrCat("frame size ", total, " outside 4..",
                                                 kMaxFrameSize));
}

absl::StatusOr<Frame> decode_frame(std::string_view frame) {
  FrameView view;
  if (absl::Status s = decode_frame_into(frame, &view); !s.ok()) return s;
  Frame out;
  out.command = std::move(view.command);
  out.has_payload = view.has_payload;
  out.checksum_ok = view.checksum_ok;
  out.metadata_and_payload = std::string(view.metadata_and_payload);
  return out;
}

absl::Status decode_frame_into(std::string_view frame, FrameView* out,
                               const StreamedPayload* streamed) {
  out->has_payload = false;
  out->hot_decoded = false;
  out->checksum_ok = true;
  out->payload_streamed = streamed != nullptr;
  out->metadata_and_payload = {};
  if (frame.size() < 8) {
    return absl::InvalidArgumentError(absl::StrCat("frame of ", frame.size(),
                                                   " bytes is shorter than its 8-byte header"));
  }
  const std::uint32_t total = read_u32(frame, 0);
  if (total != (streamed ? streamed->frame_size : frame.size()) - 4) {
    return absl::InvalidArgumentError(absl::StrCat("frame announces ", total,
                                                   " bytes after its size but holds ",
                                                   frame.size() - 4));
  }
  if (total > kMaxFrameSize) {
    return absl::InvalidArgumentError(absl::StrCat("frame of ", total, " bytes exceeds the ",
                                                   kMaxFrameSize, "-byte limit"));
  }
  const std::uint32_t command_size = read_u32(frame, 4);
  if (command_size > frame.size() - 8) {  // total - 4, but for a streamed frame's head
    return absl::InvalidArgumentError(absl::StrCat("command size ", command_size,
                                                   " exceeds the frame's ", total - 4,
                                                   " remaining bytes"));
  }
  out->hot_decoded = out->decode_hot &&
                     decode_hot_command(frame.substr(8, command_size), &out->hot);
  if (!out->hot_decoded) {
    if (!out->command.ParseFromArray(frame.data() + 8, static_cast<int>(command_size))) {
      return absl::InvalidArgumentError(
          absl::StrCat("BaseCommand of ", command_size, " bytes does not parse"));
    }
    if (!out->command.has_type()) return absl::InvalidArgumentError("BaseCommand without a type");
  }
  std::string_view rest = frame.substr(8 + command_size);
  if (rest.empty()) return absl::OkStatus();
  if (rest.size() < 6) {
    return absl::InvalidArgumentError(absl::StrCat(rest.size(),
                                                   rest.size() == 1 ? " byte" : " bytes",
                                                   " after the command: too short for magic "
                                                   "and checksum"));
  }
  const std::uint16_t magic = static_cast<std::uint16_t>(
      (static_cast<unsigned char>(rest[0]) << 8) | static_cast<unsigned char>(rest[1]));
  if (magic != kMagicCrc32c) {
    return absl::InvalidArgumentError(absl::StrCat("payload magic 0x", absl::Hex(magic),
                                                   " is not 0x0e01"));
  }
  const std::uint32_t checksum = read_u32(rest, 2);
  out->has_payload = true;
  out->metadata_and_payload = rest.substr(6);
  out->checksum_ok =
      (streamed ? streamed->crc : crc32c(out->metadata_and_payload)) == checksum;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> FrameSplitter::next() {
  const std::size_t avail = buffer_.size() - offset_;
  if (avail < 4) return std::optional<std::string>();
  const std::uint32_t total = read_u32(buffer_, offset_);
  if (total < 4 || total > kMaxFrameSize) return bad_size(total);
  if (avail < std::size_t{total} + 4) return std::optional<std::string>();
  std::string frame = buffer_.substr(offset_, std::size_t{total} + 4);
  offset_ += std::size_t{total} + 4;
  if (offset_ > 65536 && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return std::optional<std::string>(std::move(frame));
}

std::string encode_command(const wire::BaseCommand& command) {
  const std::string body = command.SerializeAsString();
  std::string out;
  out.reserve(body.size() + 8);
  put_u32(&out, static_cast<std::uint32_t>(body.size() + 4));
  put_u32(&out, static_cast<std::uint32_t>(body.size()));
  out += body;
  return out;
}

std::string encode_message(const wire::BaseCommand& command, std::string_view metadata,
                           std::string_view payload, bool corrupt_checksum) {
  const std::string body = command.SerializeAsString();
  std::string checked;
  put_u32(&checked, static_cast<std::uint32_t>(metadata.size()));
  checked.append(metadata);
  checked.append(payload);
  std::uint32_t crc = crc32c(checked);
  if (corrupt_checksum) crc ^= 0x5A5A5A5Au;
  std::string out;
  put_u32(&out, static_cast<std::uint32_t>(4 + body.size() + 2 + 4 + checked.size()));
  put_u32(&out, static_cast<std::uint32_t>(body.size()));
  out += body;
  out.push_back(static_cast<char>(kMagicCrc32c >> 8));
  out.push_back(static_cast<char>(kMagicCrc32c & 0xFF));
  put_u32(&out, crc);
  out += checked;
  return out;
}

std::string encode_batch(const std::vector<BatchMessage>& messages) {
  std::string out;
  for (const BatchMessage& m : messages) {
    const std::string meta = m.metadata.SerializeAsString();
    put_u32(&out, static_cast<std::uint32_t>(meta.size()));
    out += meta;
    out += m.payload;
  }
  return out;
}

absl::StatusOr<MetadataAndPayload> parse_metadata_and_payload(std::string_view bytes) {
  if (bytes.size() < 4) return absl::InvalidArgumentError("no room for the metadata size");
  const std::uint32_t size = read_u32(bytes, 0);
  if (size > bytes.size() - 4) {
    return absl::InvalidArgumentError(absl::StrCat("metadata size ", size, " exceeds the ",
                                                   bytes.size() - 4, " bytes left"));
  }
  MetadataAndPayload out;
  if (!out.metadata.ParseFromArray(bytes.data() + 4, static_cast<int>(size))) {
    return absl::InvalidArgumentError(absl::StrCat("MessageMetadata of ", size,
                                                   " bytes does not parse"));
  }
  out.payload = std::string(bytes.substr(4 + size));
  return out;
}

BatchParse parse_batch(std::string_view payload, int count) {
  BatchParse out;
  std::size_t at = 0;
  auto one = [&](BatchMessage* m) {
    if (payload.size() - at < 4) return false;
    const std::uint32_t size = read_u32(payload, at);
    if (size > payload.size() - at - 4) return false;
    if (!m->metadata.ParseFromArray(payload.data() + at + 4, static_cast<int>(size))) return false;
    const std::int64_t body = m->metadata.payload_size();
    if (body < 0 || static_cast<std::uint64_t>(body) > payload.size() - at - 4 - size) return false;
    m->payload = std::string(payload.substr(at + 4 + size, static_cast<std::size_t>(body)));
    at += 4 + size + static_cast<std::size_t>(body);
    return true;
  };
  for (int i = 0; i < count; ++i) {
    BatchMessage m;
    if (!one(&m)) {
      out.failed_at = i;
      return out;
    }
    out.messages.push_back(std::move(m));
  }
  BatchMessage extra;
  while (at < payload.size() && one(&extra)) ++out.trailing_messages;
  return out;
}

std::optional<std::uint64_t> peek_command_type(std::string_view frame) {
  if (frame.size() < 9 || static_cast<unsigned char>(frame[8]) != 0x08) return std::nullopt;
  std::uint64_t v = 0;
  for (std::size_t i = 9, shift = 0; i < frame.size() && shift < 64; ++i, shift += 7) {
    const auto b = static_cast<unsigned char>(frame[i]);
    v |= std::uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
  return std::nullopt;
}

std::optional<UnknownCommand> unknown_command(std::string_view frame) {
  if (frame.size() < 8) return std::nullopt;
  const std::uint32_t command_size = read_u32(frame, 4);
  if (command_size > frame.size() - 8) return std::nullopt;
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromArray(frame.data() + 8, static_cast<int>(command_size))) {
    return std::nullopt;
  }
  std::optional<UnknownCommand> out;
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& f = fields.field(i);
    if (f.number() == 1 && f.type() == google::protobuf::UnknownField::TYPE_VARINT) {
      out = UnknownCommand{.type = f.varint(), .request_id = std::nullopt};
    }
  }
  if (!out || wire::BaseCommand::Type_IsValid(static_cast<int>(out->type))) return std::nullopt;
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& f = fields.field(i);
    if (static_cast<std::uint64_t>(f.number()) != out->type ||
        f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    google::protobuf::UnknownFieldSet body;
    if (!body.ParseFromString(f.length_delimited())) break;
    for (int wanted : {2, 1}) {
      for (int j = 0; j < body.field_count() && !out->request_id; ++j) {
        if (body.field(j).number() == wanted &&
            body.field(j).type() == google::protobuf::UnknownField::TYPE_VARINT) {
          out->request_id = body.field(j).varint();
        }
      }
    }
  }
  return out;
}

}  // namespace permitcheck::protocol
