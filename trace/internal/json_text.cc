#include "trace/internal/json_text.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace permitcheck::trace::internal {
namespace {

constexpr std::uint64_t kInt64Max =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
constexpr std::size_t kDisplayBytes = 40;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

// Walks the JSON strings of `line`; calls on_control(offset) for a raw control character in
// a string and returns the opening quote of an unclosed string (or npos).
template <typename OnControl>
std::size_t scan_strings(std::string_view line, OnControl on_control) {
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '"') {
      ++i;
      continue;
    }
    const std::size_t open = i++;
    bool closed = false;
    while (i < line.size()) {
      const char c = line[i];
      if (c == '"') {
        closed = true;
        ++i;
        break;
      }
      if (static_cast<unsigned char>(c) < 0x20 && on_control(i)) return std::string_view::npos;
      i += (c == '\\') ? 2 : 1;
    }
    if (!closed) return open;
  }
  return std::string_view::npos;
}

}  // namespace

NumberToken classify_number(std::string_view token) {
  token = trim_json_whitespace(token);
  NumberToken n;
  std::size_t i = 0;
  if (i < token.size() && token[i] == '-') {
    n.negative = true;
    ++i;
  }
  const std::size_t digits_start = i;
  while (i < token.size() && is_digit(token[i])) {
    const auto d = static_cast<std::uint64_t>(token[i] - '0');
    if (!n.overflow) {
      if (n.magnitude > (std::numeric_limits<std::uint64_t>::max() - d) / 10) {
        n.overflow = true;
      } else {
        n.magnitude = n.magnitude * 10 + d;
      }
    }
    ++i;
  }
  const std::size_t digits = i - digits_start;
  if (digits == 0) return NumberToken{};
  if (digits > 1 && token[digits_start] == '0') return NumberToken{};  // leading zero
  bool integer = true;
  if (i < token.size() && token[i] == '.') {
    integer = false;
    const std::size_t frac_start = ++i;
    while (i < token.size() && is_digit(token[i])) ++i;
    if (i == frac_start) return NumberToken{};
  }
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    integer = false;
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    const std::size_t exp_start = i;
    while (i < token.size() && is_digit(token[i])) ++i;
    if (i == exp_start) return NumberToken{};
  }
  if (i != token.size()) return NumberToken{};
  n.valid = true;
  n.integer = integer;
  if (!integer) {
    n.overflow = false;
    n.magnitude = 0;
  }
  return n;
}

std::optional<std::int64_t> to_int64(const NumberToken& n) {
  if (!n.integer || n.overflow) return std::nullopt;
  if (!n.negative) {
    if (n.magnitude > kInt64Max) return std::nullopt;
    return static_cast<std::int64_t>(n.magnitude);
  }
  if (n.magnitude > kInt64Max + 1) return std::nullopt;
  // -magnitude computed in unsigned arithmetic, then reinterpreted: exact down to INT64_MIN.
  return static_cast<std::int64_t>(~n.magnitude + 1);
}

std::optional<std::uint64_t> to_uint64(const NumberToken& n) {
  if (!n.integer || n.overflow) return std::nullopt;
  if (n.negative && n.magnitude != 0) return std::nullopt;
  return n.magnitude;
}

std::optional<std::int64_t> to_long_word(const NumberToken& n) {
  if (std::optional<std::int64_t> v = to_int64(n)) return v;
  if (std::optional<std::uint64_t> u = to_uint64(n)) return static_cast<std::int64_t>(*u);
  return std::nullopt;
}

std::string_view trim_json_whitespace(std::string_view s) {
  while (!s.empty() && is_json_whitespace(s.back())) s.remove_suffix(1);
  return s;
}

std::string display_token(std::string_view raw) {
  raw = trim_json_whitespace(raw);
  if (raw.size() <= kDisplayBytes) return std::string(raw);
  std::size_t cut = kDisplayBytes;
  // Back up to a character boundary: never end the quote inside a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(raw[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(to_absl(raw.substr(0, cut)), "...");
}

void append_json_string(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence_length(s, i);
      if (len == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
        ++i;
      } else {
        out->append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

std::size_t find_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::size_t find_unescaped_control(std::string_view line) {
  std::size_t found = std::string_view::npos;
  scan_strings(line, [&](std::size_t at) {
    found = at;
    return true;
  });
  return found;
}

Structure scan_structure(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && is_json_whitespace(line[i])) ++i;
  const std::size_t start = i;
  std::string open;  // the stack of unclosed '{' and '['
  while (i < line.size()) {
    const char c = line[i];
    if (c == '"') {
      ++i;
      while (i < line.size() && line[i] != '"') i += (line[i] == '\\') ? 2 : 1;
      if (i >= line.size()) return {Structure::kUnclosed, line.size()};
      ++i;
    } else if (c == '{' || c == '[') {
      open.push_back(c);
      ++i;
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != (c == '}' ? '{' : '[')) return {Structure::kMismatch, i};
      open.pop_back();
      ++i;
    } else if (open.empty() && (is_json_whitespace(c) || c == ',' || c == ':')) {
      if (i == start) return {Structure::kMismatch, i};  // no value at all
      return {Structure::kComplete, i};                  // end of a scalar
    } else {
      // A scalar starts with a sign, a digit or a literal's letter; anything else is no value.
      const bool scalar_start =
          c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n';
      const bool in_scalar = i > 0 && !is_json_whitespace(line[i - 1]) &&
                             std::string_view("{[,:").find(line[i - 1]) == std::string_view::npos;
      if (!scalar_start && !in_scalar) return {Structure::kMismatch, i};
      ++i;
    }
    if (open.empty() && (c == '"' || c == '}' || c == ']')) return {Structure::kComplete, i};
  }
  if (!open.empty()) return {Structure::kUnclosed, line.size()};
  return {Structure::kComplete, i};
}

std::size_t find_unclosed_string(std::string_view line) {
  return scan_strings(line, [](std::size_t) { return false; });
}

}  // namespace permitcheck::trace::internal
