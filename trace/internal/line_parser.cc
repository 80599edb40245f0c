#include "trace/internal/line_parser.h"

#include <cstring>
#include <utility>

#include "spec/ruleset.h"

namespace permitcheck::trace::internal {
namespace {

static_assert(LineSource::kPadding >= simdjson::SIMDJSON_PADDING);

// Values nested deeper than this inside an event are refused rather than recursed into.
constexpr int kMaxDepth = 64;

constexpr std::string_view kTraceName = "pip491-permits";
constexpr std::int64_t kVersion = 1;

// Ruleset names of trace-format.md; those spec::parse_ruleset does not know are revisions
// this build does not implement.
constexpr std::array<std::string_view, 5> kFormatRulesets = {"legacy", "rev-a", "rev-b", "rev-c",
                                                             "rev-d"};

// "a, b, c" from the names of an enumeration whose values are 0..count-1.
template <typename E>
std::string enum_names(int count, std::string_view (*name)(E)) {
  std::string out;
  for (int i = 0; i < count; ++i)
    absl::StrAppend(&out, i > 0 ? ", " : "", av(name(static_cast<E>(i))));
  return out;
}

std::string dispatcher_names() {
  std::string out;
  for (spec::DispatcherKind k : spec::all_dispatcher_kinds()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", av(spec::dispatcher_name(k)));
  }
  return out;
}

std::string supported_rulesets() {
  std::string out;
  for (const spec::Ruleset* r : spec::all_rulesets()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", av(r->name));
  }
  return out;
}

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

std::string json_quoted(std::string_view text) {
  std::string out;
  append_json_string(&out, text);
  return display_token(out);
}

}  // namespace

absl::Status LineParser::type_error(std::string_view path, std::string_view expected,
                                    const Peeked& p) const {
  return error(absl::StrCat("field \"", av(path), "\" must be ", av(expected), ", got ",
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
          ? absl::StrCat("malformed JSON: ", av(what))
          : absl::StrCat("malformed JSON at column ", at + 1, ": ", av(what));
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
    return error(absl::StrCat(av(what), " must be a JSON object, got ", shown(p)));
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
      return type_error(absl::StrCat(av(path), "[", out->size(), "]"),
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
      const std::string path = absl::StrCat(prefix, ".", av(key));
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

absl::Status LineParser::header(spec::TraceHeader* out) {
  od::object obj;
  if (absl::Status s = root_object("the header", &obj); !s.ok()) return s;
  enum : unsigned {
    kTraceBit = 1,
    kVersionBit = 2,
    kSourceBit = 4,
    kRulesetBit = 8,
    kQBit = 16,
    kTBit = 32
  };
  unsigned present = 0;
  spec::TraceHeader header;
  for (auto result : obj) {
    od::field field;
    if (simdjson::error_code err = std::move(result).get(field)) return json_error(err);
    std::string_view key;
    if (simdjson::error_code err = field.unescaped_key().get(key)) return json_error(err);
    unsigned bit = key == "trace"     ? kTraceBit
                   : key == "version" ? kVersionBit
                   : key == "source"  ? kSourceBit
                   : key == "ruleset" ? kRulesetBit
                   : key == "q"       ? kQBit
                   : key == "t"       ? kTBit
                                      : 0u;
    if (bit == 0) {
      if (absl::Status s = skip_value(field.value(), 1); !s.ok()) return s;
      continue;
    }
    if (present & bit) return duplicate(key);
    present |= bit;
    Peeked p;
    switch (bit) {
      case kTraceBit: {
        const std::string expected = absl::StrCat("\"", av(kTraceName), "\"");
        if (absl::Status s = read_string(field.value(), key, expected, &scratch_, &p); !s.ok()) {
          return s;
        }
        if (scratch_ != kTraceName) return type_error(key, expected, p);
        break;
      }
      case kVersionBit: {
        NumberToken n;
        const std::string expected = absl::StrCat("the integer ", kVersion);
        if (absl::Status s = read_number(field.value(), key, expected, &n, &p); !s.ok()) return s;
        if (!n.integer) return type_error(key, expected, p);
        if (to_int64(n) != kVersion) {
          return error(absl::StrCat("unsupported trace version ", display_token(p.raw),
                                    " (this build reads version ", kVersion, ")"));
        }
        break;
      }
      case kSourceBit: {
        const std::string expected =
            absl::StrCat("one of ", enum_names(4, &spec::trace_source_name));
        if (absl::Status s = read_string(field.value(), key, expected, &scratch_, &p); !s.ok()) {
          return s;
        }
        std::optional<spec::TraceSource> source = spec::parse_trace_source(scratch_);
        if (!source) return type_error(key, expected, p);
        header.source = *source;
        break;
      }
      case kRulesetBit: {
        if (absl::Status s = read_string(field.value(), key, "a string", &scratch_, &p); !s.ok()) {
          return s;
        }
        absl::StatusOr<const spec::Ruleset*> rules = spec::parse_ruleset(scratch_);
        if (!rules.ok()) {
          for (std::string_view known : kFormatRulesets) {
            if (known == scratch_) {
              return error(absl::StrCat(
                  "ruleset ", scratch_,
                  " is not supported by this build (supported: ", supported_rulesets(), ")"));
            }
          }
          return error(std::string(rules.status().message()));
        }
        header.ruleset = (*rules)->id;
        break;
      }
      case kQBit:
      case kTBit: {
        const bool is_q = bit == kQBit;
        const std::string_view expected =
            is_q ? "a non-negative integer in int64 range" : "a positive integer in int64 range";
        NumberToken n;
        if (absl::Status s = read_number(field.value(), key, expected, &n, &p); !s.ok()) return s;
        std::optional<std::int64_t> value = to_int64(n);
        if (!value || *value < (is_q ? 0 : 1)) return type_error(key, expected, p);
        (is_q ? header.q : header.t) = *value;
        break;
      }
    }
  }
  if (absl::Status s = check_end(); !s.ok()) return s;
  if ((present & kTraceBit) == 0) {
    return error(
        "the header is missing required field \"trace\" (the first JSON line of a trace must "
        "be its header, e.g. {\"trace\":\"pip491-permits\",\"version\":1,\"source\":\"client\"})");
  }
  if ((present & kVersionBit) == 0)
    return error("the header is missing required field \"version\"");
  if ((present & kSourceBit) == 0) return error("the header is missing required field \"source\"");
  *out = header;
  return absl::OkStatus();
}

absl::Status LineParser::event(spec::Event* out) {
  od::object obj;
  if (absl::Status s = root_object("an event", &obj); !s.ok()) return s;
  fields_.present = 0;
  std::optional<std::size_t> kind;
  bool deferred = false;  // a field of the event came before "ev": read it in a second pass
  bool has_trace = false;
  for (auto result : obj) {
    od::field field;
    if (simdjson::error_code err = std::move(result).get(field)) return json_error(err);
    std::string_view key;
    if (simdjson::error_code err = field.unescaped_key().get(key)) return json_error(err);
    if (key == "ev") {
      if (kind) return duplicate("ev");
      Peeked p;
      if (absl::Status s = read_string(field.value(), "ev", "a string", &ev_, &p); !s.ok()) {
        return s;
      }
      kind = find_event(ev_);
      if (!kind) {
        if (!ev_.starts_with("x-")) {
          return error(absl::StrCat("unknown event ", json_quoted(ev_),
                                    " (an extension event's name starts with \"x-\")"));
        }
        kind = event_index<spec::Extension>();
      }
      continue;
    }
    if (kind) {
      if (absl::Status s = take_field(event_schema(*kind), key, field.value()); !s.ok()) {
        return s;
      }
      continue;
    }
    if (key == "trace") has_trace = true;
    if (find_field(key)) deferred = true;
    if (absl::Status s = skip_value(field.value(), 1); !s.ok()) return s;
  }
  if (absl::Status s = check_end(); !s.ok()) return s;
  if (!kind) {
    return error(has_trace ? "missing required field \"ev\" (a trace has one header, on its "
                             "first JSON line)"
                           : "missing required field \"ev\"");
  }
  const EventSchema& schema = event_schema(*kind);
  if (deferred) {
    doc_.rewind();
    if (simdjson::error_code err = doc_.get_object().get(obj)) return json_error(err);
    for (auto result : obj) {
      od::field field;
      if (simdjson::error_code err = std::move(result).get(field)) return json_error(err);
      std::string_view key;
      if (simdjson::error_code err = field.unescaped_key().get(key)) return json_error(err);
      if (key == "ev") break;
      if (absl::Status s = take_field(schema, key, field.value()); !s.ok()) return s;
    }
  }
  if (FieldMask missing = schema.required & ~fields_.present; missing != 0) {
    for (std::size_t f = 0; f < static_cast<std::size_t>(FieldId::kCount); ++f) {
      if (missing & field_bit(static_cast<FieldId>(f))) {
        return error(absl::StrCat("event \"", av(schema.name),
                                  "\" is missing required field \"",
                                  av(field_info(static_cast<FieldId>(f)).name), "\""));
      }
    }
  }
  return build(*kind, out);
}

namespace {

// A JSON integer with at most 18 digits, no fraction, exponent or leading zero: it fits int64
// with no overflow check. `raw` is a raw token (trailing whitespace included).
bool plain_integer(std::string_view raw, bool* negative, std::uint64_t* magnitude) {
  std::size_t i = 0;
  *negative = !raw.empty() && raw[0] == '-';
  if (*negative) ++i;
  const std::size_t first = i;
  std::uint64_t m = 0;
  while (i < raw.size() && raw[i] >= '0' && raw[i] <= '9') {
    m = m * 10 + static_cast<std::uint64_t>(raw[i] - '0');
    ++i;
  }
  const std::size_t digits = i - first;
  if (digits == 0 || digits > 18 || (digits > 1 && raw[first] == '0')) return false;
  for (; i < raw.size(); ++i) {
    if (!is_json_whitespace(raw[i])) return false;
  }
  *magnitude = m;
  return true;
}

// A string value's text without unescaping, when it has no escape sequence (the common case).
bool plain_string(std::string_view raw, std::string_view* out) {
  if (raw.size() < 2 || raw[0] != '"') return false;
  // The closing quote is in the token (stage 1 found it); a short loop beats two libc calls.
  for (std::size_t i = 1; i < raw.size(); ++i) {
    if (raw[i] == '"') {
      *out = raw.substr(1, i - 1);
      return true;
    }
    if (raw[i] == '\\') return false;
  }
  return false;
}

// An object key as written, when it has no escape sequence.
bool plain_key(od::field& field, std::string_view* out) {
  const char* begin = field.key().raw();
  const char* end = begin;
  while (*end != '"') {
    if (*end == '\\') return false;
    ++end;
  }
  *out = std::string_view(begin, static_cast<std::size_t>(end - begin));
  return true;
}

}  // namespace

bool LineParser::fast_field(FieldId id, od::value& v) {
  const FieldInfo& info = field_info(id);
  const std::string_view raw = v.raw_json_token();
  bool negative = false;
  std::uint64_t magnitude = 0;
  std::string_view text;
  switch (info.type) {
    case FieldType::kId:
      if (plain_string(raw, &text)) {
        fields_.ids[info.slot] = Id::text(std::string(text));
        return true;
      }
      if (!plain_integer(raw, &negative, &magnitude) || negative) return false;
      fields_.ids[info.slot] = Id::number(magnitude);
      return true;
    case FieldType::kUint64:
      if (!plain_integer(raw, &negative, &magnitude) || negative) return false;
      fields_.u64[info.slot] = magnitude;
      return true;
    case FieldType::kInt64:
      if (!plain_integer(raw, &negative, &magnitude)) return false;
      fields_.i64[info.slot] =
          negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
      return true;
    case FieldType::kString:
      if (!plain_string(raw, &text)) return false;
      fields_.strings[info.slot].assign(text);
      return true;
    case FieldType::kAckSet:
      return read_ack_set(v, info.name, &fields_.ack_words).ok();
    case FieldType::kEntries:
      return read_entries(v, &fields_.entries).ok();
  }
  return false;
}

bool LineParser::fast_event(od::document_reference doc, spec::Event* out) {
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  fields_.present = 0;
  const EventSchema* schema = nullptr;
  std::size_t kind = 0;
  for (auto result : obj) {
    if (result.error()) return false;
    od::field& field = result.value_unsafe();  // by reference: copies of it cost here
    std::string_view key;
    if (!plain_key(field, &key)) return false;
    if (schema == nullptr) {  // the first field must be "ev", naming an event of the format
      std::string_view ev;
      if (key != "ev" || !plain_string(field.value().raw_json_token(), &ev)) return false;
      std::optional<std::size_t> found = find_event(ev);
      if (!found) return false;
      kind = *found;
      schema = &event_schema(kind);
      continue;
    }
    std::optional<FieldId> id = find_field(key);
    if (!id || ((schema->required | schema->optional) & field_bit(*id)) == 0) {
      if (key == "ev" || !skip_value(field.value(), 1).ok()) return false;  // "ev" twice
      continue;
    }
    if (fields_.has(*id)) return false;
    fields_.present |= field_bit(*id);
    if (!fast_field(*id, field.value())) return false;
  }
  if (schema == nullptr || (schema->required & ~fields_.present) != 0) return false;
  return build(kind, out).ok();
}

absl::Status LineParser::build(std::size_t kind, spec::Event* out) {
  using F = FieldId;
  Fields& f = fields_;
  // An enumeration field's value, checked against the spec's names.
  const auto enum_error = [&](FieldId field, const std::string& names) {
    return error(absl::StrCat("field \"", av(field_info(field).name),
                              "\" must be one of ", names, ", got ", json_quoted(f.str(field))));
  };
  switch (kind) {
    case event_index<spec::Connect>():
      *out = spec::Connect{f.id(F::kCnx)};
      break;
    case event_index<spec::Subscribe>():
      *out = spec::Subscribe{f.id(F::kCnx), f.u(F::kConsumer), f.opt_id(F::kInc)};
      break;
    case event_index<spec::SubscribeOk>():
      *out = spec::SubscribeOk{f.id(F::kCnx), f.u(F::kConsumer)};
      break;
    case event_index<spec::SubscribeFail>():
      *out = spec::SubscribeFail{f.id(F::kCnx), f.u(F::kConsumer)};
      break;
    case event_index<spec::Flow>():
      *out = spec::Flow{f.id(F::kCnx), f.u(F::kConsumer), f.i(F::kPermits), f.opt_id(F::kInc)};
      break;
    case event_index<spec::Message>():
      *out = spec::Message{
          f.id(F::kCnx), f.u(F::kConsumer),      f.id(F::kCmd),     f.opt_u(F::kMessagePermits),
          f.ack_set(),   f.opt_i(F::kBatchSize), f.opt_i(F::kEpoch)};
      break;
    case event_index<spec::Ack>():
      *out = spec::Ack{f.id(F::kCnx), f.u(F::kConsumer), f.id(F::kCmd),
                       f.opt_str(F::kValidationError)};
      break;
    case event_index<spec::CloseConsumer>():
      *out = spec::CloseConsumer{f.id(F::kCnx), f.u(F::kConsumer)};
      break;
    case event_index<spec::Disconnect>():
      *out = spec::Disconnect{f.id(F::kCnx)};
      break;
    case event_index<spec::Quiescent>():
      *out = spec::Quiescent{f.id(F::kCnx), f.u(F::kConsumer)};
      break;
    case event_index<spec::IncOpen>():
      *out = spec::IncOpen{f.id(F::kInc), f.id(F::kCnx), f.u(F::kConsumer)};
      break;
    case event_index<spec::IncFlowEnabled>():
      *out = spec::IncFlowEnabled{f.id(F::kInc)};
      break;
    case event_index<spec::IncClose>(): {
      std::optional<spec::CloseReason> reason = spec::parse_close_reason(f.str(F::kReason));
      if (!reason) return enum_error(F::kReason, enum_names(5, &spec::close_reason_name));
      *out = spec::IncClose{f.id(F::kInc), *reason};
      break;
    }
    case event_index<spec::Recv>():
      *out = spec::Recv{f.id(F::kInc), f.id(F::kCmd), f.opt_u(F::kMessagePermits), f.ack_set()};
      break;
    case event_index<spec::Resolve>(): {
      std::optional<spec::PermitSource> source = spec::parse_permit_source(f.str(F::kSource));
      if (!source) return enum_error(F::kSource, enum_names(4, &spec::permit_source_name));
      *out = spec::Resolve{f.id(F::kCmd), f.i(F::kP), *source};
      break;
    }
    case event_index<spec::Metadata>():
      *out = spec::Metadata{f.id(F::kCmd), f.i(F::kBatchSize)};
      break;
    case event_index<spec::Corrupt>(): {
      std::optional<spec::FailureStage> stage = spec::parse_failure_stage(f.str(F::kStage));
      if (!stage) return enum_error(F::kStage, enum_names(5, &spec::failure_stage_name));
      *out = spec::Corrupt{f.id(F::kCmd), *stage, f.opt_i(F::kIndex)};
      break;
    }
    case event_index<spec::Claim>():
      *out = spec::Claim{f.id(F::kCmd), f.id(F::kMsg), f.opt_i(F::kIndex)};
      break;
    case event_index<spec::Restore>():
      *out = spec::Restore{f.id(F::kCmd), f.id(F::kMsg)};
      break;
    case event_index<spec::Skip>(): {
      std::optional<spec::SkipReason> reason = spec::parse_skip_reason(f.str(F::kReason));
      if (!reason) return enum_error(F::kReason, enum_names(4, &spec::skip_reason_name));
      *out = spec::Skip{f.id(F::kCmd), f.i(F::kIndex), *reason};
      break;
    }
    case event_index<spec::Transfer>(): {
      std::optional<spec::TransferPath> path = spec::parse_transfer_path(f.str(F::kPath));
      if (!path) return enum_error(F::kPath, enum_names(3, &spec::transfer_path_name));
      *out = spec::Transfer{f.id(F::kCmd), *path};
      break;
    }
    case event_index<spec::DirectReturn>():
      *out = spec::DirectReturn{f.id(F::kCmd), f.i(F::kN), f.opt_str(F::kPath)};
      break;
    case event_index<spec::Settle>():
      *out = spec::Settle{f.id(F::kCmd), f.i(F::kN)};
      break;
    case event_index<spec::MsgReturn>():
      *out = spec::MsgReturn{f.id(F::kMsg), f.opt_i(F::kN).value_or(1)};
      break;
    case event_index<spec::Drop>():
      *out = spec::Drop{f.opt_id(F::kCmd), f.opt_id(F::kMsg), f.i(F::kN)};
      break;
    case event_index<spec::ProtocolError>():
      *out = spec::ProtocolError{f.id(F::kCnx), f.take_str(F::kReason)};
      break;
    case event_index<spec::Send>(): {
      std::optional<spec::DispatcherKind> dispatcher;
      if (f.has(F::kDispatcher)) {
        dispatcher = spec::parse_dispatcher(f.str(F::kDispatcher));
        if (!dispatcher) return enum_error(F::kDispatcher, dispatcher_names());
      }
      *out = spec::Send{f.u(F::kConsumer),    f.opt_id(F::kInc),      dispatcher,
                        std::move(f.entries), f.i(F::kConsumerDebit), f.opt_i(F::kDispatcherDebit)};
      f.entries.clear();
      break;
    }
    case event_index<spec::ConsumerRemoved>():
      *out = spec::ConsumerRemoved{f.u(F::kConsumer), f.opt_id(F::kInc)};
      break;
    case event_index<spec::Extension>():
      *out = spec::Extension{ev_};
      break;
    default:
      return absl::InternalError("unreachable event kind");
  }
  return absl::OkStatus();
}

}  // namespace permitcheck::trace::internal
