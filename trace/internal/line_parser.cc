#include "trace/internal/line_parser.h"

#include <cstring>
#include <utility>

// The parser's JSON layer: line setup, error reporting, peeking, skipping and reading typed
// values (numbers, ids, strings, ack_sets, entries). The header and events are read in
// line_parser_event.cc.

namespace permitcheck::trace::internal {
namespace {

static_assert(LineSource::kPadding >= simdjson::SIMDJSON_PADDING);

// Values nested deeper than this inside an event are refused rather than recursed into.
constexpr int kMaxDepth = 64;

std::string shown(const Peeked& p) {
  switch (p.type) {
    case od::json_type::object:
      return "an object";
    case od::json_type::array:
      return "an array";
    default:
      return display_token(p.raw);
  }
}

}  // namespace

absl::Status LineParser::type_error(std::string_view path, std::string_view expected,
                                    const Peeked& p) const {
  return error(absl::StrCat("field \"", to_absl(path), "\" must be ", to_absl(expected), ", got ",
                            shown(p)));
}

absl::Status LineParser::string_error(const Peeked& p) const {
  return json_error_at("invalid string (bad escape sequence or surrogate pair)", offset_of(p.raw));
}


absl::Status LineParser::begin(const LineSource& lines) {
  line_ = lines.number();
  text_ = lines.line();
  terminated_ = lines.terminated();
  doc_ok_ = false;
  if (std::size_t nul = text_.find('\0'); nul != std::string_view::npos) {
    return error(absl::StrCat("NUL byte at column ", nul + 1, " (a trace is UTF-8 text)"));
  }
  simdjson::error_code err =
      parser_.iterate(lines.padded_data(), text_.size(), lines.padded_size()).get(doc_);
  if (err) return json_error(err);
  doc_ok_ = true;
  return absl::OkStatus();
}

absl::Status LineParser::json_error_at(std::string_view what, std::size_t at) const {
  std::string message =
      at == std::string_view::npos
          ? absl::StrCat("malformed JSON: ", to_absl(what))
          : absl::StrCat("malformed JSON at column ", at + 1, ": ", to_absl(what));
  if (!terminated_)
    absl::StrAppend(&message, " (the last line has no newline: is the trace truncated?)");
  return error(message);
}

absl::Status LineParser::json_error(simdjson::error_code err) {
  constexpr std::size_t npos = std::string_view::npos;
  std::size_t at = npos;
  std::string_view what;
  switch (err) {
    case simdjson::UTF8_ERROR: {
      std::size_t bad = find_invalid_utf8(text_);
      return error(bad == npos ? std::string("invalid UTF-8")
                               : absl::StrCat("invalid UTF-8 at column ", bad + 1));
    }
    case simdjson::UNESCAPED_CHARS:
      at = find_unescaped_control(text_);
      what = "control character in a string (U+0000 to U+001F must be escaped)";
      break;
    case simdjson::UNCLOSED_STRING:
      at = find_unclosed_string(text_);
      what = "string is never closed";
      break;
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
    case simdjson::TAPE_ERROR: {
      // simdjson reports both for an object left open (a truncated line) and for text after a
      // complete object: tell them apart, and otherwise point at the offending token.
      const Structure structure = scan_structure(text_);
      if (structure.kind == Structure::kUnclosed) {
        return json_error_at("object or array is never closed", npos);
      }
      if (structure.kind == Structure::kComplete) {
        const std::size_t after = text_.find_first_not_of(" \t\r\n", structure.offset);
        if (after != npos) return trailing_text(after);
      } else if (err == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
        at = structure.offset;
      }
      what = "unexpected token (a missing or extra comma, colon, quote, brace or bracket?)";
      break;
    }
    case simdjson::STRING_ERROR:
      what = "invalid string (bad escape sequence or surrogate pair)";
      break;
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
      what = "invalid literal (expected true, false or null)";
      break;
    case simdjson::NUMBER_ERROR:
      what = "invalid number";
      break;
    case simdjson::DEPTH_ERROR:
      what = "nesting too deep";
      break;
    case simdjson::EMPTY:
      what = "no JSON value";
      break;
    case simdjson::CAPACITY:
    case simdjson::MEMALLOC:
      return error(absl::StrCat("line of ", text_.size(), " bytes is too large to parse (",
                                simdjson::error_message(err), ")"));
    default:
      what = simdjson::error_message(err);
      break;
  }
  if (at == npos && doc_ok_) {
    const char* loc = nullptr;
    if (!doc_.current_location().get(loc) && loc >= text_.data() &&
        loc < text_.data() + text_.size()) {
      at = static_cast<std::size_t>(loc - text_.data());
    }
  }
  return json_error_at(what, at);
}

// Also checks that a number or literal is well-formed JSON: "12abc" or "tru" are syntax
// errors, not values of the wrong type.
absl::Status LineParser::peek(od::value& v, Peeked* out) {
  if (simdjson::error_code err = v.type().get(out->type)) return json_error(err);
  out->raw = v.raw_json_token();
  switch (out->type) {
    case od::json_type::number:
      out->number = classify_number(out->raw);
      if (!out->number.valid) {
        return json_error_at(absl::StrCat("invalid number ", display_token(out->raw)),
                             offset_of(out->raw));
      }
      break;
    case od::json_type::boolean:
    case od::json_type::null: {
      const std::string_view token = trim_json_whitespace(out->raw);
      if (token != "true" && token != "false" && token != "null") {
        return json_error_at(absl::StrCat("invalid literal ", display_token(out->raw),
                                          " (expected true, false or null)"),
                             offset_of(out->raw));
      }
      break;
    }
    default:
      break;
  }
  return absl::OkStatus();
}

absl::Status LineParser::root_object(std::string_view what, od::object* out) {
  od::json_type type;
  if (simdjson::error_code err = doc_.type().get(type)) return json_error(err);
  if (type != od::json_type::object) {
    Peeked p{type, {}};
    if (type != od::json_type::array) {
      std::string_view raw;
      if (!doc_.raw_json_token().get(raw)) p.raw = raw;
    }
    return error(absl::StrCat(to_absl(what), " must be a JSON object, got ", shown(p)));
  }
  if (simdjson::error_code err = doc_.get_object().get(*out)) return json_error(err);
  return absl::OkStatus();
}

absl::Status LineParser::check_end() {
  const char* loc = nullptr;
  if (doc_.current_location().get(loc)) return absl::OkStatus();  // past the last token
  return trailing_text(static_cast<std::size_t>(loc - text_.data()));
}

absl::Status LineParser::trailing_text(std::size_t at) const {
  return error(absl::StrCat("unexpected text at column ", at + 1,
                            " after the JSON object (one JSON object per line)"));
}

// Checks a value nobody reads (an unknown field, an extension's fields) as thoroughly as a
// read one: the line must be valid JSON throughout.
absl::Status LineParser::skip_value(od::value v, int depth) {
  if (depth > kMaxDepth) {
    return error(absl::StrCat("JSON nested deeper than ", kMaxDepth, " levels"));
  }
  Peeked p;
  if (absl::Status s = peek(v, &p); !s.ok()) return s;
  switch (p.type) {
    case od::json_type::object: {
      od::object obj;
      if (simdjson::error_code err = v.get_object().get(obj)) return json_error(err);
      for (auto result : obj) {
        od::field field;
        if (simdjson::error_code err = std::move(result).get(field)) return json_error(err);
        std::string_view key;
        if (simdjson::error_code err = field.unescaped_key().get(key)) return json_error(err);
        if (absl::Status s = skip_value(field.value(), depth + 1); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    case od::json_type::array: {
      od::array array;
      if (simdjson::error_code err = v.get_array().get(array)) return json_error(err);
      for (auto result : array) {
        od::value element;
        if (simdjson::error_code err = std::move(result).get(element)) return json_error(err);
        if (absl::Status s = skip_value(element, depth + 1); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    case od::json_type::string: {
      std::string_view s;
      if (v.get_string().get(s)) return string_error(p);
      return absl::OkStatus();
    }
    case od::json_type::number:
    case od::json_type::boolean:
    case od::json_type::null:
      return absl::OkStatus();  // checked by peek()
  }
  return json_error(simdjson::INCORRECT_TYPE);
}

absl::Status LineParser::read_number(od::value& v, std::string_view path, std::string_view expected,
                                     NumberToken* out, Peeked* p) {
  if (absl::Status s = peek(v, p); !s.ok()) return s;
  if (p->type != od::json_type::number) return type_error(path, expected, *p);
  *out = p->number;
  return absl::OkStatus();
}

absl::Status LineParser::read_int64(od::value v, std::string_view path, std::int64_t* out) {
  constexpr std::string_view kExpected = "an integer in int64 range";
  NumberToken n;
  Peeked p;
  if (absl::Status s = read_number(v, path, kExpected, &n, &p); !s.ok()) return s;
  std::optional<std::int64_t> value = to_int64(n);
  if (!value) return type_error(path, kExpected, p);
  *out = *value;
  return absl::OkStatus();
}

absl::Status LineParser::read_uint64(od::value v, std::string_view path, std::uint64_t* out) {
  constexpr std::string_view kExpected = "an integer in uint64 range";
  NumberToken n;
  Peeked p;
  if (absl::Status s = read_number(v, path, kExpected, &n, &p); !s.ok()) return s;
  std::optional<std::uint64_t> value = to_uint64(n);
  if (!value) return type_error(path, kExpected, p);
  *out = *value;
  return absl::OkStatus();
}

absl::Status LineParser::read_id(od::value v, std::string_view path, Id* out) {
  constexpr std::string_view kExpected = "a string or a non-negative integer in uint64 range";
  Peeked p;
  if (absl::Status s = peek(v, &p); !s.ok()) return s;
  if (p.type == od::json_type::string) {
    std::string_view text;
    if (v.get_string().get(text)) return string_error(p);
    *out = Id::text(std::string(text));
    return absl::OkStatus();
  }
  if (p.type == od::json_type::number) {
    if (std::optional<std::uint64_t> n = to_uint64(p.number)) {
      *out = Id::number(*n);
      return absl::OkStatus();
    }
  }
  return type_error(path, kExpected, p);
}

absl::Status LineParser::read_string(od::value v, std::string_view path, std::string_view expected,
                                     std::string* out, Peeked* p) {
  if (absl::Status s = peek(v, p); !s.ok()) return s;
  if (p->type != od::json_type::string) return type_error(path, expected, *p);
  std::string_view text;
  if (v.get_string().get(text)) return string_error(*p);
  out->assign(text);
  return absl::OkStatus();
}

absl::Status LineParser::read_bool(od::value v, std::string_view path, bool* out) {
  Peeked p;
  if (absl::Status s = peek(v, &p); !s.ok()) return s;
  const std::string_view token = trim_json_whitespace(p.raw);
  if (p.type == od::json_type::boolean && (token == "true" || token == "false")) {
    *out = token == "true";
    return absl::OkStatus();
  }
  return type_error(path, "true or false", p);
}

absl::Status LineParser::read_ack_set(od::value v, std::string_view path,
                                      std::vector<std::int64_t>* out) {
  Peeked p;
  if (absl::Status s = peek(v, &p); !s.ok()) return s;
  if (p.type != od::json_type::array) return type_error(path, "an array of integers", p);
  od::array array;
  if (simdjson::error_code err = v.get_array().get(array)) return json_error(err);
  out->clear();
  for (auto result : array) {
    od::value element;
    if (simdjson::error_code err = std::move(result).get(element)) return json_error(err);
    Peeked w;
    if (absl::Status s = peek(element, &w); !s.ok()) return s;
    std::optional<std::int64_t> word;
    if (w.type == od::json_type::number) {
      word = to_long_word(w.number);
    }
    if (!word) {
      return type_error(absl::StrCat(to_absl(path), "[", out->size(), "]"),
                        "an integer in int64 or uint64 range", w);
    }
    out->push_back(*word);
  }
  return absl::OkStatus();
}

absl::Status LineParser::read_entries(od::value v, std::vector<spec::SentEntry>* out) {
  Peeked p;
  if (absl::Status s = peek(v, &p); !s.ok()) return s;
  if (p.type != od::json_type::array) return type_error("entries", "an array of objects", p);
  od::array array;
  if (simdjson::error_code err = v.get_array().get(array)) return json_error(err);
  out->clear();
  enum : unsigned { kCmd = 1, kBatchSize = 2, kAckSet = 4, kAdmitted = 8, kP = 16 };
  for (auto result : array) {
    const std::string prefix = absl::StrCat("entries[", out->size(), "]");
    od::value element;
    if (simdjson::error_code err = std::move(result).get(element)) return json_error(err);
    Peeked e;
    if (absl::Status s = peek(element, &e); !s.ok()) return s;
    if (e.type != od::json_type::object) return type_error(prefix, "an object", e);
    od::object obj;
    if (simdjson::error_code err = element.get_object().get(obj)) return json_error(err);
    spec::SentEntry entry;
    std::vector<std::int64_t> words;
    unsigned present = 0;
    for (auto field_result : obj) {
      od::field field;
      if (simdjson::error_code err = std::move(field_result).get(field)) return json_error(err);
      std::string_view key;
      if (simdjson::error_code err = field.unescaped_key().get(key)) return json_error(err);
      unsigned bit = key == "cmd"          ? kCmd
                     : key == "batch_size" ? kBatchSize
                     : key == "ack_set"    ? kAckSet
                     : key == "admitted"   ? kAdmitted
                     : key == "p"          ? kP
                                           : 0u;
      if (bit == 0) {
        if (absl::Status s = skip_value(field.value(), 3); !s.ok()) return s;
        continue;
      }
      const std::string path = absl::StrCat(prefix, ".", to_absl(key));
      if (present & bit) return duplicate(path);
      present |= bit;
      absl::Status s;
      switch (bit) {
        case kCmd:
          s = read_id(field.value(), path, &entry.cmd);
          break;
        case kBatchSize:
          s = read_int64(field.value(), path, &entry.entry.batch_size);
          break;
        case kAckSet:
          s = read_ack_set(field.value(), path, &words);
          break;
        case kAdmitted:
          s = read_bool(field.value(), path, &entry.entry.admitted);
          break;
        default: {
          std::int64_t value = 0;
          s = read_int64(field.value(), path, &value);
          entry.p = value;
        }
      }
      if (!s.ok()) return s;
    }
    for (auto [bit, name] : {std::pair{kCmd, "cmd"}, std::pair{kBatchSize, "batch_size"},
                             std::pair{kAdmitted, "admitted"}}) {
      if ((present & bit) == 0) {
        return error(
            absl::StrCat("event \"send\" is missing required field \"", prefix, ".", name, "\""));
      }
    }
    entry.entry.ack_set = spec::AckSet(std::move(words));
    out->push_back(std::move(entry));
  }
  return absl::OkStatus();
}

absl::Status LineParser::take_field(const EventSchema& schema, std::string_view key,
                                    od::value v) {
  std::optional<FieldId> id = find_field(key);
  if (!id || ((schema.required | schema.optional) & field_bit(*id)) == 0) {
    return skip_value(v, 1);  // unknown fields are ignored (but must be valid JSON)
  }
  if (fields_.has(*id)) return duplicate(key);
  fields_.present |= field_bit(*id);
  const FieldInfo& info = field_info(*id);
  switch (info.type) {
    case FieldType::kId:
      return read_id(v, info.name, &fields_.ids[info.slot]);
    case FieldType::kUint64:
      return read_uint64(v, info.name, &fields_.u64[info.slot]);
    case FieldType::kInt64:
      return read_int64(v, info.name, &fields_.i64[info.slot]);
    case FieldType::kString: {
      Peeked p;
      return read_string(v, info.name, "a string", &fields_.strings[info.slot], &p);
    }
    case FieldType::kAckSet:
      return read_ack_set(v, info.name, &fields_.ack_words);
    case FieldType::kEntries:
      return read_entries(v, &fields_.entries);
  }
  return absl::InternalError("unreachable");
}

}  // namespace permitcheck::trace::internal
