// Tests of the property generators themselves: that they reach the situations the properties
// rely on (ack_set bits at and beyond B, words beyond the first, empty and full ack states,
// failure positions at the edges, the T and Q extremes, every fault kind of the step mix).
#include "properties/generators.h"

#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "impl/wire.h"
#include "properties/commands.h"
#include "spec/finalize.h"

namespace permitcheck::properties {
namespace {

template <typename T>
std::vector<T> sample(const rc::Gen<T>& gen, int n) {
  std::vector<T> out;
  rc::Random random(12345);
  for (int i = 0; i < n; ++i) {
    rc::Random r = random.split();
    out.push_back(gen(r, 50).value());
  }
  return out;
}

TEST(GenAckSet, AcknowledgedIndexesStayInsideTheBatch) {
  for (std::int64_t b : {1, 2, 63, 64, 65, 130}) {
    for (const std::vector<std::int64_t>& acked : sample(gen_acked_indexes(b), 300)) {
      for (std::int64_t i : acked) {
        EXPECT_GE(i, 0);
        EXPECT_LT(i, b);
      }
      EXPECT_TRUE(std::is_sorted(acked.begin(), acked.end()));
    }
  }
}

// The wire field: absent, a present all-zero word, all ones, negative words, more than one
// word, and bits far beyond any small B.
TEST(GenAckSet, WireAckSetReachesAbsentZeroNegativeAndSeveralWords) {
  bool absent = false, zero_word = false, all_ones = false, negative = false, several = false;
  bool high_bit = false;
  for (const spec::AckSet& s : sample(gen_wire_ack_set(), 2000)) {
    absent |= s.absent();
    several |= s.words().size() > 1;
    for (std::int64_t w : s.words()) {
      zero_word |= w == 0;
      all_ones |= w == -1;
      negative |= w < -1;
      high_bit |= (static_cast<std::uint64_t>(w) >> 40) != 0;
    }
  }
  EXPECT_TRUE(absent);
  EXPECT_TRUE(zero_word);
  EXPECT_TRUE(all_ones);
  EXPECT_TRUE(negative);
  EXPECT_TRUE(several);
  EXPECT_TRUE(high_bit);
}

// Below a width: no bit at or beyond it, every bit below it reached, absent and all-zero too.
TEST(GenAckSet, AckSetBelowWidthSetsOnlyBitsBelowItAndReachesEachOfThem) {
  for (int width : {8, 64, 70}) {
    SCOPED_TRACE(width);
    bool absent = false, all_zero = false;
    std::set<std::int64_t> reached;
    for (const spec::AckSet& s : sample(gen_ack_set_below(width), 4000)) {
      absent |= s.absent();
      all_zero |= !s.absent() && s.count_all() == 0;
      EXPECT_EQ(s.count_all(), s.count_below(width));
      if (!s.absent()) {
        EXPECT_EQ(s.words().size(), static_cast<std::size_t>((width + 63) / 64));
      }
      for (std::int64_t i = 0; i < width; ++i) {
        if (s.is_deliverable(i)) reached.insert(i);
      }
    }
    EXPECT_TRUE(absent);
    EXPECT_EQ(reached.size(), static_cast<std::size_t>(width));
    if (width == 8) {
      EXPECT_TRUE(all_zero);  // 2^-8 per present set: about 10 in 4000 samples
    }
  }
}

TEST(GenAckSet, ReachesEmptyFullOneLeftAndBothWordsOfALargeBatch) {
  const std::int64_t b = 130;
  bool empty = false, full = false, one_left = false, second_word = false, third_word = false;
  bool dense = false, sparse = false, boundary = false;
  for (const std::vector<std::int64_t>& acked : sample(gen_acked_indexes(b), 2000)) {
    const auto n = static_cast<std::int64_t>(acked.size());
    empty |= n == 0;
    full |= n == b;
    one_left |= n == b - 1;
    dense |= n > 0 && n < b / 2;
    sparse |= n > b / 2 && n < b - 1;
    for (std::int64_t i : acked) {
      second_word |= i >= 64 && i < 128;
      third_word |= i >= 128;
    }
    boundary |= std::binary_search(acked.begin(), acked.end(), 63) &&
                std::binary_search(acked.begin(), acked.end(), 64);
  }
  EXPECT_TRUE(empty);
  EXPECT_TRUE(full);
  EXPECT_TRUE(one_left);
  EXPECT_TRUE(dense);
  EXPECT_TRUE(sparse);
  EXPECT_TRUE(second_word);
  EXPECT_TRUE(third_word);
  EXPECT_TRUE(boundary);
}

TEST(GenStrayBits, ReachesExactlyBTheRestOfTheWordAndLaterWords) {
  for (std::int64_t b : {1, 5, 63, 64, 65}) {
    const std::int64_t word_end = std::max<std::int64_t>((b + 63) / 64 * 64, b + 1);
    bool none = false, at_b = false, rest = false, later = false;
    for (const std::vector<std::int64_t>& bits : sample(gen_stray_bits(b), 1000)) {
      none |= bits.empty();
      for (std::int64_t i : bits) EXPECT_GE(i, b) << "a stray bit inside [0, B)";
      at_b |= bits.size() == 1 && bits[0] == b;
      rest |= bits.size() == static_cast<std::size_t>(word_end - b) && bits.size() > 1;
      later |= bits.size() == 1 && bits[0] >= word_end;
    }
    EXPECT_TRUE(none) << b;
    EXPECT_TRUE(at_b) << b;
    EXPECT_TRUE(later) << b;
    if (word_end - b > 1) {
      EXPECT_TRUE(rest) << b;
    }
  }
}

TEST(GenEntry, ReachesWordBoundaryBatchSizesAndStrayBitsOnlyWithAnAckSet) {
  std::set<std::int64_t> sizes;
  bool stray = false;
  for (const impl::EntrySpec& e : sample(gen_entry(), 3000)) {
    sizes.insert(e.payload.batch_size);
    if (!e.stray_ack_bits.empty()) {
      stray = true;
      EXPECT_FALSE(e.pre_acked.empty()) << "stray bits without an ack_set on the wire";
    }
    EXPECT_GE(e.payload.batch_size, 1);
    EXPECT_LE(e.payload.batch_size, 1000);
  }
  for (std::int64_t b : {1, 63, 64, 65, 127, 128, 129}) EXPECT_TRUE(sizes.contains(b)) << b;
  EXPECT_TRUE(stray);
}

TEST(GenFault, EveryFaultKindAndFailurePositionsAtTheEdges) {
  impl::Payload base;
  base.batch_size = 100;
  base.batched = true;
  bool none = false, checksum = false, metadata = false, decompress = false, encrypted = false,
       custom = false, compacted = false;
  std::set<std::int64_t> parse_at, handoff_at;
  for (const impl::Payload& p : sample(gen_fault(base), 4000)) {
    const int faults = !p.checksum_ok + !p.metadata_ok + !p.decompress_ok +
                       (p.parse_fails_at >= 0) + (p.handoff_fails_at >= 0) +
                       !p.compacted_out.empty() + p.encrypted + p.custom_format;
    EXPECT_LE(faults, 1);
    none |= faults == 0;
    checksum |= !p.checksum_ok;
    metadata |= !p.metadata_ok;
    decompress |= !p.decompress_ok;
    encrypted |= p.encrypted;
    custom |= p.custom_format;
    compacted |= !p.compacted_out.empty();
    if (p.parse_fails_at >= 0) parse_at.insert(p.parse_fails_at);
    if (p.handoff_fails_at >= 0) handoff_at.insert(p.handoff_fails_at);
  }
  EXPECT_TRUE(none && checksum && metadata && decompress && encrypted && custom && compacted);
  for (std::int64_t i : {0, 63, 64, 99}) {
    EXPECT_TRUE(parse_at.contains(i)) << "parse failure at " << i;
    EXPECT_TRUE(handoff_at.contains(i)) << "hand-off failure at " << i;
  }
}

TEST(GenWorldConfig, OddAndEvenQAndTheThresholdExtremes) {
  bool odd = false, even = false, t_one = false, t_q = false, t_default = false;
  for (const impl::WorldConfig& c : sample(gen_world_config(impl::Mode::kRevD), 2000)) {
    // Q = 0 only for a zero-queue consumer (S7), and then always.
    ASSERT_EQ(c.q == 0, c.options.zero_queue);
    if (c.options.zero_queue) continue;
    ASSERT_GE(c.q, 1);
    odd |= c.q % 2 == 1 && c.q > 1;
    even |= c.q % 2 == 0;
    t_default |= c.t == 0;
    t_one |= c.t == 1 && c.q > 2;
    t_q |= c.t == c.q && c.q > 2;
  }
  EXPECT_TRUE(odd);
  EXPECT_TRUE(even);
  EXPECT_TRUE(t_default);
  EXPECT_TRUE(t_one);
  EXPECT_TRUE(t_q);
}

// Zero-queue worlds (S7) come up, with more than one consumer and on a sticky-key dispatcher.
TEST(GenWorldConfig, ReachesZeroQueueWorldsWithSeveralConsumersAndKeyShared) {
  bool zero_queue = false, several = false, key_shared = false;
  for (const impl::WorldConfig& c : sample(gen_world_config(impl::Mode::kRevD), 2000)) {
    if (!c.options.zero_queue) continue;
    zero_queue = true;
    several |= c.consumers > 1;
    key_shared |= spec::is_sticky_key(c.dispatcher);
  }
  EXPECT_TRUE(zero_queue);
  EXPECT_TRUE(several);
  EXPECT_TRUE(key_shared);
}

// The shown steps gen_command draws for `state` (2000 of them).
std::vector<std::string> shown_steps(const ModelState& state) {
  std::vector<std::string> out;
  for (const StepPtr& step : sample(gen_command(state), 2000)) out.push_back(show_step(*step));
  return out;
}

int count_containing(const std::vector<std::string>& steps, const std::string& text) {
  return static_cast<int>(std::count_if(steps.begin(), steps.end(),
                                        [&](const std::string& s) { return s.find(text) != std::string::npos; }));
}

// Key_Shared with several consumers: a redelivery right after a membership change (the
// draining of a moved key, B13) comes up, by another consumer than the closed one too; it is
// drawn nowhere else, and the plain steps stay.
TEST(GenCommand, KeySharedWorldsRedeliverRightAfterAMembershipChange) {
  ModelState key_shared;
  key_shared.sticky_key = true;
  key_shared.consumers = 3;
  const std::vector<std::string> steps = shown_steps(key_shared);
  const std::string composite = " at once, then consumer ";
  EXPECT_GT(count_containing(steps, composite), 60);  // weight 4 of 42: about 190 in 2000
  bool other_consumer = false;
  for (const std::string& s : steps) {
    for (int closed = 0; closed < 3; ++closed) {
      for (int redelivering = 0; redelivering < 3; ++redelivering) {
        other_consumer |= closed != redelivering &&
                          s == absl::StrCat("broker closes consumer ", closed, composite, redelivering,
                                            " calls redeliverUnacknowledgedMessages");
      }
    }
  }
  EXPECT_TRUE(other_consumer);
  EXPECT_GT(count_containing(steps, "publish"), 0);
  EXPECT_GT(count_containing(steps, "receives and acknowledges"), 0);

  ModelState one = key_shared;
  one.consumers = 1;
  EXPECT_EQ(count_containing(shown_steps(one), composite), 0);
  ModelState shared = key_shared;
  shared.sticky_key = false;
  EXPECT_EQ(count_containing(shown_steps(shared), composite), 0);
}

}  // namespace
}  // namespace permitcheck::properties
