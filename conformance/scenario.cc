#include "conformance/scenario.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spec/plain_text.h"

namespace permitcheck::conformance {
namespace {

constexpr ScenarioInfo kScenarios[] = {
    {ScenarioKind::kCompleteBatches, "complete_batches", spec::RuleId::kE1,
     "complete batches and single messages; every permit comes back", ""},
    {ScenarioKind::kPartialBatches, "partial_batches", spec::RuleId::kE2,
     "partial redeliveries (ack_set, sparse and dense): P = deliverable count, not B", ""},
    {ScenarioKind::kCorruptChecksum, "corrupt_checksum", spec::RuleId::kC7,
     "entries with a corrupt crc32c must still settle P", "L1"},
    {ScenarioKind::kUnreadableMetadata, "unreadable_metadata", spec::RuleId::kC7,
     "entries whose metadata does not parse must still settle P", "L2"},
    {ScenarioKind::kDecompression, "decompression_failure", spec::RuleId::kC7,
     "compressed entries that do not decompress (B known) must settle P", "L3"},
    {ScenarioKind::kTruncatedBatch, "truncated_batch", spec::RuleId::kC7,
     "a batch cut inside a message, after some were handed off: the command settles what it "
     "still owns", "L4"},
    {ScenarioKind::kPartialBatchFailure, "partial_batch_failure", spec::RuleId::kK7,
     "a partial batch (ack_set) whose payload fails past its last deliverable index: settle "
     "exactly P, nothing for the failing non-deliverable index", "L5"},
    {ScenarioKind::kInconsistentBatch, "inconsistent_batch", spec::RuleId::kC5,
     "a payload holding more messages than B: at most P hand-offs, settle P", ""},
    {ScenarioKind::kCloseConsumer, "close_consumer", spec::RuleId::kN2,
     "CLOSE_CONSUMER mid-stream then resubscribe: a fresh permit state", ""},
    {ScenarioKind::kReconnect, "reconnect", spec::RuleId::kN2,
     "connection drop and reconnect: old credit never reaches the new incarnation", ""},
    {ScenarioKind::kHeldCloseConsumer, "held_close_consumer", spec::RuleId::kE3,
     "CLOSE_CONSUMER while the application still holds messages; they finish after the "
     "replacement subscribed on the same connection: their returns are dropped", "L7"},
    {ScenarioKind::kHeldReconnect, "held_reconnect", spec::RuleId::kE3,
     "the connection drops while the application still holds messages; they finish (stale) "
     "after the replacement subscribed on a new connection: their returns are dropped", "L6"},
    {ScenarioKind::kFlowAroundClose, "flow_around_close", spec::RuleId::kN6,
     "CLOSE_CONSUMER arrives while the message that makes a Flow due is processed: the old "
     "Flow is written before the replacement's Subscribe or never", "L11"},
    {ScenarioKind::kStartMessageId, "start_message_id", spec::RuleId::kK4,
     "reconnect, then entries at or before the Subscribe's start_message_id and duplicates "
     "of acknowledged ones: each returns exactly its P", "L9"},
    {ScenarioKind::kStaleEpoch, "stale_epoch", spec::RuleId::kM2,
     "the connection drops while the application holds messages; after the replacement "
     "subscribed the client raises its consumer epoch (REDELIVER with a newer epoch) and "
     "discards the held older-epoch messages: each discard returns through the state it "
     "retained, dropped once that incarnation ended (also across CLOSE_CONSUMER on the same "
     "connection)", "L6,L7"},
    {ScenarioKind::kUnknownConsumer, "unknown_consumer", spec::RuleId::kE3,
     "messages for a consumer id never subscribed are not credited to the real one", ""},
    {ScenarioKind::kNegativeAck, "negative_ack", spec::RuleId::kM1,
     "negative acknowledgements; redelivery of what was nacked, partial (ack_set) when some "
     "indexes of a batch were acknowledged", ""},
    {ScenarioKind::kSlowConsumer, "slow_consumer", spec::RuleId::kE6,
     "more than Q messages consumed slowly: batch debt, back-pressure, no stall", ""},
    {ScenarioKind::kDuplicateRedelivery, "duplicate_redelivery", spec::RuleId::kK4,
     "entries the client acknowledged moments ago, delivered again (as after a broker restart "
     "that lost the acks the client still groups): each dropped duplicate returns its P", ""},
    {ScenarioKind::kTruncationPositions, "truncation_positions", spec::RuleId::kC7,
     "a batch cut at every position class of a message after good ones were decoded (1, 2, 3 "
     "bytes into its size field, at its boundary, inside its metadata, inside its payload): "
     "each path settles what the command still owns", "L4"},
    {ScenarioKind::kActiveConsumerChange, "active_consumer_change", spec::RuleId::kE2,
     "ACTIVE_CONSUMER_CHANGE (as a broker writes to Failover consumers on every membership "
     "change) twice after each entry and up to 2T in all: a non-message command returns no "
     "permit", ""},
    {ScenarioKind::kDropBeforeAck, "drop_before_ack", spec::RuleId::kE3,
     "the connection drops right after a delivery, before the client acknowledged anything "
     "(also CLOSE_CONSUMER on the same connection): the messages still wait inside the client; "
     "whatever becomes of them, none of their credit reaches the replacement", "L6,L7"},
};

constexpr UnobservableRow kUnobservable[] = {
    {"L8", "broker-side: the pending-ack admission debit happens inside the broker; a client "
           "never sees the rejected entry (permitcheck-properties and validate find it)"},
    {"L10", "needs an encrypting client: crypto DISCARD happens only when the client holds a "
            "crypto reader and the payload is encrypted; the conformance broker has no "
            "producer-side encryption (accepted under rev-d as X2)"},
};

}  // namespace

bool is_early_failure(EntryFault f) {
  return f == EntryFault::kChecksum || f == EntryFault::kMetadata;
}

spec::AckSet ack_set_of(const EntrySpec& e) {
  if (e.cleared.empty() || !e.batched) return spec::AckSet();
  std::vector<std::int64_t> keep;
  for (std::int64_t i = 0; i < e.batch_size; ++i) {
    if (std::find(e.cleared.begin(), e.cleared.end(), i) == e.cleared.end()) keep.push_back(i);
  }
  return spec::AckSet::from_indexes(keep);
}

namespace {

std::string describe_entry(const EntrySpec& e) {
  std::string s = e.batched ? absl::StrCat("b", e.batch_size) : "single";
  if (e.fault != EntryFault::kNone) {
    absl::StrAppend(&s, "!", std::string(entry_fault_name(e.fault)));
    if (e.fault == EntryFault::kTruncatedBatch) {
      absl::StrAppend(&s, "@", e.truncate_at);
      if (e.cut != Cut::kSizeField3) absl::StrAppend(&s, ":", std::string(cut_name(e.cut)));
    }
    if (e.fault == EntryFault::kExtraMessages) absl::StrAppend(&s, "+", e.extra_messages);
  }
  if (!e.cleared.empty()) absl::StrAppend(&s, " ", spec::acknowledged_text(e.cleared));
  return s;
}

// ---- generators ----

rc::Gen<EntrySpec> gen_single() { return rc::gen::just(EntrySpec{}); }

rc::Gen<EntrySpec> gen_complete_batch(std::int64_t min_b, std::int64_t max_b) {
  return rc::gen::map(rc::gen::inRange<std::int64_t>(min_b, max_b + 1), [](std::int64_t b) {
    return EntrySpec{.batch_size = b, .batched = true};
  });
}

rc::Gen<EntrySpec> gen_complete() {
  return rc::gen::oneOf(gen_single(), gen_complete_batch(2, 8));
}

// A partial redelivery: some indexes of a batch were acknowledged before (sparse or dense).
rc::Gen<EntrySpec> gen_partial() {
  return rc::gen::mapcat(rc::gen::inRange<std::int64_t>(2, 11), [](std::int64_t b) {
    return rc::gen::map(
        rc::gen::container<std::vector<bool>>(static_cast<std::size_t>(b),
                                              rc::gen::arbitrary<bool>()),
        [b](const std::vector<bool>& keep) {
          EntrySpec e{.batch_size = b, .batched = true};
          for (std::int64_t i = 0; i < b; ++i) {
            if (!keep[static_cast<std::size_t>(i)]) e.cleared.push_back(i);
          }
          if (static_cast<std::int64_t>(e.cleared.size()) == b) e.cleared.erase(e.cleared.begin());
          if (e.cleared.empty()) e.cleared.push_back(b - 1);
          return e;
        });
  });
}

rc::Gen<EntrySpec> gen_faulty(EntryFault fault) {
  return rc::gen::mapcat(rc::gen::inRange<std::int64_t>(2, 9), [fault](std::int64_t b) {
    return rc::gen::map(
        rc::gen::pair(rc::gen::inRange<int>(0, static_cast<int>(b)), rc::gen::inRange<int>(1, 4)),
        [fault, b](const std::pair<int, int>& p) {
          EntrySpec e{.batch_size = b, .batched = true, .fault = fault};
          if (fault == EntryFault::kTruncatedBatch) e.truncate_at = p.first;
          if (fault == EntryFault::kExtraMessages) e.extra_messages = p.second;
          return e;
        });
  });
}

// Entries where at least the last one carries the fault.
rc::Gen<std::vector<EntrySpec>> gen_with_fault(EntryFault fault) {
  return rc::gen::map(
      rc::gen::pair(rc::gen::container<std::vector<EntrySpec>>(
                        rc::gen::oneOf(gen_complete(), gen_faulty(fault))),
                    gen_faulty(fault)),
      [](std::pair<std::vector<EntrySpec>, EntrySpec> p) {
        std::vector<EntrySpec> v = std::move(p.first);
        if (v.size() > 3) v.resize(3);
        v.push_back(std::move(p.second));
        return v;
      });
}

rc::Gen<std::vector<EntrySpec>> gen_some(rc::Gen<EntrySpec> g, std::size_t max) {
  return rc::gen::map(rc::gen::nonEmpty(rc::gen::container<std::vector<EntrySpec>>(g)),
                      [max](std::vector<EntrySpec> v) {
                        if (v.size() > max) v.resize(max);
                        return v;
                      });
}

}  // namespace

std::span<const ScenarioInfo> all_scenarios() { return kScenarios; }

std::span<const UnobservableRow> unobservable_rows() { return kUnobservable; }

const ScenarioInfo& scenario_info(ScenarioKind kind) {
  for (const ScenarioInfo& s : kScenarios) {
    if (s.kind == kind) return s;
  }
  return kScenarios[0];
}

std::optional<ScenarioKind> parse_scenario(std::string_view name) {
  for (const ScenarioInfo& s : kScenarios) {
    if (s.name == name) return s.kind;
  }
  return std::nullopt;
}

std::string describe(const ScenarioParams& p) {
  std::vector<std::string> entries;
  for (const EntrySpec& e : p.entries) entries.push_back(describe_entry(e));
  std::string s = absl::StrCat(std::string(scenario_info(p.kind).name), " ",
                               p.send_field ? "new-broker" : "old-broker", " delay=", p.delay_ms,
                               "ms");
  if (p.nack_every > 0) absl::StrAppend(&s, " nack-every=", p.nack_every);
  absl::StrAppend(&s, " entries=[", absl::StrJoin(entries, ", "), "]");
  if (p.kind == ScenarioKind::kCloseConsumer || p.kind == ScenarioKind::kReconnect ||
      p.kind == ScenarioKind::kUnknownConsumer) {
    absl::StrAppend(&s, " disrupt-after=", p.disrupt_after);
  }
  if ((p.kind == ScenarioKind::kStaleEpoch || p.kind == ScenarioKind::kDropBeforeAck) &&
      p.same_connection) {
    absl::StrAppend(&s, " same-connection");
  }
  if (!p.corner.empty()) absl::StrAppend(&s, " (corner: ", p.corner, ")");
  return s;
}

bool holds_messages(ScenarioKind kind) {
  return kind == ScenarioKind::kHeldCloseConsumer || kind == ScenarioKind::kHeldReconnect ||
         kind == ScenarioKind::kFlowAroundClose || kind == ScenarioKind::kStaleEpoch ||
         kind == ScenarioKind::kDropBeforeAck;
}

rc::Gen<ScenarioParams> gen_scenario(ScenarioKind kind) {
  rc::Gen<std::vector<EntrySpec>> entries = gen_some(gen_complete(), 4);
  switch (kind) {
    case ScenarioKind::kCompleteBatches: break;
    case ScenarioKind::kPartialBatches:
      entries = gen_some(rc::gen::oneOf(gen_partial(), gen_partial(), gen_complete()), 4);
      break;
    case ScenarioKind::kCorruptChecksum: entries = gen_with_fault(EntryFault::kChecksum); break;
    case ScenarioKind::kUnreadableMetadata: entries = gen_with_fault(EntryFault::kMetadata); break;
    case ScenarioKind::kTruncatedBatch: entries = gen_with_fault(EntryFault::kTruncatedBatch); break;
    case ScenarioKind::kTruncationPositions:
      // The last entry's cut drawn from every class (shrinking toward the size field).
      entries = rc::gen::map(
          rc::gen::pair(gen_with_fault(EntryFault::kTruncatedBatch),
                        rc::gen::elementOf(std::vector<Cut>(std::begin(kAllCuts),
                                                            std::end(kAllCuts)))),
          [](std::pair<std::vector<EntrySpec>, Cut> p) {
            p.first.back().cut = p.second;
            return std::move(p.first);
          });
      break;
    case ScenarioKind::kDecompression: entries = gen_with_fault(EntryFault::kDecompression); break;
    case ScenarioKind::kPartialBatchFailure:
      entries = rc::gen::map(
          rc::gen::pair(gen_partial(), rc::gen::inRange<int>(1, 11)),
          [](std::pair<EntrySpec, int> p) {
            EntrySpec e = std::move(p.first);
            e.fault = EntryFault::kTruncatedBatch;
            e.truncate_at = static_cast<int>(p.second % e.batch_size);
            return std::vector<EntrySpec>{e};
          });
      break;
    case ScenarioKind::kHeldCloseConsumer:
    case ScenarioKind::kHeldReconnect:
      entries = gen_some(rc::gen::oneOf(gen_complete_batch(3, 6), gen_single()), 4);
      break;
    case ScenarioKind::kFlowAroundClose: entries = rc::gen::just(std::vector<EntrySpec>{}); break;
    case ScenarioKind::kStaleEpoch:  // at most Q = 10 or so held: each attempt stays short
      entries = gen_some(rc::gen::oneOf(gen_complete_batch(4, 6), gen_single()), 3);
      break;
    case ScenarioKind::kStartMessageId: entries = gen_some(gen_complete(), 4); break;
    case ScenarioKind::kDropBeforeAck:  // at most 8 units: all delivered on the first grant
      entries = gen_some(rc::gen::oneOf(gen_complete_batch(2, 4), gen_single()), 2);
      break;
    case ScenarioKind::kInconsistentBatch: entries = gen_with_fault(EntryFault::kExtraMessages); break;
    case ScenarioKind::kCloseConsumer:
    case ScenarioKind::kReconnect:
    case ScenarioKind::kUnknownConsumer:
      entries = gen_some(gen_complete(), 5);
      break;
    case ScenarioKind::kNegativeAck: entries = gen_some(gen_complete(), 4); break;
    case ScenarioKind::kActiveConsumerChange: entries = gen_some(gen_complete(), 4); break;
    case ScenarioKind::kDuplicateRedelivery: entries = gen_some(gen_complete(), 4); break;
    case ScenarioKind::kSlowConsumer:
      entries = rc::gen::map(rc::gen::pair(gen_some(gen_complete_batch(2, 6), 4),
                                           rc::gen::inRange<int>(4, 7)),
                             [](std::pair<std::vector<EntrySpec>, int> p) {
                               // enough entries to exceed Q = 10 with the shrunk batches
                               std::vector<EntrySpec> v = p.first;
                               while (static_cast<int>(v.size()) < p.second) {
                                 v.push_back(EntrySpec{.batch_size = 4, .batched = true});
                               }
                               return v;
                             });
      break;
  }
  // new broker first when shrinking: gen::arbitrary<bool> shrinks to false.
  rc::Gen<bool> old_broker = rc::gen::arbitrary<bool>();
  rc::Gen<int> delay = kind == ScenarioKind::kSlowConsumer ? rc::gen::element(40, 80)
                       : holds_messages(kind)              ? rc::gen::element(100, 150)
                                                           : rc::gen::element(0, 0, 15);
  rc::Gen<int> nack = kind == ScenarioKind::kNegativeAck ? rc::gen::inRange(2, 4)
                     : kind == ScenarioKind::kStaleEpoch ? rc::gen::just(3)
                                                         : rc::gen::just(0);
  return rc::gen::map(
      rc::gen::tuple(entries, old_broker, delay, nack, rc::gen::inRange(0, 4)),
      [kind](std::tuple<std::vector<EntrySpec>, bool, int, int, int> t) {
        ScenarioParams p;
        p.kind = kind;
        p.entries = std::move(std::get<0>(t));
        p.send_field = !std::get<1>(t);
        p.delay_ms = std::get<2>(t);
        p.nack_every = std::get<3>(t);
        p.disrupt_after = std::min<int>(std::get<4>(t), static_cast<int>(p.entries.size()));
        if ((kind == ScenarioKind::kCloseConsumer || kind == ScenarioKind::kReconnect) &&
            p.disrupt_after == 0) {
          p.disrupt_after = 1;  // something delivered before the disruption
        }
        return p;
      });
}

}  // namespace permitcheck::conformance
