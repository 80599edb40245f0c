#include "properties/generators.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/absl_view.h"
#include "spec/permit_state.h"

namespace permitcheck::properties {
namespace {

enum class Fault { kNone, kChecksum, kMetadata, kDecompress, kParse, kHandoff, kCompacted,
                   kEncrypted, kCustom };

// An index of a batch of B where a failure happens: the first, the last, a 64-bit word
// boundary, or anywhere (often one the ack_set clears: L5's situation).
rc::Gen<std::int64_t> gen_position(std::int64_t b) {
  std::vector<std::int64_t> edges = {0, b - 1};
  for (std::int64_t k : {63, 64}) {
    if (k < b) edges.push_back(k);
  }
  return weighted_one_of<std::int64_t>({{3, rc::gen::inRange<std::int64_t>(0, b)},
                                        {1, rc::gen::just<std::int64_t>(b - 1)},
                                        {1, rc::gen::elementOf(edges)}});
}

}  // namespace

ModelState ModelState::of(const impl::WorldConfig& config) {
  return ModelState{.consumers = config.consumers,
                    .connections = config.connections,
                    .chunks = config.dispatcher == spec::DispatcherKind::kSingleActive,
                    .published = 0,
                    .q = config.q,
                    .sticky_key = config.dispatcher == spec::DispatcherKind::kPersistentKeyShared ||
                                  config.dispatcher == spec::DispatcherKind::kPersistentKeySharedClassic};
}

rc::Gen<impl::WorldConfig> gen_world_config(impl::Mode mode, impl::Mutant mutant) {
  return rc::gen::exec([mode, mutant] {
    using spec::DispatcherKind;
    impl::WorldConfig c;
    c.mode = mode;
    c.mutant = mutant;
    c.dispatcher = *weighted<DispatcherKind>({
        {3, DispatcherKind::kPersistentShared},
        {3, DispatcherKind::kSingleActive},
        {2, DispatcherKind::kPersistentSharedClassic},
        {2, DispatcherKind::kPersistentKeyShared},
        {2, DispatcherKind::kPersistentKeySharedClassic},
        {2, DispatcherKind::kNonPersistentShared},
        {2, DispatcherKind::kNonPersistentKeyShared},
    });
    c.flavour = *weighted<impl::BrokerFlavour>({
        {6, impl::BrokerFlavour::kUpgraded},
        {1, impl::BrokerFlavour::kOld},
        {1, impl::BrokerFlavour::kStrippingProxy},
    });
    c.consumers = *weighted<int>({{3, 1}, {3, 2}, {2, 3}});
    c.connections = *weighted<int>({{3, 1}, {2, 2}});
    c.q = *weighted<std::int64_t>(
        {{3, 2}, {3, 4}, {2, 1}, {2, 3}, {1, 5}, {1, 8}, {1, 16}, {1, 17}, {1, 100}, {1, 1000}});
    // T: Java's default (Q / 2, at least 1) most often; the extremes T = 1 and T = Q too.
    c.t = *weighted<std::int64_t>({{6, 0}, {1, 1}, {1, c.q}});
    // ZeroQueueConsumerImpl (Q = 0): each receive() grants one permit; a batch closes the
    // consumer, not the connection (S7).
    if (*weighted<bool>({{11, false}, {1, true}})) {
      c.q = 0;
      c.t = 0;
      c.options.zero_queue = true;
    }
    if (*weighted<bool>({{7, false}, {3, true}})) {
      c.options.start_message_id = impl::MessagePosition{*rc::gen::inRange<std::int64_t>(0, 4),
                                                         *rc::gen::inRange<std::int64_t>(0, 4)};
    }
    if (*weighted<bool>({{3, false}, {1, true}})) {
      c.options.max_redeliver_count = *rc::gen::inRange(0, 3);
    }
    c.options.crypto_action = *weighted<impl::CryptoAction>({{1, impl::CryptoAction::kConsume},
                                                             {1, impl::CryptoAction::kDiscard},
                                                             {1, impl::CryptoAction::kFail}});
    return c;
  });
}

rc::Gen<std::vector<std::int64_t>> gen_acked_indexes(std::int64_t b) {
  return rc::gen::exec([b] {
    std::vector<std::int64_t> acked;
    enum Kind { kNone, kDense, kSparse, kBoundary, kOneLeft, kAll };
    const Kind kind = *weighted<Kind>(
        {{12, kNone}, {6, kDense}, {4, kSparse}, {3, kBoundary}, {2, kOneLeft}, {1, kAll}});
    if (kind == kNone) return acked;
    if (kind == kAll) {  // fully acknowledged: candidate P = 0, nothing is sent (B3)
      for (std::int64_t i = 0; i < b; ++i) acked.push_back(i);
      return acked;
    }
    if (b < 2) return acked;
    if (kind == kOneLeft) {
      // Only one index left to deliver: the last one, or one at a 64-bit word boundary.
      std::vector<std::int64_t> candidates = {0, b - 1};
      for (std::int64_t k : {63, 64, 127, 128}) {
        if (k < b) candidates.push_back(k);
      }
      const std::int64_t left = *rc::gen::elementOf(candidates);
      for (std::int64_t i = 0; i < b; ++i) {
        if (i != left) acked.push_back(i);
      }
      return acked;
    }
    if (kind == kBoundary) {
      // The indexes either side of each 64-bit word boundary (and the last one) acknowledged.
      for (std::int64_t k = 64; k <= b; k += 64) {
        acked.push_back(k - 1);
        if (k < b) acked.push_back(k);
      }
      if (acked.empty() || acked.back() != b - 1) acked.push_back(b - 1);
      if (static_cast<std::int64_t>(acked.size()) >= b) acked.erase(acked.begin());
      return acked;
    }
    const std::int64_t stride = *rc::gen::inRange<std::int64_t>(2, 9);
    const std::int64_t offset = *rc::gen::inRange<std::int64_t>(0, stride);
    for (std::int64_t i = 0; i < b; ++i) {
      const bool on_stride = i % stride == offset;
      // kDense: a few acknowledged (a dense ack_set); kSparse: most acknowledged (sparse).
      if ((kind == kDense) == on_stride) acked.push_back(i);
    }
    if (static_cast<std::int64_t>(acked.size()) >= b) acked.erase(acked.begin());
    return acked;
  });
}

rc::Gen<std::vector<std::int64_t>> gen_stray_bits(std::int64_t b) {
  return rc::gen::exec([b] {
    std::vector<std::int64_t> bits;
    const std::int64_t word_end = (b + 63) / 64 * 64;  // first index of the next word
    switch (*weighted<int>({{10, 0}, {4, 1}, {1, 2}, {1, 3}})) {
      case 1:  // exactly index B
        bits.push_back(b);
        break;
      case 2:  // the rest of B's last word
        for (std::int64_t i = b; i < std::max(word_end, b + 1); ++i) bits.push_back(i);
        break;
      case 3:  // a bit in a word beyond the last one B needs
        bits.push_back(std::max(word_end, b + 1) + *rc::gen::inRange<std::int64_t>(0, 64));
        break;
      default:
        break;
    }
    return bits;
  });
}

rc::Gen<impl::Payload> gen_fault(impl::Payload payload) {
  return rc::gen::exec([base = std::move(payload)] {
    impl::Payload payload = base;
    const std::int64_t b = payload.batch_size;
    const Fault fault = *weighted<Fault>({
        {60, Fault::kNone},     {6, Fault::kChecksum}, {4, Fault::kMetadata},
        {4, Fault::kDecompress}, {6, Fault::kParse},   {5, Fault::kHandoff},
        {5, Fault::kCompacted}, {6, Fault::kEncrypted}, {3, Fault::kCustom},
    });
    switch (fault) {
      case Fault::kNone:
        break;
      case Fault::kChecksum:
        payload.checksum_ok = false;
        break;
      case Fault::kMetadata:
        payload.metadata_ok = false;
        break;
      case Fault::kDecompress:
        payload.decompress_ok = false;
        break;
      case Fault::kParse:
        // Anywhere, or at the last index, often one the ack_set clears (L5's situation).
        if (payload.batched) payload.parse_fails_at = *gen_position(b);
        break;
      case Fault::kHandoff:
        payload.handoff_fails_at = *gen_position(b);
        break;
      case Fault::kCompacted:
        if (payload.batched) {
          const std::int64_t stride = *rc::gen::inRange<std::int64_t>(2, 6);
          for (std::int64_t i = 1; i < b; i += stride) payload.compacted_out.push_back(i);
        }
        break;
      case Fault::kEncrypted:
        payload.encrypted = true;
        break;
      case Fault::kCustom:
        payload.custom_format = true;
        break;
    }
    return payload;
  });
}

rc::Gen<impl::EntrySpec> gen_entry() {
  return rc::gen::exec([] {
    impl::EntrySpec e;
    const std::int64_t b = *weighted_one_of<std::int64_t>({
        {35, rc::gen::just<std::int64_t>(1)},
        {35, rc::gen::inRange<std::int64_t>(2, 9)},
        {20, rc::gen::inRange<std::int64_t>(9, 65)},
        {6, rc::gen::elementOf(std::vector<std::int64_t>{63, 64, 65, 127, 128, 129})},
        {10, rc::gen::inRange<std::int64_t>(65, 1001)},
    });
    e.payload.batch_size = b;
    e.payload.batched = b > 1;
    e.payload.key = *rc::gen::inRange(0, 4);
    e.pre_acked = *gen_acked_indexes(b);
    if (!e.pre_acked.empty()) e.stray_ack_bits = *gen_stray_bits(b);
    e.payload = *gen_fault(e.payload);
    return e;
  });
}

rc::Gen<std::vector<impl::EntrySpec>> gen_entries(const ModelState& state) {
  const bool chunks = state.chunks;
  const std::int64_t uuid = state.published;
  const std::int64_t aggregate =
      state.sticky_key && state.consumers > 1 && state.q > 0 ? std::min<std::int64_t>(1000, state.consumers * state.q) : 0;
  return rc::gen::exec([chunks, uuid, aggregate] {
    std::vector<impl::EntrySpec> out;
    if (aggregate > 1 && *weighted<bool>({{5, false}, {1, true}})) {
      impl::EntrySpec e;  // the whole aggregate to one key's owner
      e.payload.batch_size = aggregate;
      e.payload.batched = true;
      e.payload.key = *rc::gen::inRange(0, 4);
      out.push_back(e);
      return out;
    }
    if (chunks && *weighted<bool>({{4, false}, {1, true}})) {
      const int n = *rc::gen::inRange(2, 4);
      for (int i = 0; i < n; ++i) {
        impl::EntrySpec e;
        e.payload.chunk_uuid = uuid;
        e.payload.chunk_id = i;
        e.payload.num_chunks = n;
        out.push_back(e);
      }
      // A producer retry can publish one chunk twice: the duplicate takes the chunk failure
      // branch (X4).
      if (*weighted<bool>({{3, false}, {1, true}})) {
        const int dup = *rc::gen::inRange(0, n);
        out.insert(out.begin() + dup + 1, out[static_cast<std::size_t>(dup)]);
      }
      return out;
    }
    // One to three entries; shrinking drops entries and simplifies each one.
    return *rc::gen::resize(3, rc::gen::nonEmpty(rc::gen::container<std::vector<impl::EntrySpec>>(
                                   gen_entry())));
  });
}

std::string show_entry(const impl::EntrySpec& e) {
  const impl::Payload& p = e.payload;
  std::string out = absl::StrCat("B=", p.batch_size);
  if (p.chunked()) {
    absl::StrAppend(&out, " chunk ", p.chunk_id + 1, "/", p.num_chunks, " of message ", p.chunk_uuid);
  }
  if (!e.pre_acked.empty()) {
    if (e.pre_acked.size() <= 12) {
      absl::StrAppend(&out, " acked{", absl::StrJoin(e.pre_acked, ","), "}");
    } else {
      absl::StrAppend(&out, " acked ", e.pre_acked.size(), "/", p.batch_size);
    }
  }
  if (!e.stray_ack_bits.empty()) {
    absl::StrAppend(&out, " ack_set-bits-beyond-B{", absl::StrJoin(e.stray_ack_bits, ","), "}");
  }
  if (!p.checksum_ok) absl::StrAppend(&out, " checksum-fails");
  if (!p.metadata_ok) absl::StrAppend(&out, " metadata-fails");
  if (!p.decompress_ok) absl::StrAppend(&out, " decompression-fails");
  if (p.parse_fails_at >= 0) absl::StrAppend(&out, " parse-fails@", p.parse_fails_at);
  if (p.handoff_fails_at >= 0) absl::StrAppend(&out, " handoff-fails@", p.handoff_fails_at);
  if (!p.compacted_out.empty()) absl::StrAppend(&out, " compacted{", absl::StrJoin(p.compacted_out, ","), "}");
  if (p.encrypted) absl::StrAppend(&out, " encrypted");
  if (p.custom_format) absl::StrAppend(&out, " custom-format");
  if (p.key != 0) absl::StrAppend(&out, " key=", p.key);
  return out;
}

std::string show_config(const impl::WorldConfig& c) {
  std::string out = absl::StrCat(
      "mode=", to_absl(impl::mode_name(c.mode)), " dispatcher=",
      to_absl(spec::dispatcher_name(c.dispatcher)),
      " broker=", to_absl(impl::broker_flavour_name(c.flavour)), " consumers=", c.consumers,
      " connections=", c.connections, " Q=", c.q, " T=", c.t > 0 ? c.t : spec::default_threshold(c.q));
  if (c.options.start_message_id) {
    absl::StrAppend(&out, " startMessageId=", c.options.start_message_id->entry, ":",
                    c.options.start_message_id->index);
  }
  if (c.options.max_redeliver_count) {
    absl::StrAppend(&out, " maxRedeliverCount=", *c.options.max_redeliver_count);
  }
  absl::StrAppend(&out, " cryptoFailureAction=", to_absl(impl::crypto_action_name(c.options.crypto_action)));
  if (c.mutant != impl::Mutant::kNone) {
    for (const impl::MutantInfo& m : impl::all_mutants()) {
      if (m.id == c.mutant) absl::StrAppend(&out, " mutant=", to_absl(m.name));
    }
  }
  return out;
}

}  // namespace permitcheck::properties
