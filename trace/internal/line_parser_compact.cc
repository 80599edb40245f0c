// LineParser::compact_event: the reader's fastest path, a decoder of the compact form the
// writer writes ({"ev":"claim","cmd":7,"msg":3}: no whitespace, no escapes, ASCII strings,
// plain integers), straight from the line's bytes without a JSON parser. It accepts a strict
// subset of what event() accepts, with the same result, and declines everything else (the
// caller then takes the simdjson paths, which decide and give every diagnostic).
#include <array>
#include <memory>
#include <string>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/internal/line_parser.h"

namespace permitcheck::trace::internal {
namespace {

// Names recognised from their bytes in place: a key or `ev` name of at most 16 bytes is read
// as two little-endian words (the line's padding makes the 16 bytes readable), masked to its
// length, and compared with the one name of its hash slot. A slot two names share, or a name
// not in it, falls back to the schema's lookup (so the table can never give a wrong answer).
class WordNames {
 public:
  static constexpr int kAmbiguous = -2;

  template <typename NameOf>
  WordNames(std::size_t count, NameOf name_of) {
    for (Slot& slot : slots_) slot.value = -1;
    for (std::size_t i = 0; i < count; ++i) {
      const std::string_view name = name_of(i);
      if (name.empty() || name.size() > 16) continue;
      Slot& slot = slots_[hash(name.data(), name.size())];
      if (slot.value != -1) {
        slot.value = kAmbiguous;
        continue;
      }
      char bytes[16] = {};
      std::memcpy(bytes, name.data(), name.size());
      std::memcpy(&slot.w0, bytes, 8);
      std::memcpy(&slot.w1, bytes + 8, 8);
      slot.size = name.size();
      slot.value = static_cast<int>(i);
    }
  }

  // The index of the name `key` (whose 16 bytes from key.data() are readable): >= 0, -1 for
  // none, kAmbiguous when the caller must look it up itself.
  int find(std::string_view key) const {
    const std::size_t n = key.size();
    if (n == 0 || n > 16) return kAmbiguous;
    const Slot& slot = slots_[hash(key.data(), n)];
    if (slot.value < 0) return slot.value;
    if (slot.size != n) return -1;
    std::uint64_t w0 = 0;
    std::uint64_t w1 = 0;
    std::memcpy(&w0, key.data(), 8);
    std::memcpy(&w1, key.data() + 8, 8);
    const std::uint64_t m0 = n >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * n)) - 1;
    const std::uint64_t m1 =
        n >= 16 ? ~std::uint64_t{0} : n <= 8 ? 0 : (std::uint64_t{1} << (8 * (n - 8))) - 1;
    return ((w0 & m0) == slot.w0 && (w1 & m1) == slot.w1) ? slot.value : -1;
  }

 private:
  struct Slot {
    std::uint64_t w0 = 0;
    std::uint64_t w1 = 0;
    std::size_t size = 0;
    int value = -1;
  };
  static std::size_t hash(const char* s, std::size_t n) {
    const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(s[i])); };
    return (n * 37 + byte(0) * 5 + byte(n - 1) * 11 + byte(n / 2) * 3) % kSlots;
  }
  static constexpr std::size_t kSlots = 256;
  std::array<Slot, kSlots> slots_;
};

const WordNames& field_names() {
  static const WordNames names(static_cast<std::size_t>(FieldId::kCount), [](std::size_t i) {
    return field_info(static_cast<FieldId>(i)).name;
  });
  return names;
}

const WordNames& event_names() {
  static const WordNames names(kEventKinds, [](std::size_t i) { return event_schema(i).name; });
  return names;
}

inline int find_name(const WordNames& names, std::string_view key, int (*slow)(std::string_view)) {
  const int i = names.find(key);
  return i == WordNames::kAmbiguous ? slow(key) : i;
}

// A JSON integer of 1 to 18 digits, no leading zero, no fraction or exponent, followed by
// ',', '}' or ']' (so it fits int64 with no overflow check). "-0" is declined.
inline bool scan_integer(const char*& p, bool* negative, std::uint64_t* magnitude) {
  const char* q = p;
  *negative = *q == '-';
  if (*negative) ++q;
  const char* first = q;
  // Eight bytes at a time: how many lead with a digit, then their value by multiplying pairs,
  // quads and octets together (no branch per digit: numbers of every length alternate).
  constexpr std::uint64_t kHighNibbles = 0xF0F0F0F0F0F0F0F0;
  constexpr std::uint64_t kZeros = 0x3030303030303030;
  constexpr std::uint64_t kSixes = 0x0606060606060606;
  constexpr std::uint64_t kPow10[9] = {1,      10,      100,      1000,     10000,
                                       100000, 1000000, 10000000, 100000000};
  std::uint64_t m = 0;
  std::size_t digits = 0;
  while (true) {
    std::uint64_t w = 0;
    std::memcpy(&w, q, 8);
    // A byte is a digit when its high nibble is 3 and adding 6 keeps it so; a carry out of a
    // byte (0xFA and up: no digit) only flags bytes above the first non-digit.
    const std::uint64_t not_digit =
        ((w & kHighNibbles) ^ kZeros) | (((w + kSixes) & kHighNibbles) ^ kZeros);
    const std::size_t n =
        not_digit == 0 ? 8 : static_cast<std::size_t>(__builtin_ctzll(not_digit)) / 8;
    if (n > 0) {
      std::uint64_t v = w - kZeros;       // digit values, the first in the lowest byte
      if (n < 8) v <<= 8 * (8 - n);       // the n digits on top, zeros (leading) below
      v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FF;
      v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFF;
      v = (v * 10000 + (v >> 32)) & 0x00000000FFFFFFFF;
      m = m * kPow10[n] + v;
    }
    digits += n;
    q += n;
    if (n < 8 || digits > 18) break;
  }
  if (digits == 0 || digits > 18 || (digits > 1 && *first == '0') || (*negative && m == 0)) {
    return false;
  }
  if (*q != ',' && *q != '}' && *q != ']') return false;
  *magnitude = m;
  p = q;
  return true;
}

inline bool scan_int64(const char*& p, std::int64_t* out) {
  bool negative = false;
  std::uint64_t m = 0;
  if (!scan_integer(p, &negative, &m)) return false;
  *out = negative ? -static_cast<std::int64_t>(m) : static_cast<std::int64_t>(m);
  return true;
}

inline bool scan_uint64(const char*& p, std::uint64_t* out) {
  bool negative = false;
  return scan_integer(p, &negative, out) && !negative;
}

// A string of printable ASCII (0x20-0x7F) without '"' or '\': its text is its bytes.
// REQUIRES: 7 readable bytes after the line's "\n".
inline bool scan_string(const char*& p, std::string_view* out) {
  if (*p != '"') return false;
  const char* begin = ++p;
  // Eight bytes at a time: the lowest byte flagged is the first '"', '\\', control or non-ASCII
  // byte (a flag above it may be spurious, never one below). The line's "\n" stops the scan,
  // so at most 7 bytes past it are read.
  constexpr std::uint64_t kOnes = 0x0101010101010101;
  constexpr std::uint64_t kHighs = 0x8080808080808080;
  while (true) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    const std::uint64_t quote = w ^ (kOnes * '"');
    const std::uint64_t backslash = w ^ (kOnes * '\\');
    const std::uint64_t flags = (((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) |
                                 ((w - kOnes * 0x20) & ~w) | w) &
                                kHighs;
    if (flags == 0) {
      p += 8;
      continue;
    }
    p += static_cast<std::size_t>(__builtin_ctzll(flags)) / 8;
    if (*p != '"') return false;
    break;
  }
  *out = std::string_view(begin, static_cast<std::size_t>(p - begin));
  ++p;
  return true;
}

// `"key":` with a plain key.
inline bool scan_key(const char*& p, std::string_view* key) {
  if (!scan_string(p, key) || *p != ':') return false;
  ++p;
  return true;
}

inline bool scan_id(const char*& p, Id* out) {
  std::string_view text;
  if (*p == '"') {
    if (!scan_string(p, &text)) return false;
    *out = Id::text(std::string(text));
    return true;
  }
  std::uint64_t n = 0;
  if (!scan_uint64(p, &n)) return false;
  *out = Id::number(n);
  return true;
}

// [w, w, ...] of plain integers (the writer's ack_set words).
inline bool scan_words(const char*& p, std::vector<std::int64_t>* out) {
  out->clear();
  if (*p != '[') return false;
  ++p;
  if (*p == ']') {
    ++p;
    return true;
  }
  while (true) {
    std::int64_t w = 0;
    if (!scan_int64(p, &w)) return false;
    out->push_back(w);
    if (*p == ']') {
      ++p;
      return true;
    }
    if (*p != ',') return false;
    ++p;
  }
}

inline bool scan_bool(const char*& p, bool* out) {
  if (std::memcmp(p, "true", 4) == 0) {
    *out = true;
    p += 4;
  } else if (std::memcmp(p, "false", 5) == 0) {
    *out = false;
    p += 5;
  } else {
    return false;
  }
  return *p == ',' || *p == '}' || *p == ']';
}

// `send` entries: [{"cmd":..,"batch_size":..,"ack_set":[..],"admitted":..,"p":..}, ...], the
// keys in any order, no other key, none twice.
bool scan_entries(const char*& p, std::vector<spec::SentEntry>* out) {
  out->clear();
  if (*p != '[') return false;
  ++p;
  if (*p == ']') {
    ++p;
    return true;
  }
  enum : unsigned { kCmd = 1, kBatchSize = 2, kAckSet = 4, kAdmitted = 8, kP = 16 };
  std::vector<std::int64_t> words;
  while (true) {
    if (*p != '{') return false;
    ++p;
    spec::SentEntry entry;
    words.clear();
    unsigned present = 0;
    while (true) {
      std::string_view key;
      if (!scan_key(p, &key)) return false;
      const unsigned bit = key == "cmd"          ? kCmd
                           : key == "batch_size" ? kBatchSize
                           : key == "ack_set"    ? kAckSet
                           : key == "admitted"   ? kAdmitted
                           : key == "p"          ? kP
                                                 : 0u;
      if (bit == 0 || (present & bit) != 0) return false;
      present |= bit;
      bool ok = false;
      switch (bit) {
        case kCmd: ok = scan_id(p, &entry.cmd); break;
        case kBatchSize: ok = scan_int64(p, &entry.entry.batch_size); break;
        case kAckSet: ok = scan_words(p, &words); break;
        case kAdmitted: ok = scan_bool(p, &entry.entry.admitted); break;
        default: {
          std::int64_t value = 0;
          ok = scan_int64(p, &value);
          entry.p = value;
        }
      }
      if (!ok) return false;
      if (*p == '}') break;
      if (*p != ',') return false;
      ++p;
    }
    ++p;  // the entry's '}'
    if ((present & (kCmd | kBatchSize | kAdmitted)) != (kCmd | kBatchSize | kAdmitted)) {
      return false;
    }
    entry.entry.ack_set = spec::AckSet(std::vector<std::int64_t>(words));
    out->push_back(std::move(entry));
    if (*p == ']') {
      ++p;
      return true;
    }
    if (*p != ',') return false;
    ++p;
  }
}

}  // namespace

bool LineParser::compact_value(FieldId id, const char*& p) {
  const FieldInfo& info = field_info(id);
  switch (info.type) {
    case FieldType::kId:
      return scan_id(p, &fields_.ids[info.slot]);
    case FieldType::kUint64:
      return scan_uint64(p, &fields_.u64[info.slot]);
    case FieldType::kInt64:
      return scan_int64(p, &fields_.i64[info.slot]);
    case FieldType::kString: {
      std::string_view text;
      if (!scan_string(p, &text)) return false;
      fields_.strings[info.slot].assign(text);
      return true;
    }
    case FieldType::kAckSet:
      return scan_words(p, &fields_.ack_words);
    case FieldType::kEntries:
      return scan_entries(p, &fields_.entries);
  }
  return false;
}

void LineParser::guess(std::string_view name, std::size_t value, KeyGuess* g) {
  char bytes[16] = {};
  std::memcpy(bytes, name.data(), name.size());
  std::memcpy(&g->w0, bytes, 8);
  std::memcpy(&g->w1, bytes + 8, 8);
  std::memset(bytes, 0, sizeof bytes);
  std::memset(bytes, 0xff, name.size());
  std::memcpy(&g->m0, bytes, 8);
  std::memcpy(&g->m1, bytes + 8, 8);
  g->size = name.size();
  g->id = value;
}

bool LineParser::compact_event(const char* line, std::size_t max_line_bytes, spec::Event* out,
                               const char** newline) {
  const WordNames& names = field_names();
  const char* p = line;
  std::string_view key;
  std::string_view ev;
  // {"ev":" in one compare.
  std::uint64_t head = 0;
  std::memcpy(&head, p, 8);
  constexpr std::uint64_t kHead = 0x00223A227665227B;  // {"ev":" little-endian, 7 bytes
  if (((head ^ kHead) & 0x00FFFFFFFFFFFFFF) != 0) return false;
  p += 7;
  // The kind that followed the last line's kind last time, tried first (traces repeat their
  // sequences of events); else the name is scanned and looked up. Extensions are declined.
  int kind = -1;
  if (const KeyGuess& g = next_kind_[last_kind_]; g.size > 0) {
    std::uint64_t w0 = 0;
    std::uint64_t w1 = 0;
    std::memcpy(&w0, p, 8);  // the line's padding makes these 16 bytes readable
    std::memcpy(&w1, p + 8, 8);
    if ((w0 & g.m0) == g.w0 && (w1 & g.m1) == g.w1 && p[g.size] == '"') {
      kind = static_cast<int>(g.id);
      p += g.size + 1;
    }
  }
  if (kind < 0) {
    --p;  // at the opening quote
    if (!scan_string(p, &ev)) return false;
    kind = find_name(event_names(), ev, &event_kind_of);
    if (kind < 0) return false;
    if (ev.size() <= 16) guess(ev, static_cast<std::size_t>(kind), &next_kind_[last_kind_]);
  }
  last_kind_ = static_cast<std::size_t>(kind);
  const EventSchema& schema = event_schema(static_cast<std::size_t>(kind));
  const FieldMask allowed = schema.required | schema.optional;
  fields_.present = 0;
  std::array<KeyGuess, kGuessedKeys>& guesses = key_guesses_[static_cast<std::size_t>(kind)];
  for (std::size_t position = 0; *p == ','; ++position) {
    ++p;
    FieldId id = FieldId::kCount;
    if (position < kGuessedKeys && guesses[position].size > 0) {
      const KeyGuess& g = guesses[position];
      std::uint64_t w0 = 0;
      std::uint64_t w1 = 0;
      std::memcpy(&w0, p + 1, 8);  // the line's padding makes these 16 bytes readable
      std::memcpy(&w1, p + 9, 8);
      if (*p == '"' && (w0 & g.m0) == g.w0 && (w1 & g.m1) == g.w1 && p[1 + g.size] == '"' &&
          p[2 + g.size] == ':') {
        id = static_cast<FieldId>(g.id);
        p += g.size + 3;
      }
    }
    if (id == FieldId::kCount) {
      if (!scan_key(p, &key)) return false;
      const int i = find_name(names, key, &field_index_of);
      if (i < 0) return false;  // event() ignores an unknown field: declined, it decides
      id = static_cast<FieldId>(i);
      if (position < kGuessedKeys && key.size() <= 16) {
        guess(key, static_cast<std::size_t>(id), &guesses[position]);
      }
    }
    if ((allowed & field_bit(id)) == 0 || fields_.has(id)) return false;
    fields_.present |= field_bit(id);
    if (!compact_value(id, p)) return false;
  }
  if (*p != '}') return false;
  ++p;
  std::size_t length = static_cast<std::size_t>(p - line);
  if (*p == '\r') ++p;
  if (*p != '\n' || length > max_line_bytes) return false;
  if ((schema.required & ~fields_.present) != 0) return false;
  if (!build(static_cast<std::size_t>(kind), out).ok()) return false;
  *newline = p;
  return true;
}

CompactDecoder::CompactDecoder() : parser_(std::make_unique<LineParser>(std::size_t{1} << 20)) {}
CompactDecoder::~CompactDecoder() = default;

bool CompactDecoder::decode(std::string_view line, spec::Event* out) {
  std::string buffer(line);
  buffer += '\n';
  buffer.append(LineSource::kPadding, ' ');
  const char* newline = nullptr;
  return parser_->compact_event(buffer.data(), std::size_t{1} << 20, out, &newline) &&
         newline == buffer.data() + line.size();
}

}  // namespace permitcheck::trace::internal
