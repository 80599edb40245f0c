// The Monitor's state and handlers (spec/monitor.h), private to spec/. One struct holds what
// the monitor knows; its handlers live by event family:
//   monitor.cc             the public Monitor, dispatch, finish, ledgers
//   monitor_wire.cc        wire events: subscribe .. quiescent (W1-W3, B2/B3/B7, N4, E2, E5, E6)
//   monitor_client.cc      permit states and returns: inc_*, msg_return, drop, protocol_error,
//                          crediting (N1-N7, M1-M3, E3, C5/C6, S7)
//   monitor_command.cc     one command: recv .. settle (C1-C4, C7, K1-K8, S1-S3, E1, E2)
//   monitor_broker.cc      broker accounting: send, consumer_removed (B1-B11, E4)
//   monitor_deviations.cc  known deviations X1-X6: when they excuse a finding, by how much
//   monitor_scenario.cc    a scripted scenario's driver facts (x-window .. x-drain, no
//                          subscribed consumer, a malformed frame): spec/scenario_verdict.h
//
// Speed (the one place it is done; measured by bench/validate_bench): per-event work is
// constant amortized and allocation-free on the clean path.
//   - `last_command` caches the command most recently looked up (consecutive events mostly
//     name the same one); every insert into or erase from `cmds` clears it.
//   - incarnations live in a node_hash_map, so a Command keeps a pointer to its own
//     (Command::inc_state) instead of a lookup per return.
//   - per-connection lists (incs_on_cnx, wire_consumers_on_cnx) make ending a connection cost
//     what lives on it; an incarnation's command list is pruned amortized (Recv) and at
//     quiescence, so it stays at what is in flight.
//   - Label builds a diagnostic's subject only when a finding is reported.
//   - validate_permits' resolution is cached per command (Command::validated).
//
// Memory (issue 18): what is in flight, plus what a later event naming it can still need of
// every finished client command (Retired), message (FinishedMessages) and, in streaming mode,
// ended permit state (EndedIncs), kept as runs of consecutive ids whose values are alike or
// rise by one per id (id_runs.h):
//   - a finished command: nothing in a run of commands finishing alike, about 32 bytes alone
//     in its run; its numbered permit state in `retired_incs`, nothing when it rises with the
//     command ids (a command per state) or stays (several commands per state: 24 bytes a
//     state), 24 alone; each distinct Retired record once, about 250 bytes;
//   - a finished message: its command, nothing in a run of consecutive ids of one command or
//     rising with their commands, about 48 bytes alone;
//   - an ended permit state no command in flight points to (one that is pointed to stays
//     whole until that command finishes): nothing when it ends like the state before it (same
//     connection, same accumulator left, ...), numbered after it, with the consumer id after
//     its or the same; alone in its runs about 60 bytes (consumer id 36, shape 24); each
//     distinct EndedShape once, about 200 bytes; a consumer whose latest state ended with
//     units in its accumulator keeps an entry for N2 (about 60 bytes).
// Measured with MonitorSize (tests/spec/monitor_memory_test.cc): permit-state cycles (a state,
// a command and a message each) ending alike cost about 0.01 bytes a cycle (762 bytes for
// 100k; kept whole, about 700 bytes a cycle), and with every state and its command's state
// alone in their runs 143 bytes a cycle. Whole-trace mode keeps ended states whole (about 330
// bytes each: the reference the differential properties compare streaming against). Text
// ids: a hash entry each.
#ifndef PERMITCHECK_SPEC_INTERNAL_MONITOR_STATE_H_
#define PERMITCHECK_SPEC_INTERNAL_MONITOR_STATE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/absl_view.h"
#include "spec/command_budget.h"
#include "spec/events.h"
#include "spec/internal/id_runs.h"
#include "spec/monitor.h"
#include "spec/resolve.h"
#include "spec/rule_id.h"
#include "spec/ruleset.h"
#include "spec/scenario_verdict.h"

namespace permitcheck::spec {
namespace monitor_internal {

// Checked sums (issue 18): the monitor's totals saturate at the int64 bounds instead of
// wrapping, so an absurd value reads as the over-grant, over-return or overflow it is (E2, N7,
// E5) and never as its wrapped opposite.
inline std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}
inline std::int64_t sat_sub(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b < 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}
// |a - b| without overflow.
inline std::uint64_t distance(std::int64_t a, std::int64_t b) {
  return a >= b ? static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b)
                : static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a);
}

// (cnx, consumer): the protocol's scope of a consumer id.
struct ConsumerKey {
  Id cnx;
  std::uint64_t consumer = 0;
  friend bool operator==(const ConsumerKey&, const ConsumerKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const ConsumerKey& k) {
    return H::combine(std::move(h), k.cnx, k.consumer);
  }
};

inline std::string describe(const ConsumerKey& k) {
  return absl::StrCat("consumer ", k.consumer, " on connection ", k.cnx.to_string());
}

// Names what a diagnostic is about ("direct return", "return of message 7"); the text is built
// only when a finding is reported, so the common, clean event allocates nothing for it.
struct Label {
  std::string_view text;
  const Id* id = nullptr;  // appended after a space when set
  std::string str() const {
    return id ? absl::StrCat(to_absl(text), " ", id->to_string()) : std::string(text);
  }
};

// An incarnation as the wire shows it: subscribe .. close_consumer/disconnect/next subscribe.
struct WireIncarnation {
  bool subscribed_ok = false;
  bool ended = false;
  // Its Subscribe replaced an incarnation closed by close_consumer on the same connection: a
  // Flow before this one's Subscribe succeeded may be the old one's (N6, rulebook 12.12).
  bool replaces_closed = false;
  bool precise = true;       // every debit on it was known
  std::int64_t granted = 0;  // sum of Flow permits (saturating)
  std::int64_t debited = 0;  // sum of P of its messages (saturating)
  std::optional<std::int64_t> q;
  // B11, decision 10: the line of a `write_failed` for its consumer (0: none). A failed write
  // is connection loss, so no MESSAGE may follow on it.
  std::uint64_t write_failed_line = 0;
  // Wire-only commands sent on it and not yet acknowledged: released when acknowledged or
  // when the incarnation ends, so a wire trace costs what is in flight.
  absl::flat_hash_set<Id> in_flight;
};

// A client permit state (N1).
struct ClientIncarnation {
  Id inc;
  ConsumerKey key;
  bool current = true;
  bool flow_enabled = false;
  bool initial_granted = false;
  std::int64_t accumulator = 0;
  std::int64_t granted = 0;  // Flow permits written for it, initial grant included
  std::int64_t debited = 0;  // P of the commands it received
  std::int64_t predecessor_accumulator = 0;  // what the replaced state still held (N2)
  std::optional<RuleId> deviation;           // a known deviation touched its balance
  // Units the known deviations added to (+) or withheld from (-) its balance, when they say
  // exactly how many (X2 over-return, X3/X4 held units, X5 processor count); X1/X6 fallbacks
  // depend on a debit the client cannot see, so they make the amount unknown.
  std::int64_t deviation_delta = 0;
  bool deviation_delta_known = true;
  std::vector<Id> commands;                  // commands received on it, pruned when finished
  std::size_t commands_after_prune = 0;
  std::size_t holders = 0;  // commands in `cmds` whose inc_state points here
};

// What an ended permit state keeps once compacted (streaming mode, EndedIncs): what a later
// event naming it is judged by. Its balance and totals are read only while it is current
// (quiescence, Flow over-grants, deviations), and a state never becomes current again, so an
// ended one keeps its connection (E3/N3 under connection-scoped credit), whether its Subscribe
// succeeded (N4), and what a Flow for it under a ruleset without the identity re-check reads
// and changes (initial grant, N2's predecessor, the accumulator, which the next state of its
// consumer reads too, N2). Its consumer id is kept apart, in rising runs.
struct EndedShape {
  Id cnx;
  bool flow_enabled = false;
  bool initial_granted = false;
  std::int64_t accumulator = 0;
  std::int64_t predecessor_accumulator = 0;

  friend bool operator==(const EndedShape&, const EndedShape&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const EndedShape& e) {
    return H::combine(std::move(h), e.cnx, e.flow_enabled, e.initial_granted, e.accumulator,
                      e.predecessor_accumulator);
  }
};

// Ended permit states, compacted: state id -> its consumer id (an IdRuns whose runs rise, so
// states numbered in order with a new consumer id each cost one run) and -> its EndedShape,
// each distinct shape kept once (states ending alike on one connection cost one run).
class EndedIncs {
 public:
  bool empty() const { return consumers_.empty(); }
  std::size_t size() const { return consumers_.size(); }
  bool contains(const Id& inc) const { return consumers_.find(inc).has_value(); }

  // REQUIRES: !inc.current.
  void insert(const ClientIncarnation& inc) {
    EndedShape shape{.cnx = inc.key.cnx,
                     .flow_enabled = inc.flow_enabled,
                     .initial_granted = inc.initial_granted,
                     .accumulator = inc.accumulator,
                     .predecessor_accumulator = inc.predecessor_accumulator};
    std::uint32_t index = 0;
    if (!shapes_.empty() && shapes_.back() == shape) {
      index = static_cast<std::uint32_t>(shapes_.size() - 1);
    } else {
      auto [it, inserted] = index_.try_emplace(shape, static_cast<std::uint32_t>(shapes_.size()));
      if (inserted) shapes_.push_back(std::move(shape));
      index = it->second;
    }
    consumers_.insert(inc.inc, inc.key.consumer);
    shape_of_.insert(inc.inc, index);
  }

  // The ended state `inc` whole again (its totals, read only while current, zero), no longer
  // held here; nullopt if not held.
  std::optional<ClientIncarnation> take(const Id& inc) {
    const std::optional<std::uint64_t> consumer = consumers_.take(inc);
    if (!consumer) return std::nullopt;
    const EndedShape& shape = shapes_[*shape_of_.take(inc)];
    return ClientIncarnation{.inc = inc,
                             .key = {shape.cnx, *consumer},
                             .current = false,
                             .flow_enabled = shape.flow_enabled,
                             .initial_granted = shape.initial_granted,
                             .accumulator = shape.accumulator,
                             .predecessor_accumulator = shape.predecessor_accumulator};
  }

  std::size_t bytes() const {
    return consumers_.bytes() + shape_of_.bytes() + shapes_.capacity() * sizeof(EndedShape) +
           index_.capacity() * (sizeof(std::pair<const EndedShape, std::uint32_t>) + 1);
  }

 private:
  IdRuns<std::uint64_t> consumers_;
  IdRuns<std::uint32_t> shape_of_;
  std::vector<EndedShape> shapes_;
  absl::flat_hash_map<EndedShape, std::uint32_t> index_;
};

struct Command {
  Id cmd;
  std::optional<Id> inc;
  // `inc` once looked up (counted in its `holders`: an ended state is compacted, in streaming
  // mode, only when no command in flight points to it).
  ClientIncarnation* inc_state = nullptr;
  // Wire and broker view.
  std::optional<std::uint64_t> message_permits;
  AckSet ack_set;
  std::optional<std::int64_t> wire_batch_size;
  std::optional<std::int64_t> broker_p;  // finalized P from a `send`
  // Its `send` started while the consumer was subscribed, and B12 judged that start: its
  // MESSAGE may overdraw (B9) and is not judged again. Per command, not a count per consumer,
  // because a send made before the Subscribe succeeded may have its MESSAGE after it.
  bool send_judged = false;
  // Client view.
  bool received = false;
  std::optional<std::int64_t> batch_size;  // from `metadata`
  // validate_permits(...).resolution for the current message_permits, ack_set and batch_size,
  // once computed; reset whenever one of them changes.
  std::optional<Resolution> validated;
  std::int64_t budget_p = 0;               // what the client must settle (C2/C3)
  std::optional<FailureStage> failure;
  std::optional<TransferPath> path;
  bool inconsistent = false;            // C3 verdict: corrupted-data handling due
  std::string inconsistent_reason;
  bool protocol_error_due = false;      // C4
  bool zero_queue_batch = false;        // S7
  std::int64_t claimed = 0;             // net of restores
  std::int64_t live_messages = 0;       // claimed, not yet returned or dropped
  std::int64_t skipped = 0;
  std::int64_t direct_returned = 0;
  std::int64_t settle_returned = 0;
  std::int64_t msg_returned = 0;
  std::int64_t dropped = 0;
  bool settled = false;
  bool complete_checked = false;
  std::optional<ConsumerKey> wire_key;  // the wire incarnation whose in_flight lists it

  std::int64_t returned() const {
    return sat_add(sat_add(direct_returned, settle_returned), msg_returned);
  }

  // What the command did with its units, for the decisions of command_budget.h.
  CommandProgress progress() const {
    return CommandProgress{
        .p = budget_p,
        .batch_size = batch_size.value_or(wire_batch_size.value_or(1)),
        .claimed = claimed,
        .skipped = skipped,
        .direct_returned = direct_returned,
        .failure = failure,
        .transferred = path.has_value(),
    };
  }

  // The P the broker debited, best known (ledger).
  std::optional<std::int64_t> debited_p() const {
    if (message_permits && message_permits_in_range(*message_permits)) {
      return static_cast<std::int64_t>(*message_permits);
    }
    if (broker_p) return broker_p;
    if (wire_batch_size) return candidate_permits(*wire_batch_size, ack_set);
    if (received) return budget_p;
    return std::nullopt;
  }
};

// What a finished client command leaves for a later event naming it to be judged as it would
// be with the whole Command (a reused id, a second terminal transition or return: K1, K2, K5,
// K6, M3, E2). Both modes keep it, so streaming and whole-trace mode cannot disagree. Finished
// commands share these records: each distinct one is kept once (`Monitor::State::shapes`,
// about 250 bytes), and a finished id maps to its record's index in an IdRuns (id_runs.h), so
// commands finishing in increasing id order with the same record cost one run together, and
// one alone in its run about 32 bytes. A numbered permit state is not in the record but in
// `Monitor::State::retired_incs` (rising runs: each command on the state after the previous
// one's costs nothing more), so commands of different states still share one record.
struct Retired {
  bool numbered_inc = false;  // its permit state's number is in retired_incs
  std::optional<Id> inc;      // its permit state, if not numbered
  std::int64_t budget_p = 0;
  std::int64_t claimed = 0;
  std::int64_t direct_returned = 0;
  std::int64_t other_returned = 0;  // terminal transition and message returns
  std::int64_t dropped = 0;
  std::optional<TransferPath> path;

  friend bool operator==(const Retired&, const Retired&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const Retired& r) {
    // (This abseil hashes no std::optional.)
    return H::combine(std::move(h), r.numbered_inc, r.inc.has_value(), r.inc.value_or(Id()),
                      r.budget_p, r.claimed, r.direct_returned, r.other_returned, r.dropped,
                      r.path.has_value(), r.path.value_or(TransferPath::kChunk));
  }
};

// A handed-off message not yet returned or dropped. Once it is, only its command is kept
// (Monitor::State::FinishedMessages), for a second return (M3) and a reused id (K2).
struct Msg {
  Id cmd;
};

// Returned or dropped messages -> their command: an IdRuns from the message id to a numeric
// command id (a command's messages with consecutive ids share one run, 24 bytes), and a
// hash entry per message of a text command id.
class FinishedMessages {
 public:
  bool empty() const { return by_number_.empty() && by_text_.empty(); }
  std::size_t size() const { return by_number_.size() + by_text_.size(); }
  void insert(const Id& msg, const Id& cmd) {
    if (cmd.is_number()) {
      by_number_.insert(msg, cmd.as_number());
    } else {
      by_text_.insert_or_assign(msg, cmd);
    }
  }
  // The command of finished message `msg`, if it is one.
  std::optional<Id> find(const Id& msg) const {
    if (empty()) return std::nullopt;
    if (std::optional<std::uint64_t> n = by_number_.find(msg)) return Id::number(*n);
    auto it = by_text_.find(msg);
    return it == by_text_.end() ? std::nullopt : std::optional<Id>(it->second);
  }
  std::size_t bytes() const {
    return by_number_.bytes() + by_text_.capacity() * (sizeof(std::pair<const Id, Id>) + 1);
  }

 private:
  IdRuns<std::uint64_t> by_number_;
  absl::flat_hash_map<Id, Id> by_text_;
};

}  // namespace monitor_internal

struct Monitor::State {
  using ConsumerKey = monitor_internal::ConsumerKey;
  using Label = monitor_internal::Label;
  using WireIncarnation = monitor_internal::WireIncarnation;
  using ClientIncarnation = monitor_internal::ClientIncarnation;
  using Command = monitor_internal::Command;
  using Msg = monitor_internal::Msg;
  using Retired = monitor_internal::Retired;
  using EndedIncs = monitor_internal::EndedIncs;
  using FinishedMessages = monitor_internal::FinishedMessages;
  static absl::string_view to_absl(std::string_view s) { return permitcheck::to_absl(s); }
  static std::int64_t sat_add(std::int64_t a, std::int64_t b) {
    return monitor_internal::sat_add(a, b);
  }
  static std::int64_t sat_sub(std::int64_t a, std::int64_t b) {
    return monitor_internal::sat_sub(a, b);
  }

  TraceHeader header;
  const Ruleset* rules;
  MonitorOptions options;
  std::vector<Finding> violations;
  std::vector<Finding> deviations;

  absl::flat_hash_map<ConsumerKey, WireIncarnation> wire;
  absl::flat_hash_map<Id, bool> cnx_sent_field;  // W3: the broker sent the field on it
  // MonitorOptions::sends_span_frames: per connection, the MESSAGE frames written back to back
  // to one consumer so far (a run ends at a frame to another consumer or any other broker
  // frame on the connection), and the available at the run's first frame (X7, B12).
  struct FrameRun {
    ConsumerKey key;
    std::int64_t start_available = 0;
    std::string first;  // the run's first command, for the report
  };
  absl::flat_hash_map<Id, FrameRun> frame_runs;
  // Node-based: a command keeps a pointer to its incarnation (Command::inc_state). Current
  // states, and in streaming mode the ended ones a command in flight points to or the event
  // now judged named (revived from `ended_incs`); whole-trace mode keeps every state here.
  absl::node_hash_map<Id, ClientIncarnation> incs;
  EndedIncs ended_incs;              // streaming mode: ended states no command points to
  std::vector<Id> compact_due;       // ended states to compact after this event, if unheld
  // Per connection, so ending a connection costs what lives on it, not the whole trace.
  absl::flat_hash_map<Id, std::vector<Id>> incs_on_cnx;
  absl::flat_hash_map<Id, std::vector<std::uint64_t>> wire_consumers_on_cnx;
  // Consumers closed by close_consumer, by connection, until their replacement's Subscribe or
  // the connection's end: an old Flow arriving meanwhile is no violation (rulebook 12.12).
  // Kept as runs of consumer ids (value 0), so consumers numbered in order cost one run.
  absl::flat_hash_map<Id, monitor_internal::IdRuns<std::uint8_t>> closed_on_cnx;
  // Wire-only commands sent to no subscribed consumer of the connection: only their Ack or the
  // connection's end releases them.
  absl::flat_hash_map<Id, absl::flat_hash_set<Id>> unattached_on_cnx;
  // Consumer id -> its latest wire incarnation: a `send` names the consumer only (B12).
  absl::flat_hash_map<std::uint64_t, ConsumerKey> wire_of_consumer;
  absl::flat_hash_map<std::uint64_t, Id> current_inc;  // consumer id -> current permit state
  absl::flat_hash_map<std::uint64_t, Id> last_inc;     // consumer id -> latest permit state
  absl::flat_hash_map<Id, Command> cmds;
  // Handed-off messages not yet returned or dropped; the finished ones keep their command only
  // (a second return is M3, a reused id K2).
  absl::flat_hash_map<Id, Msg> msgs;
  FinishedMessages finished_msgs;
  // Finished client commands: id -> index of its record in `shapes` (see Retired); under
  // retain_ledger only, the ledgers of every released command (the checks never read them).
  monitor_internal::IdRuns<std::uint32_t> retired;
  monitor_internal::IdRuns<std::uint64_t> retired_incs;  // finished command -> numbered state
  std::vector<Retired> shapes;
  absl::flat_hash_map<Retired, std::uint32_t> shape_index;
  absl::flat_hash_map<Id, CommandLedger> ledgers;
  std::size_t finding_bytes = 0;  // heap held by the findings' explanations
  // B11: removed broker consumers, by consumer id and incarnation (nullopt: any incarnation
  // until the consumer id subscribes again).
  absl::flat_hash_set<std::tuple<std::uint64_t, bool, Id>> removed_broker_consumers;
  static std::tuple<std::uint64_t, bool, Id> removed_key(std::uint64_t consumer,
                                                         const std::optional<Id>& inc) {
    return {consumer, inc.has_value(), inc.value_or(Id())};
  }
  // B11, decision 10: broker consumers a write to failed and not yet removed, keyed as above,
  // with the line of the failure; and whether any wire incarnation was marked
  // (WireIncarnation::write_failed_line), so a MESSAGE is looked up only then.
  absl::flat_hash_map<std::tuple<std::uint64_t, bool, Id>, std::uint64_t> failed_writes;
  bool wire_write_failed = false;

  std::uint64_t line = 0;
  bool saw_subscribe = false;  // the trace records wire Subscribes (N4 without one on record)

  // Invariants E1-E6 are what PIP-491 promises; legacy Pulsar does not, so under a ruleset
  // without the command budget they are not checked (its ledger still shows the numbers).
  bool invariants() const { return rules->budget_tracked; }

  void violation(RuleId rule, std::string text) {
    finding_bytes += text.capacity();
    violations.push_back({rule, line, std::move(text)});
  }
  void deviation(RuleId rule, std::string text) {
    finding_bytes += text.capacity();
    deviations.push_back({rule, line, std::move(text)});
  }

  // The command most recently looked up: consecutive events mostly name the same command.
  // Cleared whenever `cmds` inserts or erases, which may move or destroy it.
  Command* last_command = nullptr;

  // The command `id`, created if unknown; a finished one comes back from `retired`.
  Command& command(const Id& id) {
    if (Command* c = find_command(id)) return *c;
    auto [it, inserted] = cmds.try_emplace(id);
    it->second.cmd = id;
    last_command = nullptr;
    return it->second;
  }
  // The command `id` as an event names it: in flight, or finished (brought back from
  // `retired`, so that a reused id or a late return is judged against what it did).
  Command* find_command(const Id& id) {
    if (Command* c = find_live(id)) return c;
    return retired.empty() ? nullptr : revive(id);
  }
  // The command `id` if in flight (for walks over what is in flight).
  Command* find_live(const Id& id) {
    if (last_command != nullptr && last_command->cmd == id) return last_command;
    auto it = cmds.find(id);
    if (it == cmds.end()) return nullptr;
    last_command = &it->second;
    return last_command;
  }
  Command* revive(const Id& id);      // monitor_command.cc
  void retire(Command& c);            // monitor_command.cc: c is released
  void release_wire_command(Command& c);  // monitor_wire.cc: c is released if wire-only
  void release_in_flight(WireIncarnation& w);
  CommandLedger ledger_of(const Command& c) const;
  // Releases `c`, which must live in `cmds`.
  void erase_command(const Command& c) {
    if (ClientIncarnation* inc = c.inc_state; inc != nullptr && --inc->holders == 0 &&
                                              !inc->current && compacting()) {
      compact_due.push_back(inc->inc);
    }
    last_command = nullptr;
    cmds.erase(cmds.find(c.cmd));  // the key is read before c dies
  }

  // Streaming mode compacts ended permit states (EndedIncs); whole-trace mode keeps them whole,
  // the reference the differential properties compare streaming against.
  bool compacting() const { return !options.retain_ledger; }
  bool inc_opened(const Id& id) const { return incs.contains(id) || ended_incs.contains(id); }
  // The permit state `id`, current or ended (revived from `ended_incs` if compacted).
  ClientIncarnation* find_inc(const Id& id) {
    auto it = incs.find(id);
    if (it != incs.end()) return &it->second;
    return ended_incs.empty() ? nullptr : revive_inc(id);
  }
  ClientIncarnation* revive_inc(const Id& id);  // monitor_client.cc
  // After each event: the ended states in compact_due that no command points to go back to
  // `ended_incs`.
  void compact_ended();                         // monitor_client.cc
  ClientIncarnation* inc_of(Command& c) {
    if (c.inc_state == nullptr && c.inc) {
      c.inc_state = find_inc(*c.inc);
      if (c.inc_state != nullptr) ++c.inc_state->holders;
    }
    return c.inc_state;
  }

  std::string cmd_name(const Command& c) const { return absl::StrCat("command ", c.cmd.to_string()); }

  // ---- Client-side P (C2/C3) ----

  void set_budget_p(Command& c, std::int64_t p);

  // ---- Crediting returns (M1, N3, N7, E3) ----

  // Credits n units returned for command `c` (or a message of it) to the permit state the
  // ruleset routes it to. `what` names the return in diagnostics.
  void credit(Command& c, std::int64_t n, const Label& what);

  // E2/K7: a command never returns more than P.
  void check_over_return(Command& c);

  // E1 once a command is finished: terminal and every handed-off message returned.
  void check_complete(Command& c);

  // C4: a command whose explicit value is out of range must end in a protocol error.
  void check_protocol_error_raised(Command& c);

  // ---- Incarnation lifecycle ----

  void end_inc(ClientIncarnation& inc);

  void end_client_incs_on(const Id& cnx);

  WireIncarnation& fresh_wire(const ConsumerKey& key);

  void end_wire(const ConsumerKey& key);
  void release_wire(const ConsumerKey& key);

  WireIncarnation* live_wire(const ConsumerKey& key);

  // B12: a send (or, on the wire, a MESSAGE outside a recorded send) starts only while the
  // wire-derived available of its consumer is positive.
  // A broker frame other than a MESSAGE ends its connection's run (sends_span_frames).
  void end_frame_run(const Event& event) {
    const Id* cnx = nullptr;
    if (const auto* e = std::get_if<SubscribeOk>(&event)) cnx = &e->cnx;
    if (const auto* e = std::get_if<SubscribeFail>(&event)) cnx = &e->cnx;
    if (const auto* e = std::get_if<CloseConsumer>(&event)) cnx = &e->cnx;
    if (const auto* e = std::get_if<Disconnect>(&event)) cnx = &e->cnx;
    if (cnx != nullptr) frame_runs.erase(*cnx);
  }
  void check_frame_back_pressure(const WireIncarnation& w, const ConsumerKey& key,
                                 const std::string& what);
  void check_back_pressure(const WireIncarnation& w, const ConsumerKey& key,
                           const std::string& what);

  // ---- Event handlers ----

  void on(const Connect&);
  void on(const Subscribe& e);
  void on(const SubscribeOk& e);
  void on(const SubscribeFail& e);
  void on(const Flow& e);

  // The client incarnation now current for `key`, if the trace has client events for it.
  ClientIncarnation* current_client_inc(const ConsumerKey& key);

  // Whether the known deviations of `inc` account for `excess` units above (or, negative,
  // below) the exact balance.
  static bool explained(const ClientIncarnation& inc, std::int64_t excess);

  // A Flow for `key` whose wire incarnation (`w`, if on record) is not live and subscribed:
  // the rule it breaks, if any (N4, N6, rulebook 12.12), and the finding's text.
  std::optional<RuleId> flow_before_subscribed(const ConsumerKey& key,
                                               const WireIncarnation* w) const;
  std::string unsubscribed_flow_text(RuleId rule, std::int64_t permits, const ConsumerKey& key,
                                     const WireIncarnation* w) const;
  // Client side of a Flow carrying `inc` (N4-N6, E2). Returns true when it reported.
  bool client_flow(const Flow& e, const Id& id);

  void on(const Message& e);
  void on(const Ack& e);
  void on(const CloseConsumer& e);
  void on(const Disconnect& e);
  void on(const Quiescent& e);

  // At quiescence every delivered command of the incarnation is terminal (K5) and every
  // handed-off message has returned (M1).
  void quiescent_commands(ClientIncarnation& inc);

  // Drops finished commands from the incarnation's list, so per-event work stays bounded by
  // what is in flight.
  void prune_finished(ClientIncarnation& inc);

  void on(const IncOpen& e);
  void on(const IncFlowEnabled& e);
  void on(const IncClose& e);
  void on(const Recv& e);
  void on(const Resolve& e);
  void on(const Metadata& e);
  void on(const Corrupt& e);
  void on(const Claim& e);
  void on(const Restore& e);
  void on(const Skip& e);
  void on(const Transfer& e);
  void on(const DirectReturn& e);
  void on(const Settle& e);

  // K5/K4/K7/C7: the first terminal transition returns what the ruleset prescribes.
  void check_settle(Command& c, std::int64_t n);

  // S4/X3, X4, X5: a command whose units moved to a specialised path, at completion.
  void transferred_deviations(Command& c, ClientIncarnation* inc);

  // X1/X6: with the field absent, an early failure settles the fallback value.
  void early_failure_deviations(Command& c);

  void on(const MsgReturn& e);
  void on(const Drop& e);

  void drop_units(Command& c, std::int64_t n, const Label& what);

  void on(const ProtocolError& e);
  void on(const Send& e);
  void on(const ConsumerRemoved& e);
  void on(const WriteFailed& e);
  // B11: a MESSAGE on a wire incarnation whose consumer's write failed (monitor_broker.cc).
  void check_after_write_failure(const Message& e);

  // S5/S6: the message object of the skip just before was released at skip time. A
  // dead-letter message is still held by dead-letter handling (revision B's F3).
  void on(const Extension& e);

  // A scripted scenario's facts (spec/scenario_facts.h; monitor_scenario.cc): gathered until
  // its `x-drain`, judged there. False when `ev` is no scenario fact.
  bool on_scenario_fact(std::string_view ev);
  ScenarioFacts scenario_facts;
  std::size_t scenario_fact_bytes = 0;  // heap held by scenario_facts (MonitorSize: findings)
  // Lines of findings a driver reported from what it saw of the client (its exit, no consumer,
  // a malformed frame): never explained away as the field-absent fallback (X1, X6).
  std::vector<std::uint64_t> driver_fact_lines;

  std::optional<Skip> last_skip;  // the previous event, when it was a skip (S5/S6)
};

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_INTERNAL_MONITOR_STATE_H_
