// The scenario catalogue: named templates whose parameters RapidCheck draws, each run against
// a real client process over a real socket and judged by the Monitor on the recorded trace.
//
//   ClientSpec client{.command = "node consumer.js {url} {topic} {subscription} {q}"};
//   rc::Gen<ScenarioParams> g = gen_scenario(ScenarioKind::kPartialBatches);
//   ScenarioOutcome o = run_scenario(client, g(rc::Random(1), 10).value());
//   // o.failed(), o.violations (rule IDs with numbers), o.header + o.events: the trace
#ifndef PERMITCHECK_CONFORMANCE_SCENARIO_H_
#define PERMITCHECK_CONFORMANCE_SCENARIO_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/broker.h"
#include "rapidcheck.h"
#include "spec/events.h"
#include "spec/flow_settings.h"
#include "spec/monitor.h"
#include "spec/permit_state.h"
#include "spec/rule_id.h"

namespace permitcheck::conformance {

enum class ScenarioKind {
  kCompleteBatches,    // complete batches and single messages (B2, E1, E5)
  kPartialBatches,     // partial redeliveries: sparse and dense ack_sets (B2, K3, E2, E5)
  kCorruptChecksum,    // some entries with a bad crc32c (C7)
  kUnreadableMetadata, // some entries whose MessageMetadata does not parse (C7)
  kTruncatedBatch,     // a batch payload that ends inside a message (C7, K5; L4)
  kPartialBatchFailure,  // a partial batch whose payload fails past its last deliverable
                         // index, or between deliverable ones (K7, K5; L5)
  kInconsistentBatch,  // a payload holding more messages than its B (K8, C5)
  kCloseConsumer,      // CLOSE_CONSUMER mid-stream, the client resubscribes (N2, E3)
  kReconnect,          // the connection drops mid-stream, the client reconnects (N2, E3)
  kUnknownConsumer,    // messages for a consumer id the client never subscribed (E3)
  kNegativeAck,        // the client nacks; the broker redelivers what is unacked (M1, E1)
  kSlowConsumer,       // more entries than Q, consumed slowly: debt and back-pressure (B9, E6)
  kDecompression,      // compressed entries that do not decompress, B known (C7; L3)
  kHeldCloseConsumer,  // CLOSE_CONSUMER while the application holds messages (E3, N3; L7)
  kHeldReconnect,      // the connection drops while the application holds messages (E3; L6)
  kFlowAroundClose,    // CLOSE_CONSUMER while a Flow comes due on the same connection (N6; L11)
  kStartMessageId,     // resubscribe with start_message_id; entries before it again (K4; L9)
  kStaleEpoch,         // held across a drop, then a newer consumer epoch: stale discards (M2; L6)
  kDuplicateRedelivery,  // entries acknowledged moments ago delivered again, while the
                         // client's acks are still grouped (K4; pulsar-client-go#1180)
  kTruncationPositions,  // a batch cut at each position class of a message: inside its size
                         // field (1-3 bytes), at its boundary, inside its metadata, inside its
                         // payload, after good messages (C7; L4)
  kActiveConsumerChange,  // ACTIVE_CONSUMER_CHANGE between the messages: a non-message
                          // command is no permit (E2)
  kDropBeforeAck,  // the connection drops (or CLOSE_CONSUMER) right after a delivery, before
                   // any acknowledgement, the messages still inside the client (E3, N3; L6)
};

struct ScenarioInfo {
  ScenarioKind kind;
  std::string_view name;     // "partial_batches"
  spec::RuleId primary;      // rule a crash or hang of the client is reported under
  std::string_view summary;
  std::string_view rows;     // legacy rows (rulebook section 10) whose window it opens
};
std::span<const ScenarioInfo> all_scenarios();
const ScenarioInfo& scenario_info(ScenarioKind kind);
std::optional<ScenarioKind> parse_scenario(std::string_view name);

// The legacy rows no wire scenario can open, each with the reason.
struct UnobservableRow {
  std::string_view row;
  std::string_view reason;
};
std::span<const UnobservableRow> unobservable_rows();

// One entry of a scenario, before it becomes a Delivery.
struct EntrySpec {
  std::int64_t batch_size = 1;
  bool batched = false;
  std::vector<std::int64_t> cleared;  // indexes acknowledged earlier: cleared from ack_set
  EntryFault fault = EntryFault::kNone;
  int truncate_at = 0;
  Cut cut = Cut::kSizeField3;  // kTruncatedBatch: where inside message truncate_at
  int extra_messages = 0;
};
// One message, unbatched and without a fault.
inline EntrySpec single() { return EntrySpec{}; }

struct ScenarioParams {
  ScenarioKind kind = ScenarioKind::kCompleteBatches;
  bool send_field = true;       // new broker (true) or old broker (false, W3 fallback)
  int delay_ms = 0;             // client's per-message processing time ({delay_ms})
  int nack_every = 0;           // client nacks every n-th message, 0 never ({nack_every})
  std::vector<EntrySpec> entries;
  int disrupt_after = 0;        // close / drop / foreign messages after this many entries
  std::uint64_t foreign_consumer = 41;
  bool same_connection = false;  // stale_epoch, drop_before_ack: CLOSE_CONSUMER instead of a
                                 // connection drop
  std::string corner;           // a fixed first case: the corner it covers; empty when drawn
};

// A one-line description: "partial_batches new-broker delay=0ms entries=[b8 acknowledged {1,3},
// single, b4!checksum]" (a partial batch as spec::acknowledged_text writes it).
std::string describe(const ScenarioParams& params);

// The generator of each template's parameters (shrinks toward fewer, smaller entries).
rc::Gen<ScenarioParams> gen_scenario(ScenarioKind kind);

// The fixed first cases of a scenario: each corner (new and old broker, batch and single,
// each failure position) that opens its window deterministically. Run before any draw.
std::vector<ScenarioParams> fixed_cases(ScenarioKind kind, std::int64_t q, std::int64_t t);

// Smaller variants of `params` for shrinking a fixed case (an entry fewer, a batch smaller),
// each still opening the scenario's window.
std::vector<ScenarioParams> shrink_candidates(const ScenarioParams& params);

// Shared by the catalogue and the runner.
bool is_early_failure(EntryFault fault);     // checksum, metadata: before B is known (C2)
spec::AckSet ack_set_of(const EntrySpec& entry);
bool holds_messages(ScenarioKind kind);      // its window needs a slow application

// The client under test.
struct ClientSpec {
  // Shell command line; placeholders: {url} {topic} {subscription} {q} {delay_ms} {nack_every}.
  std::string command;
  std::int64_t q = 10;                       // receiver queue size Q the run is judged against
  // The {q} the client is told when it differs from q (conform inferred Q from a client that
  // ignores {q}: it is still told what it was told when Q was inferred). None: q.
  std::optional<std::int64_t> told_q;
  std::optional<std::int64_t> t;             // its declared Flow threshold (E5 bound); none: 1..Q
  bool knows_message_permits = true;         // false: an old client (judged as field-absent)
  std::chrono::milliseconds timeout{20000};  // whole run
  std::chrono::milliseconds startup{10000};  // until the first Flow
  std::chrono::milliseconds idle{1500};      // silence that counts as quiescence
  std::string log_dir = "/tmp";              // client logs
  bool keep_log = false;                     // keep each run's log in log_dir (else removed)
  // The pulsar://HOST:PORT the broker names in its lookup answers; empty: its own. A tap or
  // proxy in front of the broker gives its own address here, so the client, told to go there,
  // stays on it for its consumer (conform --advertised-url).
  std::string advertised_url;
  // A run whose client sends no Subscribe and Flow within `startup` is started again (a new
  // broker and client process), up to this many attempts in all; each attempt costs at most
  // `startup` more. The earlier attempts are named in ScenarioOutcome::failed_starts.
  int start_attempts = 3;
  std::int64_t threshold() const { return t.value_or(spec::default_threshold(q)); }
};

std::string expand_command(const ClientSpec& client, const ScenarioParams& params,
                           const std::string& url);

struct ScenarioOutcome {
  ScenarioParams params;
  spec::TraceHeader header;
  std::vector<spec::Event> events;       // the broker's wire trace
  std::vector<spec::Finding> violations;  // monitor findings plus client crash / hang
  std::vector<spec::Finding> deviations;  // known deviations (X1-X6), incl. old-client excuses
  std::optional<std::string> client_failure;  // "crashed: exited with status 1", "hang: ..."
  bool client_never_started = false;     // no Flow ever arrived (command wrong?)
  // The attempts before this one whose client never started, with the reason ("attempt 1: hang
  // or start failure: no Subscribe and Flow within 10000 ms (still running)"); this outcome is
  // the last attempt's (ClientSpec::start_attempts).
  std::vector<std::string> failed_starts;
  std::string client_log_tail;
  std::int64_t granted = 0, debited = 0;  // of the last incarnation, at quiescence
  int incarnations = 0;
  double seconds = 0;
  // The windows the run opened ("held 3 messages across CLOSE_CONSUMER on the same
  // connection"), and those it meant to open but could not, with the reason.
  std::vector<std::string> windows;
  std::vector<std::string> not_opened;
  // The drain phase: after the scenario, single messages until the client flushes its
  // accumulator. measured: right after that Flow, with everything acknowledged, the broker's
  // available count minus Q is the client's exact surplus (> 0) or shortfall (< 0).
  // Otherwise it stalled and the shortfall lies in [short_min, short_max].
  struct Drain {
    bool ran = false;
    bool measured = false;
    std::int64_t delta = 0;
    std::int64_t short_min = 0, short_max = 0;
    int messages = 0;
    std::string text;  // "drain: 4 single messages; flushed: available 7 = Q - 3"
  } drain;
  std::vector<std::uint64_t> never_acked;  // entries still unacknowledged at quiescence
  // What the windows measured, for the row attribution (scenario_judge.cc).
  std::int64_t held_across = 0;         // messages held across the replacement
  std::int64_t late_flow = 0;           // permits Flowed to the replacement before any delivery
  std::int64_t before_start_singles = 0;  // non-batched entries delivered at or before start
  std::int64_t stale_discards = 0;      // older-epoch units held, never acknowledged, after a
                                        // REDELIVER with a newer epoch
  // The legacy rows (rulebook section 10) whose window the run opened: "L1"; and those a
  // finding of the run is reported under (the window opened and the client erred as the
  // row's legacy value does).
  std::vector<std::string> rows;
  std::vector<std::string> found_rows;
  // Why this client cannot open the scenario's window at all, whatever the timing (a property
  // of the client: "its Subscribe names no consumer epoch"): the scenario does not apply to it.
  // Kept apart from not_opened, whose windows a slower or luckier run might open.
  std::vector<std::string> cannot_open;
  // Q and T as the client's own Flows show them (spec/flow_settings.h), and, when its first
  // Flow contradicts ClientSpec::q, why: the run is then not judged (its numbers are measured
  // against a Q the client does not use), and conform reports a configuration mismatch.
  spec::FlowSettingsSeen flows_seen;
  std::optional<std::string> settings_mismatch;
  bool failed() const { return !violations.empty() || client_failure.has_value(); }
  // A run that failed nothing but could not open a window it exists for: not a pass.
  bool inconclusive() const { return !failed() && !not_opened.empty(); }
  // A run that failed nothing and whose window this client cannot open: NOT-APPLICABLE.
  bool not_applicable() const {
    return !failed() && windows.empty() && not_opened.empty() && !cannot_open.empty();
  }
};

// Runs one scenario: broker up, client started, entries delivered under bounded waits,
// quiescence, client stopped, trace judged by the Monitor. Never hangs: every wait is bounded
// by `client.timeout`.
ScenarioOutcome run_scenario(const ClientSpec& client, const ScenarioParams& params);

}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_SCENARIO_H_
