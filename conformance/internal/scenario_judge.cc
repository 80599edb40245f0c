#include "conformance/internal/scenario_judge.h"

#include <algorithm>
#include <optional>
#include <variant>

#include "absl/strings/str_cat.h"
#include "spec/client_exit.h"
#include "spec/monitor.h"
#include "spec/plain_text.h"
#include "spec/scenario_verdict.h"

namespace permitcheck::conformance::internal {
namespace {

using spec::LegacyWindow;
using spec::RuleId;

std::int64_t p_of(const EntrySpec& e) {
  const spec::AckSet a = ack_set_of(e);
  return a.absent() ? (e.batched ? e.batch_size : 1) : a.count_below(e.batch_size);
}

std::string name_of(const EntrySpec& e) {
  return absl::StrCat(e.batched ? absl::StrCat("b", e.batch_size) : "single",
                      e.cleared.empty()
                          ? ""
                          : absl::StrCat(" (", spec::acknowledged_text(e.cleared), ")"));
}

spec::FailureStage stage_of(EntryFault fault) {
  return fault == EntryFault::kChecksum   ? spec::FailureStage::kChecksum
         : fault == EntryFault::kMetadata ? spec::FailureStage::kMetadata
                                          : spec::FailureStage::kDecompress;
}

// The legacy rows whose window the run opened (the rule of each: spec/scenario_verdict.h).
std::vector<LegacyWindow> rows_of(const ClientSpec& client, const ScenarioOutcome& o) {
  std::vector<LegacyWindow> v;
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
        v.push_back(spec::payload_failure_window(
            stage_of(e.fault), pp,
            absl::StrCat(name_of(e), " with a ", std::string(entry_fault_name(e.fault)),
                         " failure (P = ", pp, ")")));
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
        if (std::optional<LegacyWindow> w = spec::truncated_batch_window(
                handed, pp, e.truncate_at > last,
                absl::StrCat(name_of(e), " failing at index ", e.truncate_at, " after ", handed,
                             " handed off (P = ", pp, ")"))) {
          v.push_back(*std::move(w));
        }
        break;
      }
      default: break;
    }
  }
  const bool same = p.kind == ScenarioKind::kHeldCloseConsumer;
  if ((same || p.kind == ScenarioKind::kHeldReconnect) && o.held_across >= 2) {
    v.push_back(spec::held_across_window(
        same, absl::StrCat(spec::count_noun(o.held_across, "message"), " held across ",
                           same ? "CLOSE_CONSUMER on the same connection"
                                : "a reconnect (new connection)")));
  }
  if (p.kind == ScenarioKind::kDropBeforeAck && o.held_across >= 1) {
    // Delivered, none acknowledged, then the incarnation ended: their credit stays with it.
    v.push_back(spec::held_across_window(
        p.same_connection,
        absl::StrCat(spec::count_noun(o.held_across, "message"),
                     " inside the client, none acknowledged, across ",
                     p.same_connection ? "CLOSE_CONSUMER on the same connection"
                                       : "a connection drop (new connection)")));
  }
  if (p.kind == ScenarioKind::kStaleEpoch && o.stale_discards >= 1) {
    // On a new connection L6; the consumer recreated on the same connection is L7's case.
    v.push_back(spec::stale_epoch_window(
        p.same_connection,
        absl::StrCat(spec::count_noun(o.stale_discards, "stale-epoch message"),
                     " of an incarnation that ended (",
                     p.same_connection ? "CLOSE_CONSUMER, same connection" : "a reconnect",
                     ") discarded after the epoch rose")));
  }
  if (p.kind == ScenarioKind::kFlowAroundClose && o.not_opened.empty() && !o.windows.empty()) {
    v.push_back(spec::flow_around_close_window(
        client.threshold(), absl::StrCat("a Flow of T = ", client.threshold(),
                                         " due around CLOSE_CONSUMER on the same connection")));
  }
  if (p.kind == ScenarioKind::kStartMessageId && o.before_start_singles > 0) {
    v.push_back(spec::before_start_window(
        o.before_start_singles,
        absl::StrCat(spec::count_noun(o.before_start_singles, "non-batched message"),
                     " at or before start_message_id")));
  }
  return v;
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

  const ScenarioOutcome::Drain& d = out.drain;
  const spec::DrainFacts drain{
      .ran = d.ran,
      .measured = d.measured,
      .delta = d.delta,
      .short_min = d.short_min,
      .short_max = d.short_max,
      .text = d.text,
      .slack = client.knows_message_permits ? 0 : client.threshold() - 1,
      .scenario = std::string(info.name),
      .loss_is_payload_failure = info.kind == ScenarioKind::kTruncationPositions};

  // Field absent on the client side (old broker, or an old client that ignores it): the entries
  // that failed before their metadata, whose fallback may explain a shortfall (X1, X6).
  spec::FieldAbsent absent{.old_client = !client.knows_message_permits,
                           .t = client.t,
                           .q = client.q,
                           .granted = out.granted,
                           .debited = out.debited};
  if (!out.params.send_field || !client.knows_message_permits) {
    for (const EntrySpec& e : out.params.entries) {
      if (is_early_failure(e.fault)) absent.entries.push_back({name_of(e), p_of(e), ack_set_of(e)});
    }
  }
  const std::optional<spec::Excuse> excuse = spec::field_absent_excuse(absent, drain);

  const std::vector<LegacyWindow> rows = rows_of(client, out);
  for (const LegacyWindow& r : rows) {
    if (std::find(out.rows.begin(), out.rows.end(), r.row) == out.rows.end()) {
      out.rows.push_back(r.row);
    }
  }
  std::vector<spec::Finding> found;
  if (!excuse) {
    if (std::optional<spec::Finding> f = spec::drain_verdict(rows, drain, out.found_rows)) {
      found.push_back(*std::move(f));
    }
  }
  if (out.params.kind == ScenarioKind::kFlowAroundClose && found.empty()) {
    if (std::optional<spec::Finding> f = spec::late_flow_verdict(out.late_flow, out.found_rows)) {
      found.push_back(*std::move(f));
    }
  }
  if (excuse) {
    out.deviations.push_back(spec::Finding{excuse->rule, end_line, excuse->text});
  }
  for (spec::Finding& f : report.violations) {
    if (excuse && (f.rule == RuleId::kE5 || f.rule == RuleId::kE6) && !is_client_exit(out, f)) {
      f.explanation = absl::StrCat(f.explanation, "; explained by known deviation ", excuse->text);
      f.rule = excuse->rule;
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
