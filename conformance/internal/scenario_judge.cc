#include "conformance/internal/scenario_judge.h"

#include <algorithm>
#include <optional>
#include <variant>

#include "absl/strings/str_cat.h"
#include "spec/monitor.h"
#include "spec/plain_text.h"
#include "spec/scenario_facts.h"
#include "spec/scenario_verdict.h"

namespace permitcheck::conformance::internal {
namespace {

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

// The legacy windows the run opened, as measured facts (the row and rule of each:
// spec/scenario_verdict.h legacy_window).
std::vector<spec::WindowFact> windows_of(const ClientSpec& client, const ScenarioOutcome& o) {
  using spec::WindowKind;
  std::vector<spec::WindowFact> v;
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
        v.push_back({.kind = WindowKind::kPayloadFailure,
                     .stage = stage_of(e.fault),
                     .p = pp,
                     .what = absl::StrCat(name_of(e), " with a ",
                                          std::string(entry_fault_name(e.fault)),
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
        v.push_back({.kind = WindowKind::kTruncatedBatch,
                     .p = pp,
                     .handed = handed,
                     .past_last = e.truncate_at > last,
                     .what = absl::StrCat(name_of(e), " failing at index ", e.truncate_at,
                                          " after ", handed, " handed off (P = ", pp, ")")});
        break;
      }
      default: break;
    }
  }
  const bool same = p.kind == ScenarioKind::kHeldCloseConsumer;
  if ((same || p.kind == ScenarioKind::kHeldReconnect) && o.held_across >= 2) {
    v.push_back({.kind = WindowKind::kHeldAcross,
                 .same_connection = same,
                 .what = absl::StrCat(spec::count_noun(o.held_across, "message"), " held across ",
                                      same ? "CLOSE_CONSUMER on the same connection"
                                           : "a reconnect (new connection)")});
  }
  if (p.kind == ScenarioKind::kDropBeforeAck && o.held_across >= 1) {
    // Delivered, none acknowledged, then the incarnation ended: their credit stays with it.
    v.push_back({.kind = WindowKind::kHeldAcross,
                 .same_connection = p.same_connection,
                 .what = absl::StrCat(spec::count_noun(o.held_across, "message"),
                                      " inside the client, none acknowledged, across ",
                                      p.same_connection ? "CLOSE_CONSUMER on the same connection"
                                                        : "a connection drop (new connection)")});
  }
  if (p.kind == ScenarioKind::kStaleEpoch && o.stale_discards >= 1) {
    // On a new connection L6; the consumer recreated on the same connection is L7's case.
    v.push_back({.kind = WindowKind::kStaleEpoch,
                 .same_connection = p.same_connection,
                 .what = absl::StrCat(spec::count_noun(o.stale_discards, "stale-epoch message"),
                                      " of an incarnation that ended (",
                                      p.same_connection ? "CLOSE_CONSUMER, same connection"
                                                        : "a reconnect",
                                      ") discarded after the epoch rose")});
  }
  if (p.kind == ScenarioKind::kFlowAroundClose && o.not_opened.empty() && !o.windows.empty()) {
    v.push_back({.kind = WindowKind::kFlowAroundClose,
                 .n = client.threshold(),
                 .what = absl::StrCat("a Flow of T = ", client.threshold(),
                                      " due around CLOSE_CONSUMER on the same connection")});
  }
  if (p.kind == ScenarioKind::kStartMessageId && o.before_start_singles > 0) {
    v.push_back({.kind = WindowKind::kBeforeStart,
                 .n = o.before_start_singles,
                 .what = absl::StrCat(spec::count_noun(o.before_start_singles,
                                                       "non-batched message"),
                                      " at or before start_message_id")});
  }
  return v;
}

// Everything the driver measured beside the wire, as the facts the trace carries.
spec::ScenarioFacts facts_of(const ClientSpec& client, const ScenarioOutcome& out) {
  const ScenarioInfo& info = scenario_info(out.params.kind);
  spec::ScenarioFacts f;
  f.windows = windows_of(client, out);
  // Field absent on the client side (old broker, or an old client that ignores it): the entries
  // that failed before their metadata, whose fallback may explain a shortfall (X1, X6).
  if (!out.params.send_field || !client.knows_message_permits) {
    for (const EntrySpec& e : out.params.entries) {
      if (is_early_failure(e.fault)) {
        f.early_failures.push_back({.name = name_of(e), .p = p_of(e), .ack_set = ack_set_of(e)});
      }
    }
  }
  if (out.params.kind == ScenarioKind::kFlowAroundClose) f.late_flow = out.late_flow;
  const ScenarioOutcome::Drain& d = out.drain;
  f.drain = {.scenario = std::string(info.name),
             .ran = d.ran,
             .measured = d.measured,
             .delta = d.delta,
             .short_min = d.short_min,
             .short_max = d.short_max,
             .granted = out.granted,
             .debited = out.debited,
             .old_client = !client.knows_message_permits,
             .payload_failure = info.kind == ScenarioKind::kTruncationPositions,
             .text = d.text};
  return f;
}

}  // namespace

void judge(const ClientSpec& client, ScenarioOutcome& out) {
  // What the driver measured beside the wire goes into the trace as facts, after everything
  // the broker recorded, the drain last (spec/scenario_facts.h): the monitor judges them there,
  // so the saved trace gives `validate` the same findings at the same lines (issue 33).
  const spec::ScenarioFacts facts = facts_of(client, out);
  for (const spec::WindowFact& w : facts.windows) {
    out.events.push_back(spec::Extension{spec::window_event(w)});
  }
  for (const spec::EarlyFailure& e : facts.early_failures) {
    out.events.push_back(spec::Extension{spec::early_failure_event(e)});
  }
  if (facts.late_flow > 0) {
    out.events.push_back(spec::Extension{spec::late_flow_event(facts.late_flow)});
  }
  out.events.push_back(spec::Extension{spec::drain_event(facts.drain)});

  spec::MonitorReport report = spec::check_trace(out.header, out.events);
  out.violations = std::move(report.violations);
  out.deviations = std::move(report.deviations);
  // The rows: the same function the monitor judged the facts with.
  const spec::ScenarioJudgement j =
      spec::judge_scenario(facts, out.header.q.value_or(client.q), out.header.t);
  for (const std::string& row : j.rows) {
    if (std::find(out.rows.begin(), out.rows.end(), row) == out.rows.end()) out.rows.push_back(row);
  }
  for (const std::string& row : j.found_rows) out.found_rows.push_back(row);
}

}  // namespace permitcheck::conformance::internal
