#include "conformance/internal/scenario_judge.h"

#include <algorithm>
#include <map>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spec/client_exit.h"
#include "spec/legacy_catalogue.h"
#include "spec/monitor.h"

namespace permitcheck::conformance::internal {
namespace {

using spec::RuleId;

// A legacy row whose window the run opened, and what the rulebook's legacy value would make
// of it here (nullopt: depends on the client's timing).
struct RowWindow {
  std::string row;
  RuleId rule;
  std::optional<std::int64_t> legacy_delta;
  std::string what;
};

std::string rulebook(std::string_view id) {
  static const std::vector<spec::CatalogueEntry> rows = spec::legacy_catalogue();
  for (const spec::CatalogueEntry& r : rows) {
    if (r.id != id) continue;
    return absl::StrCat("rulebook ", std::string(id), ": ", std::string(r.situation), ": legacy ",
                        r.legacy_value, ", correct ", r.correct_value, " (",
                        std::string(r.effect), ")");
  }
  return "";
}

std::int64_t p_of(const EntrySpec& e) {
  const spec::AckSet a = ack_set_of(e);
  return a.absent() ? (e.batched ? e.batch_size : 1) : a.count_below(e.batch_size);
}

std::string name_of(const EntrySpec& e) {
  return absl::StrCat(e.batched ? absl::StrCat("b", e.batch_size) : "single",
                      e.cleared.empty() ? "" : " (partial)");
}

std::vector<RowWindow> rows_of(const ClientSpec& client, const ScenarioOutcome& o) {
  std::vector<RowWindow> v;
  const ScenarioParams& p = o.params;
  const bool field = p.send_field && client.knows_message_permits;
  for (const EntrySpec& e : p.entries) {
    const std::int64_t pp = p_of(e);
    switch (e.fault) {
      case EntryFault::kChecksum:
      case EntryFault::kMetadata:
      case EntryFault::kDecompression: {
        // Field absent, a checksum or metadata failure may return the fallback (X1, X6).
        if (pp <= 1 || (!field && is_early_failure(e.fault))) break;
        const std::string_view row = e.fault == EntryFault::kChecksum   ? "L1"
                                     : e.fault == EntryFault::kMetadata ? "L2"
                                                                        : "L3";
        v.push_back({std::string(row), RuleId::kC7, 1 - pp,
                     absl::StrCat(name_of(e), " with a ", std::string(entry_fault_name(e.fault)),
                                  " failure (P = ", pp, ")")});
        break;
      }
      case EntryFault::kTruncatedBatch: {
        if (!e.batched || e.truncate_at >= e.batch_size) break;
        const spec::AckSet a = ack_set_of(e);
        std::int64_t handed = 0, last = -1;
        for (std::int64_t i = 0; i < e.batch_size; ++i) {
          if (!a.absent() && !a.is_deliverable(i)) continue;
          last = i;
          if (i < e.truncate_at) ++handed;
        }
        const std::int64_t legacy = handed + 1 - pp;  // D + K + 1 with K = 0
        if (legacy == 0) break;
        const bool past = e.truncate_at > last;
        v.push_back({past ? "L5" : "L4", past ? RuleId::kK7 : RuleId::kC7, legacy,
                     absl::StrCat(name_of(e), " failing at index ", e.truncate_at, " after ",
                                  handed, " handed off (P = ", pp, ")")});
        break;
      }
      default: break;
    }
  }
  const bool same = p.kind == ScenarioKind::kHeldCloseConsumer;
  if ((same || p.kind == ScenarioKind::kHeldReconnect) && o.held_across >= 2) {
    v.push_back({same ? "L7" : "L6", RuleId::kE3, std::nullopt,
                 absl::StrCat(o.held_across, " message(s) held across ",
                              same ? "CLOSE_CONSUMER on the same connection"
                                   : "a reconnect (new connection)")});
  }
  if (p.kind == ScenarioKind::kDropBeforeAck && o.held_across >= 1) {
    // Delivered, none acknowledged, then the incarnation ended: their credit stays with it.
    v.push_back({p.same_connection ? "L7" : "L6", RuleId::kE3, std::nullopt,
                 absl::StrCat(o.held_across, " message(s) inside the client, none acknowledged, "
                              "across ", p.same_connection
                                             ? "CLOSE_CONSUMER on the same connection"
                                             : "a connection drop (new connection)")});
  }
  if (p.kind == ScenarioKind::kStaleEpoch && o.stale_discards >= 1) {
    // On a new connection L6; the consumer recreated on the same connection is L7's case.
    v.push_back({p.same_connection ? "L7" : "L6", RuleId::kM2, std::nullopt,
                 absl::StrCat(o.stale_discards, " stale-epoch message(s) of an incarnation that "
                              "ended (", p.same_connection ? "CLOSE_CONSUMER, same connection"
                                                           : "a reconnect",
                              ") discarded after the epoch rose")});
  }
  if (p.kind == ScenarioKind::kFlowAroundClose && o.not_opened.empty() && !o.windows.empty()) {
    v.push_back({"L11", RuleId::kN6, client.threshold(),
                 absl::StrCat("a Flow of T = ", client.threshold(),
                              " due around CLOSE_CONSUMER on the same connection")});
  }
  if (p.kind == ScenarioKind::kStartMessageId && o.before_start_singles > 0) {
    v.push_back({"L9", RuleId::kK4, -o.before_start_singles,
                 absl::StrCat(o.before_start_singles,
                              " non-batched message(s) at or before start_message_id")});
  }
  return v;
}

// The finding for a surplus (delta > 0) or shortfall the drain measured, under the rule of
// the row whose window explains it, with the rulebook's numbers.
spec::Finding row_finding(const std::vector<RowWindow>& opened, const ScenarioInfo& info,
                          std::int64_t delta, const std::string& amount,
                          const std::string& drain_text, std::vector<std::string>& found_rows) {
  const std::string how = delta > 0 ? "too many" : "too few";
  // Only a row whose legacy value errs the same way explains the amount (a loss is not
  // explained by a row that over-grants, nor the other way round).
  std::vector<RowWindow> rows;
  for (const RowWindow& r : opened) {
    if (!r.legacy_delta || (*r.legacy_delta > 0) == (delta > 0)) rows.push_back(r);
  }
  if (rows.empty() && delta < 0 && info.kind == ScenarioKind::kTruncationPositions) {
    // Every case of it delivers a batch that fails part way: a loss no legacy row explains
    // (the cut at the last index, where legacy's D + 1 happens to be exact) is still the
    // payload failure settling too little.
    return spec::Finding{RuleId::kC7, 0,
                         absl::StrCat("the batch payload failure was settled with ", amount,
                                      " permit(s) ", how, " in ", std::string(info.name), " (",
                                      drain_text, ")")};
  }
  if (rows.empty()) {
    return spec::Finding{delta > 0 ? RuleId::kE2 : RuleId::kE5, 0,
                         absl::StrCat("the client returned ", amount, " permit(s) ", how,
                                      " in ", std::string(info.name), " (", drain_text, ")")};
  }
  std::vector<std::string> parts;
  std::int64_t legacy = 0;
  bool legacy_known = true;
  std::map<std::string, int> seen;
  for (const RowWindow& r : rows) {
    if (seen[r.row]++ == 0) {
      parts.push_back(absl::StrCat(r.row, ": ", r.what));
      found_rows.push_back(r.row);
    }
    if (r.legacy_delta) legacy += *r.legacy_delta;
    else legacy_known = false;
  }
  std::string s = absl::StrCat(absl::StrJoin(parts, "; "), ": the client returned ", amount,
                               " permit(s) ", how, " (", drain_text, ")");
  if (legacy_known) {
    absl::StrAppend(&s, "; the legacy value gives ", legacy > 0 ? "+" : "", legacy, " here",
                    legacy == delta ? ", as observed" : "");
  } else {
    absl::StrAppend(&s, "; legacy credits each late return to the replacement");
  }
  std::vector<std::string> books;
  for (const auto& [row, n] : seen) books.push_back(rulebook(row));
  absl::StrAppend(&s, "; ", absl::StrJoin(books, "; "));
  return spec::Finding{rows.front().rule, 0, std::move(s)};
}

// Whether the monitor's finding `f` is a client's exit (spec/client_exit.h): a crash is never
// the field-absent deviation, even in a scenario whose primary rule is E5 or E6.
bool is_client_exit(const ScenarioOutcome& o, const spec::Finding& f) {
  if (f.line < 2 || f.line - 2 >= o.events.size()) return false;
  const auto* x = std::get_if<spec::Extension>(&o.events[f.line - 2]);
  return x != nullptr && spec::parse_client_exit_event(x->ev).has_value();
}

}  // namespace

void judge(const ClientSpec& client, ScenarioOutcome& out) {
  const ScenarioInfo& info = scenario_info(out.params.kind);
  spec::MonitorReport report = spec::check_trace(out.header, out.events);
  // Lines of monitor findings are file lines; ours point past the end.
  const std::uint64_t end_line = out.events.size() + 2;
  for (spec::Finding& f : out.violations) f.line = end_line;
  out.deviations = report.deviations;

  // Field absent on the client side (old broker, or an old client that ignores it): a failure
  // before metadata of a complete batch may return 1 (X1), of a partial one every ack_set bit
  // (X6). A shortfall of exactly that much is the known deviation, not E5/E6.
  std::int64_t allowance = 0;
  RuleId excuse = RuleId::kX1;
  std::vector<std::string> excused_entries;
  if (!out.params.send_field || !client.knows_message_permits) {
    for (const EntrySpec& e : out.params.entries) {
      if (!is_early_failure(e.fault)) continue;
      const spec::AckSet a = ack_set_of(e);
      const std::int64_t fallback = a.absent() ? 1 : a.count_all();
      if (!a.absent()) excuse = RuleId::kX6;
      if (p_of(e) == fallback) continue;
      allowance += p_of(e) - fallback;
      excused_entries.push_back(absl::StrCat(name_of(e), " (P = ", p_of(e), ") returned ",
                                             fallback));
    }
  }
  const std::string field_absent = client.knows_message_permits ? "old broker" : "old client";
  const std::vector<RowWindow> rows = rows_of(client, out);
  for (const RowWindow& r : rows) {
    if (std::find(out.rows.begin(), out.rows.end(), r.row) == out.rows.end()) {
      out.rows.push_back(r.row);
    }
  }

  const ScenarioOutcome::Drain& d = out.drain;
  std::optional<std::string> excused;  // the deviation's numbers, when the shortfall is it
  std::vector<spec::Finding> found;
  if (allowance > 0) {
    const std::string what = absl::StrCat(
        absl::StrJoin(excused_entries, ", "),
        " with the field absent (", field_absent, "): ", allowance, " permit(s) short");
    const std::int64_t slack = client.knows_message_permits ? 0 : client.threshold() - 1;
    if (d.measured && allowance <= -d.delta && allowance >= -d.delta - slack) {
      excused = absl::StrCat(what, " (", d.text, ")");
    }
    if (!d.measured && d.ran && allowance >= d.short_min && allowance <= d.short_max) {
      excused = absl::StrCat(what, " (", d.text, ")");
    }
    if (!d.ran && client.t) {  // no drain (client gone): the quiescence bound decides
      const std::int64_t acc = client.q - (out.granted - out.debited) - allowance;
      if (acc >= 0 && acc < *client.t) excused = what;
    }
  }
  // N5: a rev-d client's Flow returns its whole accumulator, so right after it nothing is
  // held back and the drain's number is exact. A client that does not know message_permits
  // may keep up to T - 1 permits unrequested after its Flow (its own Flow policy): a surplus
  // is still one, a shortfall only when it reaches T.
  const std::int64_t slack = client.knows_message_permits ? 0 : client.threshold() - 1;
  if (d.measured && d.delta != 0 && !excused && (d.delta > 0 || -d.delta > slack)) {
    const std::string amount =
        slack == 0 || d.delta > 0
            ? absl::StrCat(std::abs(d.delta))
            : absl::StrCat(-d.delta - slack, " to ", -d.delta);
    found.push_back(row_finding(rows, info, d.delta, amount, d.text, out.found_rows));
  } else if (!d.measured && d.ran && d.short_min > 0 && !excused) {
    found.push_back(row_finding(rows, info, -1,
                                absl::StrCat(std::max<std::int64_t>(1, d.short_min), " to ",
                                             d.short_max),
                                d.text, out.found_rows));
  }
  if (out.params.kind == ScenarioKind::kFlowAroundClose && out.late_flow > 0 && found.empty()) {
    out.found_rows.push_back("L11");
    found.push_back(spec::Finding{
        RuleId::kN6, 0,
        absl::StrCat("L11: a Flow of ", out.late_flow, " reached the replacement on the same "
                     "connection after its Subscribe and before anything was delivered to it: "
                     "the old incarnation's credit was written after the replacement's "
                     "Subscribe (over-grant ", out.late_flow, "); ", rulebook("L11"))});
  }
  if (excused) {
    out.deviations.push_back(spec::Finding{excuse, end_line, *excused});
  }
  for (spec::Finding& f : report.violations) {
    if (excused && (f.rule == RuleId::kE5 || f.rule == RuleId::kE6) && !is_client_exit(out, f)) {
      f.explanation = absl::StrCat(f.explanation, "; explained by known deviation ", *excused);
      f.rule = excuse;
      out.deviations.push_back(std::move(f));
    } else {
      out.violations.push_back(std::move(f));
    }
  }
  for (spec::Finding& f : found) {
    f.line = end_line;
    out.violations.push_back(std::move(f));
  }
  // A client that ended during the scenario is the monitor's finding, from the x-client-exit
  // fact scenario_run.cc records (spec/client_exit.h).
  std::stable_sort(out.violations.begin(), out.violations.end(),
                   [](const spec::Finding& a, const spec::Finding& b) { return a.line < b.line; });
}

}  // namespace permitcheck::conformance::internal
