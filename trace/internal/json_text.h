// JSON text helpers shared by the trace reader and writer: lossless number classification,
// string escaping, UTF-8 checks and how a diagnostic shows an offending token.
//
// Private to trace/: nothing outside trace/ and tests/trace/ includes this header.
//
//   NumberToken n = classify_number("18446744073709551615");
//   to_int64(n) == std::nullopt;  to_long_word(n) == -1;   // same 64 bits (ack_set words)
//   std::string s;  append_json_string(&s, "a\"b");        // s == R"("a\"b")"
#ifndef PERMITCHECK_TRACE_INTERNAL_JSON_TEXT_H_
#define PERMITCHECK_TRACE_INTERNAL_JSON_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "base/absl_view.h"

namespace permitcheck::trace::internal {

// A JSON number token, classified exactly (no rounding through double).
struct NumberToken {
  bool valid = false;           // matches the RFC 8259 number grammar
  bool integer = false;         // valid, without fraction or exponent
  bool negative = false;        // has a leading '-' (also "-0")
  bool overflow = false;        // integer whose magnitude exceeds UINT64_MAX
  std::uint64_t magnitude = 0;  // |value| of an integer without overflow
};

// Classifies `token` (trailing JSON whitespace is ignored).
NumberToken classify_number(std::string_view token);

// The integer's value when it is in int64 range.
std::optional<std::int64_t> to_int64(const NumberToken& n);

// The integer's value when it is in uint64 range ("-0" counts as 0).
std::optional<std::uint64_t> to_uint64(const NumberToken& n);

// An ack_set word: an integer in int64 range, or one in uint64 range above INT64_MAX, which
// keeps its 64 bits (Java longs are written signed by some recorders, unsigned by others).
std::optional<std::int64_t> to_long_word(const NumberToken& n);

// Space, tab, CR or LF.
inline bool is_json_whitespace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// `s` without trailing JSON whitespace (space, tab, CR, LF).
std::string_view trim_json_whitespace(std::string_view s);

// How a diagnostic quotes a raw JSON token: trimmed, and cut after 40 bytes (at a character
// boundary) with "..." appended.
std::string display_token(std::string_view raw);

// Appends `s` as a JSON string literal, quotes included. Control characters are escaped; any
// byte sequence that is not valid UTF-8 is written as U+FFFD, so the output is always valid.
void append_json_string(std::string* out, std::string_view s);

// Offset of the first byte of `s` that does not belong to a valid UTF-8 sequence (overlong
// forms, surrogates and code points above U+10FFFF included), or npos.
std::size_t find_invalid_utf8(std::string_view s);

// Offset of the first raw control character (U+0000-U+001F) inside a JSON string of `line`,
// or npos. `line` is scanned as JSON text: only bytes between quotes count.
std::size_t find_unescaped_control(std::string_view line);

// The bracket structure of `line`'s first JSON value, found by matching quotes, braces and
// brackets only (diagnostics use it to say why simdjson refused a line).
struct Structure {
  enum Kind {
    kComplete,  // the first value ends at `offset` (one past its last byte)
    kUnclosed,  // an object, array or string is still open at the end of the line
    kMismatch,  // the closer at `offset` does not match its opener, or has none
  } kind = kComplete;
  std::size_t offset = 0;
};
Structure scan_structure(std::string_view line);

// Offset of the opening quote of a JSON string of `line` that is never closed, or npos.
std::size_t find_unclosed_string(std::string_view line);

}  // namespace permitcheck::trace::internal

#endif  // PERMITCHECK_TRACE_INTERNAL_JSON_TEXT_H_
