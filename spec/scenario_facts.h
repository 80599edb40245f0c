// What a scripted scenario's driver (`permitcheck conform`) measured beside the wire, as trace
// facts: `x-` extension events whose name carries the numbers (docs/trace-format.md, "Scenario
// facts"). conform writes them at the end of the trace it judges and saves, and the monitor
// judges them there (spec/scenario_verdict.h judge_scenario), so `permitcheck validate` of a
// saved counterexample reports conform's findings: same rules, same lines (issue 33).
//
//   const std::string ev = drain_event({.scenario = "corrupt_checksum", .ran = true,
//                                       .measured = true, .delta = -7, .text = "drain: ..."});
//   std::optional<DrainFact> d = parse_drain_event(ev);   // the same values
//
// Guarantees: parse(event(x)) == x whenever the fields without spaces (scenario) have none and
// the numbers fit int64; each parse is O(size of the name); a name not of exactly the shape
// documented is not a fact (nullopt), never an error.
#ifndef PERMITCHECK_SPEC_SCENARIO_FACTS_H_
#define PERMITCHECK_SPEC_SCENARIO_FACTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "spec/ack_set.h"
#include "spec/command_budget.h"
#include "spec/rule_id.h"

namespace permitcheck::spec {

// A legacy window the run opened, as the driver measured it; spec/scenario_verdict.h
// legacy_window makes it a row and the rule the row breaks.
enum class WindowKind {
  kPayloadFailure,   // an entry whose payload fails: stage, p        (L1, L2, L3)
  kTruncatedBatch,   // a batch failing part way: handed, p, past_last (L4, L5)
  kHeldAcross,       // messages held across the replacement: same_connection (L6, L7)
  kStaleEpoch,       // stale-epoch discards of an ended incarnation: same_connection (L6, L7)
  kFlowAroundClose,  // a Flow of T due around CLOSE_CONSUMER: threshold (L11)
  kBeforeStart,      // non-batched messages at or before start_message_id: singles (L9)
};
struct WindowFact {
  WindowKind kind = WindowKind::kPayloadFailure;
  FailureStage stage = FailureStage::kChecksum;  // kPayloadFailure
  std::int64_t p = 0;                            // kPayloadFailure, kTruncatedBatch
  std::int64_t handed = 0;                       // kTruncatedBatch: handed off before the cut
  bool past_last = false;                        // kTruncatedBatch: cut past the last deliverable
  bool same_connection = false;                  // kHeldAcross, kStaleEpoch
  std::int64_t n = 0;     // kFlowAroundClose: T; kBeforeStart: the non-batched messages
  std::string what;       // the window, in words ("b8 with a checksum failure (P = 8)")
  bool operator==(const WindowFact&) const = default;
};
// "x-window kind=payload_failure stage=checksum p=8 what=b8 with ..." (keys by kind:
// truncated_batch handed p past_last; held_across, stale_epoch same_connection;
// flow_around_close t; before_start singles; `what` runs to the end).
inline constexpr std::string_view kWindowEvent = "x-window";
std::string window_event(const WindowFact& w);
std::optional<WindowFact> parse_window_event(std::string_view ev);

// An entry that failed before its metadata could be read while the message_permits field was
// absent on the client's side: its P and ack_set (absent: a complete batch). X1/X6 decide
// what its fallback may return.
// "x-early-failure p=8 ack_set=- name=b8" (ack_set: "-" or its words, comma-separated; `name`
// runs to the end).
inline constexpr std::string_view kEarlyFailureEvent = "x-early-failure";
struct EarlyFailure {
  std::string name;  // "b8", "b8 (partial)"
  std::int64_t p = 0;
  AckSet ack_set;
  bool operator==(const EarlyFailure&) const = default;
};
std::string early_failure_event(const EarlyFailure& e);
std::optional<EarlyFailure> parse_early_failure_event(std::string_view ev);

// "x-late-flow permits=4": permits of the closed incarnation's Flow that reached its
// replacement on the same connection after its Subscribe, before anything was delivered to it.
inline constexpr std::string_view kLateFlowEvent = "x-late-flow";
std::string late_flow_event(std::int64_t permits);
std::optional<std::int64_t> parse_late_flow_event(std::string_view ev);

// The drain phase after the scenario's quiescence: single messages until the client flushed
// its accumulator (a Flow). It ends the scenario's facts: the monitor judges the windows, early
// failures and late Flow before it, here.
struct DrainFact {
  std::string scenario;       // the scenario's name (no spaces)
  bool ran = false;           // a drain ran (the client was still there)
  bool measured = false;      // it measured an exact surplus (> 0) or shortfall (< 0): delta
  std::int64_t delta = 0;
  std::int64_t short_min = 0, short_max = 0;  // not measured: the shortfall's bounds
  // The last incarnation's permits at the scenario's quiescence, before the drain.
  std::int64_t granted = 0, debited = 0;
  bool old_client = false;       // the client does not know message_permits
  bool payload_failure = false;  // every case of the scenario delivers a batch failing part way
  std::string text;              // "drain: 4 single messages until the client flushed; ..."
  bool operator==(const DrainFact&) const = default;
};
// "x-drain scenario=S ran=1 measured=1 delta=-7 short_min=0 short_max=0 granted=10 debited=8
// old_client=0 payload_failure=0 text=drain: ..." (flags 0 or 1; `text` runs to the end).
inline constexpr std::string_view kDrainEvent = "x-drain";
std::string drain_event(const DrainFact& d);
std::optional<DrainFact> parse_drain_event(std::string_view ev);

// At the scenario's end the client had no subscribed consumer and its process was still running
// (it closed its consumer or its connection): the scenario's primary rule.
// "x-no-subscribed-consumer rule=C7 scenario=corrupt_checksum".
inline constexpr std::string_view kNoConsumerEvent = "x-no-subscribed-consumer";
struct NoConsumer {
  RuleId rule = RuleId::kE1;
  std::string scenario;
  bool operator==(const NoConsumer&) const = default;
};
std::string no_consumer_event(const NoConsumer& x);
std::optional<NoConsumer> parse_no_consumer_event(std::string_view ev);

// The client sent a frame the broker could not read (or flooded it): the scenario's primary
// rule. "x-malformed-frame rule=C7 scenario=corrupt_checksum error=connection c1: ..." (`error`
// runs to the end).
inline constexpr std::string_view kMalformedFrameEvent = "x-malformed-frame";
struct MalformedFrame {
  RuleId rule = RuleId::kE1;
  std::string scenario;
  std::string error;
  bool operator==(const MalformedFrame&) const = default;
};
std::string malformed_frame_event(const MalformedFrame& x);
std::optional<MalformedFrame> parse_malformed_frame_event(std::string_view ev);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_SCENARIO_FACTS_H_
