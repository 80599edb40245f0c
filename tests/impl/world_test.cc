// Directed scenarios of the reference implementation (impl/world.h): the rulebook's worked
// situations, run on the implementation in both modes, with the numbers the rulebook gives.
#include "impl/world.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "impl/scheduler.h"
#include "spec/monitor.h"

namespace permitcheck::impl {
namespace {

using ::testing::IsEmpty;

WorldConfig config(Mode mode, std::int64_t q = 1000) {
  return WorldConfig{.mode = mode, .q = q};
}

EntrySpec batch(std::int64_t b) {
  return EntrySpec{.payload = {.batch_size = b, .batched = b > 1}};
}

template <typename E>
std::vector<E> all_of(const World& w) {
  std::vector<E> out;
  for (const spec::Event& e : w.events()) {
    if (const auto* x = std::get_if<E>(&e)) out.push_back(*x);
  }
  return out;
}

std::string dump(const std::vector<spec::Finding>& findings) {
  std::string out;
  for (const spec::Finding& f : findings) out += spec::format_finding(f) + "\n";
  return out;
}

spec::MonitorReport check(const World& w, spec::RulesetId rules) {
  return spec::check_trace(w.trace_header(rules), w.events());
}

TEST(ImplScheduler, QueuesAreFifoAndRunningIsVisible) {
  Scheduler s;
  const int a = s.add_queue(QueueClass::kClientLoop, "a");
  const int b = s.add_queue(QueueClass::kBrokerIo, "b");
  std::string order;
  s.post(a, [&] { order += "a1"; EXPECT_EQ(s.running(), a); });
  s.post(a, [&] { order += "a2"; });
  s.post(b, [&] { order += "b1"; });
  EXPECT_EQ(s.nonempty(), (std::vector<int>{b, a}));  // broker I/O runs first in run_all
  s.run_all(100);
  EXPECT_EQ(order, "b1a1a2");
  EXPECT_TRUE(s.idle());
  EXPECT_EQ(s.running(), -1);
}

TEST(ImplClient, ChecksumFailureSettlesResolvedP) {
  for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
    World w(config(mode));
    w.start();
    EntrySpec e = batch(100);
    e.payload.checksum_ok = false;
    w.publish({e});
    w.run_all();
    const std::vector<spec::Send> sends = all_of<spec::Send>(w);
    ASSERT_EQ(sends.size(), 1u);
    const std::uint64_t cmd = sends[0].entries[0].cmd.as_number();
    EXPECT_EQ(w.command_returned(cmd), mode == Mode::kRevD ? 100 : 1) << mode_name(mode);
  }
}

TEST(ImplClient, L4_BatchFailureAfterHandOffsSettlesTheRest) {
  // P = 10: indexes 0-3 handed off (D = 4), 4 compacted out (K = 1), parse fails at 5.
  for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
    World w(config(mode));
    w.start();
    EntrySpec e = batch(10);
    e.payload.compacted_out = {4};
    e.payload.parse_fails_at = 5;
    w.publish({e});
    w.run_all();
    const std::uint64_t cmd = all_of<spec::Send>(w)[0].entries[0].cmd.as_number();
    EXPECT_EQ(all_of<spec::Claim>(w).size(), 4u);
    // rev-d: the command settles P - D = 6 and the 4 messages return 4 (10 in all);
    // legacy: K + 1 = 2 by the command, D + K + 1 = 6 in all (L4).
    EXPECT_EQ(w.command_returned(cmd), mode == Mode::kRevD ? 6 : 2) << mode_name(mode);
  }
}

TEST(ImplClient, BeforeStartMessageIdStaysCommandOwned) {
  for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
    WorldConfig c = config(mode);
    c.options.start_message_id = MessagePosition{1, 0};
    World w(c);
    w.start();
    w.publish({batch(1)});
    w.run_all();
    const std::uint64_t cmd = all_of<spec::Send>(w)[0].entries[0].cmd.as_number();
    EXPECT_EQ(w.command_returned(cmd), mode == Mode::kRevD ? 1 : 0) << mode_name(mode);
  }
}

// B6: two entries of 10 for a consumer that is closing: admission rejects both.
TEST(ImplDispatchers, EveryDispatcherDebitsTheFinalizedSum) {
  for (spec::DispatcherKind kind : spec::all_dispatcher_kinds()) {
    for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
      WorldConfig c = config(mode);
      c.dispatcher = kind;
      World w(c);
      w.start();
      w.publish({batch(10), batch(10)});      // the dispatch task is queued first,
      w.close_consumer(0, /*graceful=*/true);  // then closing starts: admission refuses
      w.run_all();
      // Every send to the closing incarnation (non-persistent Shared sends entry by entry).
      std::int64_t consumer_debit = 0;
      std::int64_t dispatcher_debit = 0;
      int entries = 0;
      for (const spec::Send& send : all_of<spec::Send>(w)) {
        if (send.inc != spec::Id::text("b1")) continue;
        consumer_debit += send.consumer_debit;
        dispatcher_debit += send.dispatcher_debit.value_or(0);
        EXPECT_EQ(send.dispatcher_debit.has_value(), spec::has_aggregate(kind));
        for (const spec::SentEntry& entry : send.entries) {
          EXPECT_FALSE(entry.entry.admitted) << spec::dispatcher_name(kind);
          ++entries;
        }
      }
      const std::int64_t expected = mode == Mode::kRevD ? 0 : 20;
      EXPECT_EQ(entries, 2) << spec::dispatcher_name(kind);
      EXPECT_EQ(consumer_debit, expected) << spec::dispatcher_name(kind);
      EXPECT_EQ(dispatcher_debit, spec::has_aggregate(kind) ? expected : 0)
          << spec::dispatcher_name(kind);
    }
  }
}

TEST(ImplDispatchers, B9_WholeEntryOverdrawsAndFlowRecoversExactly) {
  World w(config(Mode::kRevD, /*q=*/1));
  w.start();
  w.publish({batch(10)});
  w.run_all();
  ASSERT_EQ(w.broker_consumers().size(), 1u);
  EXPECT_EQ(w.broker_consumers()[0].available, -9);  // B9: never clamped
  EXPECT_EQ(w.consume(0, 10), 10);
  w.run_all();
  EXPECT_EQ(w.broker_consumers()[0].available, 1);  // 10 returned: exact recovery
  EXPECT_EQ(w.dispatcher_aggregate(), 1);
}

// L11 / N6: the Flow queued by the old incarnation runs after the replacement subscribed.
TEST(ImplClient, N5_N6_QueuedFlowOfOldIncarnationIsDropped) {
  for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
    World w(config(mode, /*q=*/1));
    w.start();
    w.publish({batch(1)});
    w.run_all();
    w.close_consumer(0, /*graceful=*/false);  // CommandCloseConsumer is on the client's loop
    ASSERT_EQ(w.consume(0, 1), 1);           // T = 1: the Flow task is queued behind it
    w.run_all();
    const spec::MonitorReport r = check(w, spec::RulesetId::kRevD);
    if (mode == Mode::kRevD) {
      EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
      EXPECT_FALSE(all_of<spec::Drop>(w).empty());  // the old credit was dropped (N5)
    } else {
      ASSERT_FALSE(r.violations.empty());
      EXPECT_EQ(r.violations.front().rule, spec::RuleId::kN6) << dump(r.violations);
    }
  }
}

TEST(ImplWorld, RevDConservesPermitsAtQuiescence) {
  WorldConfig c = config(Mode::kRevD, /*q=*/4);
  c.consumers = 2;
  World w(c);
  w.start();
  EntrySpec partial = batch(8);
  partial.pre_acked = {1, 3, 4, 6, 7};  // P = 3
  EntrySpec corrupt = batch(5);
  corrupt.payload.parse_fails_at = 2;
  w.publish({partial, corrupt, batch(1), batch(3)});
  w.run_all();
  w.drop_connection(0);
  w.publish({batch(2)});
  ASSERT_TRUE(w.quiesce());
  const spec::MonitorReport r = check(w, spec::RulesetId::kRevD);
  EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
  EXPECT_EQ(all_of<spec::Quiescent>(w).size(), 2u);
}

// S7: a zero-queue consumer that receives a batch closes itself, not the pooled connection;
// the other consumer on that connection keeps working.
TEST(ImplClient, ZeroQueueBatchClosesTheConsumerNotTheConnection) {
  for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
    WorldConfig c{.mode = mode,
                  .dispatcher = spec::DispatcherKind::kNonPersistentShared,
                  .consumers = 2,
                  .connections = 1,
                  .q = 0};
    c.options.zero_queue = true;
    World w(c);
    w.start();
    EXPECT_EQ(w.consume(0, 1), 0);  // receive(): grants one permit, nothing there yet
    w.run_all();
    w.publish({batch(3)});
    w.run_all();
    EXPECT_FALSE(w.client_consumer(0).inc.has_value()) << "consumer 0 closed itself";
    EXPECT_TRUE(all_of<spec::ProtocolError>(w).empty());
    EXPECT_TRUE(all_of<spec::Disconnect>(w).empty());
    // Consumer 1, on the same connection, still receives a single message.
    EXPECT_EQ(w.consume(1, 1), 0);
    w.run_all();
    w.publish({batch(1)});
    w.run_all();
    EXPECT_EQ(w.consume(1, 1), 1) << mode_name(mode);
    const spec::MonitorReport r = check(w, spec::RulesetId::kRevD);
    EXPECT_THAT(r.violations, IsEmpty()) << dump(r.violations);
    const std::vector<spec::IncClose> closes = all_of<spec::IncClose>(w);
    ASSERT_EQ(closes.size(), 1u);
    EXPECT_EQ(closes[0].reason, spec::CloseReason::kClosed);
  }
}

// A Failover (single active) world of one consumer, Q = 2.
WorldConfig failover(Mode mode) {
  WorldConfig c = config(mode, /*q=*/2);
  c.dispatcher = spec::DispatcherKind::kSingleActive;
  return c;
}

// Publishes one message after whatever `w` went through: consumer 0 receives it, nothing is
// discarded as stale (M2), and once settled nothing stays pending at a broker consumer.
void expect_delivered_and_drained(World& w) {
  w.publish({batch(1)});
  w.run_all();
  EXPECT_EQ(w.consume(0, 1), 1);
  ASSERT_TRUE(w.quiesce());
  EXPECT_TRUE(all_of<spec::Extension>(w).empty()) << "discarded as stale";
  for (const World::BrokerConsumerView& b : w.broker_consumers()) EXPECT_EQ(b.pending, 0) << b.inc;
}

// A Failover consumer that redelivered (epoch 1) and is then replaced subscribes with its
// epoch, so the replacement's messages carry it and are consumed, not discarded as stale (M2).
// A broker consumer that started again at epoch 0 left every later message pending for good.
TEST(ImplClient, AReplacementSubscribesWithTheConsumersEpoch) {
  for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
    SCOPED_TRACE(mode_name(mode));
    World w(failover(mode));
    w.start();
    w.redeliver(0);
    w.run_all();
    w.close_consumer(0, /*graceful=*/false);
    w.run_all();
    expect_delivered_and_drained(w);
    EXPECT_FALSE(w.broker_backlog());
  }
}

// A redelivery asked while the replacement's Subscribe is still unanswered tells the broker
// nothing, so it must not start a new epoch either: the replacement subscribed with the old
// one, and a client epoch ahead of it would discard every later message as stale.
TEST(ImplClient, ARedeliveryWhileResubscribingKeepsTheEpoch) {
  for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
    SCOPED_TRACE(mode_name(mode));
    World w(failover(mode));
    w.start();
    w.close_consumer(0, /*graceful=*/false);
    w.step(1);  // the client learns of the close and sends the replacement's Subscribe
    w.redeliver(0);
    w.run_all();
    expect_delivered_and_drained(w);
  }
}

// A chunked message skipped as a dead letter is acknowledged in every chunk's entry, as a
// consumed one is: a redelivery past maxRedeliverCount = 0 leaves nothing pending.
TEST(ImplClient, ADeadLetteredChunkedMessageAcknowledgesEveryChunk) {
  for (Mode mode : {Mode::kRevD, Mode::kLegacy}) {
    SCOPED_TRACE(mode_name(mode));
    WorldConfig c = failover(mode);
    c.options.max_redeliver_count = 0;
    World w(c);
    w.start();
    EntrySpec first;
    first.payload.chunk_uuid = 3;
    first.payload.num_chunks = 2;
    EntrySpec last = first;
    last.payload.chunk_id = 1;
    w.publish({first, last});
    w.run_all();
    w.redeliver(0);  // both chunks come back with redelivery count 1: a dead letter
    ASSERT_TRUE(w.quiesce());
    const std::vector<spec::Skip> skips = all_of<spec::Skip>(w);
    ASSERT_EQ(skips.size(), 1u);
    EXPECT_EQ(skips[0].reason, spec::SkipReason::kDeadLetter);
    for (const World::BrokerConsumerView& b : w.broker_consumers()) EXPECT_EQ(b.pending, 0) << b.inc;
  }
}

}  // namespace
}  // namespace permitcheck::impl
