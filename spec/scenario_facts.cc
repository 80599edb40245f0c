#include "spec/scenario_facts.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/absl_view.h"

namespace permitcheck::spec {
namespace {

// The "key=value" fields of a fact's name, read front to back in the documented order: each
// value up to the next space, the last one (rest) to the end of the name.
class FactFields {
 public:
  FactFields(std::string_view ev, std::string_view name) {
    ok_ = ev.starts_with(name) && ev.size() > name.size() && ev[name.size()] == ' ';
    if (ok_) rest_ = ev.substr(name.size() + 1);
  }
  bool ok() const { return ok_; }

  std::string_view word(std::string_view key) {
    if (!prefix(key)) return {};
    const std::size_t space = rest_.find(' ');
    if (space == std::string_view::npos) {  // a later field always follows
      ok_ = false;
      return {};
    }
    const std::string_view value = rest_.substr(0, space);
    rest_.remove_prefix(space + 1);
    return value;
  }
  std::string_view last(std::string_view key) {
    if (!prefix(key)) return {};
    const std::string_view value = rest_;
    rest_ = {};
    return value;
  }
  std::int64_t number(std::string_view key) {
    const std::string_view w = word(key);
    std::int64_t n = 0;
    if (ok_ && !absl::SimpleAtoi(to_absl(w), &n)) ok_ = false;
    return n;
  }
  bool flag(std::string_view key) {
    const std::string_view w = word(key);
    if (ok_ && w != "0" && w != "1") ok_ = false;
    return w == "1";
  }
  RuleId rule(std::string_view key) {
    const std::string_view w = word(key);
    const std::optional<RuleId> id = ok_ ? parse_rule_id(w) : std::nullopt;
    if (!id) ok_ = false;
    return id.value_or(RuleId::kE1);
  }

 private:
  bool prefix(std::string_view key) {
    if (!ok_ || !rest_.starts_with(key) || rest_.size() <= key.size() ||
        rest_[key.size()] != '=') {
      ok_ = false;
      return false;
    }
    rest_.remove_prefix(key.size() + 1);
    return true;
  }
  bool ok_ = false;
  std::string_view rest_;
};

constexpr std::string_view kWindowKinds[] = {"payload_failure", "truncated_batch", "held_across",
                                             "stale_epoch", "flow_around_close", "before_start"};

int fact_flag(bool b) { return b ? 1 : 0; }

}  // namespace

std::string window_event(const WindowFact& w) {
  std::string s = absl::StrCat(to_absl(kWindowEvent), " kind=",
                               to_absl(kWindowKinds[static_cast<int>(w.kind)]));
  switch (w.kind) {
    case WindowKind::kPayloadFailure:
      absl::StrAppend(&s, " stage=", to_absl(failure_stage_name(w.stage)), " p=", w.p);
      break;
    case WindowKind::kTruncatedBatch:
      absl::StrAppend(&s, " handed=", w.handed, " p=", w.p,
                      " past_last=", fact_flag(w.past_last));
      break;
    case WindowKind::kHeldAcross:
    case WindowKind::kStaleEpoch:
      absl::StrAppend(&s, " same_connection=", fact_flag(w.same_connection));
      break;
    case WindowKind::kFlowAroundClose: absl::StrAppend(&s, " t=", w.n); break;
    case WindowKind::kBeforeStart: absl::StrAppend(&s, " singles=", w.n); break;
  }
  absl::StrAppend(&s, " what=", w.what);
  return s;
}

std::optional<WindowFact> parse_window_event(std::string_view ev) {
  FactFields f(ev, kWindowEvent);
  const std::string_view kind = f.word("kind");
  WindowFact w;
  bool known = false;
  for (int i = 0; i < static_cast<int>(std::size(kWindowKinds)); ++i) {
    if (kind == kWindowKinds[i]) {
      w.kind = static_cast<WindowKind>(i);
      known = true;
    }
  }
  if (!f.ok() || !known) return std::nullopt;
  switch (w.kind) {
    case WindowKind::kPayloadFailure: {
      const std::optional<FailureStage> stage = parse_failure_stage(f.word("stage"));
      if (!stage) return std::nullopt;
      w.stage = *stage;
      w.p = f.number("p");
      break;
    }
    case WindowKind::kTruncatedBatch:
      w.handed = f.number("handed");
      w.p = f.number("p");
      w.past_last = f.flag("past_last");
      break;
    case WindowKind::kHeldAcross:
    case WindowKind::kStaleEpoch: w.same_connection = f.flag("same_connection"); break;
    case WindowKind::kFlowAroundClose: w.n = f.number("t"); break;
    case WindowKind::kBeforeStart: w.n = f.number("singles"); break;
  }
  w.what = std::string(f.last("what"));
  if (!f.ok()) return std::nullopt;
  return w;
}

std::string early_failure_event(const EarlyFailure& e) {
  return absl::StrCat(to_absl(kEarlyFailureEvent), " p=", e.p, " ack_set=",
                      e.ack_set.absent() ? "-" : absl::StrJoin(e.ack_set.words(), ","),
                      " name=", e.name);
}

std::optional<EarlyFailure> parse_early_failure_event(std::string_view ev) {
  FactFields f(ev, kEarlyFailureEvent);
  EarlyFailure e;
  e.p = f.number("p");
  const std::string_view words = f.word("ack_set");
  e.name = std::string(f.last("name"));
  if (!f.ok()) return std::nullopt;
  if (words != "-") {
    std::vector<std::int64_t> v;
    for (absl::string_view w : absl::StrSplit(to_absl(words), ',')) {
      std::int64_t n = 0;
      if (!absl::SimpleAtoi(w, &n)) return std::nullopt;
      v.push_back(n);
    }
    e.ack_set = AckSet(std::move(v));
  }
  return e;
}

std::string late_flow_event(std::int64_t permits) {
  return absl::StrCat(to_absl(kLateFlowEvent), " permits=", permits);
}

std::optional<std::int64_t> parse_late_flow_event(std::string_view ev) {
  FactFields f(ev, kLateFlowEvent);
  const std::string_view w = f.last("permits");
  std::int64_t n = 0;
  if (!f.ok() || !absl::SimpleAtoi(to_absl(w), &n)) return std::nullopt;
  return n;
}

std::string drain_event(const DrainFact& d) {
  return absl::StrCat(to_absl(kDrainEvent), " scenario=", d.scenario, " ran=", fact_flag(d.ran),
                      " measured=", fact_flag(d.measured), " delta=", d.delta,
                      " short_min=", d.short_min, " short_max=", d.short_max,
                      " granted=", d.granted, " debited=", d.debited,
                      " old_client=", fact_flag(d.old_client),
                      " payload_failure=", fact_flag(d.payload_failure), " text=", d.text);
}

std::optional<DrainFact> parse_drain_event(std::string_view ev) {
  FactFields f(ev, kDrainEvent);
  DrainFact d;
  d.scenario = std::string(f.word("scenario"));
  d.ran = f.flag("ran");
  d.measured = f.flag("measured");
  d.delta = f.number("delta");
  d.short_min = f.number("short_min");
  d.short_max = f.number("short_max");
  d.granted = f.number("granted");
  d.debited = f.number("debited");
  d.old_client = f.flag("old_client");
  d.payload_failure = f.flag("payload_failure");
  d.text = std::string(f.last("text"));
  if (!f.ok()) return std::nullopt;
  return d;
}

std::string no_consumer_event(const NoConsumer& x) {
  return absl::StrCat(to_absl(kNoConsumerEvent), " rule=", to_absl(rule_name(x.rule)),
                      " scenario=", x.scenario);
}

std::optional<NoConsumer> parse_no_consumer_event(std::string_view ev) {
  FactFields f(ev, kNoConsumerEvent);
  NoConsumer x;
  x.rule = f.rule("rule");
  x.scenario = std::string(f.last("scenario"));
  if (!f.ok() || x.scenario.empty() || x.scenario.find(' ') != std::string::npos) {
    return std::nullopt;
  }
  return x;
}

std::string malformed_frame_event(const MalformedFrame& x) {
  return absl::StrCat(to_absl(kMalformedFrameEvent), " rule=", to_absl(rule_name(x.rule)),
                      " scenario=", x.scenario, " error=", x.error);
}

std::optional<MalformedFrame> parse_malformed_frame_event(std::string_view ev) {
  FactFields f(ev, kMalformedFrameEvent);
  MalformedFrame x;
  x.rule = f.rule("rule");
  x.scenario = std::string(f.word("scenario"));
  x.error = std::string(f.last("error"));
  if (!f.ok()) return std::nullopt;
  return x;
}

}  // namespace permitcheck::spec
