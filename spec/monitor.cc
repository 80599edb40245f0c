#include "spec/monitor.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "spec/command_budget.h"
#include "spec/finalize.h"
#include "spec/resolve.h"

namespace permitcheck::spec {
namespace {

// Debian's abseil keeps its own absl::string_view, which absl::StrCat needs.
absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

std::string format_finding(const Finding& f) {
  return absl::StrCat("line ", f.line, ": ", av(rule_name(f.rule)), " ", f.explanation);
}

namespace {

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

std::string describe(const ConsumerKey& k) {
  return absl::StrCat("consumer ", k.consumer, " on connection ", k.cnx.to_string());
}

// Names what a diagnostic is about ("direct return", "return of message 7"); the text is built
// only when a finding is reported, so the common, clean event allocates nothing for it.
struct Label {
  std::string_view text;
  const Id* id = nullptr;  // appended after a space when set
  std::string str() const {
    return id ? absl::StrCat(av(text), " ", id->to_string()) : std::string(text);
  }
};

// An incarnation as the wire shows it: subscribe .. close_consumer/disconnect/next subscribe.
struct WireIncarnation {
  bool subscribed_ok = false;
  bool ended = false;
  bool precise = true;       // every debit on it was known
  std::int64_t granted = 0;  // sum of Flow permits
  std::int64_t debited = 0;  // sum of P of its messages
  std::optional<std::int64_t> q;
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
};

struct Command {
  Id cmd;
  std::optional<Id> inc;
  ClientIncarnation* inc_state = nullptr;  // `inc` once looked up (incarnations are never erased)
  // Wire and broker view.
  std::optional<std::uint64_t> message_permits;
  AckSet ack_set;
  std::optional<std::int64_t> wire_batch_size;
  std::optional<std::int64_t> broker_p;  // finalized P from a `send`
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
  std::vector<Id> messages;  // handed off, for release when the command retires

  std::int64_t returned() const { return direct_returned + settle_returned + msg_returned; }

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

struct Msg {
  Id cmd;
  bool done = false;  // returned or dropped
};

}  // namespace

struct Monitor::State {
  TraceHeader header;
  const Ruleset* rules;
  MonitorOptions options;
  std::vector<Finding> violations;
  std::vector<Finding> deviations;

  absl::flat_hash_map<ConsumerKey, WireIncarnation> wire;
  absl::flat_hash_map<Id, bool> cnx_sent_field;  // W3: the broker sent the field on it
  // Node-based: a command keeps a pointer to its incarnation (Command::inc_state).
  absl::node_hash_map<Id, ClientIncarnation> incs;
  // Per connection, so ending a connection costs what lives on it, not the whole trace.
  absl::flat_hash_map<Id, std::vector<Id>> incs_on_cnx;
  absl::flat_hash_map<Id, std::vector<std::uint64_t>> wire_consumers_on_cnx;
  absl::flat_hash_map<std::uint64_t, Id> current_inc;  // consumer id -> current permit state
  absl::flat_hash_map<std::uint64_t, Id> last_inc;     // consumer id -> latest permit state
  absl::flat_hash_map<Id, Command> cmds;
  absl::flat_hash_map<Id, Msg> msgs;
  // B11: removed broker consumers, by consumer id and incarnation (nullopt: any incarnation
  // until the consumer id subscribes again).
  absl::flat_hash_set<std::tuple<std::uint64_t, bool, Id>> removed_broker_consumers;
  static std::tuple<std::uint64_t, bool, Id> removed_key(std::uint64_t consumer,
                                                         const std::optional<Id>& inc) {
    return {consumer, inc.has_value(), inc.value_or(Id())};
  }

  std::uint64_t line = 0;

  // Invariants E1-E6 are what PIP-491 promises; legacy Pulsar does not, so under a ruleset
  // without the command budget they are not checked (its ledger still shows the numbers).
  bool invariants() const { return rules->budget_tracked; }

  void violation(RuleId rule, std::string text) {
    violations.push_back({rule, line, std::move(text)});
  }
  void deviation(RuleId rule, std::string text) {
    deviations.push_back({rule, line, std::move(text)});
  }

  // The command most recently looked up: consecutive events mostly name the same command.
  // Cleared whenever `cmds` inserts or erases, which may move or destroy it.
  Command* last_command = nullptr;

  Command& command(const Id& id) {
    auto [it, inserted] = cmds.try_emplace(id);
    if (inserted) {
      it->second.cmd = id;
      last_command = nullptr;
    }
    return it->second;
  }
  Command* find_command(const Id& id) {
    if (last_command != nullptr && last_command->cmd == id) return last_command;
    auto it = cmds.find(id);
    if (it == cmds.end()) return nullptr;
    last_command = &it->second;
    return last_command;
  }
  // Releases `c`, which must live in `cmds`.
  void erase_command(const Command& c) {
    last_command = nullptr;
    cmds.erase(cmds.find(c.cmd));  // the key is read before c dies
  }
  ClientIncarnation* find_inc(const Id& id) {
    auto it = incs.find(id);
    return it == incs.end() ? nullptr : &it->second;
  }
  ClientIncarnation* inc_of(Command& c) {
    if (c.inc_state == nullptr && c.inc) c.inc_state = find_inc(*c.inc);
    return c.inc_state;
  }

  std::string cmd_name(const Command& c) const { return absl::StrCat("command ", c.cmd.to_string()); }

  // ---- Client-side P (C2/C3) ----

  void set_budget_p(Command& c, std::int64_t p) {
    if (ClientIncarnation* inc = inc_of(c)) inc->debited += p - c.budget_p;
    c.budget_p = p;
  }

  // ---- Crediting returns (M1, N3, N7, E3) ----

  // Credits n units returned for command `c` (or a message of it) to the permit state the
  // ruleset routes it to. `what` names the return in diagnostics.
  void credit(Command& c, std::int64_t n, const Label& what) {
    if (n == 0) return;
    ClientIncarnation* inc = inc_of(c);
    if (inc == nullptr) return;
    if (!inc->current) {
      auto cur = current_inc.find(inc->key.consumer);
      ClientIncarnation* replacement =
          cur == current_inc.end() ? nullptr : find_inc(cur->second);
      if (rules->return_scope == ReturnScope::kIncarnation) {
        if (replacement != nullptr) {
          // E3: the unit reaches the replacement's Flow (legacy L6/L7, revision A's F5).
          violation(RuleId::kE3,
                    absl::StrCat(what.str(), " of ", cmd_name(c), " credits ", n,
                                 " permit(s) debited to incarnation ", inc->inc.to_string(),
                                 " after it ended; incarnation ", replacement->inc.to_string(),
                                 " is current (credit crosses into the replacement; must be "
                                 "dropped)"));
        } else {
          violation(RuleId::kN3,
                    absl::StrCat(what.str(), " of ", cmd_name(c), " credits ", n,
                                 " permit(s) to incarnation ", inc->inc.to_string(),
                                 ", which has ended (must be dropped)"));
        }
        return;
      }
      // Legacy: the consumer object's accumulator, whatever incarnation is current now.
      // Revision A (F5): the same, but only on the connection the return came through.
      if (replacement == nullptr) return;
      if (rules->return_scope == ReturnScope::kSameConnection &&
          !(replacement->key.cnx == inc->key.cnx)) {
        violation(RuleId::kN3,
                  absl::StrCat(what.str(), " of ", cmd_name(c), " credits ", n,
                               " permit(s) of incarnation ", inc->inc.to_string(),
                               " on connection ", inc->key.cnx.to_string(),
                               ", which has ended; the current connection differs (must be "
                               "dropped)"));
        return;
      }
      if (rules->return_scope == ReturnScope::kSameConnection && invariants()) {
        // The revision's rule allows it; the invariant every revision promises does not.
        violation(RuleId::kE3,
                  absl::StrCat(what.str(), " of ", cmd_name(c), " credits ", n,
                               " permit(s) debited to incarnation ", inc->inc.to_string(),
                               " to the same-connection replacement ",
                               replacement->inc.to_string(), " (connection-scoped credit, F5)"));
      }
      inc = replacement;
    }
    if (inc->accumulator + n > kMaxPermits) {
      violation(RuleId::kN7,
                absl::StrCat("accumulator of incarnation ", inc->inc.to_string(), " holds ",
                             inc->accumulator, "; adding ", n, " exceeds 2^31-1 (overflow must "
                             "close the connection, not credit)"));
    }
    inc->accumulator += n;
  }

  // E2/K7: a command never returns more than P.
  void check_over_return(Command& c) {
    if (!invariants() || c.path) return;
    if (c.returned() > c.budget_p) {
      violation(RuleId::kE2, absl::StrCat(cmd_name(c), " returned ", c.returned(),
                                          " permits but its P is ", c.budget_p,
                                          " (over-return by ", c.returned() - c.budget_p, ")"));
    }
  }

  // E1 once a command is finished: terminal and every handed-off message returned.
  void check_complete(Command& c) {
    if (c.complete_checked || !c.settled || c.live_messages > 0) return;
    c.complete_checked = true;
    ClientIncarnation* inc = inc_of(c);
    const bool in_scope = invariants() && inc != nullptr && inc->current && !c.path &&
                          !c.protocol_error_due && c.dropped == 0;
    if (in_scope && c.returned() < c.budget_p) {
      violation(RuleId::kE1,
                absl::StrCat(cmd_name(c), " finished having returned ", c.returned(),
                             " of its P = ", c.budget_p, " (", c.budget_p - c.returned(),
                             " permit(s) lost)"));
    }
    if (c.path && c.returned() == 0 && c.dropped == 0) {
      // S4/X3: crypto FAIL holds P until the incarnation ends; X4: chunk failure branches.
      const bool crypto = c.path == TransferPath::kCrypto;
      deviation(crypto ? RuleId::kX3 : RuleId::kX4,
                absl::StrCat(cmd_name(c), crypto ? " (crypto FAIL) holds P = "
                                                 : " (chunk failure branch) returned nothing for "
                                                   "P = ",
                             c.budget_p, crypto ? " until its incarnation ends" : ""));
      if (inc) {
        inc->deviation = crypto ? RuleId::kX3 : RuleId::kX4;
        inc->deviation_delta -= c.budget_p;  // held (X3) or never returned (X4)
      }
    } else if (c.path == TransferPath::kProcessor && c.returned() != c.budget_p) {
      deviation(RuleId::kX5, absl::StrCat(cmd_name(c), " custom processor returned ",
                                          c.returned(), " for P = ", c.budget_p));
      if (inc) {
        inc->deviation = RuleId::kX5;
        inc->deviation_delta += c.returned() - c.budget_p;
      }
    }
    if (!options.retain_ledger && c.live_messages == 0) {
      // Streaming: a finished command and its messages are released, so memory is bounded by
      // what is in flight. A later return of one of its messages reads as unknown (M1).
      for (const Id& m : c.messages) msgs.erase(m);
      erase_command(c);
    }
  }

  // C4: a command whose explicit value is out of range must end in a protocol error.
  void check_protocol_error_raised(Command& c) {
    ClientIncarnation* inc = inc_of(c);
    if (!c.protocol_error_due || inc == nullptr || !inc->current) return;
    violation(RuleId::kC4, absl::StrCat(cmd_name(c), " has message_permits = ",
                                        *c.message_permits, " but its connection ",
                                        inc->key.cnx.to_string(), " was never closed (C4: "
                                        "protocol error)"));
    c.protocol_error_due = false;  // report once
  }

  // ---- Incarnation lifecycle ----

  void end_inc(ClientIncarnation& inc) {
    if (!inc.current) return;
    inc.current = false;
    auto cur = current_inc.find(inc.key.consumer);
    if (cur != current_inc.end() && cur->second == inc.inc) current_inc.erase(cur);
  }

  void end_client_incs_on(const Id& cnx) {
    auto it = incs_on_cnx.find(cnx);
    if (it == incs_on_cnx.end()) return;
    for (const Id& id : it->second) {
      if (ClientIncarnation* inc = find_inc(id)) end_inc(*inc);
    }
    incs_on_cnx.erase(it);
  }

  WireIncarnation& fresh_wire(const ConsumerKey& key) {
    auto [it, inserted] = wire.try_emplace(key);
    if (inserted) wire_consumers_on_cnx[key.cnx].push_back(key.consumer);
    it->second = WireIncarnation{.q = header.q};
    return it->second;
  }

  void end_wire(const ConsumerKey& key) {
    auto it = wire.find(key);
    if (it != wire.end()) it->second.ended = true;
  }

  WireIncarnation* live_wire(const ConsumerKey& key) {
    auto it = wire.find(key);
    if (it == wire.end() || it->second.ended) return nullptr;
    return &it->second;
  }

  // ---- Event handlers ----

  void on(const Connect&) {}

  void on(const Subscribe& e) {
    removed_broker_consumers.erase(removed_key(e.consumer, std::nullopt));
    fresh_wire({e.cnx, e.consumer});
  }

  void on(const SubscribeOk& e) {
    auto it = wire.find(ConsumerKey{e.cnx, e.consumer});
    WireIncarnation& w = (it == wire.end() || it->second.ended) ? fresh_wire({e.cnx, e.consumer})
                                                                : it->second;
    w.subscribed_ok = true;
  }

  void on(const SubscribeFail& e) { end_wire({e.cnx, e.consumer}); }

  void on(const Flow& e) {
    const ConsumerKey key{e.cnx, e.consumer};
    if (e.permits < 0) {
      violation(RuleId::kB10, absl::StrCat("Flow for ", describe(key), " carries ", e.permits,
                                           " permits; Flow only adds"));
      return;
    }
    bool reported = false;
    if (e.inc) reported = client_flow(e, *e.inc);
    auto it = wire.find(key);
    if (it == wire.end()) return;  // no wire Subscribe recorded: nothing to check on the wire
    WireIncarnation& w = it->second;
    if (w.ended || !w.subscribed_ok) {
      // N4 is a rule of the permit-state rulesets; legacy writes such Flows (L11).
      if (!reported && rules->flow_recheck == FlowRecheck::kIdentity) {
        violation(RuleId::kN4, absl::StrCat("Flow of ", e.permits, " for ", describe(key),
                                            " before its Subscribe succeeded"));
      }
      return;
    }
    w.granted += e.permits;
    if (!w.q) {
      w.q = e.permits;  // trace-format: the first Flow after subscribe_ok is Q
      return;
    }
    const std::int64_t available = w.granted - w.debited;
    if (w.precise && invariants() && !reported && available > *w.q) {
      std::string text = absl::StrCat("Flow of ", e.permits,
                                      " raises the broker's available permits of ", describe(key),
                                      " to ", available, ", above Q = ", *w.q, " (over-grant by ",
                                      available - *w.q, ")");
      const ClientIncarnation* inc = current_client_inc(key);
      if (inc && inc->deviation && explained(*inc, available - *w.q)) {
        deviation(*inc->deviation, absl::StrCat(text, "; explained by known deviation ",
                                                av(rule_name(*inc->deviation))));
      } else {
        violation(RuleId::kE2, std::move(text));
      }
    }
  }

  // The client incarnation now current for `key`, if the trace has client events for it.
  ClientIncarnation* current_client_inc(const ConsumerKey& key) {
    auto cur = current_inc.find(key.consumer);
    if (cur == current_inc.end()) return nullptr;
    ClientIncarnation* inc = find_inc(cur->second);
    return inc && inc->key == key ? inc : nullptr;
  }

  // Whether the known deviations of `inc` account for `excess` units above (or, negative,
  // below) the exact balance.
  static bool explained(const ClientIncarnation& inc, std::int64_t excess) {
    if (!inc.deviation_delta_known) return true;
    return inc.deviation_delta > 0 ? excess <= inc.deviation_delta
                                   : excess == inc.deviation_delta;
  }

  // Client side of a Flow carrying `inc` (N4-N6, E2). Returns true when it reported.
  bool client_flow(const Flow& e, const Id& id) {
    ClientIncarnation* inc = find_inc(id);
    if (inc == nullptr) {
      violation(RuleId::kN1, absl::StrCat("Flow for permit state ", id.to_string(),
                                          ", which was never opened"));
      return true;
    }
    if (!inc->flow_enabled) {
      violation(RuleId::kN4, absl::StrCat("Flow of ", e.permits, " for incarnation ",
                                          id.to_string(), " before its Subscribe succeeded"));
      return true;
    }
    if (!inc->current && rules->flow_recheck == FlowRecheck::kIdentity) {
      auto cur = current_inc.find(inc->key.consumer);
      if (cur != current_inc.end()) {
        violation(RuleId::kN6,
                  absl::StrCat("Flow of ", e.permits, " for ended incarnation ", id.to_string(),
                               " written after the Subscribe of its replacement ",
                               cur->second.to_string(), " (old credit must be dropped)"));
      } else {
        violation(RuleId::kN5, absl::StrCat("Flow of ", e.permits, " for incarnation ",
                                            id.to_string(), " written after it ended (the "
                                            "identity re-check must drop it)"));
      }
      return true;
    }
    inc->granted += e.permits;
    if (!inc->initial_granted) {
      inc->initial_granted = true;
      if (header.q && e.permits != *header.q && invariants()) {
        const RuleId rule = (e.permits > *header.q && inc->predecessor_accumulator > 0)
                                ? RuleId::kN2
                                : RuleId::kN4;
        violation(rule, absl::StrCat("initial Flow of incarnation ", id.to_string(), " is ",
                                     e.permits, ", the initial grant must be Q = ", *header.q));
        return true;
      }
      return false;
    }
    if (e.permits > inc->accumulator && invariants()) {
      violation(RuleId::kE2,
                absl::StrCat("Flow of ", e.permits, " for incarnation ", id.to_string(),
                             " but its accumulator holds ", inc->accumulator,
                             " (over-grant by ", e.permits - inc->accumulator, ")"));
      inc->accumulator = 0;
      return true;
    }
    inc->accumulator -= std::min(e.permits, inc->accumulator);
    return false;
  }

  void on(const Message& e) {
    const ConsumerKey key{e.cnx, e.consumer};
    Command& c = command(e.cmd);
    c.message_permits = e.message_permits;
    c.ack_set = e.ack_set;
    c.validated.reset();
    c.wire_batch_size = e.batch_size;

    if (e.message_permits) {
      cnx_sent_field[e.cnx] = true;
      if (!message_permits_in_range(*e.message_permits)) {
        violation(RuleId::kW2, absl::StrCat(cmd_name(c), " carries message_permits = ",
                                            *e.message_permits, ", outside 1..2^31-1"));
      }
    } else if (rules->broker_sends_message_permits && cnx_sent_field.contains(e.cnx)) {
      violation(RuleId::kW3, absl::StrCat(cmd_name(c), " lacks message_permits although the "
                                          "broker sent it earlier on connection ",
                                          e.cnx.to_string()));
    }

    std::optional<std::int64_t> debit;
    if (e.batch_size) {
      const std::int64_t candidate = candidate_permits(*e.batch_size, e.ack_set);
      if (candidate == 0) {
        violation(RuleId::kB3, absl::StrCat(cmd_name(c), " was sent with nothing to deliver "
                                            "(B = ", *e.batch_size, ", deliverable 0)"));
      } else if (e.message_permits && rules->broker_sends_message_permits &&
                 message_permits_in_range(*e.message_permits) &&
                 static_cast<std::int64_t>(*e.message_permits) != candidate) {
        violation(RuleId::kB7, absl::StrCat(cmd_name(c), " serialized message_permits = ",
                                            *e.message_permits, " but B = ", *e.batch_size,
                                            " and its ack_set give P = ", candidate));
      }
      debit = candidate;
    }
    if (e.message_permits && message_permits_in_range(*e.message_permits)) {
      debit = static_cast<std::int64_t>(*e.message_permits);
      if (c.broker_p && *c.broker_p != *debit) {
        violation(RuleId::kE4, absl::StrCat(cmd_name(c), " serialized message_permits = ",
                                            *debit, " but its send finalized P = ",
                                            *c.broker_p));
      }
    } else if (c.broker_p) {
      debit = c.broker_p;
    }
    if (WireIncarnation* w = live_wire(key); w != nullptr && w->subscribed_ok) {
      if (debit) {
        w->debited += *debit;
      } else {
        w->precise = false;
      }
    }
  }

  void on(const Ack&) {}

  void on(const CloseConsumer& e) { end_wire({e.cnx, e.consumer}); }

  void on(const Disconnect& e) {
    if (auto it = wire_consumers_on_cnx.find(e.cnx); it != wire_consumers_on_cnx.end()) {
      for (std::uint64_t consumer : it->second) end_wire({e.cnx, consumer});
    }
    end_client_incs_on(e.cnx);
  }

  void on(const Quiescent& e) {
    const ConsumerKey key{e.cnx, e.consumer};
    ClientIncarnation* inc = nullptr;
    if (auto cur = current_inc.find(e.consumer); cur != current_inc.end()) {
      inc = find_inc(cur->second);
      if (inc && !(inc->key == key)) inc = nullptr;
    }
    WireIncarnation* w = live_wire(key);
    if (w && !w->subscribed_ok) w = nullptr;
    if (inc) quiescent_commands(*inc);

    const std::optional<std::int64_t> q = w && w->q ? w->q : header.q;
    if (!q || !invariants()) return;
    std::optional<std::int64_t> available;
    if (w && w->precise) available = w->granted - w->debited;
    else if (inc) available = inc->granted - inc->debited;
    if (!available) return;

    if (*available <= 0) {
      std::string text = absl::StrCat(describe(key), " is quiescent with broker available ",
                                      *available, " (stalled: no Flow can come)");
      // A stall is excused only by a deviation that withholds units (X3/X4) and accounts for
      // the whole shortfall, or by one whose amount is unknown (X1/X6).
      const bool excused =
          inc && inc->deviation &&
          (!inc->deviation_delta_known ||
           (inc->deviation_delta < 0 && explained(*inc, *available + inc->accumulator - *q)));
      if (excused) {
        deviation(*inc->deviation, absl::StrCat(text, "; explained by known deviation ",
                                                av(rule_name(*inc->deviation))));
      } else {
        violation(RuleId::kE6, std::move(text));
      }
    }
    if (inc) {
      const std::int64_t total = *available + inc->accumulator;
      if (total != *q) {
        std::string text = absl::StrCat(
            describe(key), " at quiescence: broker available ", *available, " + accumulator ",
            inc->accumulator, " = ", total, ", expected Q = ", *q, " (",
            total < *q ? absl::StrCat(*q - total, " permit(s) lost")
                       : absl::StrCat(total - *q, " permit(s) invented"),
            ")");
        if (inc->deviation && explained(*inc, total - *q)) {
          deviation(*inc->deviation, absl::StrCat(text, "; explained by known deviation ",
                                                  av(rule_name(*inc->deviation))));
        } else {
          if (inc->deviation) {
            absl::StrAppend(&text, "; known deviation ", av(rule_name(*inc->deviation)),
                            " accounts for ", inc->deviation_delta, " of it");
          }
          violation(RuleId::kE5, std::move(text));
        }
      }
      return;
    }
    // Wire only: the accumulator is Q - available and must be below T (or the weaker bound).
    const std::int64_t accumulator = *q - *available;
    const bool ok = header.t ? (accumulator >= 0 && accumulator < *header.t)
                             : (*available > 0 && *available <= *q);
    if (!ok) {
      violation(RuleId::kE5,
                absl::StrCat(describe(key), " at quiescence: broker available ", *available,
                             " with Q = ", *q,
                             header.t ? absl::StrCat(" leaves ", accumulator,
                                                     " permit(s) unreturned, not below T = ",
                                                     *header.t)
                                      : std::string(" (must be in 1..Q)")));
    }
  }

  // At quiescence every delivered command of the incarnation is terminal (K5) and every
  // handed-off message has returned (M1).
  void quiescent_commands(ClientIncarnation& inc) {
    if (!invariants()) return;
    prune_finished(inc);
    for (const Id& id : inc.commands) {
      Command* found = find_command(id);
      if (found == nullptr) continue;
      Command& c = *found;
      if (c.protocol_error_due) {
        check_protocol_error_raised(c);
        continue;
      }
      if (c.path) continue;
      if (!c.settled) {
        violation(RuleId::kK5, absl::StrCat(cmd_name(c), " has no terminal transition at "
                                            "quiescence (", c.budget_p - c.claimed -
                                            c.direct_returned, " unit(s) still command-owned)"));
        c.settled = true;  // report once
      } else if (c.live_messages > 0) {
        violation(RuleId::kM1, absl::StrCat(c.live_messages, " message(s) of ", cmd_name(c),
                                            " never returned their unit by quiescence"));
        c.live_messages = 0;
      }
    }
  }

  // Drops finished commands from the incarnation's list, so per-event work stays bounded by
  // what is in flight.
  void prune_finished(ClientIncarnation& inc) {
    std::erase_if(inc.commands, [this](const Id& id) {
      const Command* c = find_command(id);
      return c == nullptr || (c->complete_checked && !c->protocol_error_due);
    });
  }

  void on(const IncOpen& e) {
    if (incs.contains(e.inc)) {
      violation(RuleId::kN1, absl::StrCat("permit state ", e.inc.to_string(), " opened twice"));
      return;
    }
    ClientIncarnation inc{.inc = e.inc, .key = {e.cnx, e.consumer}};
    if (auto last = last_inc.find(e.consumer); last != last_inc.end()) {
      // N2: the replacement starts empty; the old state stops being current.
      if (ClientIncarnation* old = find_inc(last->second)) {
        inc.predecessor_accumulator = old->accumulator;
        end_inc(*old);
      }
    }
    last_inc[e.consumer] = e.inc;
    current_inc[e.consumer] = e.inc;
    incs_on_cnx[e.cnx].push_back(e.inc);
    incs.emplace(e.inc, std::move(inc));
  }

  void on(const IncFlowEnabled& e) {
    ClientIncarnation* inc = find_inc(e.inc);
    if (inc == nullptr) {
      violation(RuleId::kN1, absl::StrCat("permit state ", e.inc.to_string(),
                                          " enabled but never opened"));
      return;
    }
    inc->flow_enabled = true;
  }

  void on(const IncClose& e) {
    ClientIncarnation* inc = find_inc(e.inc);
    if (inc == nullptr) {
      violation(RuleId::kN1, absl::StrCat("permit state ", e.inc.to_string(),
                                          " closed but never opened"));
      return;
    }
    end_inc(*inc);
  }

  void on(const Recv& e) {
    ClientIncarnation* inc = find_inc(e.inc);
    if (inc == nullptr) {
      violation(RuleId::kN1, absl::StrCat("command ", e.cmd.to_string(),
                                          " received for permit state ", e.inc.to_string(),
                                          ", which was never opened"));
    }
    Command& c = command(e.cmd);
    if (c.received) {
      violation(RuleId::kK1, absl::StrCat(cmd_name(c), " received twice"));
      return;
    }
    c.received = true;
    c.inc = e.inc;
    if (inc != nullptr) {
      inc->commands.push_back(e.cmd);
      // Amortized pruning keeps the list at what is in flight without quiescent events.
      if (inc->commands.size() >= 2 * inc->commands_after_prune + 64) {
        prune_finished(*inc);
        inc->commands_after_prune = inc->commands.size();
      }
    }
    if (!c.message_permits) c.message_permits = e.message_permits;
    if (c.ack_set.absent()) c.ack_set = e.ack_set;
    c.validated.reset();
    const Resolution early = resolve_early(*rules, c.message_permits, c.ack_set);
    set_budget_p(c, early.p);
    if (c.message_permits && rules->client_reads_message_permits &&
        !message_permits_in_range(*c.message_permits)) {
      c.protocol_error_due = true;  // C4: checked when the client acts on the command
    }
  }

  void on(const Resolve& e) {
    Command* c = find_command(e.cmd);
    if (c == nullptr || !c->received) {
      violation(RuleId::kC1, absl::StrCat("command ", e.cmd.to_string(),
                                          " resolved before it was received"));
      return;
    }
    if (c->protocol_error_due) return;
    Resolution expected;
    RuleId rule = RuleId::kC2;
    if (c->batch_size) {
      if (!c->validated) {
        c->validated =
            validate_permits(*rules, c->message_permits, c->ack_set, *c->batch_size).resolution;
      }
      expected = *c->validated;
      rule = RuleId::kC1;
    } else {
      expected = resolve_early(*rules, c->message_permits, c->ack_set);
    }
    if (e.p != expected.p || e.source != expected.source) {
      violation(rule, absl::StrCat(cmd_name(*c), " resolved P = ", e.p, " from ",
                                   av(permit_source_name(e.source)), "; the ladder gives ", expected.p,
                                   " from ", av(permit_source_name(expected.source))));
    }
  }

  void on(const Metadata& e) {
    Command* c = find_command(e.cmd);
    if (c == nullptr || !c->received) {
      violation(RuleId::kC3, absl::StrCat("metadata for command ", e.cmd.to_string(),
                                          ", which was never received"));
      return;
    }
    c->batch_size = e.batch_size;
    c->validated.reset();
    if (c->protocol_error_due) {
      violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                          *c->message_permits, " but was processed; an "
                                          "out-of-range value is a protocol error"));
      c->protocol_error_due = false;  // report once
      return;
    }
    if (header.q && *header.q == 0 && e.batch_size > 1) c->zero_queue_batch = true;
    const Validation v = validate_permits(*rules, c->message_permits, c->ack_set, e.batch_size);
    c->validated = v.resolution;
    if (v.verdict == Verdict::kInconsistent) {
      c->inconsistent = true;
      c->inconsistent_reason = v.reason;
    }
    if (v.verdict != Verdict::kProtocolError) set_budget_p(*c, v.resolution.p);
  }

  void on(const Corrupt& e) {
    Command* c = find_command(e.cmd);
    if (c == nullptr || !c->received) {
      violation(RuleId::kC7, absl::StrCat("corrupt for command ", e.cmd.to_string(),
                                          ", which was never received"));
      return;
    }
    c->failure = e.stage;
    if (c->protocol_error_due) {
      violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                          *c->message_permits, " but was treated as corrupted "
                                          "data; an out-of-range value is a protocol error"));
      c->protocol_error_due = false;
    }
  }

  void on(const Claim& e) {
    Command* c = find_command(e.cmd);
    if (c == nullptr || !c->received) {
      violation(RuleId::kK2, absl::StrCat("message ", e.msg.to_string(), " claimed from command ",
                                          e.cmd.to_string(), ", which was never received"));
      return;
    }
    // One lookup: a message already present is claimed twice; a new one is entered now.
    auto [msg, inserted] = msgs.try_emplace(e.msg, Msg{.cmd = e.cmd});
    if (!inserted) {
      violation(RuleId::kK2, absl::StrCat("message ", e.msg.to_string(), " claimed twice"));
      return;
    }
    if (c->protocol_error_due) {
      violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                          *c->message_permits, " but handed off message ",
                                          e.msg.to_string(), " (C4: protocol error, no hand-off)"));
      c->protocol_error_due = false;
    } else if (c->settled) {
      violation(RuleId::kK5, absl::StrCat(cmd_name(*c), " hands off message ", e.msg.to_string(),
                                          " after its terminal transition"));
    } else if (c->path) {
      violation(RuleId::kS1, absl::StrCat(cmd_name(*c), " hands off message ", e.msg.to_string(),
                                          " from the generic budget after ownership moved to the ",
                                          av(transfer_path_name(*c->path)), " path"));
    } else if (c->zero_queue_batch) {
      violation(RuleId::kS7, absl::StrCat("zero-queue consumer hands off message ",
                                          e.msg.to_string(), " of batch ", cmd_name(*c),
                                          " (a batch must close the consumer)"));
    } else if (c->inconsistent && rules->budget_tracked) {
      violation(RuleId::kC3, absl::StrCat(cmd_name(*c), " hands off message ", e.msg.to_string(),
                                          " although validation failed: ",
                                          c->inconsistent_reason));
    } else if (e.index && !c->ack_set.absent() && !c->ack_set.is_deliverable(*e.index)) {
      violation(RuleId::kK3, absl::StrCat(cmd_name(*c), " hands off index ", *e.index,
                                          ", which its ack_set clears (outside P)"));
    } else if (rules->budget_tracked && c->claimed + c->direct_returned >= c->budget_p) {
      violation(RuleId::kK8, absl::StrCat(cmd_name(*c), " hands off message ",
                                          c->claimed + 1, " but its P is ", c->budget_p,
                                          " (more messages than P is malformed, C5)"));
    }
    ++c->claimed;
    ++c->live_messages;
    if (!options.retain_ledger) {
      // Usually P messages follow the first; bounded, as P comes from the trace.
      if (c->messages.empty()) c->messages.reserve(std::clamp<std::int64_t>(c->budget_p, 1, 64));
      c->messages.push_back(e.msg);
    }
  }

  void on(const Restore& e) {
    auto it = msgs.find(e.msg);
    Command* c = find_command(e.cmd);
    if (it == msgs.end() || c == nullptr || !(it->second.cmd == e.cmd) || it->second.done) {
      violation(RuleId::kK2, absl::StrCat("message ", e.msg.to_string(), " restored to command ",
                                          e.cmd.to_string(), " without an open claim from it"));
      return;
    }
    if (c->settled) {
      // The restored unit is command-owned again, but the terminal transition is over.
      violation(c->path ? RuleId::kS1 : RuleId::kK5,
                absl::StrCat("message ", e.msg.to_string(), " restored to ", cmd_name(*c),
                             " after its terminal transition (the unit can never return)"));
    }
    --c->claimed;
    --c->live_messages;
    msgs.erase(it);
    check_complete(*c);
  }

  void on(const Skip& e) {
    Command* c = find_command(e.cmd);
    if (c == nullptr || !c->received) {
      violation(RuleId::kK4, absl::StrCat("skip in command ", e.cmd.to_string(),
                                          ", which was never received"));
      return;
    }
    ++c->skipped;
    last_skip = e;
  }

  void on(const Transfer& e) {
    Command* c = find_command(e.cmd);
    if (c == nullptr || !c->received) {
      violation(RuleId::kS1, absl::StrCat("transfer of command ", e.cmd.to_string(),
                                          ", which was never received"));
      return;
    }
    c->path = e.path;
  }

  void on(const DirectReturn& e) {
    Command* c = find_command(e.cmd);
    if (c == nullptr || !c->received) {
      violation(RuleId::kK6, absl::StrCat("direct return from command ", e.cmd.to_string(),
                                          ", which was never received"));
      return;
    }
    if (e.n < 0) {
      violation(RuleId::kK6, absl::StrCat(cmd_name(*c), " returns ", e.n, " units directly"));
      return;
    }
    if (c->protocol_error_due) {
      violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                          *c->message_permits, " but returns ", e.n,
                                          " permit(s); C4 allows no credit"));
    }
    // The specialised paths own their returns (S1): crypto DISCARD returns B (S3, X2),
    // a non-final chunk returns 1 (S2).
    if (e.path == "crypto") {
      c->path = TransferPath::kCrypto;
      const std::int64_t b = c->batch_size.value_or(c->wire_batch_size.value_or(c->budget_p));
      if (e.n != b) {
        violation(RuleId::kS3, absl::StrCat(cmd_name(*c), " crypto DISCARD returned ", e.n,
                                            "; it returns B = ", b));
      } else if (e.n > c->budget_p) {
        deviation(RuleId::kX2, absl::StrCat(cmd_name(*c), " crypto DISCARD of a partial "
                                            "redelivery returned B = ", e.n, " for P = ",
                                            c->budget_p, " (over-return by ",
                                            e.n - c->budget_p, ")"));
        if (ClientIncarnation* inc = inc_of(*c)) {
          inc->deviation = RuleId::kX2;
          inc->deviation_delta += e.n - c->budget_p;
        }
      }
    } else if (e.path == "chunk") {
      c->path = TransferPath::kChunk;
      if (e.n != 1) {
        violation(RuleId::kS2, absl::StrCat(cmd_name(*c), " non-final chunk returned ", e.n,
                                            "; each non-final chunk returns 1"));
      }
    } else if (c->path) {
      // Returns of a processor or other transferred path: accounted, judged at completion.
    } else if (rules->direct_returns == DirectReturns::kFromBudget) {
      const std::int64_t owned =
          c->settled ? 0 : c->budget_p - c->claimed - c->direct_returned;
      if (e.n > owned) {
        violation(RuleId::kK6, absl::StrCat(cmd_name(*c), " returns ", e.n, " unit(s) directly",
                                            e.path ? absl::StrCat(" (", *e.path, ")") : "",
                                            " but only ", owned, " are command-owned (returned "
                                            "twice)"));
      }
    }
    c->direct_returned += e.n;
    credit(*c, e.n, {"direct return"});
    check_over_return(*c);
  }

  void on(const Settle& e) {
    Command* c = find_command(e.cmd);
    if (c == nullptr || !c->received) {
      violation(RuleId::kK5, absl::StrCat("settle of command ", e.cmd.to_string(),
                                          ", which was never received"));
      return;
    }
    if (c->settled) {
      if (e.n != 0) {
        violation(RuleId::kK5, absl::StrCat(cmd_name(*c), " second terminal transition returned ",
                                            e.n, "; any later terminal transition returns 0"));
      }
    } else if (c->protocol_error_due) {
      if (e.n != 0) {
        violation(RuleId::kC4, absl::StrCat(cmd_name(*c), " has message_permits = ",
                                            *c->message_permits, " but settles ", e.n,
                                            " permit(s); C4 allows no credit"));
      }
    } else {
      check_settle(*c, e.n);
    }
    c->settled = true;
    c->settle_returned += e.n;
    credit(*c, e.n, {"terminal transition"});
    check_over_return(*c);
    check_complete(*c);
  }

  // K5/K4/K7/C7: the first terminal transition returns what the ruleset prescribes.
  void check_settle(Command& c, std::int64_t n) {
    const CommandProgress progress{
        .p = c.budget_p,
        .batch_size = c.batch_size.value_or(c.wire_batch_size.value_or(1)),
        .claimed = c.claimed,
        .skipped = c.skipped,
        .direct_returned = c.direct_returned,
        .failure = c.failure,
        .transferred = c.path.has_value(),
    };
    const std::int64_t expected = settle_amount(*rules, progress);
    early_failure_deviations(c);
    if (n == expected) return;
    std::string text = absl::StrCat(cmd_name(c), " terminal transition returned ", n,
                                     " but ", expected, " unit(s) are command-owned (P = ",
                                     c.budget_p, ", ", c.claimed, " handed off, ", c.skipped,
                                     " skipped, ", c.direct_returned, " returned directly",
                                     c.failure ? absl::StrCat(", failed at ",
                                                              av(failure_stage_name(*c.failure)))
                                               : "",
                                     ")");
    if (n > expected) {
      const std::int64_t total = c.claimed + c.direct_returned + n;
      if (rules->budget_tracked && total > c.budget_p) {
        violation(RuleId::kK7, absl::StrCat(text, "; the command returns ", total, " > P"));
      } else {
        violation(RuleId::kK5, std::move(text));
      }
      return;
    }
    const RuleId rule = c.failure == FailureStage::kInconsistent ? RuleId::kC5
                        : c.failure                              ? RuleId::kC7
                        : c.skipped > 0                          ? RuleId::kK4
                                                                 : RuleId::kK5;
    violation(rule, absl::StrCat(text, "; ", expected - n, " permit(s) lost"));
  }

  // X1/X6: with the field absent, an early failure settles the fallback value.
  void early_failure_deviations(Command& c) {
    // Only checksum and metadata failures come before B is known; decompression knows B.
    if (c.failure != FailureStage::kChecksum && c.failure != FailureStage::kMetadata) return;
    if (!invariants()) return;
    if (c.message_permits && rules->client_reads_message_permits) return;
    std::optional<std::int64_t> debited = c.broker_p;
    if (!debited && c.wire_batch_size) {
      debited = candidate_permits(*c.wire_batch_size, c.ack_set);
    }
    ClientIncarnation* inc = inc_of(c);
    if (c.ack_set.absent()) {
      deviation(RuleId::kX1,
                absl::StrCat(cmd_name(c), " field absent (old broker) and ",
                             av(failure_stage_name(*c.failure)), " failure: returned the fallback ",
                             c.budget_p, debited ? absl::StrCat(" for a debit of ", *debited) : "",
                             "; exactness needs an upgraded broker"));
      if (inc && debited && *debited != c.budget_p) {
        inc->deviation = RuleId::kX1;
        inc->deviation_delta_known = false;
      }
    } else if (debited && *debited != c.budget_p) {
      deviation(RuleId::kX6, absl::StrCat(cmd_name(c), " field absent and ",
                                          av(failure_stage_name(*c.failure)), " failure: counted ",
                                          c.budget_p, " ack_set bits, bits beyond B included, "
                                          "for a debit of ", *debited));
      if (inc) {
        inc->deviation = RuleId::kX6;
        inc->deviation_delta_known = false;
      }
    }
  }

  void on(const MsgReturn& e) {
    auto it = msgs.find(e.msg);
    if (it == msgs.end()) {
      violation(RuleId::kM1,
                absl::StrCat("message ", e.msg.to_string(), " returned but never handed off",
                             options.retain_ledger ? "" : " (or its command already finished)"));
      return;
    }
    Msg& m = it->second;
    Command* c = find_command(m.cmd);
    if (m.done) {
      if (e.n != 0) {
        violation(RuleId::kM3, absl::StrCat("message ", e.msg.to_string(), " returned ", e.n,
                                            " again; a second return is a no-op"));
        if (c) {
          c->msg_returned += e.n;
          credit(*c, e.n, {"second return of message", &e.msg});
          check_over_return(*c);
        }
      }
      return;
    }
    m.done = true;
    if (c == nullptr) return;
    if (e.n != 1) {
      violation(RuleId::kM1, absl::StrCat("message ", e.msg.to_string(), " of ", cmd_name(*c),
                                          " returned ", e.n, "; a claimed unit returns exactly 1"));
    }
    --c->live_messages;
    c->msg_returned += e.n;
    credit(*c, e.n, {"return of message", &e.msg});
    check_over_return(*c);
    check_complete(*c);
  }

  void on(const Drop& e) {
    if (e.msg) {
      auto it = msgs.find(*e.msg);
      if (it == msgs.end() || it->second.done) {
        violation(RuleId::kM1, absl::StrCat("message ", e.msg->to_string(),
                                            " dropped but not outstanding"));
        return;
      }
      it->second.done = true;
      Command* c = find_command(it->second.cmd);
      if (c == nullptr) return;
      drop_units(*c, e.n, {"message", &*e.msg});
      --c->live_messages;
      check_complete(*c);
      return;
    }
    if (e.cmd) {
      Command* c = find_command(*e.cmd);
      if (c == nullptr) {
        violation(RuleId::kN3, absl::StrCat("drop of command ", e.cmd->to_string(),
                                            ", which was never received"));
        return;
      }
      drop_units(*c, e.n, {"command", &c->cmd});
      c->settled = true;
      check_complete(*c);
    }
  }

  void drop_units(Command& c, std::int64_t n, const Label& what) {
    c.dropped += n;
    ClientIncarnation* inc = inc_of(c);
    if (inc && inc->current && invariants()) {
      violation(RuleId::kM1, absl::StrCat(what.str(), " dropped ", n, " unit(s) while incarnation ",
                                          inc->inc.to_string(), " is current (lost)"));
    }
  }

  void on(const ProtocolError& e) {
    bool c4_due = false;
    bool inconsistent_field_absent = false;
    bool inconsistent_field_present = false;
    bool zero_queue = false;
    if (auto on_cnx = incs_on_cnx.find(e.cnx); on_cnx != incs_on_cnx.end()) {
      for (const Id& inc_id : on_cnx->second) {
        ClientIncarnation* inc = find_inc(inc_id);
        if (inc == nullptr || !inc->current) continue;
        prune_finished(*inc);
        for (const Id& id : inc->commands) {
          Command* c = find_command(id);
          if (c == nullptr || c->settled) continue;
          if (c->protocol_error_due) {
            c4_due = true;
            c->protocol_error_due = false;
            c->settled = true;
          } else if (c->inconsistent) {
            (c->message_permits ? inconsistent_field_present : inconsistent_field_absent) = true;
          } else if (c->zero_queue_batch) {
            zero_queue = true;
          }
        }
      }
    }
    if (!c4_due && rules->inconsistent == InconsistentHandling::kCorruptedData) {
      if (inconsistent_field_absent) {
        violation(RuleId::kC6, absl::StrCat("connection ", e.cnx.to_string(), " closed (", e.reason,
                                            ") over an old-protocol ambiguity; the field is "
                                            "absent, so the client must fall back, not close"));
      } else if (inconsistent_field_present) {
        violation(RuleId::kC5, absl::StrCat("connection ", e.cnx.to_string(), " closed (", e.reason,
                                            ") over inconsistent data; corrupted-data handling "
                                            "keeps the connection"));
      } else if (zero_queue) {
        violation(RuleId::kS7, absl::StrCat("connection ", e.cnx.to_string(), " closed (", e.reason,
                                            ") for a batch sent to a zero-queue consumer; S7 "
                                            "closes the consumer only"));
      }
    }
    end_client_incs_on(e.cnx);
  }

  void on(const Send& e) {
    if (removed_broker_consumers.contains(removed_key(e.consumer, e.inc)) ||
        removed_broker_consumers.contains(removed_key(e.consumer, std::nullopt))) {
      violation(RuleId::kB11, absl::StrCat("send to consumer ", e.consumer,
                                           " after it was removed"));
    }
    std::vector<SendEntry> entries;
    entries.reserve(e.entries.size());
    for (const SentEntry& s : e.entries) entries.push_back(s.entry);
    const DispatcherKind kind = e.dispatcher.value_or(DispatcherKind::kSingleActive);
    absl::StatusOr<SendResult> expected = finalize_permits(*rules, kind, entries);
    if (!expected.ok()) {
      // B8: an overflowing send finalizes nothing and debits nothing.
      const bool finalized_some =
          std::any_of(e.entries.begin(), e.entries.end(), [](const SentEntry& s) { return s.p; });
      if (finalized_some || e.consumer_debit != 0 || e.dispatcher_debit.value_or(0) != 0) {
        violation(RuleId::kB8, absl::StrCat("send to consumer ", e.consumer, " debited ",
                                            e.consumer_debit, " although it overflows: ",
                                            expected.status().message(),
                                            " (an overflowing send finalizes nothing)"));
      }
      return;
    }
    std::vector<std::optional<std::int64_t>> finalized(e.entries.size());
    for (const FinalizedCommand& f : expected->commands) finalized[f.entry] = f.p;
    for (std::size_t i = 0; i < e.entries.size(); ++i) {
      const SentEntry& s = e.entries[i];
      if (!s.p) {
        if (finalized[i]) command(s.cmd).broker_p = finalized[i];
        continue;
      }
      if (!s.entry.admitted) {
        violation(RuleId::kB1, absl::StrCat("rejected entry ", s.cmd.to_string(),
                                            " was finalized with P = ", *s.p,
                                            " (only admitted entries become commands)"));
      } else if (!finalized[i]) {
        violation(RuleId::kB3, absl::StrCat("entry ", s.cmd.to_string(), " has nothing to "
                                            "deliver but was finalized with P = ", *s.p));
      } else if (*s.p != *finalized[i]) {
        violation(RuleId::kB2, absl::StrCat("entry ", s.cmd.to_string(), " finalized P = ", *s.p,
                                            " but B = ", s.entry.batch_size,
                                            " and its ack_set give ", *finalized[i]));
      }
      command(s.cmd).broker_p = *s.p;
    }
    if (e.consumer_debit != expected->consumer_debit) {
      violation(RuleId::kB4,
                absl::StrCat("consumer ", e.consumer, " debited ", e.consumer_debit,
                             " but the finalized sum is ", expected->consumer_debit, " (",
                             std::abs(e.consumer_debit - expected->consumer_debit),
                             e.consumer_debit > expected->consumer_debit
                                 ? " permit(s) lost)"
                                 : " permit(s) over-granted)"));
    }
    if (e.dispatcher && !has_aggregate(*e.dispatcher) && e.dispatcher_debit) {
      violation(RuleId::kB6, absl::StrCat(av(dispatcher_name(*e.dispatcher)), " dispatcher has no "
                                          "aggregate but debited ", *e.dispatcher_debit));
    } else if (e.dispatcher_debit && expected->dispatcher_debit &&
               *e.dispatcher_debit != *expected->dispatcher_debit) {
      violation(RuleId::kB6,
                absl::StrCat(av(dispatcher_name(kind)), " aggregate debited ", *e.dispatcher_debit,
                             " but the finalized sum is ", *expected->dispatcher_debit));
    }
  }

  void on(const ConsumerRemoved& e) { removed_broker_consumers.insert(removed_key(e.consumer, e.inc)); }

  // S5/S6: the message object of the skip just before was released at skip time. A
  // dead-letter message is still held by dead-letter handling (revision B's F3).
  void on(const Extension& e) {
    if (e.ev != kSkipReleaseEvent || !last_skip) return;
    if (last_skip->reason == SkipReason::kDeadLetter &&
        rules->skipped_release == SkippedRelease::kDuplicateOnly) {
      violation(RuleId::kS5,
                absl::StrCat("dead-letter message at index ", last_skip->index, " of command ",
                             last_skip->cmd.to_string(), " released at skip time while dead-letter "
                             "handling still holds it (use after release when it is published)"));
    }
  }

  std::optional<Skip> last_skip;  // the previous event, when it was a skip (S5/S6)
};

Monitor::Monitor(const TraceHeader& header, MonitorOptions options)
    : state_(std::make_unique<State>()) {
  state_->header = header;
  state_->rules = &ruleset(header.ruleset);
  state_->options = options;
}
Monitor::~Monitor() = default;
Monitor::Monitor(Monitor&&) noexcept = default;
Monitor& Monitor::operator=(Monitor&&) noexcept = default;

void Monitor::on_event(const Event& event, std::uint64_t line) {
  state_->line = line;
  std::visit([this](const auto& e) { state_->on(e); }, event);
  if (!std::holds_alternative<Skip>(event)) state_->last_skip.reset();
}

void Monitor::finish() {
  State& s = *state_;
  // C4: an out-of-range explicit value must end in a protocol error on its connection.
  for (auto& [id, c] : s.cmds) s.check_protocol_error_raised(c);
}

const std::vector<Finding>& Monitor::violations() const { return state_->violations; }
const std::vector<Finding>& Monitor::deviations() const { return state_->deviations; }
const Ruleset& Monitor::rules() const { return *state_->rules; }

std::optional<CommandLedger> Monitor::ledger(const Id& cmd) const {
  auto it = state_->cmds.find(cmd);
  if (it == state_->cmds.end()) return std::nullopt;
  const Command& c = it->second;
  return CommandLedger{.cmd = c.cmd,
                       .inc = c.inc,
                       .p = c.debited_p(),
                       .claimed = c.claimed,
                       .returned = c.returned(),
                       .dropped = c.dropped,
                       .settled = c.settled};
}

MonitorReport check_trace(const TraceHeader& header, const std::vector<Event>& events) {
  Monitor m(header);
  for (std::size_t i = 0; i < events.size(); ++i) m.on_event(events[i], i + 2);
  m.finish();
  return {m.violations(), m.deviations()};
}

}  // namespace permitcheck::spec
