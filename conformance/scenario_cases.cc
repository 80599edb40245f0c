// The fixed first cases of each scenario (one per corner, each opening the scenario's window
// deterministically) and the shrinking of a fixed case.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "conformance/scenario.h"

namespace permitcheck::conformance {
namespace {

EntrySpec batch(std::int64_t b) { return EntrySpec{.batch_size = b, .batched = true}; }
EntrySpec faulty(std::int64_t b, EntryFault f) {
  return EntrySpec{.batch_size = b, .batched = b > 1, .fault = f};
}
// B = 8 with only {0, 2, 5} deliverable (P = 3): the partial batch of rulebook L5.
EntrySpec partial8(EntryFault f = EntryFault::kNone) {
  EntrySpec e = batch(8);
  e.cleared = {1, 3, 4, 6, 7};
  e.fault = f;
  return e;
}

ScenarioParams make(ScenarioKind kind, bool new_broker, std::vector<EntrySpec> entries,
                    std::string corner, int delay_ms = 0, int disrupt_after = 0) {
  return ScenarioParams{.kind = kind, .send_field = new_broker, .delay_ms = delay_ms,
                        .entries = std::move(entries), .disrupt_after = disrupt_after,
                        .corner = std::move(corner)};
}

}  // namespace

std::vector<ScenarioParams> fixed_cases(ScenarioKind kind, std::int64_t q, std::int64_t t) {
  // A faulty batch small enough that the drain can still measure a loss of B - 1 exactly
  // (the broker keeps at least T - 1 available after it), at least 2.
  const std::int64_t b = std::clamp<std::int64_t>(q - t, 2, 8);
  // L4: a batch of Q cut half-way, after the first half was handed off.
  const std::int64_t big = std::max<std::int64_t>(q, 4);
  using K = ScenarioKind;
  using F = EntryFault;
  std::vector<ScenarioParams> v;
  auto early = [&](F f, const std::string& what) {
    v.push_back(make(kind, true, {faulty(b, f)}, absl::StrCat("new broker, batch B = ", b,
                                                              ", ", what)));
    v.push_back(make(kind, false, {faulty(b, f)}, absl::StrCat("old broker, batch B = ", b,
                                                               ", ", what)));
    v.push_back(make(kind, true, {partial8(f)}, absl::StrCat("new broker, partial batch P = 3 "
                                                             "of B = 8, ", what)));
    v.push_back(make(kind, true, {faulty(1, f)},
                     absl::StrCat("new broker, single message, ", what)));
  };
  switch (kind) {
    case K::kCompleteBatches:
      v.push_back(make(kind, true, {batch(4), single(), batch(3)}, "new broker"));
      v.push_back(make(kind, false, {batch(4), single(), batch(3)}, "old broker"));
      break;
    case K::kPartialBatches:
      v.push_back(make(kind, true, {partial8()}, "new broker, sparse ack_set"));
      v.push_back(make(kind, false, {partial8()}, "old broker, sparse ack_set"));
      break;
    case K::kCorruptChecksum: early(F::kChecksum, "checksum fails"); break;
    case K::kUnreadableMetadata: early(F::kMetadata, "metadata does not parse"); break;
    case K::kDecompression: early(F::kDecompression, "decompression fails"); break;
    case K::kTruncatedBatch: {
      EntrySpec l4 = faulty(big, F::kTruncatedBatch);
      l4.truncate_at = static_cast<int>(big / 2);
      v.push_back(make(kind, true, {l4}, absl::StrCat("new broker, fails after ", big / 2,
                                                      " handed off")));
      v.push_back(make(kind, false, {l4}, absl::StrCat("old broker, fails after ", big / 2,
                                                       " handed off")));
      EntrySpec first = faulty(b, F::kTruncatedBatch);
      v.push_back(make(kind, true, {first}, "new broker, fails at index 0"));
      break;
    }
    case K::kTruncationPositions:
      // A batch of Q cut half-way (after the first half was decoded and handed off), at each
      // position class of the message there.
      for (Cut c : kAllCuts) {
        EntrySpec e = faulty(big, F::kTruncatedBatch);
        e.truncate_at = static_cast<int>(big / 2);
        e.cut = c;
        v.push_back(make(kind, true, {e}, absl::StrCat("new broker, B = ", big, " cut ",
                                                       std::string(cut_name(c)), " of index ",
                                                       big / 2, " after ", big / 2,
                                                       " decoded")));
      }
      break;
    case K::kPartialBatchFailure: {
      EntrySpec past = partial8(F::kTruncatedBatch);
      past.truncate_at = 6;
      v.push_back(make(kind, true, {past}, "new broker, fails on index 6, past the last "
                                           "deliverable index 5"));
      v.push_back(make(kind, false, {past}, "old broker, fails on index 6, past the last "
                                            "deliverable index 5"));
      EntrySpec inside = partial8(F::kTruncatedBatch);
      inside.truncate_at = 3;
      v.push_back(make(kind, true, {inside}, "new broker, fails on index 3, between "
                                             "deliverable indexes"));
      break;
    }
    case K::kInconsistentBatch: {
      EntrySpec e = faulty(3, F::kExtraMessages);
      e.extra_messages = 2;
      v.push_back(make(kind, true, {e}, "new broker"));
      v.push_back(make(kind, false, {e}, "old broker"));
      break;
    }
    case K::kCloseConsumer:
    case K::kReconnect:
      v.push_back(make(kind, true, {batch(3), single(), batch(2)}, "new broker", 0, 1));
      v.push_back(make(kind, false, {batch(3), single(), batch(2)}, "old broker", 0, 1));
      break;
    case K::kHeldCloseConsumer:
    case K::kHeldReconnect:
      v.push_back(make(kind, true, {batch(4)}, "new broker, a batch held", 120));
      v.push_back(make(kind, false, {single(), single(), single(), single()},
                       "old broker, single messages held", 120));
      break;
    case K::kStaleEpoch: {
      // The first message acknowledged, the connection dropped; the third (after the
      // replacement subscribed) is nacked, which raises the epoch; the rest are stale.
      ScenarioParams b = make(kind, true, {batch(6)}, "new broker, a batch held", 120);
      ScenarioParams s = make(kind, false, std::vector<EntrySpec>(6, single()),
                              "old broker, single messages held", 120);
      ScenarioParams c = make(kind, true, {batch(6)}, "new broker, a batch held across "
                              "CLOSE_CONSUMER on the same connection", 120);
      c.same_connection = true;
      b.nack_every = s.nack_every = c.nack_every = 3;
      v.push_back(std::move(b));
      v.push_back(std::move(s));
      v.push_back(std::move(c));
      break;
    }
    case K::kDropBeforeAck: {
      // Everything on the first grant (at most Q), dropped before the first acknowledgement.
      const std::int64_t n = std::clamp<std::int64_t>(q / 2, 2, 4);
      v.push_back(make(kind, true, {batch(n)}, "new broker, a batch inside the client across a "
                       "connection drop", 120));
      v.push_back(make(kind, false, std::vector<EntrySpec>(static_cast<std::size_t>(n), single()),
                       "old broker, single messages inside the client across a connection "
                       "drop", 120));
      ScenarioParams same = make(kind, true, {batch(n)}, "new broker, a batch inside the client "
                                 "across CLOSE_CONSUMER on the same connection", 120);
      same.same_connection = true;
      v.push_back(std::move(same));
      break;
    }
    case K::kFlowAroundClose:
      v.push_back(make(kind, true, {}, "new broker", 150));
      v.push_back(make(kind, false, {}, "old broker", 150));
      break;
    case K::kStartMessageId:
      v.push_back(make(kind, true, {single(), single(), batch(3)}, "new broker"));
      v.push_back(make(kind, false, {single(), batch(2), single()}, "old broker"));
      break;
    case K::kActiveConsumerChange:
      v.push_back(make(kind, true, {batch(4), single(), batch(3)}, "new broker"));
      v.push_back(make(kind, false, {batch(4), single(), batch(3)}, "old broker"));
      break;
    case K::kUnknownConsumer:
      v.push_back(make(kind, true, {batch(2)}, "new broker"));
      break;
    case K::kNegativeAck: {
      ScenarioParams p = make(kind, true, {batch(2), batch(2), single()},
                              "new broker, partial redelivery of nacked batch indexes");
      p.nack_every = 2;
      v.push_back(std::move(p));
      break;
    }
    case K::kSlowConsumer:
      v.push_back(make(kind, true, {batch(4), batch(4), batch(4), batch(4)}, "new broker", 40));
      break;
    case K::kDuplicateRedelivery:
      // T messages a round, so the client's Flow tells that it took them.
      v.push_back(make(kind, true, {batch(std::max<std::int64_t>(t, 2))}, "new broker, a batch"));
      v.push_back(make(kind, false, std::vector<EntrySpec>(static_cast<std::size_t>(t), single()),
                       "old broker, single messages"));
      break;
  }
  return v;
}

std::vector<ScenarioParams> shrink_candidates(const ScenarioParams& original) {
  ScenarioParams p = original;
  p.corner.clear();  // a shrunk case covers no named corner any more
  std::vector<ScenarioParams> out;
  const bool may_be_empty = p.kind == ScenarioKind::kFlowAroundClose;
  // The units a held window needs: the first acknowledged, one in processing, one held after
  // it; a stale-epoch window one more (the nack that raises the epoch).
  const std::int64_t min_units = p.kind == ScenarioKind::kStaleEpoch         ? 4
                                 : p.kind == ScenarioKind::kHeldCloseConsumer ||
                                           p.kind == ScenarioKind::kHeldReconnect
                                     ? 3
                                     : 0;
  auto units = [](const ScenarioParams& c) {
    std::int64_t n = 0;
    for (const EntrySpec& e : c.entries) n += e.batched ? e.batch_size : 1;
    return n;
  };
  // An entry fewer (never the last faulty one).
  for (std::size_t i = 0; i < p.entries.size(); ++i) {
    if (p.entries.size() == 1 && !may_be_empty) break;
    const bool faulty_entry = p.entries[i].fault != EntryFault::kNone;
    const auto faults = std::count_if(p.entries.begin(), p.entries.end(), [](const EntrySpec& e) {
      return e.fault != EntryFault::kNone;
    });
    if (faulty_entry && faults == 1) continue;
    ScenarioParams c = p;
    c.entries.erase(c.entries.begin() + static_cast<long>(i));
    c.disrupt_after = std::min<int>(c.disrupt_after, static_cast<int>(c.entries.size()));
    if ((c.kind == ScenarioKind::kCloseConsumer || c.kind == ScenarioKind::kReconnect) &&
        c.disrupt_after == 0) {
      continue;
    }
    if (units(c) < min_units) continue;
    out.push_back(std::move(c));
  }
  // A batch one smaller, keeping its fault position and some deliverable index.
  for (std::size_t i = 0; i < p.entries.size(); ++i) {
    const EntrySpec& e = p.entries[i];
    if (!e.batched || e.batch_size <= 2) continue;
    EntrySpec s = e;
    --s.batch_size;
    std::erase_if(s.cleared, [&](std::int64_t x) { return x >= s.batch_size; });
    if (static_cast<std::int64_t>(s.cleared.size()) >= s.batch_size) continue;
    if (e.fault == EntryFault::kTruncatedBatch && s.truncate_at >= s.batch_size) continue;
    ScenarioParams c = p;
    c.entries[i] = std::move(s);
    if (units(c) < min_units) continue;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace permitcheck::conformance
