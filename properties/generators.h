// Domain generators for the model-based properties, composable like RapidCheck's own:
// gen_world_config() draws a deployment, gen_acked_indexes(b) a sparse or dense acknowledgement
// state (gen_wire_ack_set() and gen_ack_set_below(width) the ack_set field itself), gen_fault(payload) one payload fault, gen_entries(state) what a producer publishes,
// and gen_command(state) one step of a run (commands.h).
//
//   rc::check([] {
//     const impl::WorldConfig config = *gen_world_config(impl::Mode::kRevD);
//     const std::vector<impl::EntrySpec> entries = *gen_entries(ModelState::of(config));
//   });
#ifndef PERMITCHECK_PROPERTIES_GENERATORS_H_
#define PERMITCHECK_PROPERTIES_GENERATORS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "impl/config.h"
#include "impl/wire.h"
#include "rapidcheck.h"
#include "spec/ack_set.h"

namespace permitcheck::properties {

// What command generation needs to know about a run (the rc::state model).
struct ModelState {
  int consumers = 1;
  int connections = 1;
  bool chunks = false;  // chunked messages only where their order holds (single active)
  std::int64_t published = 0;
  bool in_range_corruption = false;  // CorruptField may write an in-range wrong value (C5)
  std::int64_t q = 0;        // receiver queue size of every consumer
  bool sticky_key = false;   // a persistent Key_Shared dispatcher (its aggregate gates reads)

  static ModelState of(const impl::WorldConfig& config);
};

// Like rc::gen::weightedElement / weightedOneOf, but shrinking towards the earlier choices
// (RapidCheck's own never shrink the choice), so list the simplest choice first.
template <typename T>
rc::Gen<T> weighted(std::vector<std::pair<std::size_t, T>> choices);
template <typename T>
rc::Gen<T> weighted_one_of(std::vector<std::pair<std::size_t, rc::Gen<T>>> choices) {
  return rc::gen::join(weighted<rc::Gen<T>>(std::move(choices)));
}

rc::Gen<impl::WorldConfig> gen_world_config(impl::Mode mode, impl::Mutant mutant = impl::Mutant::kNone);

// ---- Acknowledgement states: the one set of ack_set generators (the properties, and the
// spec, trace and solver tests, use these) ----

// Indexes of a batch of B the subscription already acknowledged: none (complete batch),
// a few (a dense ack_set on the wire), most (a sparse one), the indexes either side of each
// 64-bit word boundary, all but one (the last or one at a word boundary), or all of them
// (nothing left to send: B3).
rc::Gen<std::vector<std::int64_t>> gen_acked_indexes(std::int64_t b);

// An ack_set field as a wire may carry it, whatever B is: absent (one time in three), or one or
// more 64-bit words, each zero, all ones, another edge (1, the extremes) or any value, so bits
// at and beyond B, negative words and a present all-zero set all come up.
inline rc::Gen<spec::AckSet> gen_wire_ack_set() {
  using L = std::numeric_limits<std::int64_t>;
  const rc::Gen<std::int64_t> word = rc::gen::weightedOneOf<std::int64_t>(
      {{3, rc::gen::arbitrary<std::int64_t>()},
       {2, rc::gen::elementOf(std::vector<std::int64_t>{0, -1, 1, L::max(), L::min()})},
       {1, rc::gen::inRange<std::int64_t>(L::min(), L::max())}});
  return rc::gen::weightedOneOf<spec::AckSet>(
      {{1, rc::gen::just(spec::AckSet())},
       {2, rc::gen::map(rc::gen::nonEmpty(rc::gen::container<std::vector<std::int64_t>>(word)),
                        [](std::vector<std::int64_t> words) { return spec::AckSet(std::move(words)); })}});
}

// A set of indexes below `width` as an ack_set: absent (one time in three), or present with
// each of the `width` bits set or not (so possibly all zero). REQUIRES: width >= 0.
inline rc::Gen<spec::AckSet> gen_ack_set_below(int width) {
  return rc::gen::weightedOneOf<spec::AckSet>(
      {{1, rc::gen::just(spec::AckSet())},
       {2, rc::gen::map(rc::gen::container<std::vector<bool>>(static_cast<std::size_t>(width),
                                                              rc::gen::arbitrary<bool>()),
                        [width](const std::vector<bool>& bits) {
                          std::vector<std::int64_t> words(static_cast<std::size_t>((width + 63) / 64), 0);
                          for (int i = 0; i < width; ++i) {
                            if (bits[static_cast<std::size_t>(i)]) {
                              words[static_cast<std::size_t>(i / 64)] |= std::int64_t{1} << (i % 64);
                            }
                          }
                          return spec::AckSet(std::move(words));
                        })}});
}

// Bits of the wire ack_set at or beyond B (B2 ignores them): none, exactly B, the rest of
// B's last 64-bit word, or one in a later word.
rc::Gen<std::vector<std::int64_t>> gen_stray_bits(std::int64_t b);

// The payload with at most one fault: checksum, metadata, decompression, batch parse at an
// index, failed hand-off at an index, compacted-out indexes, encryption or a custom format.
rc::Gen<impl::Payload> gen_fault(impl::Payload payload);

// One entry: batch size 1..1000 (mostly small), an ack state, at most one fault, a key.
rc::Gen<impl::EntrySpec> gen_entry();

// One publish: one to three entries (batch sizes 1..1000), or one chunked message. Under a
// persistent Key_Shared dispatcher with several consumers, sometimes one entry of exactly the
// aggregate (consumers x Q, at most 1000): its owner overdraws by what the others hold (B9),
// so the aggregate is 0 while they still have permits (B12's aggregate gate).
rc::Gen<std::vector<impl::EntrySpec>> gen_entries(const ModelState& state);

// Human-readable forms, used in counterexamples.
std::string show_entry(const impl::EntrySpec& entry);
std::string show_config(const impl::WorldConfig& config);

template <typename T>
rc::Gen<T> weighted(std::vector<std::pair<std::size_t, T>> choices) {
  return rc::Gen<T>([choices = std::move(choices)](const rc::Random& random, int) {
    std::size_t sum = 0;
    for (const auto& c : choices) sum += c.first;
    std::size_t x = rc::Random(random).next() % sum;
    std::size_t index = 0;
    while (x >= choices[index].first) x -= choices[index++].first;
    return rc::shrinkable::map(
        rc::shrinkable::shrinkRecur(index,
                                    [](std::size_t i) { return rc::shrink::towards<std::size_t>(i, 0); }),
        [choices](std::size_t i) { return choices[i].second; });
  });
}

}  // namespace permitcheck::properties

#endif  // PERMITCHECK_PROPERTIES_GENERATORS_H_
