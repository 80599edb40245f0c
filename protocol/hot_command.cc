#include "protocol/hot_command.h"

namespace permitcheck::protocol {
namespace {

constexpr std::uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

// Protobuf wire-format reading that refuses whatever protobuf might read differently: a
// varint's 10th byte above 1 (protobuf drops the bits), a tag of field 0, a group.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes)
      : p_(reinterpret_cast<const std::uint8_t*>(bytes.data())), end_(p_ + bytes.size()) {}
  bool done() const { return p_ == end_; }

  bool varint(std::uint64_t* v) {
    if (p_ != end_ && *p_ < 0x80) {  // the common case: one byte
      *v = *p_++;
      return true;
    }
    std::uint64_t r = 0;
    for (int i = 0; i < 10 && p_ != end_; ++i) {
      const std::uint8_t b = *p_++;
      if (i == 9 && b > 1) return false;
      r |= std::uint64_t{b & 0x7Fu} << (7 * i);
      if (b < 0x80) {
        *v = r;
        return true;
      }
    }
    return false;
  }
  bool tag(std::uint32_t* field, std::uint32_t* wire_type) {
    const std::uint8_t* start = p_;
    std::uint64_t t = 0;
    if (!varint(&t) || p_ - start > 5 || t > 0xFFFFFFFFu) return false;
    *field = static_cast<std::uint32_t>(t >> 3);
    *wire_type = static_cast<std::uint32_t>(t & 7);
    return *field != 0 && (*wire_type == kVarint || *wire_type == kFixed64 ||
                           *wire_type == kLengthDelimited || *wire_type == kFixed32);
  }
  bool bytes(std::string_view* out) {
    std::uint64_t n = 0;
    if (!varint(&n) || n > static_cast<std::uint64_t>(end_ - p_)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), static_cast<std::size_t>(n));
    p_ += n;
    return true;
  }
  // Skips a field of an unknown number, as protobuf keeps it aside.
  bool skip(std::uint32_t wire_type) {
    std::uint64_t v = 0;
    std::string_view b;
    switch (wire_type) {
      case kVarint: return varint(&v);
      case kLengthDelimited: return bytes(&b);
      case kFixed64: return advance(8);
      case kFixed32: return advance(4);
      default: return false;
    }
  }

 private:
  bool advance(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) return false;
    p_ += n;
    return true;
  }
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// A uint32 field's value, when protobuf would read the same (no truncation).
bool as_uint32(std::uint64_t v, std::uint32_t* out) {
  if (v > 0xFFFFFFFFu) return false;
  *out = static_cast<std::uint32_t>(v);
  return true;
}
// An int32 field's value: non-negative, or negative sign-extended to 64 bits.
bool as_int32(std::uint64_t v, std::int32_t* out) {
  const auto s = static_cast<std::int64_t>(v);
  if (s < INT32_MIN || s > INT32_MAX) return false;
  *out = static_cast<std::int32_t>(s);
  return true;
}

// Appends a repeated int64 field, unpacked (one varint) or packed.
bool repeated_int64(WireReader& r, std::uint32_t wire_type, std::vector<std::int64_t>* out) {
  std::uint64_t v = 0;
  if (wire_type == kVarint) {
    if (!r.varint(&v)) return false;
    out->push_back(static_cast<std::int64_t>(v));
    return true;
  }
  std::string_view packed;
  if (wire_type != kLengthDelimited || !r.bytes(&packed)) return false;
  WireReader p(packed);
  while (!p.done()) {
    if (!p.varint(&v)) return false;
    out->push_back(static_cast<std::int64_t>(v));
  }
  return true;
}

bool message_id(std::string_view bytes, HotMessageId* out) {
  WireReader r(bytes);
  out->batch_index = -1;
  out->ack_set.clear();
  std::uint32_t seen = 0;
  while (!r.done()) {
    std::uint32_t field = 0, wt = 0;
    std::uint64_t v = 0;
    std::int32_t i32 = 0;
    if (!r.tag(&field, &wt)) return false;
    if (field == 5) {
      if (!repeated_int64(r, wt, &out->ack_set)) return false;
      continue;
    }
    if (field > 6 || wt != kVarint || (seen & (1u << field)) || !r.varint(&v)) return false;
    seen |= 1u << field;
    switch (field) {
      case 1: out->ledger = v; break;
      case 2: out->entry = v; break;
      case 3:  // partition
      case 6:  // batch_size
        if (!as_int32(v, &i32)) return false;
        break;
      case 4:
        if (!as_int32(v, &out->batch_index)) return false;
        break;
    }
  }
  return (seen & 0b110) == 0b110;  // ledgerId and entryId are required
}

bool command_message(std::string_view bytes, HotCommand* out) {
  WireReader r(bytes);
  out->ack_set.clear();
  out->message_permits.reset();
  std::uint32_t seen = 0, u32 = 0;
  while (!r.done()) {
    std::uint32_t field = 0, wt = 0;
    std::uint64_t v = 0;
    if (!r.tag(&field, &wt)) return false;
    if (field == 4) {
      if (!repeated_int64(r, wt, &out->ack_set)) return false;
      continue;
    }
    if (field == 0 || field > 6 || (seen & (1u << field))) return false;
    seen |= 1u << field;
    if (field == 2) {
      std::string_view id;
      if (wt != kLengthDelimited || !r.bytes(&id) || !message_id(id, &out->message_id)) {
        return false;
      }
      continue;
    }
    if (wt != kVarint || !r.varint(&v)) return false;
    switch (field) {
      case 1: out->consumer_id = v; break;
      case 3:  // redelivery_count
        if (!as_uint32(v, &u32)) return false;
        break;
      case 5: break;  // consumer_epoch
      case 6:
        if (!as_uint32(v, &u32)) return false;
        out->message_permits = u32;
        break;
    }
  }
  return (seen & 0b110) == 0b110;  // consumer_id and message_id are required
}

bool command_ack(std::string_view bytes, HotCommand* out) {
  WireReader r(bytes);
  out->id_count = 0;
  out->validation_error.reset();
  std::uint32_t seen = 0;
  while (!r.done()) {
    std::uint32_t field = 0, wt = 0;
    std::uint64_t v = 0;
    if (!r.tag(&field, &wt)) return false;
    if (field == 3) {
      std::string_view id;
      if (wt != kLengthDelimited || !r.bytes(&id)) return false;
      if (out->id_count == out->ids.size()) out->ids.emplace_back();
      if (!message_id(id, &out->ids[out->id_count++])) return false;
      continue;
    }
    // 5 (properties) is left to protobuf, as is anything unknown.
    if ((field != 1 && field != 2 && field != 4 && field != 8) || (seen & (1u << field)) ||
        wt != kVarint || !r.varint(&v)) {
      return false;
    }
    seen |= 1u << field;
    switch (field) {
      case 1: out->consumer_id = v; break;
      case 2:
        if (!wire::CommandAck::AckType_IsValid(static_cast<int>(v)) || v > 1) return false;
        out->ack_type = static_cast<wire::CommandAck::AckType>(v);
        break;
      case 4:
        if (v > 4 || !wire::CommandAck::ValidationError_IsValid(static_cast<int>(v))) return false;
        out->validation_error = static_cast<wire::CommandAck::ValidationError>(v);
        break;
      case 8: break;  // request_id
    }
  }
  return (seen & 0b110) == 0b110;  // consumer_id and ack_type are required
}

bool command_flow(std::string_view bytes, HotCommand* out) {
  WireReader r(bytes);
  std::uint32_t seen = 0;
  while (!r.done()) {
    std::uint32_t field = 0, wt = 0;
    std::uint64_t v = 0;
    if (!r.tag(&field, &wt) || (field != 1 && field != 2) || (seen & (1u << field)) ||
        wt != kVarint || !r.varint(&v)) {
      return false;
    }
    seen |= 1u << field;
    if (field == 1) out->consumer_id = v;
    if (field == 2 && !as_uint32(v, &out->permits)) return false;
  }
  return seen == 0b110;
}

bool same_ids(const HotMessageId& a, const HotMessageId& b) { return a == b; }

void copy_id(const wire::MessageIdData& id, HotMessageId* out) {
  out->ledger = id.ledgerid();
  out->entry = id.entryid();
  out->batch_index = id.batch_index();
  out->ack_set.assign(id.ack_set().begin(), id.ack_set().end());
}

}  // namespace

bool HotCommand::same_as(const HotCommand& o) const {
  if (type != o.type || consumer_id != o.consumer_id) return false;
  switch (type) {
    case wire::BaseCommand::MESSAGE:
      return same_ids(message_id, o.message_id) && ack_set == o.ack_set &&
             message_permits == o.message_permits;
    case wire::BaseCommand::ACK:
      if (ack_type != o.ack_type || validation_error != o.validation_error ||
          id_count != o.id_count) {
        return false;
      }
      for (std::size_t i = 0; i < id_count; ++i) {
        if (!same_ids(ids[i], o.ids[i])) return false;
      }
      return true;
    case wire::BaseCommand::FLOW:
      return permits == o.permits;
    default:
      return true;
  }
}

bool decode_hot_command(std::string_view bytes, HotCommand* out) {
  WireReader r(bytes);
  std::optional<std::uint64_t> type;
  std::uint32_t body_field = 0;
  std::string_view body;
  while (!r.done()) {
    std::uint32_t field = 0, wt = 0;
    if (!r.tag(&field, &wt)) return false;
    if (field == 1 && wt == kVarint && !type) {
      std::uint64_t v = 0;
      if (!r.varint(&v)) return false;
      type = v;
    } else if ((field == 9 || field == 10 || field == 11) && wt == kLengthDelimited &&
               body_field == 0) {
      if (!r.bytes(&body)) return false;
      body_field = field;
    } else {
      return false;  // another command's field, a duplicate, an unknown field: protobuf's
    }
  }
  // The type's own body, and no other (BaseCommand's field numbers are its types').
  if (!type || body_field == 0 || *type != body_field) return false;
  out->type = static_cast<wire::BaseCommand::Type>(*type);
  switch (out->type) {
    case wire::BaseCommand::MESSAGE: return command_message(body, out);
    case wire::BaseCommand::ACK: return command_ack(body, out);
    case wire::BaseCommand::FLOW: return command_flow(body, out);
    default: return false;
  }
}

bool hot_command_from(const wire::BaseCommand& in, HotCommand* out) {
  out->type = in.type();
  switch (in.type()) {
    case wire::BaseCommand::MESSAGE: {
      const wire::CommandMessage& m = in.message();
      out->consumer_id = m.consumer_id();
      copy_id(m.message_id(), &out->message_id);
      out->ack_set.assign(m.ack_set().begin(), m.ack_set().end());
      out->message_permits.reset();
      if (m.has_message_permits()) out->message_permits = m.message_permits();
      return true;
    }
    case wire::BaseCommand::ACK: {
      const wire::CommandAck& a = in.ack();
      out->consumer_id = a.consumer_id();
      out->ack_type = a.ack_type();
      out->validation_error.reset();
      if (a.has_validation_error()) out->validation_error = a.validation_error();
      out->id_count = 0;
      for (const wire::MessageIdData& id : a.message_id()) {
        if (out->id_count == out->ids.size()) out->ids.emplace_back();
        copy_id(id, &out->ids[out->id_count++]);
      }
      return true;
    }
    case wire::BaseCommand::FLOW:
      out->consumer_id = in.flow().consumer_id();
      out->permits = in.flow().messagepermits();
      return true;
    default:
      return false;
  }
}

std::optional<std::int32_t> hot_batch_size(std::string_view metadata) {
  WireReader r(metadata);
  std::uint32_t seen = 0;
  std::int32_t b = 1;
  while (!r.done()) {
    std::uint32_t field = 0, wt = 0;
    std::uint64_t v = 0;
    std::string_view s;
    if (!r.tag(&field, &wt)) return std::nullopt;
    switch (field) {
      case 1:  // producer_name (proto2: no UTF-8 check)
        if (wt != kLengthDelimited || !r.bytes(&s)) return std::nullopt;
        break;
      case 2:  // sequence_id
      case 3:  // publish_time
      case 9:  // uncompressed_size
        if (wt != kVarint || !r.varint(&v)) return std::nullopt;
        if (field == 9 && v > 0xFFFFFFFFu) return std::nullopt;
        break;
      case 8:  // compression
        if (wt != kVarint || !r.varint(&v) || v > 4) return std::nullopt;
        break;
      case 11:
        if (wt != kVarint || (seen & (1u << 11)) || !r.varint(&v) || !as_int32(v, &b)) {
          return std::nullopt;
        }
        break;
      case 4:  // properties: KeyValue's required fields are protobuf's to check
        return std::nullopt;
      default:
        if (!r.skip(wt)) return std::nullopt;
        continue;
    }
    seen |= 1u << field;
  }
  if ((seen & 0b1110) != 0b1110) return std::nullopt;  // producer_name, sequence_id, publish_time
  return b;
}

}  // namespace permitcheck::protocol
