// The harness declares quiescence from what the trace shows: every consumer subscribed, its
// incarnation live and Flow-enabled, holding nothing back (X3/X4), gets a `quiescent` event.
#include "properties/harness.h"

#include <algorithm>
#include <string>
#include <vector>

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

// Feeds hand-built trace events to the harness's trace checks, as if the implementation had
// recorded them: a known-bad trace for each check at quiescence.
class HarnessTestPeer {
 public:
  static void feed(Harness& h, const spec::Event& e) { h.follow_consumers(e); }
  // As if an entry with something to deliver had been published (what publish() counts).
  static void count_published(Harness& h) { ++h.deliverable_published_; }
  // As if chunk command `cmd` carrying `chunk` settled on client incarnation `inc`.
  static void settle_chunk(Harness& h, std::uint64_t cmd, const impl::Payload& chunk, std::uint64_t inc,
                           std::int64_t settled) {
    h.follow_chunk(cmd, chunk, inc, settled);
  }
};

namespace {

using spec::Id;

// The problems of `h` the harness itself found with `rule` (not the monitor's or the model's).
int own_problems(const Harness& h, spec::RuleId rule) {
  return static_cast<int>(std::count_if(h.problems().begin(), h.problems().end(), [&](const Problem& p) {
    return p.source == "quiesce" && p.rule == rule;
  }));
}

impl::WorldConfig one_consumer() {
  impl::WorldConfig c = two_consumers();
  c.consumers = 1;
  return c;
}

// C5: an inconsistent command whose connection stays open is acknowledged with a validation
// error; a trace that never writes that acknowledgement fails at quiescence.
TEST(HarnessQuiescence, C5_InconsistentCommandNeverAcknowledgedIsReported) {
  Harness h(one_consumer(), Goal::never());
  h.start();
  HarnessTestPeer::feed(h, spec::Recv{.inc = Id::number(1), .cmd = Id::number(900), .message_permits = 7});
  HarnessTestPeer::feed(h, spec::Corrupt{.cmd = Id::number(900), .stage = spec::FailureStage::kInconsistent});
  h.quiesce("quiesce");
  EXPECT_EQ(own_problems(h, spec::RuleId::kC5), 1);

  Harness acked(one_consumer(), Goal::never());  // the same with its acknowledgement: no C5
  acked.start();
  HarnessTestPeer::feed(acked, spec::Recv{.inc = Id::number(1), .cmd = Id::number(900), .message_permits = 7});
  HarnessTestPeer::feed(acked, spec::Corrupt{.cmd = Id::number(900), .stage = spec::FailureStage::kInconsistent});
  HarnessTestPeer::feed(acked, spec::Ack{.cnx = Id::text("c1"), .cmd = Id::number(900),
                                         .validation_error = "inconsistent"});
  acked.quiesce("quiesce");
  EXPECT_EQ(own_problems(acked, spec::RuleId::kC5), 0);
}

// B7: every command a send finalized is written to its consumer; one that never reaches the
// client (no `message`, its connection still open) fails at quiescence.
TEST(HarnessQuiescence, B7_FinalizedCommandNeverWrittenIsReported) {
  spec::SentEntry entry{.cmd = Id::number(900), .p = 1};
  entry.entry.batch_size = 1;
  entry.entry.admitted = true;
  const spec::Send send{.consumer = 0, .inc = Id::text("b1"), .entries = {entry}};

  Harness h(one_consumer(), Goal::never());
  h.start();
  HarnessTestPeer::feed(h, send);
  h.quiesce("quiesce");
  EXPECT_EQ(own_problems(h, spec::RuleId::kB7), 1);

  Harness written(one_consumer(), Goal::never());  // the same, written: no B7
  written.start();
  HarnessTestPeer::feed(written, send);
  HarnessTestPeer::feed(written, spec::Message{.cnx = Id::text("c1"), .consumer = 0, .cmd = Id::number(900)});
  written.quiesce("quiesce");
  EXPECT_EQ(own_problems(written, spec::RuleId::kB7), 0);
}

// K5: when a connection ends, every command received on it made its terminal transition.
TEST(HarnessQuiescence, K5_ReceivedCommandNeverSettledIsReportedWhenItsConnectionEnds) {
  Harness h(one_consumer(), Goal::never());
  h.start();
  HarnessTestPeer::feed(h, spec::Recv{.inc = Id::number(1), .cmd = Id::number(900), .message_permits = 1});
  HarnessTestPeer::feed(h, spec::Disconnect{.cnx = Id::text("c1")});
  EXPECT_EQ(own_problems(h, spec::RuleId::kK5), 1);

  Harness settled(one_consumer(), Goal::never());  // the same, settled first: no K5
  settled.start();
  HarnessTestPeer::feed(settled, spec::Recv{.inc = Id::number(1), .cmd = Id::number(900), .message_permits = 1});
  HarnessTestPeer::feed(settled, spec::Settle{.cmd = Id::number(900), .n = 1});
  HarnessTestPeer::feed(settled, spec::Disconnect{.cnx = Id::text("c1")});
  EXPECT_EQ(own_problems(settled, spec::RuleId::kK5), 0);
}

// N4: an incarnation the trace shows Flow-enabled writes its initial grant of Q; one that never
// does is never sent anything, and fails at quiescence. Legacy Pulsar grants Q as well.
TEST(HarnessQuiescence, N4_AFlowEnabledIncarnationThatNeverWroteItsInitialGrantIsReported) {
  for (const spec::RulesetId rules : {spec::RulesetId::kRevD, spec::RulesetId::kLegacy}) {
    SCOPED_TRACE(std::string(spec::ruleset(rules).name));
    impl::WorldConfig c = one_consumer();
    if (rules == spec::RulesetId::kLegacy) c.mode = impl::Mode::kLegacy;
    Harness h(c, Goal::never(), rules);
    h.start();
    HarnessTestPeer::feed(h, spec::IncOpen{.inc = Id::number(70), .cnx = Id::text("c1"), .consumer = 0});
    HarnessTestPeer::feed(h, spec::IncFlowEnabled{.inc = Id::number(70)});
    h.quiesce("quiesce");
    EXPECT_EQ(own_problems(h, spec::RuleId::kN4), 1);

    Harness granted(c, Goal::never(), rules);  // the same with its grant: no N4
    granted.start();
    HarnessTestPeer::feed(granted, spec::IncOpen{.inc = Id::number(70), .cnx = Id::text("c1"), .consumer = 0});
    HarnessTestPeer::feed(granted, spec::IncFlowEnabled{.inc = Id::number(70)});
    HarnessTestPeer::feed(granted, spec::Flow{.cnx = Id::text("c1"), .consumer = 0, .permits = 4,
                                              .inc = Id::number(70)});
    granted.quiesce("quiesce");
    EXPECT_EQ(own_problems(granted, spec::RuleId::kN4), 0);
  }
}

// N5: after the initial grant, a Flow drains an accumulator that reached T, so it carries at
// least T (Q = 4: T = 2). A Flow of 1 is an early one; a Flow of exactly T is not.
TEST(HarnessFlow, N5_AFlowBelowTheThresholdAfterTheInitialGrantIsReported) {
  for (const std::int64_t permits : {1, 2}) {
    SCOPED_TRACE(permits);
    Harness h(one_consumer(), Goal::never());
    h.start();
    const std::optional<std::uint64_t> inc = h.world().client_consumer(0).inc;
    ASSERT_TRUE(inc.has_value());
    HarnessTestPeer::feed(h, spec::Flow{.cnx = Id::text("c1"), .consumer = 0, .permits = permits,
                                        .inc = Id::number(*inc)});
    EXPECT_EQ(own_problems(h, spec::RuleId::kN5), permits < 2 ? 1 : 0);
  }
}

impl::Payload chunk_of_two(int id) {
  impl::Payload p;
  p.chunk_uuid = 7;
  p.chunk_id = id;
  p.num_chunks = 2;
  return p;
}

// S2 against X4: the harness follows the incarnation's chunk contexts. A chunk in order (chunk
// 0 without a context, or the one its context expects) returns 1 or is delivered; one that
// returned and delivered nothing took X4's out-of-order branch. An out-of-order chunk may, and
// a redelivery clears the contexts, so the chunk after it is out of order.
TEST(HarnessChunks, S2_AnInOrderChunkThatReturnedAndDeliveredNothingIsReported) {
  Harness h(one_consumer(), Goal::never());
  h.start();
  const std::uint64_t inc = h.world().client_consumer(0).inc.value_or(0);
  HarnessTestPeer::settle_chunk(h, 900, chunk_of_two(1), inc, 0);  // out of order: X4 may hold it
  EXPECT_EQ(own_problems(h, spec::RuleId::kS2), 0);
  HarnessTestPeer::settle_chunk(h, 901, chunk_of_two(0), inc, 0);  // in order, returned nothing
  EXPECT_EQ(own_problems(h, spec::RuleId::kS2), 1);

  Harness ordered(one_consumer(), Goal::never());
  ordered.start();
  HarnessTestPeer::feed(ordered, spec::DirectReturn{.cmd = Id::number(900), .n = 1});
  HarnessTestPeer::settle_chunk(ordered, 900, chunk_of_two(0), inc, 0);  // returned its 1 (S2)
  HarnessTestPeer::settle_chunk(ordered, 901, chunk_of_two(1), inc, 0);  // expected next: took X4
  EXPECT_EQ(own_problems(ordered, spec::RuleId::kS2), 1);

  Harness redelivered(one_consumer(), Goal::never());
  redelivered.start();
  HarnessTestPeer::feed(redelivered, spec::DirectReturn{.cmd = Id::number(900), .n = 1});
  HarnessTestPeer::settle_chunk(redelivered, 900, chunk_of_two(0), inc, 0);
  redelivered.redeliver(0, "consumer 0 redelivers: its chunk contexts are cleared");
  HarnessTestPeer::settle_chunk(redelivered, 901, chunk_of_two(1), inc, 0);  // now out of order
  EXPECT_EQ(own_problems(redelivered, spec::RuleId::kS2), 0);
}

// The commands the broker's sends finalized so far, in order.
std::vector<std::uint64_t> sent_cmds(const Harness& h) {
  std::vector<std::uint64_t> out;
  for (const spec::Event& e : h.world().events()) {
    if (const auto* s = std::get_if<spec::Send>(&e)) {
      for (const spec::SentEntry& entry : s->entries) {
        if (entry.p) out.push_back(entry.cmd.as_number());
      }
    }
  }
  return out;
}

// S5: with maxRedeliverCount = 0 the first delivery is handed off and the redelivery (count 1)
// goes to dead-letter handling, as the implementation does. A dead-letter skip of the first
// delivery is premature, and a hand-off of the redelivery is a missed dead letter.
TEST(HarnessDeadLetter, S5_ADeadLetterBeforeTheThresholdAndAHandOffPastItAreReported) {
  impl::WorldConfig c = one_consumer();
  c.dispatcher = spec::DispatcherKind::kSingleActive;
  c.options.max_redeliver_count = 0;
  Harness h(c, Goal::never());
  h.start();
  h.publish({impl::EntrySpec{}}, "publish B=1");
  h.run_all("run every queue until idle");
  h.redeliver(0, "consumer 0 redelivers");
  h.run_all("run every queue until idle");
  const std::vector<std::uint64_t> cmds = sent_cmds(h);
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(own_problems(h, spec::RuleId::kS5), 0) << "the implementation follows the threshold";
  HarnessTestPeer::feed(h, spec::Skip{.cmd = Id::number(cmds[0]), .index = 0,
                                      .reason = spec::SkipReason::kDeadLetter});
  EXPECT_EQ(own_problems(h, spec::RuleId::kS5), 1);
  HarnessTestPeer::feed(h, spec::Claim{.cmd = Id::number(cmds[1]), .msg = Id::text("m"), .index = 0});
  EXPECT_EQ(own_problems(h, spec::RuleId::kS5), 2);
}

// K2: a hand-off fails only where the run injected the failure. The implementation's own
// restore of an injected failure passes; a restore of an index nothing made fail is reported.
TEST(HarnessHandOff, K2_ARestoreWhereNoHandOffWasMadeToFailIsReported) {
  Harness h(one_consumer(), Goal::never());
  h.start();
  impl::EntrySpec failing;
  failing.payload.handoff_fails_at = 0;
  h.publish({failing, impl::EntrySpec{}}, "publish B=1 handoff-fails@0, B=1");
  h.run_all("run every queue until idle");
  const std::vector<std::uint64_t> cmds = sent_cmds(h);
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(own_problems(h, spec::RuleId::kK2), 0) << "the injected failure is restored";
  HarnessTestPeer::feed(h, spec::Claim{.cmd = Id::number(cmds[1]), .msg = Id::text("m"), .index = 0});
  HarnessTestPeer::feed(h, spec::Restore{.cmd = Id::number(cmds[1]), .msg = Id::text("m")});
  EXPECT_EQ(own_problems(h, spec::RuleId::kK2), 1);
}

// B13 for a sticky-key dispatcher: settled, nothing pending anywhere and every consumer with
// permits, a published entry no send ever carried is one nothing will dispatch. While another
// consumer has an entry pending (draining may hold a key back) it is not judged.
TEST(HarnessQuiescence, B13_KeySharedEntryNeverSentWhileEveryConsumerHasPermitsIsReported) {
  impl::WorldConfig c = two_consumers();
  c.dispatcher = spec::DispatcherKind::kPersistentKeyShared;
  Harness h(c, Goal::never());
  h.start();
  HarnessTestPeer::count_published(h);
  h.quiesce("quiesce");
  EXPECT_EQ(own_problems(h, spec::RuleId::kB13), 1);

  // An entry pending at consumer 1, never acknowledged: draining may hold its key back.
  impl::EntrySpec e;
  e.payload.key = 1;
  e.payload.encrypted = true;  // crypto FAIL holds it (X3): never acknowledged
  c.options.crypto_action = impl::CryptoAction::kFail;
  Harness held(c, Goal::never());
  held.start();
  held.publish({e}, "publish B=1 key=1 encrypted");
  HarnessTestPeer::count_published(held);
  held.quiesce("quiesce");
  EXPECT_EQ(own_problems(held, spec::RuleId::kB13), 0);
}

impl::WorldConfig zero_queue() {
  impl::WorldConfig c = one_consumer();
  c.q = 0;
  c.options.zero_queue = true;
  return c;
}

// S7: a zero-queue consumer that closed itself stays closed; a later incarnation of it fails.
TEST(HarnessZeroQueue, S7_AConsumerThatClosedItselfSubscribingAgainIsReported) {
  Harness h(zero_queue(), Goal::never());
  h.start();
  HarnessTestPeer::feed(h, spec::IncClose{.inc = Id::number(1), .reason = spec::CloseReason::kClosed});
  EXPECT_EQ(own_problems(h, spec::RuleId::kS7), 0);
  h.finish();
  EXPECT_EQ(own_problems(h, spec::RuleId::kE6), 0) << "closed by itself is not stalled";
  HarnessTestPeer::feed(h, spec::IncOpen{.inc = Id::number(2), .cnx = Id::text("c1"), .consumer = 0});
  EXPECT_EQ(own_problems(h, spec::RuleId::kS7), 1);
}

// N4: a zero-queue receive() grants only while the consumer's incarnation is Flow-enabled.
TEST(HarnessZeroQueue, N4_AGrantWithoutAFlowEnabledIncarnationIsReported) {
  Harness h(zero_queue(), Goal::never());
  h.start();
  const spec::Flow grant{.cnx = Id::text("c1"), .consumer = 0, .permits = 1};
  HarnessTestPeer::feed(h, grant);  // incarnation 1 is Flow-enabled: fine
  EXPECT_EQ(own_problems(h, spec::RuleId::kN4), 0);
  HarnessTestPeer::feed(h, spec::IncOpen{.inc = Id::number(2), .cnx = Id::text("c1"), .consumer = 0});
  HarnessTestPeer::feed(h, grant);  // the replacement is not subscribed yet
  EXPECT_EQ(own_problems(h, spec::RuleId::kN4), 1);
}

}  // namespace
}  // namespace permitcheck::properties

namespace permitcheck::properties {
namespace {

// B13 (Key_Shared): consumer 1 holds an entry of key 1; the broker closes consumer 0, whose
// replacement subscribes last, so key 1 moves to consumer 2; consumer 1 then redelivers. What
// the redelivery leaves in consumer 1's pending set is what admission of key 1 at consumer 2
// reads (the draining of a moved key): the entry must reach consumer 2, nothing is left.
TEST(HarnessKeyShared, AnEntryRedeliveredAfterItsKeyMovedReachesItsNewOwner) {
  for (const std::int64_t b : {1, 2, 6}) {
    SCOPED_TRACE(b);
    impl::WorldConfig c = two_consumers();
    c.consumers = 3;
    c.q = 2;
    c.dispatcher = spec::DispatcherKind::kPersistentKeyShared;
    Harness h(c, Goal::never());
    h.start();
    impl::EntrySpec e;
    e.payload.batch_size = b;
    e.payload.batched = b > 1;
    e.payload.key = 1;
    h.publish({e}, "publish key=1");
    h.run_all("run every queue until idle");
    h.redeliver_after_close(0, 1, "close 0, then 1 redelivers");
    h.finish();
    for (const Problem& p : h.failures()) ADD_FAILURE() << format_problem(p);
    EXPECT_FALSE(h.world().broker_backlog());
  }
}

}  // namespace
}  // namespace permitcheck::properties

