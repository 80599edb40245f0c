#include "trace/internal/line_parser.h"

#include <cstring>
#include <utility>

#include "spec/ruleset.h"

// The parser's trace layer: the header line, event lines (the fast path for plain lines and the
// schema-driven one) and building spec::Event values. The JSON layer is in line_parser.cc.

namespace permitcheck::trace::internal {
namespace {

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
    absl::StrAppend(&out, i > 0 ? ", " : "", to_absl(name(static_cast<E>(i))));
  return out;
}

std::string dispatcher_names() {
  std::string out;
  for (spec::DispatcherKind k : spec::all_dispatcher_kinds()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", to_absl(spec::dispatcher_name(k)));
  }
  return out;
}

std::string supported_rulesets() {
  std::string out;
  for (const spec::Ruleset* r : spec::all_rulesets()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", to_absl(r->name));
  }
  return out;
}

std::string json_quoted(std::string_view text) {
  std::string out;
  append_json_string(&out, text);
  return display_token(out);
}

}  // namespace

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
        const std::string expected = absl::StrCat("\"", to_absl(kTraceName), "\"");
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
        return error(absl::StrCat("event \"", to_absl(schema.name),
                                  "\" is missing required field \"",
                                  to_absl(field_info(static_cast<FieldId>(f)).name), "\""));
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
    return error(absl::StrCat("field \"", to_absl(field_info(field).name),
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
    case event_index<spec::Quiescent>(): {
      // B13: the entries the broker still holds for the consumer, a count.
      const std::optional<std::int64_t> backlog = f.opt_i(F::kBacklog);
      if (backlog && *backlog < 0) {
        return error(absl::StrCat("field \"backlog\" must be a non-negative integer, got ",
                                  *backlog));
      }
      *out = spec::Quiescent{f.id(F::kCnx), f.u(F::kConsumer), backlog};
      break;
    }
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
    case event_index<spec::WriteFailed>():
      *out = spec::WriteFailed{f.u(F::kConsumer), f.opt_id(F::kInc)};
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