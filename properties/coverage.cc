#include "properties/coverage.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "spec/command_budget.h"
#include "spec/finalize.h"
#include "spec/plain_text.h"
#include "spec/rule_id.h"

namespace permitcheck::properties {
namespace {

using DecisionList = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Rules the random worlds do not reach by design, with where they are pinned instead.
constexpr std::pair<const char*, const char*> kExcluded[] = {
    {"M3", "the reference client returns a message object once by construction, so no second "
           "return reaches the trace; the monitor's M3 check is pinned by tests/spec/monitor_test.cc"},
    {"X7", "the random worlds record their sends, and X7 is judged only on a trace without them "
           "(a real broker through a tap); pinned by tests/spec/monitor_dispatch_test.cc"},
};

const char* excluded_reason(const std::string& rule) {
  for (const auto& [r, why] : kExcluded) {
    if (rule == r) return why;
  }
  return nullptr;
}

std::uint64_t num(const spec::Id& id) { return id.is_number() ? id.as_number() : 0; }

const char* batch_bucket(std::int64_t b) {
  if (b <= 1) return "batch size 1";
  if (b <= 8) return "batch size 2-8";
  if (b <= 64) return "batch size 9-64";
  return "batch size 65-1000";
}

}  // namespace

const DecisionList& Coverage::decision_points() {
  static const DecisionList kPoints = {
      {"broker_sends_message_permits", {"field present", "field absent"}},
      {"consumer_debit", {"all admitted", "entry rejected"}},
      {"finalized_dispatchers", {"persistent shared", "sticky-key", "other aggregate"}},
      {"client_reads_message_permits", {"explicit", "absent"}},
      {"early_failure", {"explicit P", "fallback P"}},
      {"batch_failure", {"before any hand-off", "after hand-offs"}},
      {"direct_returns", {"chunk", "crypto", "skip"}},
      {"before_start", {"batched", "single"}},
      {"return_scope", {"current incarnation", "ended incarnation"}},
      {"flow_recheck", {"Flow written", "stale Flow dropped"}},
      {"inconsistent", {"corrupted-data handling", "connection closed"}},
      {"skipped_release", {"duplicate", "dead letter"}},
      {"budget_tracked", {"batched", "single"}},
  };
  return kPoints;
}

void CaseCoverage::way(const char* decision, const char* how) {
  decisions_.insert(decision);
  ways_.insert(absl::StrCat(decision, ": ", how));
}

void CaseCoverage::publish(const std::vector<impl::EntrySpec>& entries) {
  for (const impl::EntrySpec& e : entries) {
    const impl::Payload& p = e.payload;
    const std::int64_t b = std::max<std::int64_t>(1, p.batch_size);
    tags_.insert(batch_bucket(b));
    const auto acked = static_cast<std::int64_t>(e.pre_acked.size());
    if (acked == 0) {
      tags_.insert("ack_set absent");
    } else if (acked >= b) {
      tags_.insert("ack_set all acknowledged");
      rule("B3");  // candidate P = 0: the broker must send nothing
    } else if (acked == b - 1) {
      tags_.insert("ack_set one left");
    } else if (2 * acked < b) {
      tags_.insert("ack_set dense (few acknowledged)");
    } else {
      tags_.insert("ack_set sparse (most acknowledged)");
    }
    if (acked > 0 && b > 64) tags_.insert("ack_set beyond the first 64-bit word");
    if (acked > 0 && !e.stray_ack_bits.empty()) tags_.insert("ack_set bits at or beyond B");
    if (p.chunked()) tags_.insert("chunked message");
    if (!p.checksum_ok) tags_.insert("fault checksum");
    if (!p.metadata_ok) tags_.insert("fault metadata");
    if (!p.decompress_ok) tags_.insert("fault decompression");
    if (p.parse_fails_at >= 0) tags_.insert("fault batch parse");
    if (p.handoff_fails_at >= 0) tags_.insert("fault hand-off");
    if (!p.compacted_out.empty()) tags_.insert("fault compacted-out");
    if (p.encrypted) tags_.insert("fault encrypted");
    if (p.custom_format) tags_.insert("fault custom format");
  }
}

void CaseCoverage::observe(const spec::Event& event, const impl::World& world) {
  std::visit([&](const auto& e) { on(e, world); }, event);
}

void CaseCoverage::on(const spec::Send& e, const impl::World& /*world*/) {
  for (const char* r : {"B1", "B2", "B4", "B7", "B8", "B12", "E4"}) rule(r);
  bool rejected = false;
  for (const spec::SentEntry& s : e.entries) rejected |= !s.entry.admitted;
  way("consumer_debit", rejected ? "entry rejected" : "all admitted");
  if (e.dispatcher && *e.dispatcher != spec::DispatcherKind::kSingleActive) {
    rule("B5");
    rule("B6");
    way("finalized_dispatchers",
        spec::is_sticky_key(*e.dispatcher) ? "sticky-key"
        : (*e.dispatcher == spec::DispatcherKind::kPersistentShared ||
           *e.dispatcher == spec::DispatcherKind::kPersistentSharedClassic)
            ? "persistent shared"
            : "other aggregate");
  }
  std::int64_t& available = wire_available_[e.consumer];
  if (e.consumer_debit > available) rule("B9");  // the send overdraws: batch debt
  available -= e.consumer_debit;
}

void CaseCoverage::on(const spec::Flow& e, const impl::World& /*world*/) {
  for (const char* r : {"B10", "N4", "N5"}) rule(r);
  way("flow_recheck", "Flow written");
  if (incs_of_consumer_[e.consumer] > 1) rule("N6");
  const std::int64_t before = wire_available_[e.consumer];
  wire_available_[e.consumer] += e.permits;
  if (before <= 0 && wire_available_[e.consumer] > 0) rule("B13");
}

void CaseCoverage::on(const spec::Message& e, const impl::World& world) {
  for (const char* r : {"W1", "W2", "W3"}) rule(r);
  way("broker_sends_message_permits", e.message_permits ? "field present" : "field absent");
  if (!e.message_permits) absent_field_cmds_.insert(num(e.cmd));
  if (world.corrupted_on_wire(num(e.cmd)) && e.message_permits) {
    const bool in_range = *e.message_permits >= 1 && *e.message_permits <= 2147483647ULL;
    tags_.insert(in_range ? "fault wire value in range" : "fault wire value out of range");
  }
}

void CaseCoverage::on(const spec::CloseConsumer& /*event*/, const impl::World& /*world*/) {
  rule("B11");
}

void CaseCoverage::on(const spec::Disconnect& /*event*/, const impl::World& /*world*/) {
  rule("B11");
}

void CaseCoverage::on(const spec::IncOpen& e, const impl::World& /*world*/) {
  rule("N1");
  const std::uint64_t inc = num(e.inc);
  if (auto cur = current_.find(e.consumer); cur != current_.end()) {
    rule("N2");
    tags_.insert(in_flight_[cur->second] > 0 ? "replacement with messages in flight"
                                             : "replacement with nothing in flight");
  }
  current_[e.consumer] = inc;
  ++incs_of_consumer_[e.consumer];
  wire_available_[e.consumer] = 0;
}

void CaseCoverage::on(const spec::Recv& e, const impl::World& world) {
  for (const char* r : {"C1", "K1"}) rule(r);
  inc_of_cmd_[num(e.cmd)] = num(e.inc);
  way("client_reads_message_permits", e.message_permits ? "explicit" : "absent");
  if (!e.message_permits) rule("C6");
  if (!e.ack_set.absent()) rule("K3");
  const std::shared_ptr<const impl::Payload> p = world.payload_of(num(e.cmd));
  if (p != nullptr) way("budget_tracked", p->batched ? "batched" : "single");
}

void CaseCoverage::on(const spec::Resolve& e, const impl::World& /*world*/) {
  rule("C2");
  source_of_.emplace(num(e.cmd), e.source);
}

void CaseCoverage::on(const spec::Metadata& /*event*/, const impl::World& /*world*/) {
  rule("C3");
}

void CaseCoverage::on(const spec::Corrupt& e, const impl::World& world) {
  const std::uint64_t cmd = num(e.cmd);
  if (e.stage == spec::FailureStage::kInconsistent) {
    rule("C5");
    way("inconsistent", "corrupted-data handling");
    return;
  }
  rule("C7");
  if (spec::is_early_failure(e.stage)) {
    auto s = source_of_.find(cmd);
    way("early_failure",
        s != source_of_.end() && s->second == spec::PermitSource::kExplicit ? "explicit P"
                                                                           : "fallback P");
    if (absent_field_cmds_.contains(cmd)) {
      const std::shared_ptr<const impl::Payload> p = world.payload_of(cmd);
      rule("X1");
      if (p != nullptr && !p->batched) rules_.erase("X1");
      if (auto it = source_of_.find(cmd); it != source_of_.end() &&
                                          it->second == spec::PermitSource::kAckSet) {
        rule("X6");
      }
    }
  } else {
    way("batch_failure", claims_[cmd] > 0 ? "after hand-offs" : "before any hand-off");
  }
}

void CaseCoverage::on(const spec::ProtocolError& e, const impl::World& /*world*/) {
  if (e.reason.find("overflow") != std::string::npos) {
    rule("N7");
  } else if (e.reason.find("outside") != std::string::npos) {
    rule("C4");
  } else {
    rule("C5");
    way("inconsistent", "connection closed");
  }
}

void CaseCoverage::on(const spec::Claim& e, const impl::World& /*world*/) {
  for (const char* r : {"K2", "K8", "M1"}) rule(r);
  ++claims_[num(e.cmd)];
  const auto inc = inc_of_cmd_.find(num(e.cmd));
  if (inc != inc_of_cmd_.end()) {
    inc_of_msg_[e.msg.as_text()] = inc->second;
    ++in_flight_[inc->second];
  }
}

void CaseCoverage::on(const spec::Restore& /*event*/, const impl::World& /*world*/) {
  rule("K2");
}

void CaseCoverage::on(const spec::Skip& e, const impl::World& world) {
  rule("K4");
  switch (e.reason) {
    case spec::SkipReason::kDuplicate:
      rule("S6");
      way("skipped_release", "duplicate");
      break;
    case spec::SkipReason::kDeadLetter:
      rule("S5");
      way("skipped_release", "dead letter");
      break;
    case spec::SkipReason::kBeforeStart: {
      const std::shared_ptr<const impl::Payload> p = world.payload_of(num(e.cmd));
      way("before_start", p != nullptr && p->batched ? "batched" : "single");
      break;
    }
    case spec::SkipReason::kCompacted:
      break;
  }
  tags_.insert(absl::StrCat("skip ", std::string(spec::skip_reason_name(e.reason))));
}

void CaseCoverage::on(const spec::Transfer& e, const impl::World& /*world*/) {
  rule("S1");
  transfer_cmds_.insert(num(e.cmd));
  if (e.path == spec::TransferPath::kProcessor) rule("X5");
  if (e.path == spec::TransferPath::kCrypto &&
      config_.options.crypto_action == impl::CryptoAction::kFail) {
    rule("S4");
    rule("X3");
  }
}

void CaseCoverage::on(const spec::DirectReturn& e, const impl::World& world) {
  rule("K6");
  direct_cmds_.insert(num(e.cmd));
  const spec::DirectPath path = e.path ? e.path->kind() : spec::DirectPath::kOther;
  if (path == spec::DirectPath::kChunk) {
    rule("S2");
    way("direct_returns", "chunk");
  } else if (path == spec::DirectPath::kCrypto) {
    rule("S3");
    way("direct_returns", "crypto");
    const std::shared_ptr<const impl::Payload> p = world.payload_of(num(e.cmd));
    if (p != nullptr && p->batched) rule("X2");
  } else {
    way("direct_returns", "skip");
  }
}

void CaseCoverage::on(const spec::Settle& e, const impl::World& world) {
  for (const char* r : {"K5", "K7", "E1", "E2"}) rule(r);
  const std::uint64_t cmd = num(e.cmd);
  const std::shared_ptr<const impl::Payload> p = world.payload_of(cmd);
  if (p != nullptr && p->chunked() && transfer_cmds_.contains(cmd) && !direct_cmds_.contains(cmd) &&
      claims_[cmd] == 0) {
    rule("X4");  // a chunk failure branch: nothing returned, nothing delivered
  }
}

void CaseCoverage::on(const spec::MsgReturn& e, const impl::World& /*world*/) {
  for (const char* r : {"M1", "N3", "E3"}) rule(r);
  if (++returns_of_msg_[e.msg.as_text()] > 1) rule("M3");
  if (auto it = inc_of_msg_.find(e.msg.as_text()); it != inc_of_msg_.end()) {
    bool current = false;
    for (const auto& [consumer, inc] : current_) current |= inc == it->second;
    way("return_scope", current ? "current incarnation" : "ended incarnation");
    if (returns_of_msg_[e.msg.as_text()] == 1) --in_flight_[it->second];
  }
}

void CaseCoverage::on(const spec::Drop& e, const impl::World& /*world*/) {
  if (e.msg) {  // a late return to an ended incarnation, dropped
    for (const char* r : {"M1", "N3", "E3"}) rule(r);
    way("return_scope", "ended incarnation");
    if (auto it = inc_of_msg_.find(e.msg->as_text()); it != inc_of_msg_.end()) {
      --in_flight_[it->second];
    }
  } else if (!e.cmd) {  // a queued Flow of a state no longer current
    way("flow_recheck", "stale Flow dropped");
    rule("N6");
  } else {  // a zero-queue consumer's batch: the consumer closes itself
    rule("S7");
    tags_.insert("zero-queue consumer closed by a batch");
  }
}

void CaseCoverage::on(const spec::Quiescent& e, const impl::World& /*world*/) {
  for (const char* r : {"E5", "E6"}) rule(r);
  if (wire_available_[e.consumer] > 0) rule("B13");
}

void CaseCoverage::on(const spec::Extension& e, const impl::World& /*world*/) {
  if (e.ev == "x-stale-epoch-discard") rule("M2");
}

void CaseCoverage::finish(std::size_t steps) {
  tags_.insert(steps <= 10   ? "steps 0-10"
               : steps <= 25 ? "steps 11-25"
               : steps <= 50 ? "steps 26-50"
                             : "steps over 50");
}

void CaseCoverage::classify() const {
  for (const std::string& t : tags_) RC_CLASSIFY(true, t);
}

void Coverage::add(const CaseCoverage& c) {
  ++cases_;
  for (const std::string& r : c.rules()) ++rules_[r];
  for (const std::string& d : c.decisions()) ++decisions_[d];
  for (const std::string& w : c.ways()) ++ways_[w];
  for (const std::string& t : c.tags()) ++tags_[t];
}

void Coverage::add_distribution(const rc::detail::Distribution& distribution) {
  for (const auto& [tags, count] : distribution) {
    for (const std::string& t : tags) {
      // RapidCheck shows a string tag quoted.
      const bool quoted = t.size() >= 2 && t.front() == '"' && t.back() == '"';
      rc_tags_[quoted ? t.substr(1, t.size() - 2) : t] += count;
    }
  }
}

int Coverage::rule_cases(const std::string& rule) const {
  auto it = rules_.find(rule);
  return it == rules_.end() ? 0 : it->second;
}
int Coverage::decision_cases(const std::string& d) const {
  auto it = decisions_.find(d);
  return it == decisions_.end() ? 0 : it->second;
}
int Coverage::way_cases(const std::string& w) const {
  auto it = ways_.find(w);
  return it == ways_.end() ? 0 : it->second;
}

std::vector<std::string> Coverage::unreached() const {
  std::vector<std::string> out;
  for (const auto& [d, ways] : decision_points()) {
    if (decision_cases(d) == 0) out.push_back(absl::StrCat("decision ", d));
  }
  for (const spec::RuleInfo& r : spec::all_rules()) {
    const std::string name(r.name);
    if (rule_cases(name) == 0 && excluded_reason(name) == nullptr) out.push_back(absl::StrCat("rule ", name));
  }
  return out;
}

std::string Coverage::format(int cases) const {
  std::string out = absl::StrCat("coverage over ", spec::count_noun(cases, "case"),
                                 "\n\ndecision points (spec::Ruleset):\n");
  for (const auto& [d, ways] : decision_points()) {
    const int reached = decision_cases(d);
    absl::StrAppend(&out, absl::StrFormat("  %-30s reached in %6d %s;", d, reached,
                                          spec::noun(reached, "case")));
    for (const std::string& w : ways) {
      absl::StrAppend(&out, absl::StrFormat(" %s %d;", w, way_cases(absl::StrCat(d, ": ", w))));
    }
    out.back() = '\n';
  }
  absl::StrAppend(&out, "\nrules (cases in which the monitor had something to judge):\n");
  int column = 0;
  for (const spec::RuleInfo& r : spec::all_rules()) {
    const std::string name(r.name);
    const char* why = excluded_reason(name);
    absl::StrAppend(&out, absl::StrFormat("  %-4s %6d%s", name, rule_cases(name), why ? "*" : " "));
    if (++column % 6 == 0) absl::StrAppend(&out, "\n");
  }
  if (column % 6 != 0) absl::StrAppend(&out, "\n");
  for (const auto& [r, why] : kExcluded) absl::StrAppend(&out, "  * ", r, ": not in the random worlds (", why, ")\n");
  absl::StrAppend(&out, "\ngenerator distributions (RapidCheck classifications, cases tagged):\n");
  const std::map<std::string, int>& tags = rc_tags_.empty() ? tags_ : rc_tags_;
  for (const auto& [t, n] : tags) {
    absl::StrAppend(&out, absl::StrFormat("  %-40s %6d  %5.1f%%\n", t, n, cases > 0 ? 100.0 * n / cases : 0.0));
  }
  const std::vector<std::string> missing = unreached();
  if (missing.empty()) {
    absl::StrAppend(&out, "\nunreached: none\n");
  } else {
    absl::StrAppend(&out, "\nUNREACHED (", missing.size(), "):");
    for (const std::string& m : missing) absl::StrAppend(&out, " ", m, ";");
    out.back() = '\n';
  }
  return out;
}

}  // namespace permitcheck::properties
