// The verdicts of a scripted scenario (`permitcheck conform`) from what its driver measured
// beside the wire: the legacy rows whose window a run opened (docs/rules.md section 10) and the
// rule each breaks there, the drain's surplus or shortfall, an old incarnation's Flow that
// reached its replacement (N6, L11), and the field-absent fallback (X1, X6) that explains a
// shortfall. The conformance judge gathers the facts and writes them into the trace
// (spec/scenario_facts.h); the monitor judges them with judge_scenario; the rules are chosen here.
//
//   std::vector<LegacyWindow> w = {payload_failure_window(FailureStage::kChecksum, 8, "b8")};
//   std::vector<std::string> rows;
//   std::optional<Finding> f = drain_verdict(w, {.measured = true, .delta = -7}, rows);  // C7, L1
//
// Guarantees: pure functions; linear in the windows and entries given.
#ifndef PERMITCHECK_SPEC_SCENARIO_VERDICT_H_
#define PERMITCHECK_SPEC_SCENARIO_VERDICT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/ack_set.h"
#include "spec/command_budget.h"
#include "spec/monitor.h"
#include "spec/rule_id.h"
#include "spec/scenario_facts.h"

namespace permitcheck::spec {

// A legacy row whose window a run opened, the rule the legacy value breaks there, and what
// that value would make of it here (permits over (> 0) or short (< 0); nullopt: it depends on
// the client's timing). `what` describes the window ("b8 with a checksum failure (P = 8)").
struct LegacyWindow {
  std::string row;
  RuleId rule;
  std::optional<std::int64_t> legacy_delta;
  std::string what;
};

// L1, L2, L3: an entry of P permits whose payload fails its checksum, its metadata or its
// decompression; legacy returns 1 (C7). REQUIRES: stage is kChecksum, kMetadata or kDecompress.
LegacyWindow payload_failure_window(FailureStage stage, std::int64_t p, std::string what);

// L4, L5: a batch of P permits failing at an index after `handed` messages were handed off;
// legacy returns D + 1. A failure past the last deliverable index is L5 (K7), before it L4 (C7).
// nullopt when the legacy value happens to be exact here (no window).
std::optional<LegacyWindow> truncated_batch_window(std::int64_t handed, std::int64_t p,
                                                   bool past_last, std::string what);

// L7 (CLOSE_CONSUMER, same connection) or L6 (a reconnect, a dropped connection): messages held
// across the replacement (held_*, or delivered and none acknowledged: drop_before_ack), whose
// late returns legacy credits to it (E3).
LegacyWindow held_across_window(bool same_connection, std::string what);

// L7 (same connection) or L6 (a reconnect): stale-epoch messages of an ended incarnation
// discarded after the epoch rose, credited to the replacement by legacy (M2).
LegacyWindow stale_epoch_window(bool same_connection, std::string what);

// L11: a Flow of T due around CLOSE_CONSUMER on the same connection; legacy writes it to the
// replacement (N6, + T).
LegacyWindow flow_around_close_window(std::int64_t threshold, std::string what);

// L9: non-batched messages at or before start_message_id, for which legacy returns nothing
// (K4, - singles).
LegacyWindow before_start_window(std::int64_t singles, std::string what);

// "rulebook L1: <situation>: legacy 1, correct 8 (<effect>)"; "" for an unknown row.
std::string legacy_row_summary(std::string_view row);

// What a scenario's drain measured after quiescence.
struct DrainFacts {
  bool ran = false;       // a drain ran (the client was still there)
  bool measured = false;  // it measured an exact surplus (> 0) or shortfall (< 0): delta
  std::int64_t delta = 0;
  std::int64_t short_min = 0, short_max = 0;  // not measured: the shortfall's bounds
  std::string text;                           // "drain: 4 single messages; flushed: ..."
  // Permits a client that does not know message_permits may keep unrequested after its Flow
  // (T - 1, its own Flow policy); 0 for a rev-d client, whose Flow returns everything (N5).
  std::int64_t slack = 0;
  std::string scenario;  // its name, for the text
  // Every case of the scenario delivers a batch that fails part way (truncation_positions): a
  // loss no legacy row explains is still the payload failure settling too little (C7).
  bool loss_is_payload_failure = false;
};

// The finding for what the drain measured, or nullopt when it balances (a shortfall within
// `slack` balances). Under the rule of the windows whose legacy value errs the same way (their
// rows appended to found_rows), else C7 (loss_is_payload_failure), else E2 (surplus) or E5.
std::optional<Finding> drain_verdict(const std::vector<LegacyWindow>& opened, const DrainFacts& d,
                                     std::vector<std::string>& found_rows);

// N6 (L11): `late_flow` permits of the closed incarnation's Flow reached its replacement on the
// same connection after its Subscribe and before anything was delivered to it; nullopt when
// none did. Appends "L11" to found_rows when it finds it.
std::optional<Finding> late_flow_verdict(std::int64_t late_flow,
                                         std::vector<std::string>& found_rows);

// A run with the field absent on the client's side (an old broker, or an old client).
struct FieldAbsent {
  std::vector<EarlyFailure> entries;
  bool old_client = false;   // the client does not know message_permits (else an old broker)
  std::optional<std::int64_t> t;  // the client's declared T; with no drain, the quiescence bound
  std::int64_t q = 0, granted = 0, debited = 0;  // Q, and the last incarnation's at quiescence
};

// The known deviation that explains a shortfall: X1 (a complete batch returns the fallback 1)
// or X6 (a partial one returns every ack_set bit), and its text with the numbers.
struct Excuse {
  RuleId rule;
  std::string text;
};

// The deviation when the shortfall the drain measured (or, with no drain, the quiescence bound)
// is exactly what the entries' fallbacks lose; nullopt otherwise (then E5/E6 stand). Its text
// gives what the fallback allows (returned, short) beside what the drain measured.
std::optional<Excuse> field_absent_excuse(const FieldAbsent& f, const DrainFacts& d);

// The legacy row a measured window opens (the functions above, by kind); nullopt when the
// legacy value happens to be exact there.
std::optional<LegacyWindow> legacy_window(const WindowFact& w);

// The facts a scenario's driver wrote into the trace (spec/scenario_facts.h), in the order
// read: the windows, the entries that failed with the field absent, a late Flow, the drain.
struct ScenarioFacts {
  std::vector<WindowFact> windows;
  std::vector<EarlyFailure> early_failures;  // non-empty: the field was absent (X1, X6)
  std::int64_t late_flow = 0;
  DrainFact drain;
};

// The verdict of a scenario's facts under the trace's Q and declared T (the header's q and t):
// the findings (drain_verdict, else late_flow_verdict), the field-absent excuse that explains
// E5/E6 (field_absent_excuse), the rows the windows opened and those a finding is reported
// under. The one function the monitor (at `x-drain`) and the conformance judge both use.
struct ScenarioJudgement {
  std::vector<Finding> violations;  // line 0: the caller reports them at the fact's line
  std::optional<Excuse> excuse;
  std::vector<std::string> rows;        // opened, in order, once each
  std::vector<std::string> found_rows;  // a finding is reported under
};
ScenarioJudgement judge_scenario(const ScenarioFacts& facts, std::int64_t q,
                                 std::optional<std::int64_t> t);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_SCENARIO_VERDICT_H_
