// LineParser: parses the lines of a trace (trace-format.md, version 1) into spec values, with
// the reader's exact diagnostics ("line N: reason"). Two ways in: one line at a time (begin(),
// then header() or event()), the reference for what a line means; and fast_event(), a decoder
// of a document of a stream of lines parsed together (batch.h), which accepts a subset of what
// event() accepts, with the same result, and declines everything else.
//
// Private to trace/.
#ifndef PERMITCHECK_TRACE_INTERNAL_LINE_PARSER_H_
#define PERMITCHECK_TRACE_INTERNAL_LINE_PARSER_H_

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "spec/events.h"
#include "trace/internal/json_text.h"
#include "trace/internal/line_source.h"
#include "trace/internal/schema.h"

namespace permitcheck::trace::internal {

namespace od = simdjson::ondemand;
using spec::Id;

// The values of one line's fields, reused from line to line: slot arrays by field type.
struct Fields {
  FieldMask present = 0;
  std::array<Id, kIdSlots> ids;
  std::array<std::uint64_t, kUint64Slots> u64{};
  std::array<std::int64_t, kInt64Slots> i64{};
  std::array<std::string, kStringSlots> strings;
  std::vector<std::int64_t> ack_words;
  std::vector<spec::SentEntry> entries;

  bool has(FieldId f) const { return (present & field_bit(f)) != 0; }
  static std::size_t slot(FieldId f) { return field_info(f).slot; }

  Id id(FieldId f) { return std::move(ids[slot(f)]); }
  std::optional<Id> opt_id(FieldId f) {
    if (!has(f)) return std::nullopt;
    return id(f);
  }
  std::uint64_t u(FieldId f) const { return u64[slot(f)]; }
  std::optional<std::uint64_t> opt_u(FieldId f) const {
    if (!has(f)) return std::nullopt;
    return u(f);
  }
  std::int64_t i(FieldId f) const { return i64[slot(f)]; }
  std::optional<std::int64_t> opt_i(FieldId f) const {
    if (!has(f)) return std::nullopt;
    return i(f);
  }
  const std::string& str(FieldId f) const { return strings[slot(f)]; }
  std::string take_str(FieldId f) { return std::move(strings[slot(f)]); }
  std::optional<std::string> opt_str(FieldId f) {
    if (!has(f)) return std::nullopt;
    return take_str(f);
  }
  spec::AckSet ack_set() {
    if (!has(FieldId::kAckSet)) return spec::AckSet();
    return spec::AckSet(std::move(ack_words));
  }
};

// A value's JSON type and its raw text, for checks and for "got ..." in diagnostics.
struct Peeked {
  od::json_type type = od::json_type::null;
  std::string_view raw;
  NumberToken number;  // when type is number
};

// Parses the lines of one trace. Holds the simdjson parser (its buffers are reused for every
// line) and the current line's document.
class LineParser {
 public:
  explicit LineParser(std::size_t max_line_bytes)
      : parser_(max_line_bytes >= simdjson::SIMDJSON_MAXSIZE_BYTES - simdjson::SIMDJSON_PADDING
                    ? simdjson::SIMDJSON_MAXSIZE_BYTES
                    : max_line_bytes + simdjson::SIMDJSON_PADDING) {}

  // Starts parsing the current line of `lines`.
  absl::Status begin(const LineSource& lines);

  absl::Status header(spec::TraceHeader* out);
  absl::Status event(spec::Event* out);

  // The fast path (Batch, batch.h): decodes one event from a document of a stream
  // of lines parsed together. Returns false whenever it is not sure: any JSON or schema error,
  // an extension, a field before "ev", an escaped key or string it would have to unescape
  // itself, a number that is not a plain integer of at most 18 digits. The caller then reads
  // that line with begin() and event(), which decide and give the exact diagnostic. So the fast
  // path accepts a subset of what event() accepts, with the same result (differential tests:
  // tests/trace/reader_batch_test.cc, fuzz/trace_reader_fuzz.cc).
  bool fast_event(od::document_reference doc, spec::Event* out);

  // The fastest path (line_parser_compact.cc): decodes the line starting at `line` when it is
  // in the compact form the writer writes (no whitespace, no escape, ASCII strings, integers of
  // at most 18 digits, known fields only, "ev" first) and at most max_line_bytes long, setting
  // *newline to its "\n". Returns false whenever it is not sure, like fast_event: the caller
  // then reads the line another way. REQUIRES: a "\n" ends the line, and at least 16 readable
  // bytes follow it.
  bool compact_event(const char* line, std::size_t max_line_bytes, spec::Event* out,
                     const char** newline);

 private:
  absl::Status error(std::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat("line ", line_, ": ", to_absl(message)));
  }
  // Malformed JSON at byte offset `at` of the line (npos: unknown).
  absl::Status json_error_at(std::string_view what, std::size_t at) const;
  absl::Status json_error(simdjson::error_code err);
  absl::Status type_error(std::string_view path, std::string_view expected, const Peeked& p) const;
  absl::Status duplicate(std::string_view path) const {
    return error(absl::StrCat("duplicate field \"", to_absl(path), "\""));
  }
  std::size_t offset_of(std::string_view raw) const {
    return static_cast<std::size_t>(raw.data() - text_.data());
  }

  absl::Status peek(od::value& v, Peeked* out);
  absl::Status root_object(std::string_view what, od::object* out);
  absl::Status check_end();
  absl::Status trailing_text(std::size_t at) const;
  absl::Status string_error(const Peeked& p) const;
  absl::Status skip_value(od::value v, int depth);

  absl::Status read_number(od::value& v, std::string_view path, std::string_view expected,
                           NumberToken* out, Peeked* p);
  absl::Status read_int64(od::value v, std::string_view path, std::int64_t* out);
  absl::Status read_uint64(od::value v, std::string_view path, std::uint64_t* out);
  absl::Status read_id(od::value v, std::string_view path, Id* out);
  absl::Status read_string(od::value v, std::string_view path, std::string_view expected,
                           std::string* out, Peeked* p);
  absl::Status read_bool(od::value v, std::string_view path, bool* out);
  absl::Status read_ack_set(od::value v, std::string_view path, std::vector<std::int64_t>* out);
  absl::Status read_entries(od::value v, std::vector<spec::SentEntry>* out);

  absl::Status take_field(const EventSchema& schema, std::string_view key, od::value v);
  bool fast_field(FieldId id, od::value& v);
  bool compact_value(FieldId id, const char*& p);
  absl::Status build(std::size_t kind, spec::Event* out);

  // compact_event's guess of the keys of each event kind, by position: those of the last line
  // of that kind (the lines of one kind usually list the same keys in the same order). A key
  // the guess matches is recognised by comparing its bytes with one name, without a search.
  struct KeyGuess {
    std::uint64_t w0 = 0;  // the name's first 16 bytes, little-endian, zero past its end
    std::uint64_t w1 = 0;
    std::uint64_t m0 = 0;  // which bits of them the name covers
    std::uint64_t m1 = 0;
    std::size_t size = 0;  // 0: no guess
    std::size_t id = 0;    // the FieldId, or the event kind, the name stands for
  };
  // Makes *g guess `name` (at most 16 bytes), standing for `value`.
  static void guess(std::string_view name, std::size_t value, KeyGuess* g);
  static constexpr std::size_t kGuessedKeys = 8;
  std::array<std::array<KeyGuess, kGuessedKeys>, kEventKinds> key_guesses_{};
  // The same for `ev`: the kind that followed each kind last time, and the last line's kind.
  std::array<KeyGuess, kEventKinds> next_kind_{};
  std::size_t last_kind_ = 0;

  od::parser parser_;
  od::document doc_;
  bool doc_ok_ = false;
  std::uint64_t line_ = 0;
  std::string_view text_;
  bool terminated_ = true;
  Fields fields_;
  std::string ev_;
  std::string scratch_;
};

// LineParser::compact_event for tests: the parser is made and used inside the trace library,
// because a test compiled without the library's simdjson options (SIMDJSON_THREADS_ENABLED)
// would see another layout of the parser's simdjson members.
class CompactDecoder {
 public:
  CompactDecoder();
  ~CompactDecoder();
  CompactDecoder(const CompactDecoder&) = delete;
  CompactDecoder& operator=(const CompactDecoder&) = delete;

  // compact_event on `line` followed by "\n" and padding; false when it declines.
  bool decode(std::string_view line, spec::Event* out);

 private:
  std::unique_ptr<LineParser> parser_;
};

}  // namespace permitcheck::trace::internal

#endif  // PERMITCHECK_TRACE_INTERNAL_LINE_PARSER_H_
