#include "matrix/sequence_svg.h"

#include <algorithm>
#include <map>
#include <variant>

#include "absl/strings/str_cat.h"
#include "base/absl_view.h"
#include "spec/events.h"
#include "spec/plain_text.h"
#include "trace/reader.h"
#include "trace/writer.h"
#include "validate/json_out.h"

namespace permitcheck::matrix {
namespace {

constexpr int kWidth = 760;
constexpr int kClientX = 150;
constexpr int kBrokerX = 610;
constexpr int kTop = 50;    // below the participant boxes
constexpr int kRow = 24;
constexpr std::size_t kMaxLabel = 96;

enum class Kind { kToBroker, kToClient, kClientNote, kBrokerNote, kBothNote, kCut };

struct Row {
  Kind kind;
  std::string label;
  bool finding = false;
};

std::string clip(std::string s) {
  if (s.size() > kMaxLabel) {
    s.resize(kMaxLabel - 3);
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
    if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.pop_back();
    s += "...";
  }
  return s;
}

std::string compact_json(const spec::Event& e) {
  std::string s;
  trace::append_event(&s, e);
  return s;
}

// A partial batch in the one notation of texts (spec/plain_text.h): its acknowledged indexes.
std::string ack_set_text(const spec::AckSet& a, std::optional<std::int64_t> batch_size) {
  if (a.absent()) return "";
  return absl::StrCat(" ", spec::acknowledged_text(a, batch_size.value_or(0)));
}

struct RowOf {
  Row operator()(const spec::Connect& x) { return {Kind::kToBroker, absl::StrCat("connect ", x.cnx.to_string())}; }
  Row operator()(const spec::Subscribe& x) {
    return {Kind::kToBroker, absl::StrCat("subscribe consumer ", x.consumer, x.inc ? " inc " + x.inc->to_string() : "")};
  }
  Row operator()(const spec::SubscribeOk& x) { return {Kind::kToClient, absl::StrCat("subscribe ok, consumer ", x.consumer)}; }
  Row operator()(const spec::SubscribeFail& x) { return {Kind::kToClient, absl::StrCat("subscribe failed, consumer ", x.consumer)}; }
  Row operator()(const spec::Flow& x) {
    return {Kind::kToBroker, absl::StrCat("Flow ", spec::count_noun(x.permits, "permit"), ", consumer ", x.consumer)};
  }
  Row operator()(const spec::Message& x) {
    std::string s = absl::StrCat("message cmd ", x.cmd.to_string());
    if (x.batch_size) absl::StrAppend(&s, " B=", *x.batch_size);
    if (x.message_permits) absl::StrAppend(&s, " P=", *x.message_permits);
    else s += " (no message_permits)";
    s += ack_set_text(x.ack_set, x.batch_size);
    if (x.epoch) absl::StrAppend(&s, " epoch ", *x.epoch);
    return {Kind::kToClient, s};
  }
  Row operator()(const spec::Ack& x) {
    return {Kind::kToBroker, absl::StrCat("ack cmd ", x.cmd.to_string(),
                                          x.validation_error ? " (" + *x.validation_error + ")" : "")};
  }
  Row operator()(const spec::CloseConsumer& x) { return {Kind::kToClient, absl::StrCat("CLOSE_CONSUMER ", x.consumer)}; }
  Row operator()(const spec::Disconnect& x) { return {Kind::kCut, absl::StrCat("connection ", x.cnx.to_string(), " dropped")}; }
  Row operator()(const spec::Quiescent& x) {
    return {Kind::kBothNote, absl::StrCat("quiescent: consumer ", x.consumer,
                                          x.backlog ? absl::StrCat(", backlog ", *x.backlog) : "")};
  }
  Row operator()(const spec::Send& x) {
    std::string s = "send";
    for (const spec::SentEntry& e : x.entries) {
      absl::StrAppend(&s, " cmd ", e.cmd.to_string(), " B=", e.entry.batch_size,
                      e.p ? absl::StrCat(" P=", *e.p) : (e.entry.admitted ? "" : " rejected"));
    }
    absl::StrAppend(&s, ", debit ", x.consumer_debit);
    return {Kind::kBrokerNote, s};
  }
  Row operator()(const spec::ConsumerRemoved& x) { return {Kind::kBrokerNote, compact_json(x)}; }
  Row operator()(const spec::Extension& x) { return {Kind::kBothNote, x.ev}; }
  // The client's own accounting (a client or model trace): a note on its lifeline.
  Row operator()(const auto& x) { return {Kind::kClientNote, compact_json(spec::Event(x))}; }
};

Row row_of(const spec::Event& e) { return std::visit(RowOf{}, e); }

void text(std::string* out, int x, int y, std::string_view anchor, std::string_view cls,
          std::string_view s) {
  absl::StrAppend(out, "<text x=\"", x, "\" y=\"", y, "\" text-anchor=\"", to_absl(anchor), "\" class=\"",
                  to_absl(cls), "\">", xml_text(s), "</text>\n");
}

std::string svg_of(const std::vector<Row>& rows, std::string_view id_view) {
  const absl::string_view id = to_absl(id_view);
  const int height = kTop + static_cast<int>(rows.size()) * kRow + 40;
  std::string out = absl::StrCat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"seq\" width=\"", kWidth, "\" height=\"",
      height, "\" viewBox=\"0 0 ", kWidth, " ", height, "\" role=\"img\" aria-label=\"sequence diagram\">\n",
      "<defs><marker id=\"", id, "-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
      "markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#333\"/></marker></defs>\n",
      "<style>.seq text{font:12px sans-serif}.seq .p{font-weight:bold}.seq .f{fill:#a00000}"
      ".seq .n{fill:#444}</style>\n");
  for (const auto& [x, name] : {std::pair{kClientX, "Client"}, std::pair{kBrokerX, "Broker"}}) {
    absl::StrAppend(&out, "<rect x=\"", x - 60, "\" y=\"8\" width=\"120\" height=\"26\" rx=\"4\" "
                    "fill=\"#eef\" stroke=\"#336\"/>\n");
    text(&out, x, 26, "middle", "p", name);
    absl::StrAppend(&out, "<line x1=\"", x, "\" y1=\"34\" x2=\"", x, "\" y2=\"", height - 10,
                    "\" stroke=\"#99a\" stroke-dasharray=\"4 3\"/>\n");
  }
  int y = kTop;
  for (const Row& r : rows) {
    const int mid = (kClientX + kBrokerX) / 2;
    switch (r.kind) {
      case Kind::kToBroker:
      case Kind::kToClient: {
        const bool right = r.kind == Kind::kToBroker;
        const int x1 = right ? kClientX : kBrokerX, x2 = right ? kBrokerX : kClientX;
        absl::StrAppend(&out, "<line class=\"arrow\" x1=\"", x1, "\" y1=\"", y + 8, "\" x2=\"", x2,
                        "\" y2=\"", y + 8, "\" stroke=\"#333\" marker-end=\"url(#", id, "-arrow)\"/>\n");
        text(&out, mid, y + 4, "middle", "", r.label);
        break;
      }
      case Kind::kCut:
        absl::StrAppend(&out, "<line class=\"arrow\" x1=\"", kClientX, "\" y1=\"", y + 8, "\" x2=\"",
                        kBrokerX, "\" y2=\"", y + 8, "\" stroke=\"#a00000\" stroke-dasharray=\"6 4\"/>\n");
        text(&out, mid, y + 4, "middle", "f", r.label);
        break;
      case Kind::kClientNote:
      case Kind::kBrokerNote:
      case Kind::kBothNote: {
        const int x = r.kind == Kind::kClientNote ? 8 : r.kind == Kind::kBrokerNote ? kBrokerX - 200 : kClientX - 40;
        const int w = r.kind == Kind::kBothNote ? kBrokerX - kClientX + 80 : kWidth - 16 - (x > 8 ? x - 8 : 0);
        absl::StrAppend(&out, "<rect class=\"note", r.finding ? " finding" : "", "\" x=\"", x, "\" y=\"", y - 6,
                        "\" width=\"", std::min(w, kWidth - x - 4), "\" height=\"", kRow - 4, "\" fill=\"",
                        r.finding ? "#fde8e8" : "#fffbe6", "\" stroke=\"", r.finding ? "#a00000" : "#cc9",
                        "\"/>\n");
        text(&out, x + 6, y + 10, "start", r.finding ? "f" : "n", r.label);
        break;
      }
    }
    y += kRow;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace

std::string xml_text(std::string_view s) { return validate::xml_escape(s); }

std::string sequence_svg(std::string_view trace_jsonl, const std::vector<CellFinding>& findings,
                         std::string_view id_prefix) {
  const absl::StatusOr<trace::Trace> t = trace::read_trace_text(trace_jsonl);
  if (!t.ok()) {
    return svg_of({Row{Kind::kBothNote, absl::StrCat("trace not drawn: ", t.status().message()), true}},
                  id_prefix);
  }
  std::multimap<std::uint64_t, const CellFinding*> notes;
  for (const CellFinding& f : findings) notes.emplace(f.line, &f);
  std::vector<Row> rows;
  const auto flush = [&](std::uint64_t upto) {
    while (!notes.empty() && notes.begin()->first <= upto) {
      const CellFinding& f = *notes.begin()->second;
      rows.push_back(Row{Kind::kBothNote,
                         clip(absl::StrCat(f.line ? absl::StrCat("line ", f.line, ": ") : "", f.rule,
                                           " ", f.explanation)),
                         true});
      notes.erase(notes.begin());
    }
  };
  const std::size_t shown = std::min(t->events.size(), kMaxSequenceEvents);
  for (std::size_t i = 0; i < shown; ++i) {
    const std::uint64_t line = i < t->lines.size() ? t->lines[i] : i + 2;
    flush(line - 1);
    Row r = row_of(t->events[i]);
    r.label = clip(absl::StrCat(line, ": ", r.label));
    rows.push_back(std::move(r));
    flush(line);
  }
  if (shown < t->events.size()) {
    rows.push_back(Row{Kind::kBothNote,
                       absl::StrCat(spec::count_noun(t->events.size() - shown, "more event"), ": see the trace"), false});
  }
  flush(UINT64_MAX);
  return svg_of(rows, id_prefix);
}

}  // namespace permitcheck::matrix
