// The harness declares quiescence from what the trace shows: every consumer subscribed, its
// incarnation live and Flow-enabled, holding nothing back (X3/X4), gets a `quiescent` event.
#include "properties/harness.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "properties/spec_model.h"

namespace permitcheck::properties {
namespace {

int quiescent_events(const impl::World& w, std::uint64_t consumer) {
  return static_cast<int>(std::count_if(w.events().begin(), w.events().end(), [&](const spec::Event& e) {
    const auto* q = std::get_if<spec::Quiescent>(&e);
    return q != nullptr && q->consumer == consumer;
  }));
}

impl::WorldConfig two_consumers() {
  impl::WorldConfig c;
  c.mode = impl::Mode::kRevD;
  c.consumers = 2;
  c.q = 4;
  return c;
}

TEST(HarnessQuiescence, EverySubscribedConsumerIsDeclaredQuiescent) {
  Harness h(two_consumers(), Goal::never());
  h.start();
  impl::EntrySpec e;
  e.payload.batch_size = 3;
  e.payload.batched = true;
  h.publish({e}, "publish B=3");
  h.finish();
  EXPECT_EQ(quiescent_events(h.world(), 0), 1);
  EXPECT_EQ(quiescent_events(h.world(), 1), 1);
  EXPECT_TRUE(h.failures().empty()) << format_problem(h.failures().front());
}

TEST(HarnessQuiescence, CryptoFailHoldsUnitsSoNoQuiescence) {
  impl::WorldConfig c = two_consumers();
  c.consumers = 1;
  c.options.crypto_action = impl::CryptoAction::kFail;
  Harness h(c, Goal::never());
  h.start();
  impl::EntrySpec e;
  e.payload.encrypted = true;
  h.publish({e}, "publish B=1 encrypted");
  h.finish();
  EXPECT_EQ(quiescent_events(h.world(), 0), 0);
}

TEST(HarnessThreshold, TheOracleTakesTFromTheRulebook) {
  impl::WorldConfig c;
  c.q = 7;
  EXPECT_EQ(rulebook_threshold(c), spec::default_threshold(7));
  EXPECT_EQ(rulebook_header(c, spec::RulesetId::kRevD).t, 3);
  c.t = 7;
  EXPECT_EQ(rulebook_threshold(c), 7);
}

}  // namespace
}  // namespace permitcheck::properties
