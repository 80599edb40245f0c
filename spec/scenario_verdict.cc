#include "spec/scenario_verdict.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spec/legacy_catalogue.h"
#include "spec/permit_state.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {
namespace {

// "3 permits" for lo == hi, else "3 to 7 permits" (a range is always plural).
std::string permits_between(std::int64_t lo, std::int64_t hi) {
  if (lo == hi) return count_noun(hi, "permit");
  return absl::StrCat(lo, " to ", hi, " permits");
}

// The finding for a surplus (delta > 0) or shortfall the drain measured, under the rule of
// the row whose window explains it, with the rulebook's numbers. `amount` names the permits
// ("1 permit", "3 to 7 permits").
Finding row_finding(const std::vector<LegacyWindow>& opened, const DrainFacts& d,
                    std::int64_t delta, const std::string& amount,
                    std::vector<std::string>& found_rows) {
  const std::string how = delta > 0 ? "too many" : "too few";
  // Only a row whose legacy value errs the same way explains the amount (a loss is not
  // explained by a row that over-grants, nor the other way round).
  std::vector<LegacyWindow> rows;
  for (const LegacyWindow& r : opened) {
    if (!r.legacy_delta || (*r.legacy_delta > 0) == (delta > 0)) rows.push_back(r);
  }
  if (rows.empty() && delta < 0 && d.loss_is_payload_failure) {
    // A loss no legacy row explains (the cut at the last index, where legacy's D + 1 happens
    // to be exact) is still the payload failure settling too little (C7).
    return Finding{RuleId::kC7, 0,
                   absl::StrCat("the batch payload failure was settled with ", amount,
                                " ", how, " in ", d.scenario, " (", d.text, ")")};
  }
  if (rows.empty()) {
    return Finding{delta > 0 ? RuleId::kE2 : RuleId::kE5, 0,
                   absl::StrCat("the client returned ", amount, " ", how, " in ",
                                d.scenario, " (", d.text, ")")};
  }
  std::vector<std::string> parts;
  std::int64_t legacy = 0;
  bool legacy_known = true;
  std::map<std::string, int> seen;
  for (const LegacyWindow& r : rows) {
    if (seen[r.row]++ == 0) {
      parts.push_back(absl::StrCat(r.row, ": ", r.what));
      found_rows.push_back(r.row);
    }
    if (r.legacy_delta) legacy += *r.legacy_delta;
    else legacy_known = false;
  }
  std::string s = absl::StrCat(absl::StrJoin(parts, "; "), ": the client returned ", amount,
                               " ", how, " (", d.text, ")");
  if (legacy_known) {
    // "As observed" only of an exact measure (a range is no observation of one number).
    const bool exact = d.measured && (d.slack == 0 || delta > 0);
    absl::StrAppend(&s, "; the legacy rule returns ",
                    legacy == 0 ? std::string("exactly P")
                                : absl::StrCat(count_noun(std::abs(legacy), "permit"),
                                               legacy > 0 ? " too many" : " too few"),
                    " here", exact && legacy == delta ? ", as observed" : "");
  } else {
    absl::StrAppend(&s, "; legacy credits each late return to the replacement");
  }
  std::vector<std::string> books;
  for (const auto& [row, n] : seen) books.push_back(legacy_row_summary(row));
  absl::StrAppend(&s, "; ", absl::StrJoin(books, "; "));
  return Finding{rows.front().rule, 0, std::move(s)};
}

}  // namespace

LegacyWindow payload_failure_window(FailureStage stage, std::int64_t p, std::string what) {
  const std::string_view row = stage == FailureStage::kChecksum   ? "L1"
                               : stage == FailureStage::kMetadata ? "L2"
                                                                  : "L3";
  return {std::string(row), RuleId::kC7, 1 - p, std::move(what)};
}

std::optional<LegacyWindow> truncated_batch_window(std::int64_t handed, std::int64_t p,
                                                   bool past_last, std::string what) {
  const std::int64_t legacy = handed + 1 - p;  // D + K + 1 with K = 0
  if (legacy == 0) return std::nullopt;
  return LegacyWindow{past_last ? "L5" : "L4", past_last ? RuleId::kK7 : RuleId::kC7, legacy,
                      std::move(what)};
}

LegacyWindow held_across_window(bool same_connection, std::string what) {
  return {same_connection ? "L7" : "L6", RuleId::kE3, std::nullopt, std::move(what)};
}

LegacyWindow stale_epoch_window(bool same_connection, std::string what) {
  return {same_connection ? "L7" : "L6", RuleId::kM2, std::nullopt, std::move(what)};
}

LegacyWindow flow_around_close_window(std::int64_t threshold, std::string what) {
  return {"L11", RuleId::kN6, threshold, std::move(what)};
}

LegacyWindow before_start_window(std::int64_t singles, std::string what) {
  return {"L9", RuleId::kK4, -singles, std::move(what)};
}

std::string legacy_row_summary(std::string_view row) {
  static const std::vector<CatalogueEntry> rows = legacy_catalogue();
  for (const CatalogueEntry& r : rows) {
    if (r.id != row) continue;
    return absl::StrCat("rulebook ", std::string(row), ": ", std::string(r.situation),
                        ": legacy ", r.legacy_value, ", correct ", r.correct_value, " (",
                        std::string(r.effect), ")");
  }
  return "";
}

std::optional<Finding> drain_verdict(const std::vector<LegacyWindow>& opened, const DrainFacts& d,
                                     std::vector<std::string>& found_rows) {
  // A rev-d client's Flow returns its whole accumulator (N5), so the drain's number is exact;
  // an old client may keep up to `slack`: a surplus is still one, a shortfall only past it.
  if (d.measured && d.delta != 0 && (d.delta > 0 || -d.delta > d.slack)) {
    const std::string amount = d.slack == 0 || d.delta > 0
                                   ? count_noun(std::abs(d.delta), "permit")
                                   : permits_between(-d.delta - d.slack, -d.delta);
    return row_finding(opened, d, d.delta, amount, found_rows);
  }
  if (!d.measured && d.ran && d.short_min > 0) {
    return row_finding(opened, d, -1,
                       permits_between(std::max<std::int64_t>(1, d.short_min), d.short_max),
                       found_rows);
  }
  return std::nullopt;
}

std::optional<Finding> late_flow_verdict(std::int64_t late_flow,
                                         std::vector<std::string>& found_rows) {
  if (late_flow <= 0) return std::nullopt;
  found_rows.push_back("L11");
  return Finding{
      RuleId::kN6, 0,
      absl::StrCat("L11: a Flow of ", late_flow, " reached the replacement on the same "
                   "connection after its Subscribe and before anything was delivered to it: "
                   "the old incarnation's credit was written after the replacement's "
                   "Subscribe (over-grant ", late_flow, "); ", legacy_row_summary("L11"))};
}

std::optional<Excuse> field_absent_excuse(const FieldAbsent& f, const DrainFacts& d) {
  // A failure before metadata of a complete batch may return 1 (X1), of a partial one every
  // ack_set bit (X6). A shortfall of exactly that much is the known deviation, not E5/E6.
  std::int64_t allowance = 0, total_p = 0;
  RuleId rule = RuleId::kX1;
  std::vector<std::string> entries;
  for (const EarlyFailure& e : f.entries) {
    const std::int64_t fallback = e.ack_set.absent() ? 1 : e.ack_set.count_all();
    if (!e.ack_set.absent()) rule = RuleId::kX6;
    if (e.p == fallback) continue;
    allowance += e.p - fallback;
    total_p += e.p;
    entries.push_back(absl::StrCat(e.name, " (P = ", e.p, ") may return ", fallback));
  }
  if (allowance <= 0) return std::nullopt;
  // What the fallback allows, then what this run measured: never the one stated as the other.
  const std::string allows =
      absl::StrCat(absl::StrJoin(entries, ", "), " with the field absent (",
                   f.old_client ? "old client" : "old broker", "): the fallback allows ",
                   total_p - allowance, " returned, ", count_noun(allowance, "permit"),
                   " short; ");
  std::optional<std::string> text;
  if (d.measured && allowance <= -d.delta && allowance >= -d.delta - d.slack) {
    const std::int64_t short_by = -d.delta;
    text = absl::StrCat(allows, "the drain measured ", count_noun(short_by, "permit"), " short");
    if (d.slack == 0) {
      absl::StrAppend(&*text, ", ", total_p - short_by, " returned");
    } else {
      absl::StrAppend(&*text, ", of which an old client may keep up to ", d.slack,
                      " unrequested: ", std::max<std::int64_t>(0, total_p - short_by), " to ",
                      std::min(total_p, total_p - short_by + d.slack), " returned");
    }
    absl::StrAppend(&*text, " (", d.text, ")");
  }
  if (!d.measured && d.ran && allowance >= d.short_min && allowance <= d.short_max) {
    text = absl::StrCat(allows, "the drain measured ",
                        permits_between(std::max<std::int64_t>(0, d.short_min), d.short_max),
                        " short (", d.text, ")");
  }
  if (!d.ran && f.t) {  // no drain (client gone): the quiescence bound decides
    const std::int64_t acc = f.q - (f.granted - f.debited) - allowance;
    if (acc >= 0 && acc < *f.t) {
      text = absl::StrCat(allows, "no drain ran; at quiescence ", f.granted, " granted, ",
                          f.debited, " debited of Q = ", f.q, ": with the fallback's loss ",
                          count_noun(acc, "permit"), " unrequested, below T = ", *f.t);
    }
  }
  if (!text) return std::nullopt;
  return Excuse{rule, *std::move(text)};
}

std::optional<LegacyWindow> legacy_window(const WindowFact& w) {
  switch (w.kind) {
    case WindowKind::kPayloadFailure: return payload_failure_window(w.stage, w.p, w.what);
    case WindowKind::kTruncatedBatch:
      return truncated_batch_window(w.handed, w.p, w.past_last, w.what);
    case WindowKind::kHeldAcross: return held_across_window(w.same_connection, w.what);
    case WindowKind::kStaleEpoch: return stale_epoch_window(w.same_connection, w.what);
    case WindowKind::kFlowAroundClose: return flow_around_close_window(w.n, w.what);
    case WindowKind::kBeforeStart: return before_start_window(w.n, w.what);
  }
  return std::nullopt;
}

ScenarioJudgement judge_scenario(const ScenarioFacts& facts, std::int64_t q,
                                 std::optional<std::int64_t> t) {
  ScenarioJudgement j;
  const DrainFact& fact = facts.drain;
  // An old client may keep up to T - 1 unrequested after its Flow (its own Flow policy); a
  // rev-d client's Flow returns everything (N5).
  const DrainFacts drain{.ran = fact.ran,
                         .measured = fact.measured,
                         .delta = fact.delta,
                         .short_min = fact.short_min,
                         .short_max = fact.short_max,
                         .text = fact.text,
                         .slack = fact.old_client ? t.value_or(default_threshold(q)) - 1 : 0,
                         .scenario = fact.scenario,
                         .loss_is_payload_failure = fact.payload_failure};
  const FieldAbsent absent{.entries = facts.early_failures,
                           .old_client = fact.old_client,
                           .t = t,
                           .q = q,
                           .granted = fact.granted,
                           .debited = fact.debited};
  j.excuse = field_absent_excuse(absent, drain);
  std::vector<LegacyWindow> opened;
  for (const WindowFact& w : facts.windows) {
    std::optional<LegacyWindow> r = legacy_window(w);
    if (!r) continue;
    if (std::find(j.rows.begin(), j.rows.end(), r->row) == j.rows.end()) j.rows.push_back(r->row);
    opened.push_back(*std::move(r));
  }
  std::optional<Finding> found;
  if (!j.excuse) found = drain_verdict(opened, drain, j.found_rows);
  if (!found) found = late_flow_verdict(facts.late_flow, j.found_rows);
  if (found) j.violations.push_back(*std::move(found));
  return j;
}

}  // namespace permitcheck::spec
