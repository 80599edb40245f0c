#include "trace/writer.h"

#include <optional>
#include <string_view>
#include <type_traits>
#include <variant>

#include "absl/strings/str_cat.h"
#include "spec/ruleset.h"
#include "trace/internal/json_text.h"
#include "trace/internal/schema.h"

namespace permitcheck::trace {
namespace {

using namespace permitcheck::spec;  // NOLINT: the writer names every event type

// Builds one JSON object field by field.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string* out) : out_(out) { out_->push_back('{'); }
  ~ObjectWriter() { out_->push_back('}'); }
  ObjectWriter(const ObjectWriter&) = delete;
  ObjectWriter& operator=(const ObjectWriter&) = delete;

  void string(std::string_view key, std::string_view value) {
    start(key);
    internal::append_json_string(out_, value);
  }
  template <typename Int>
  void integer(std::string_view key, Int value) {
    static_assert(std::is_integral_v<Int>);
    start(key);
    absl::StrAppend(out_, value);
  }
  void boolean(std::string_view key, bool value) {
    start(key);
    out_->append(value ? "true" : "false");
  }
  void id(std::string_view key, const Id& value) {
    if (value.is_number()) {
      integer(key, value.as_number());
    } else {
      string(key, std::string_view(value.as_text()));
    }
  }
  void ack_set(std::string_view key, const AckSet& value) {
    if (value.absent()) return;
    start(key);
    out_->push_back('[');
    bool first = true;
    for (std::int64_t word : value.words()) {
      if (!first) out_->push_back(',');
      first = false;
      absl::StrAppend(out_, word);
    }
    out_->push_back(']');
  }

  // Optional fields: written only when present.
  void id(std::string_view key, const std::optional<Id>& value) {
    if (value) id(key, *value);
  }
  template <typename Int>
  void integer(std::string_view key, const std::optional<Int>& value) {
    if (value) integer(key, *value);
  }
  void optional_string(std::string_view key, const std::optional<std::string>& value) {
    if (value) string(key, std::string_view(*value));
  }

  // Starts a field whose value the caller appends to out().
  std::string* raw(std::string_view key) {
    start(key);
    return out_;
  }

 private:
  void start(std::string_view key) {
    if (!first_) out_->push_back(',');
    first_ = false;
    internal::append_json_string(out_, key);
    out_->push_back(':');
  }

  std::string* out_;
  bool first_ = true;
};

void append_entries(std::string* out, const std::vector<SentEntry>& entries) {
  out->push_back('[');
  bool first = true;
  for (const SentEntry& e : entries) {
    if (!first) out->push_back(',');
    first = false;
    ObjectWriter w(out);
    w.id("cmd", e.cmd);
    w.integer("batch_size", e.entry.batch_size);
    w.ack_set("ack_set", e.entry.ack_set);
    w.boolean("admitted", e.entry.admitted);
    w.integer("p", e.p);
  }
  out->push_back(']');
}

// The fields after "ev", in the order of the format's tables (and of its example).
struct FieldWriter {
  ObjectWriter& w;

  void operator()(const Connect& e) { w.id("cnx", e.cnx); }
  void operator()(const Subscribe& e) {
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
    w.id("inc", e.inc);
  }
  void operator()(const SubscribeOk& e) {
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
  }
  void operator()(const SubscribeFail& e) {
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
  }
  void operator()(const Flow& e) {
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
    w.id("inc", e.inc);
    w.integer("permits", e.permits);
  }
  void operator()(const Message& e) {
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
    w.id("cmd", e.cmd);
    w.integer("message_permits", e.message_permits);
    w.ack_set("ack_set", e.ack_set);
    w.integer("batch_size", e.batch_size);
    w.integer("epoch", e.epoch);
  }
  void operator()(const Ack& e) {
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
    w.id("cmd", e.cmd);
    w.optional_string("validation_error", e.validation_error);
  }
  void operator()(const CloseConsumer& e) {
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
  }
  void operator()(const Disconnect& e) { w.id("cnx", e.cnx); }
  void operator()(const Quiescent& e) {
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
    w.integer("backlog", e.backlog);
  }
  void operator()(const IncOpen& e) {
    w.id("inc", e.inc);
    w.id("cnx", e.cnx);
    w.integer("consumer", e.consumer);
  }
  void operator()(const IncFlowEnabled& e) { w.id("inc", e.inc); }
  void operator()(const IncClose& e) {
    w.id("inc", e.inc);
    w.string("reason", close_reason_name(e.reason));
  }
  void operator()(const Recv& e) {
    w.id("inc", e.inc);
    w.id("cmd", e.cmd);
    w.integer("message_permits", e.message_permits);
    w.ack_set("ack_set", e.ack_set);
  }
  void operator()(const Resolve& e) {
    w.id("cmd", e.cmd);
    w.integer("p", e.p);
    w.string("source", permit_source_name(e.source));
  }
  void operator()(const Metadata& e) {
    w.id("cmd", e.cmd);
    w.integer("batch_size", e.batch_size);
  }
  void operator()(const Corrupt& e) {
    w.id("cmd", e.cmd);
    w.string("stage", failure_stage_name(e.stage));
    w.integer("index", e.index);
  }
  void operator()(const Claim& e) {
    w.id("cmd", e.cmd);
    w.id("msg", e.msg);
    w.integer("index", e.index);
  }
  void operator()(const Restore& e) {
    w.id("cmd", e.cmd);
    w.id("msg", e.msg);
  }
  void operator()(const Skip& e) {
    w.id("cmd", e.cmd);
    w.integer("index", e.index);
    w.string("reason", skip_reason_name(e.reason));
  }
  void operator()(const Transfer& e) {
    w.id("cmd", e.cmd);
    w.string("path", transfer_path_name(e.path));
  }
  void operator()(const DirectReturn& e) {
    w.id("cmd", e.cmd);
    w.integer("n", e.n);
    if (e.path) w.string("path", e.path->name());  // the trace format's text (DirectPath)
  }
  void operator()(const Settle& e) {
    w.id("cmd", e.cmd);
    w.integer("n", e.n);
  }
  void operator()(const MsgReturn& e) {
    w.id("msg", e.msg);
    if (e.n != 1) w.integer("n", e.n);  // the format's default
  }
  void operator()(const Drop& e) {
    w.id("cmd", e.cmd);
    w.id("msg", e.msg);
    w.integer("n", e.n);
  }
  void operator()(const ProtocolError& e) {
    w.id("cnx", e.cnx);
    w.string("reason", std::string_view(e.reason));
  }
  void operator()(const Send& e) {
    w.integer("consumer", e.consumer);
    w.id("inc", e.inc);
    if (e.dispatcher) w.string("dispatcher", dispatcher_name(*e.dispatcher));
    append_entries(w.raw("entries"), e.entries);
    w.integer("consumer_debit", e.consumer_debit);
    w.integer("dispatcher_debit", e.dispatcher_debit);
  }
  void operator()(const ConsumerRemoved& e) {
    w.integer("consumer", e.consumer);
    w.id("inc", e.inc);
  }
  void operator()(const WriteFailed& e) {
    w.integer("consumer", e.consumer);
    w.id("inc", e.inc);
  }
  void operator()(const Extension&) {}
};

}  // namespace

std::string write_header(const TraceHeader& header) {
  std::string out;
  {
    ObjectWriter w(&out);
    w.string("trace", std::string_view("pip491-permits"));
    w.integer("version", 1);
    w.string("source", trace_source_name(header.source));
    w.string("ruleset", ruleset(header.ruleset).name);
    w.integer("q", header.q);
    w.integer("t", header.t);
  }
  return out;
}

void append_event(std::string* out, const Event& event) {
  ObjectWriter w(out);
  w.string("ev", internal::ev_name(event));
  std::visit(FieldWriter{w}, event);
}

std::string write_event(const Event& event) {
  std::string out;
  append_event(&out, event);
  return out;
}

absl::Status write_trace(std::ostream& out, const TraceHeader& header,
                         const std::vector<Event>& events) {
  std::string line = write_header(header);
  line.push_back('\n');
  out.write(line.data(), static_cast<std::streamsize>(line.size()));
  for (const Event& event : events) {
    line.clear();
    append_event(&line, event);
    line.push_back('\n');
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
    if (!out) break;
  }
  out.flush();
  if (!out) return absl::DataLossError("write_trace: the output stream failed");
  return absl::OkStatus();
}

void append_json_string(std::string* out, std::string_view s) {
  internal::append_json_string(out, s);
}

std::string json_string(std::string_view s) {
  std::string out;
  internal::append_json_string(&out, s);
  return out;
}

}  // namespace permitcheck::trace
