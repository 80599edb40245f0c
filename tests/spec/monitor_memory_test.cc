// Memory bounded by what is live, for incarnations too (issue 18): an incarnation ended by
// close_consumer or subscribe_fail is released, as a disconnect releases its connection's, and
// an ended permit state keeps only what a late event naming it is judged by; the verdict on
// late events after a release is the same in streaming and whole-trace mode.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "spec/monitor.h"
#include "tests/spec/monitor_testing.h"
#include "tests/testing/address_sanitizer.h"
#include "tests/testing/limited_child.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests
using ::testing::IsEmpty;


// One subscribe/close cycle of consumer `consumer` on `cnx`: subscribed, granted Q = 4, one
// message acknowledged and its unit granted back, quiescent, closed.
void cycle(Monitor& m, const std::string& cnx, std::uint64_t consumer, std::uint64_t cmd,
           std::uint64_t& line) {
  m.on_event(Subscribe{.cnx = s(cnx), .consumer = consumer}, line++);
  m.on_event(SubscribeOk{.cnx = s(cnx), .consumer = consumer}, line++);
  m.on_event(Flow{.cnx = s(cnx), .consumer = consumer, .permits = 4}, line++);
  m.on_event(Message{.cnx = s(cnx), .consumer = consumer, .cmd = n(cmd), .message_permits = 1,
                     .batch_size = 1},
             line++);
  m.on_event(Ack{.cnx = s(cnx), .consumer = consumer, .cmd = n(cmd)}, line++);
  m.on_event(Flow{.cnx = s(cnx), .consumer = consumer, .permits = 1}, line++);
  m.on_event(Quiescent{.cnx = s(cnx), .consumer = consumer}, line++);
  m.on_event(CloseConsumer{.cnx = s(cnx), .consumer = consumer}, line++);
}

// `count` subscribe/close cycles from `first` on, a new consumer id each (as clients number
// them), and a reconnect (disconnect, connect on a new connection id) every `reconnect_every`
// cycles (0: all on one connection).
void cycles(Monitor& m, std::uint64_t first, std::uint64_t count, std::uint64_t reconnect_every,
            std::uint64_t& line) {
  std::string cnx = "c" + std::to_string(first);
  m.on_event(Connect{.cnx = s(cnx)}, line++);
  for (std::uint64_t i = first; i < first + count; ++i) {
    if (reconnect_every > 0 && i > first && i % reconnect_every == 0) {
      m.on_event(Disconnect{.cnx = s(cnx)}, line++);
      cnx = "c" + std::to_string(i);
      m.on_event(Connect{.cnx = s(cnx)}, line++);
    }
    cycle(m, cnx, i, i, line);
  }
  m.on_event(Disconnect{.cnx = s(cnx)}, line++);
}

// largest() names the part holding the most bytes, wherever it is in the order.
TEST(MonitorMemory, LargestNamesThePartHoldingTheMostBytes) {
  constexpr std::string_view kNames[] = {"commands in flight", "finished commands", "messages",
                                         "incarnations", "wire consumers", "connections",
                                         "ledgers", "findings"};
  for (std::size_t big = 0; big < std::size(kNames); ++big) {
    MonitorSize size;
    for (std::size_t i = 0; i < std::size(kNames); ++i) size.part_bytes[i] = 100 + i;
    size.part_bytes[big] = 1000;
    EXPECT_EQ(size.largest(), kNames[big]) << "part " << big;
  }
  // Parts of equal size: the first in the order is named (an empty monitor names its commands).
  EXPECT_EQ(MonitorSize{}.largest(), kNames[0]);
}

TEST(MonitorMemory, ClosedWireIncarnationsAreReleased) {
  Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  m.on_event(Connect{.cnx = s("c1")}, line++);
  for (std::uint64_t i = 0; i < 10'000; ++i) cycle(m, "c1", i, i, line);
  const MonitorSize size = m.size();
  EXPECT_EQ(size.wire_consumers, 0u);
  EXPECT_EQ(size.commands, 0u);
  EXPECT_LT(size.bytes, std::size_t{64} << 10) << "largest part: " << size.largest();
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
  // A refused Subscribe leaves nothing either.
  m.on_event(Subscribe{.cnx = s("c1"), .consumer = 99'999}, line++);
  EXPECT_EQ(m.size().wire_consumers, 1u);
  m.on_event(SubscribeFail{.cnx = s("c1"), .consumer = 99'999}, line++);
  EXPECT_EQ(m.size().wire_consumers, 0u);
}

// A connection that ends with its consumers still subscribed leaves nothing of them: 10,000
// connections, each with one consumer (a new id each) subscribed and granted, then lost.
TEST(MonitorMemory, ConsumersOfALostConnectionAreReleased) {
  Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  for (std::uint64_t i = 0; i < 10'000; ++i) {
    const std::string cnx = "c" + std::to_string(i);
    m.on_event(Connect{.cnx = s(cnx)}, line++);
    m.on_event(Subscribe{.cnx = s(cnx), .consumer = i}, line++);
    m.on_event(SubscribeOk{.cnx = s(cnx), .consumer = i}, line++);
    m.on_event(Flow{.cnx = s(cnx), .consumer = i, .permits = 4}, line++);
    m.on_event(Disconnect{.cnx = s(cnx)}, line++);
  }
  const MonitorSize size = m.size();
  EXPECT_EQ(size.wire_consumers, 0u);
  EXPECT_EQ(size.connections, 0u);
  EXPECT_LT(size.bytes, std::size_t{64} << 10) << "largest part: " << size.largest();
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
}

// Messages to a consumer never subscribed on their connection belong to no wire incarnation:
// they leave with the connection (or their Ack), not never.
TEST(MonitorMemory, MessagesToAnUnsubscribedConsumerLeaveWithTheirConnection) {
  Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::string cnx = "c" + std::to_string(i);
    m.on_event(Connect{.cnx = s(cnx)}, line++);
    m.on_event(Message{.cnx = s(cnx), .consumer = 0, .cmd = n(2 * i), .message_permits = 1,
                       .batch_size = 1},
               line++);
    m.on_event(Message{.cnx = s(cnx), .consumer = 0, .cmd = n(2 * i + 1), .message_permits = 1,
                       .batch_size = 1},
               line++);
    m.on_event(Ack{.cnx = s(cnx), .consumer = 0, .cmd = n(2 * i)}, line++);
    EXPECT_EQ(m.size().commands, 1u) << "connection " << i;
    m.on_event(Disconnect{.cnx = s(cnx)}, line++);
    EXPECT_EQ(m.size().commands, 0u) << "connection " << i;
    if (testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(m.size().connections, 0u);
  EXPECT_LT(m.size().bytes, std::size_t{64} << 10) << "largest part: " << m.size().largest();
}

// On a connection that lives on, an acknowledged message to an unsubscribed consumer leaves at
// once: 10,000 of them cost what one does.
TEST(MonitorMemory, AcknowledgedMessagesToAnUnsubscribedConsumerAreReleased) {
  Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  m.on_event(Connect{.cnx = s("c1")}, line++);
  for (std::uint64_t i = 0; i < 10'000; ++i) {
    m.on_event(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(i), .message_permits = 1,
                       .batch_size = 1},
               line++);
    m.on_event(Ack{.cnx = s("c1"), .consumer = 0, .cmd = n(i)}, line++);
  }
  const MonitorSize size = m.size();
  EXPECT_EQ(size.commands, 0u);
  EXPECT_LT(size.bytes, std::size_t{64} << 10) << "largest part: " << size.largest();
}

// Once every command sent to no subscribed consumer is acknowledged, the connection holds
// nothing for them (the messages carry no message_permits, so nothing else is kept of it).
TEST(MonitorMemory, AConnectionWhoseUnattachedCommandsAreAcknowledgedHoldsNothingOfThem) {
  Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  m.on_event(Connect{.cnx = s("c1")}, line++);
  m.on_event(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(1), .batch_size = 1}, line++);
  EXPECT_EQ(m.size().connections, 1u);
  m.on_event(Ack{.cnx = s("c1"), .consumer = 0, .cmd = n(1)}, line++);
  EXPECT_EQ(m.size().commands, 0u);
  EXPECT_EQ(m.size().connections, 0u);
}

// What the connection keeps of its unattached commands is counted in its part of size():
// 10,000 unacknowledged messages to an unsubscribed consumer cost at least an Id each there.
TEST(MonitorMemory, SizeCountsTheConnectionsCommandsSentToNoSubscribedConsumer) {
  Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  m.on_event(Connect{.cnx = s("c1")}, line++);
  constexpr std::size_t kSent = 10'000;
  for (std::uint64_t i = 0; i < kSent; ++i) {
    m.on_event(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(i), .message_permits = 1,
                       .batch_size = 1},
               line++);
  }
  const MonitorSize size = m.size();
  EXPECT_EQ(size.commands, kSent);
  EXPECT_GE(size.part_bytes[5], kSent * sizeof(Id)) << "connections part";
}

// A Subscribe of a consumer already subscribed on the connection ends the previous wire
// incarnation: the wire-only commands still in flight on it are released with it.
TEST(MonitorMemory, WireCommandsInFlightAtAResubscribeAreReleased) {
  Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  m.on_event(Connect{.cnx = s("c1")}, line++);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    m.on_event(Subscribe{.cnx = s("c1"), .consumer = 0}, line++);
    m.on_event(SubscribeOk{.cnx = s("c1"), .consumer = 0}, line++);
    m.on_event(Flow{.cnx = s("c1"), .consumer = 0, .permits = 4}, line++);
    m.on_event(Message{.cnx = s("c1"), .consumer = 0, .cmd = n(i), .message_permits = 1,
                       .batch_size = 1},
               line++);
    EXPECT_EQ(m.size().commands, 1u) << "cycle " << i;
    if (testing::Test::HasFailure()) break;
  }
  m.on_event(Subscribe{.cnx = s("c1"), .consumer = 0}, line++);
  EXPECT_EQ(m.size().commands, 0u);
}

// A command the client received and settled leaves the in-flight set of the wire incarnation
// it came on: a consumer that lives for the whole trace does not keep an id per command.
TEST(MonitorMemory, SettledCommandsLeaveTheirLongLivedWireIncarnationsInFlightSet) {
  Monitor m(model(4, 1), MonitorOptions{.retain_ledger = false});
  Trace start;
  start.wire_subscribed(std::nullopt).subscribed(1, 4);
  std::uint64_t line = 2;
  for (const Event& e : start.events()) m.on_event(e, line++);
  constexpr std::uint64_t kCommands = 5000;
  for (std::uint64_t i = 0; i < kCommands; ++i) {
    m.on_event(message(i, 1, {}, 1), line++);
    m.on_event(recv(i, 1), line++);
    m.on_event(Metadata{.cmd = n(i), .batch_size = 1}, line++);
    m.on_event(settle(i, 1), line++);
    m.on_event(flow(1, 1), line++);
  }
  m.finish();
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
  const MonitorSize size = m.size();
  EXPECT_EQ(size.commands, 0u);
  EXPECT_LT(size.part_bytes[0], 64 * sizeof(Id)) << "commands in flight";
}

// ... while a command still in flight is counted there: the same commands received, once
// arriving on a wire incarnation (which lists each until it is settled) and once with no wire
// events, differ in part 0 by at least that list.
TEST(MonitorMemory, CommandsInFlightOnAWireIncarnationCountItsInFlightSet) {
  constexpr std::uint64_t kCommands = 1000;
  const auto received = [&](bool on_the_wire) {
    Monitor m(model(2 * kCommands, 1), MonitorOptions{.retain_ledger = false});
    Trace start;
    if (on_the_wire) start.wire_subscribed(std::nullopt);
    start.subscribed(1, 2 * kCommands);
    std::uint64_t line = 2;
    for (const Event& e : start.events()) m.on_event(e, line++);
    for (std::uint64_t i = 0; i < kCommands; ++i) {
      if (on_the_wire) m.on_event(message(i, 1, {}, 1), line++);
      m.on_event(recv(i, 1), line++);
    }
    EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
    return m.size();
  };
  const MonitorSize wire = received(true);
  const MonitorSize client_only = received(false);
  EXPECT_EQ(wire.commands, kCommands);
  EXPECT_EQ(client_only.commands, kCommands);
  EXPECT_GE(wire.part_bytes[0], client_only.part_bytes[0] + kCommands * sizeof(Id));
}

TEST(MonitorMemory, EndedPermitStatesLeaveTheirConnectionsList) {
  Monitor m(client(4, 2), MonitorOptions{.retain_ledger = false});
  std::uint64_t line = 2;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    m.on_event(IncOpen{.inc = n(i), .cnx = s("c1"), .consumer = 0}, line++);
    m.on_event(IncFlowEnabled{.inc = n(i)}, line++);
    m.on_event(Flow{.cnx = s("c1"), .consumer = 0, .permits = 4, .inc = n(i)}, line++);
    m.on_event(IncClose{.inc = n(i)}, line++);
  }
  // Only the ended states' compact part stays: no live connection list holds them.
  EXPECT_EQ(m.size().connections, 0u);
  EXPECT_EQ(m.size().incarnations, 1000u);
  EXPECT_THAT(m.violations(), IsEmpty()) << dump(m.violations());
}

// 1 million subscribe/close cycles on one connection (a new consumer id each), then 100,000
// more with a reconnect every 10, each with a message acknowledged, in a child whose heap is
// limited to 64 MiB (RLIMIT_DATA). Before closed incarnations were released, the first part
// alone peaked at 519 MiB.
TEST(MonitorMemory, MillionSubscribeCloseCyclesFitIn64MiB) {
#if PERMITCHECK_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves far more than 64 MiB of address space and keeps "
                  "freed memory in quarantine: the limit is checked in the plain build";
#endif
  const int code = child_testing::run_under_heap_limit(64, [] {
    Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
    std::uint64_t line = 2;
    cycles(m, 0, 1'000'000, 0, line);
    if (m.size().wire_consumers != 0) return 5;
    cycles(m, 1'000'000, 100'000, 10, line);
    m.finish();
    if (m.size().wire_consumers != 0 || m.size().connections != 0) return 5;
    return m.violations().empty() ? 0 : 1;
  });
  EXPECT_EQ(code, 0) << child_testing::explain_exit("1 violations, 5 incarnations kept");
}

// A client trace like the validate bench's (commands of B = 4: recv, metadata, 4 claims,
// settle, 4 message returns, a Flow of what came back whenever T is reached), `events` events
// whose commands all finish, in a child whose heap is limited to `limit_mib` (RLIMIT_DATA).
// Exit 0: clean and fitted; 1: violations; 5: finished records costing more than
// `max_bytes_per_command` per finished command (child_testing's codes besides).
int finished_client_commands_in_child(std::uint64_t events, std::size_t limit_mib,
                                      std::size_t max_bytes_per_command) {
  return child_testing::run_under_heap_limit(limit_mib, [=] {
    Monitor m(client(1000, 500), MonitorOptions{.retain_ledger = false});
    std::uint64_t line = 2;
    m.on_event(IncOpen{.inc = n(1), .cnx = s("c1"), .consumer = 0}, line++);
    m.on_event(IncFlowEnabled{.inc = n(1)}, line++);
    m.on_event(flow(1000, 1), line++);
    std::int64_t returned = 0;
    std::uint64_t cmd = 1;
    for (; line < events; ++cmd) {
      m.on_event(recv(cmd, 4), line++);
      m.on_event(Metadata{.cmd = n(cmd), .batch_size = 4}, line++);
      for (std::uint64_t i = 0; i < 4; ++i) {
        m.on_event(Claim{.cmd = n(cmd), .msg = n(cmd * 8 + i), .index = i}, line++);
      }
      m.on_event(settle(cmd, 0), line++);
      for (std::uint64_t i = 0; i < 4; ++i) m.on_event(MsgReturn{.msg = n(cmd * 8 + i)}, line++);
      if ((returned += 4) >= 500) {
        m.on_event(flow(returned, 1), line++);
        returned = 0;
      }
    }
    m.finish();
    const MonitorSize size = m.size();
    if (size.commands != 0 || size.finished_commands != cmd - 1) return 5;
    if (size.part_bytes[1] + size.part_bytes[2] > max_bytes_per_command * (cmd - 1)) return 5;
    return m.violations().empty() ? 0 : 1;
  });
}

// 3 million events (250,000 commands, a million messages), all finished, under a 24 MiB heap:
// what the monitor keeps of a finished command and its messages is a few runs (spec/internal/
// id_runs.h), at most 48 bytes per command here (its 4 messages' run). Before, the records
// took about 130 bytes per event: 399 MiB for the same trace in `permitcheck validate`.
TEST(MonitorMemory, ThreeMillionEventClientTraceOfFinishedCommandsFitsIn24MiB) {
#if PERMITCHECK_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves far more address space than the limit: the limit "
                  "is checked in the plain build";
#endif
  EXPECT_EQ(finished_client_commands_in_child(3'000'000, 24, 48), 0)
      << child_testing::explain_exit("1 violations, 5 records larger than expected");
}

// A finished command named again is still judged as whole-trace mode judges it, however many
// finished before it (the compact records lose nothing a check reads).
TEST(MonitorMemory, K1_M3_E2_ReusedIdsAfterManyFinishedCommandsAreReportedInBothModes) {
  Trace t;
  t.subscribed(1, 1000);
  for (std::uint64_t cmd = 1; cmd <= 2000; ++cmd) {
    t.add(recv(cmd, 1)).add(Claim{.cmd = n(cmd), .msg = n(cmd)}).add(settle(cmd, 0));
    t.add(MsgReturn{.msg = n(cmd)});
  }
  t.add(recv(700, 1));
  EXPECT_TRUE(FirstViolation(both(client(1000, 500), t), RuleId::kK1,
                             {"command 700 received twice"}));
  Trace again;
  again.subscribed(1, 1000);
  for (std::uint64_t cmd = 1; cmd <= 2000; ++cmd) {
    again.add(recv(cmd, 1)).add(Claim{.cmd = n(cmd), .msg = n(cmd)}).add(settle(cmd, 0));
    again.add(MsgReturn{.msg = n(cmd)});
  }
  again.add(MsgReturn{.msg = n(1234)});
  const MonitorReport r = both(client(1000, 500), again);
  EXPECT_TRUE(Reports(r.violations, RuleId::kM3, {"message 1234 returned 1 again"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2,
                      {"command 1234 returned 2 permits but its P is 1"}));
}

// Finished commands of different shapes keep their own records: a late return on the second
// is judged by its own P of 3, not by the first command's P of 1.
TEST(MonitorMemory, K6_E2_LateReturnIsJudgedByItsOwnCommandAfterCommandsOfOtherShapesFinished) {
  Trace t;
  t.subscribed(1, 1000);
  t.add(recv(1, 1)).add(Claim{.cmd = n(1), .msg = n(1)}).add(settle(1, 0));
  t.add(MsgReturn{.msg = n(1)});
  t.add(recv(2, 3)).add(settle(2, 3));
  // Command 3 finishes as command 2 did: it shares the latest record, not the first.
  t.add(recv(3, 3)).add(settle(3, 3));
  t.add(DirectReturn{.cmd = n(2), .n = 1});
  t.add(DirectReturn{.cmd = n(3), .n = 1});
  const MonitorReport r = both(client(1000, 500), t);
  EXPECT_TRUE(Reports(r.violations, RuleId::kK6, {"command 2 returns 1 permit directly"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"command 2 returned 4 permits but its P is 3"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"command 3 returned 4 permits but its P is 3"}));
}

// A finished command named again comes back as it finished: what it handed off, returned
// directly and dropped (its ledger, and the over-return judged from them), and its transfer
// path (whose returns are the path's to judge).
TEST(MonitorMemory, E2_AFinishedCommandNamedAgainComesBackAsItFinished) {
  for (bool retain : {true, false}) {
    SCOPED_TRACE(retain ? "whole-trace" : "streaming");
    Trace t;
    t.subscribed(1, 1000)
        .add(recv(1, 3))
        .add(Metadata{.cmd = n(1), .batch_size = 3})
        .add(claim(1, "m0", 0))
        .add(DirectReturn{.cmd = n(1), .n = 1})
        .add(settle(1, 1))
        .add(msg_return("m0"))            // command 1 finished: 3 of P = 3 returned
        .add(recv(2, 2))
        .add(Transfer{.cmd = n(2), .path = TransferPath::kProcessor})
        .add(settle(2, 0))                // command 2 finished on the processor path
        .add(recv(3, 1))
        .add(Metadata{.cmd = n(3), .batch_size = 1})
        .add(claim(3, "m3"))
        .add(settle(3, 0))
        .add(DirectReturn{.cmd = n(1), .n = 1})
        .add(DirectReturn{.cmd = n(2), .n = 1})
        .add(IncClose{.inc = n(1), .reason = CloseReason::kClosed})
        .add(Drop{.msg = s("m3"), .n = 1})  // command 3 finished: its unit dropped
        .add(DirectReturn{.cmd = n(3), .n = 0});
    Monitor m(client(1000, 500), MonitorOptions{.retain_ledger = retain});
    for (std::size_t i = 0; i < t.events().size(); ++i) m.on_event(t.events()[i], i + 2);
    m.finish();
    const std::optional<CommandLedger> one = m.ledger(n(1));
    ASSERT_TRUE(one.has_value());
    EXPECT_EQ(one->claimed, 1);
    EXPECT_EQ(one->returned, 4);
    EXPECT_TRUE(Reports(m.violations(), RuleId::kE2,
                        {"command 1 returned 4 permits but its P is 3"}));
    const std::optional<CommandLedger> three = m.ledger(n(3));
    ASSERT_TRUE(three.has_value());
    EXPECT_EQ(three->dropped, 1);
    for (const Finding& f : m.violations()) {
      EXPECT_EQ(f.explanation.find("command 2"), std::string::npos) << format_finding(f);
    }
  }
}

// ---- Ended client permit states, compacted in streaming mode ----

// One permit-state cycle, as validate's 1M-cycle trace has it: state `inc` opened for
// `consumer` on c1, Flow-enabled, granted Q = 4, command `cmd` of P = 1 received, its message
// (id `cmd`) handed off and returned, that unit granted back (unless `keep_unit`: then it stays
// in the accumulator), the state closed.
void permit_state_cycle(Trace& t, std::uint64_t inc, std::uint64_t consumer, std::uint64_t cmd,
                        bool keep_unit = false) {
  t.subscribed(inc, 4, "c1", consumer)
      .add(recv(cmd, 1, {}, inc))
      .add(Claim{.cmd = n(cmd), .msg = n(cmd)})
      .add(settle(cmd, 0))
      .add(MsgReturn{.msg = n(cmd)});
  if (!keep_unit) t.add(Flow{.cnx = s("c1"), .consumer = consumer, .permits = 1, .inc = n(inc)});
  t.add(IncClose{.inc = n(inc)});
}

// Bytes of the monitor's estimate for finished commands, messages and permit states.
std::size_t kept_bytes(const MonitorSize& size) {
  return size.part_bytes[1] + size.part_bytes[2] + size.part_bytes[3];
}

// States numbered in order, a new consumer id each, ending alike: their compact parts (the
// consumer id in a rising run, the rest one shared shape; the command's state in a rising
// run) cost almost nothing per cycle. Kept whole they cost about 700 bytes a cycle.
TEST(MonitorMemory, EndedPermitStatesEndingAlikeCostAlmostNothingPerCycle) {
  Trace t;
  for (std::uint64_t i = 1; i <= 100'000; ++i) permit_state_cycle(t, i, i, i);
  const MonitorSize size = streamed_size(client(4, 1), t);
  EXPECT_EQ(size.incarnations, 100'000u);
  EXPECT_EQ(size.finished_commands, 100'000u);
  EXPECT_LT(kept_bytes(size), std::size_t{4} << 10);
}

// States numbered out of step with their commands, and ending two ways (a unit left in the
// accumulator every other cycle, so the consumer remembers its last state for N2): each
// ended state and its command's state alone in their runs, about 160 bytes a cycle.
TEST(MonitorMemory, EndedPermitStatesAloneInTheirRunsCostTheirRunsAndTheirConsumersEntry) {
  Trace t;
  constexpr std::uint64_t kCycles = 20'000;
  for (std::uint64_t i = 1; i <= kCycles; ++i) permit_state_cycle(t, 2 * i, i, i, i % 2 == 0);
  const MonitorSize size = streamed_size(client(4, 1), t);
  EXPECT_EQ(size.incarnations, kCycles);
  EXPECT_LT(kept_bytes(size), 220 * kCycles);
  EXPECT_GT(kept_bytes(size), 60 * kCycles);  // the runs are really there, one per state
}

// One consumer's states, each ending with a unit in its accumulator (so the consumer keeps
// its latest state for N2) and replaced by the next: the replacement's IncOpen revives the
// compacted predecessor to read that unit, and the predecessor is compacted again after the
// event. The ended states cost their runs only; left whole they would cost about 300 bytes each.
TEST(MonitorMemory, EndedPermitStateRevivedForItsReplacementIsCompactedAgain) {
  Trace t;
  constexpr std::uint64_t kCycles = 10'000;
  for (std::uint64_t i = 1; i <= kCycles; ++i) permit_state_cycle(t, i, 0, i, true);
  const MonitorSize size = streamed_size(client(4, 1), t);
  EXPECT_EQ(size.incarnations, kCycles);
  EXPECT_LT(size.part_bytes[3], std::size_t{4} << 10);
}

// Permit state 1 ends with a unit in its accumulator after its command finished; 1000 more
// states come and go, so that state 1 is compacted; then its replacement opens and message m0
// is returned again: the second return (M3) crosses into the replacement (E3) and takes the
// command past P (E2), on the same line and with the same text as in whole-trace mode.
Trace late_return_after_compaction() {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(claim(1, "m0")).add(settle(1, 0)).add(msg_return("m0"));
  t.add(IncClose{.inc = n(1)});
  for (std::uint64_t i = 10; i < 1010; ++i) permit_state_cycle(t, i, i, i);
  return t;
}

TEST(MonitorMemory, M3_E3_E2_LateReturnToAReplacedCompactedPermitStateIsReportedAsInWholeTraceMode) {
  Trace t = late_return_after_compaction();
  // In streaming mode state 1 is compacted by now: 1001 ended states in a few runs.
  const MonitorSize size = streamed_size(client(4, 1), t);
  EXPECT_EQ(size.incarnations, 1001u);
  EXPECT_LT(size.part_bytes[3], std::size_t{4} << 10);
  t.subscribed(2, 4).add(msg_return("m0"));
  const std::uint64_t late_line = t.events().size() + 1;
  const MonitorReport r = both(client(4, 1), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kM3, {"message m0 returned 1 again"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE3,
                      {"second return of message m0 of command 1 credits 1 permit debited "
                       "to incarnation 1 after it ended; incarnation 2 is current"}));
  EXPECT_TRUE(Reports(r.violations, RuleId::kE2, {"command 1 returned 2 permits but its P is 1"}));
  ASSERT_THAT(r.violations, SizeIs(3)) << dump(r);
  for (const Finding& f : r.violations) EXPECT_EQ(f.line, late_line) << format_finding(f);
}

// The replacement of a compacted state reads what the old one still held (N2: 1 unit), so an
// initial grant above Q is N2 there, as in whole-trace mode.
TEST(MonitorMemory, N2_ReplacementOfACompactedPermitStateStillSeesItsAccumulator) {
  Trace t = late_return_after_compaction();
  t.subscribed(2, 5);
  const MonitorReport r = both(client(4, 1), t);
  EXPECT_TRUE(FirstViolation(r, RuleId::kN2, {"initial Flow of incarnation 2 is 5"}));
  EXPECT_EQ(r.violations.front().line, t.events().size() + 1);
}

// Long traces of permit-state cycles (so ended states are compacted, revived by a late event
// and compacted again), numbered mostly in order, consumers new or reused, on two connections,
// with events naming earlier states, commands and messages in between (late and second
// returns, Flows and enables for ended states, states opened again, commands received on an
// ended state): streaming and whole-trace mode report the same, under rulesets that drop,
// forward or connection-scope late credit.
RC_GTEST_PROP(MonitorMemory, LongPermitStateCyclesJudgeTheSameInBothModes, ()) {
  const TraceHeader h =
      *rc::gen::element(client(4, 2), client(4, 2, RulesetId::kLegacy),
                        client(4, 2, RulesetId::kRevA), client(std::nullopt, 2, RulesetId::kRevB));
  Trace t;
  const std::uint64_t cycles = *rc::gen::inRange<std::uint64_t>(1, 200);
  std::uint64_t inc = 0;
  std::uint64_t cmd = 0;
  std::vector<std::uint64_t> outstanding;  // messages handed off, not yet returned
  const auto earlier = [](std::uint64_t last) {
    return last == 0 ? 0 : *rc::gen::inRange<std::uint64_t>(0, last + 1);
  };
  for (std::uint64_t i = 0; i < cycles; ++i) {
    inc += *rc::gen::element<std::uint64_t>(1, 1, 1, 2);
    const std::uint64_t consumer =
        *rc::gen::arbitrary<bool>() ? inc : *rc::gen::inRange<std::uint64_t>(0, 2);
    const std::string cnx = *rc::gen::element<std::string>("c1", "c1", "c2");
    // An initial grant off Q is judged against what the consumer's previous state held (N2).
    t.subscribed(inc, *rc::gen::element<std::int64_t>(4, 4, 4, 5, 3), cnx, consumer);
    const int commands = *rc::gen::inRange(0, 3);
    for (int k = 0; k < commands; ++k) {
      ++cmd;
      const std::int64_t p = *rc::gen::inRange<std::int64_t>(1, 3);
      t.add(recv(cmd, static_cast<std::uint64_t>(p), {}, inc));
      const std::int64_t handed = *rc::gen::inRange<std::int64_t>(0, p + 1);
      for (std::int64_t j = 0; j < handed; ++j) {
        t.add(Claim{.cmd = n(cmd), .msg = n(cmd * 4 + j)});
      }
      t.add(settle(cmd, p - handed));
      for (std::int64_t j = 0; j < handed; ++j) {
        if (*rc::gen::inRange(0, 4) == 0) {
          outstanding.push_back(cmd * 4 + j);  // returned late, or never
        } else {
          t.add(MsgReturn{.msg = n(cmd * 4 + j)});
        }
      }
    }
    if (*rc::gen::arbitrary<bool>()) {
      t.add(Flow{.cnx = s(cnx), .consumer = consumer,
                 .permits = *rc::gen::inRange<std::int64_t>(0, 3), .inc = n(inc)});
    }
    switch (*rc::gen::inRange(0, 6)) {
      case 0: break;  // replaced by the next state of its consumer, if any
      case 1: t.add(Disconnect{.cnx = s(cnx)}); break;
      case 2:
        t.add(Quiescent{.cnx = s(cnx), .consumer = consumer}).add(IncClose{.inc = n(inc)});
        break;
      default: t.add(IncClose{.inc = n(inc)}); break;
    }
    if (*rc::gen::inRange(0, 3) != 0) continue;
    switch (*rc::gen::inRange(0, 8)) {  // an event about something earlier
      case 0:
        if (!outstanding.empty()) {
          const std::size_t at = *rc::gen::inRange<std::size_t>(0, outstanding.size());
          t.add(MsgReturn{.msg = n(outstanding[at])});
          outstanding.erase(outstanding.begin() + static_cast<std::ptrdiff_t>(at));
        }
        break;
      case 1: t.add(MsgReturn{.msg = n(earlier(cmd) * 4)}); break;  // maybe a second return
      case 2: t.add(DirectReturn{.cmd = n(earlier(cmd)), .n = 1}); break;
      case 3:
        t.add(Flow{.cnx = s("c1"), .consumer = *rc::gen::inRange<std::uint64_t>(0, inc + 1),
                   .permits = *rc::gen::inRange<std::int64_t>(0, 5), .inc = n(earlier(inc))});
        break;
      case 4: t.add(IncFlowEnabled{.inc = n(earlier(inc))}); break;
      case 5: t.add(IncOpen{.inc = n(earlier(inc)), .cnx = s("c2"), .consumer = 0}); break;
      case 6:
        ++cmd;
        t.add(recv(cmd, 1, {}, earlier(inc))).add(settle(cmd, 1));
        break;
      default: t.add(settle(earlier(cmd), 1)); break;
    }
  }
  for (std::uint64_t msg : outstanding) {
    if (*rc::gen::arbitrary<bool>()) t.add(MsgReturn{.msg = n(msg)});
  }
  const MonitorReport whole = run(h, t.events(), true);
  const MonitorReport streaming = run(h, t.events(), false);
  RC_ASSERT(SameVerdict(whole, streaming));
}

// ---- Late events naming a released incarnation: the same verdict in both modes ----

// A Flow for a closed and released consumer before its replacement's Subscribe is no violation
// (rulebook 12.12); after the replacement's Subscribe it is N6, in both modes.
TEST(MonitorMemory, N6_FlowForAClosedAndReleasedConsumerIsJudgedAlikeInBothModes) {
  Trace t;
  t.wire_subscribed(4);
  for (std::uint64_t c = 1; c <= 3; ++c) {
    t.add(Subscribe{.cnx = s("c1"), .consumer = c})
        .add(SubscribeOk{.cnx = s("c1"), .consumer = c})
        .add(CloseConsumer{.cnx = s("c1"), .consumer = c});
  }
  t.add(Flow{.cnx = s("c1"), .consumer = 2, .permits = 1});
  EXPECT_TRUE(Clean(both(wire(), t)));
  t.add(Subscribe{.cnx = s("c1"), .consumer = 2})
      .add(Flow{.cnx = s("c1"), .consumer = 2, .permits = 1});
  EXPECT_TRUE(FirstViolation(both(wire(), t), RuleId::kN6,
                             {"Flow of 1 for consumer 2 on connection c1",
                              "replacing the closed one"}));
}

TEST(MonitorMemory, N6_FlowOfACurrentPermitStateForAClosedConsumerIsJudgedAlikeInBothModes) {
  for (bool replaced : {false, true}) {
    Trace t;
    t.wire_subscribed(std::nullopt)
        .subscribed(1, 4)
        .add(recv(1, 1))
        .add(claim(1, "m0"))
        .add(settle(1, 0))
        .add(msg_return("m0"))  // its accumulator holds 1
        .add(CloseConsumer{.cnx = s("c1"), .consumer = 0});
    if (replaced) t.add(Subscribe{.cnx = s("c1"), .consumer = 0});
    t.add(flow(1, 1));
    if (replaced) {
      EXPECT_TRUE(FirstViolation(both(client(), t), RuleId::kN6, {"Flow of 1 for consumer 0"}));
    } else {
      EXPECT_TRUE(Clean(both(client(), t)));
    }
  }
}

// A message handed off on permit state 1, returned after 1 ended and 2 replaced it.
Trace late_return(bool replaced) {
  Trace t;
  t.subscribed(1, 4).add(recv(1, 1)).add(claim(1, "m0")).add(settle(1, 0));
  t.add(IncClose{.inc = n(1)});
  if (replaced) t.subscribed(2, 4);
  for (std::uint64_t i = 10; i < 20; ++i) {  // more permit states come and go
    t.add(IncOpen{.inc = n(i), .cnx = s("c2"), .consumer = i})
        .add(IncFlowEnabled{.inc = n(i)})
        .add(IncClose{.inc = n(i)});
  }
  return t.add(msg_return("m0"));
}

TEST(MonitorMemory, E3_LateReturnToAnEndedPermitStateCrossesIntoItsReplacementInBothModes) {
  EXPECT_TRUE(FirstViolation(both(client(), late_return(true)), RuleId::kE3,
                             {"return of message m0 of command 1", "after it ended",
                              "incarnation 2 is current"}));
}

TEST(MonitorMemory, N3_LateReturnToAnEndedPermitStateIsReportedInBothModes) {
  EXPECT_TRUE(FirstViolation(both(client(), late_return(false)), RuleId::kN3,
                             {"return of message m0 of command 1", "which has ended"}));
}

TEST(MonitorMemory, N5_N6_FlowForAnEndedPermitStateIsReportedInBothModes) {
  Trace ended;
  ended.subscribed(1, 4).add(IncClose{.inc = n(1)}).add(flow(1, 1));
  EXPECT_TRUE(FirstViolation(both(client(), ended), RuleId::kN5, {"written after it ended"}));
  Trace replaced;
  replaced.subscribed(1, 4).add(IncClose{.inc = n(1)}).subscribed(2, 4).add(flow(1, 1));
  EXPECT_TRUE(FirstViolation(both(client(), replaced), RuleId::kN6,
                             {"Subscribe of its replacement 2"}));
}

// Random traces of subscribe/close/refuse/disconnect cycles on the wire and permit states
// opened and closed, with Flows, messages and returns that may come late (after their
// incarnation ended and was released): streaming and whole-trace mode report the same.
RC_GTEST_PROP(MonitorMemory, ReleasedIncarnationsJudgeTheSameInBothModes, ()) {
  const auto consumer = [] { return *rc::gen::inRange<std::uint64_t>(0, 3); };
  const auto cnx = [] { return s(*rc::gen::element<std::string>("c1", "c2")); };
  const auto inc = [] { return n(*rc::gen::inRange<std::uint64_t>(0, 4)); };
  const auto cmd = [] { return n(*rc::gen::inRange<std::uint64_t>(0, 4)); };
  const auto msg = [] { return s("m" + std::to_string(*rc::gen::inRange(0, 4))); };
  const TraceHeader h = *rc::gen::element(client(4, 2), wire(4, 2), client(4, 2, RulesetId::kLegacy),
                                          client(std::nullopt, 2, RulesetId::kRevB));
  Trace t;
  const int steps = *rc::gen::inRange(0, 40);
  for (int i = 0; i < steps; ++i) {
    switch (*rc::gen::inRange(0, 14)) {
      case 0: t.add(Connect{.cnx = cnx()}); break;
      case 1: t.add(Subscribe{.cnx = cnx(), .consumer = consumer()}); break;
      case 2: t.add(SubscribeOk{.cnx = cnx(), .consumer = consumer()}); break;
      case 3: t.add(SubscribeFail{.cnx = cnx(), .consumer = consumer()}); break;
      case 4: t.add(CloseConsumer{.cnx = cnx(), .consumer = consumer()}); break;
      case 5: t.add(Disconnect{.cnx = cnx()}); break;
      case 6:
        t.add(Flow{.cnx = cnx(), .consumer = consumer(),
                   .permits = *rc::gen::inRange<std::int64_t>(0, 5),
                   .inc = *rc::gen::arbitrary<bool>() ? std::optional<Id>(inc()) : std::nullopt});
        break;
      case 7: {
        const Id c = cmd();
        const Id k = cnx();
        const std::uint64_t who = consumer();
        t.add(Message{.cnx = k, .consumer = who, .cmd = c, .message_permits = 1, .batch_size = 1});
        if (*rc::gen::arbitrary<bool>()) t.add(Ack{.cnx = k, .consumer = who, .cmd = c});
        break;
      }
      case 8:
        t.add(IncOpen{.inc = inc(), .cnx = cnx(), .consumer = consumer()});
        break;
      case 9: t.add(IncFlowEnabled{.inc = inc()}); break;
      case 10: t.add(IncClose{.inc = inc()}); break;
      case 11:
        t.add(Recv{.inc = inc(), .cmd = cmd(), .message_permits = 1});
        break;
      case 12: {
        const Id c = cmd();
        const Id m = msg();
        t.add(Claim{.cmd = c, .msg = m});
        t.add(Settle{.cmd = c, .n = 0});
        break;
      }
      default:
        t.add(*rc::gen::arbitrary<bool>() ? Event(MsgReturn{.msg = msg(), .n = 1})
                                          : Event(Quiescent{.cnx = cnx(), .consumer = consumer()}));
        break;
    }
  }
  const MonitorReport whole = run(h, t.events(), true);
  const MonitorReport streaming = run(h, t.events(), false);
  RC_ASSERT(SameVerdict(whole, streaming));
}

// Random wire traces on two connections (subscribes, their answers, closes, Flows, messages and
// their acks, quiescence, reconnects), in either mode: once both connections are lost, the
// monitor holds nothing of them: no wire consumer, no connection, no command in flight.
RC_GTEST_PROP(MonitorMemory, NothingOfALostConnectionStays, ()) {
  const auto consumer = [] { return *rc::gen::inRange<std::uint64_t>(0, 3); };
  const auto cnx = [] { return s(*rc::gen::element<std::string>("c1", "c2")); };
  const TraceHeader h = *rc::gen::element(wire(4, 2), model(4, 2), wire(std::nullopt, 2));
  const bool retain = *rc::gen::arbitrary<bool>();
  Monitor m(h, MonitorOptions{.retain_ledger = retain});
  std::uint64_t line = 2;
  m.on_event(Connect{.cnx = s("c1")}, line++);
  m.on_event(Connect{.cnx = s("c2")}, line++);
  std::uint64_t next_cmd = 0;
  const int steps = *rc::gen::inRange(0, 60);
  for (int i = 0; i < steps; ++i) {
    switch (*rc::gen::inRange(0, 10)) {
      case 0: m.on_event(Subscribe{.cnx = cnx(), .consumer = consumer()}, line++); break;
      case 1:
      case 2: m.on_event(SubscribeOk{.cnx = cnx(), .consumer = consumer()}, line++); break;
      case 3: m.on_event(SubscribeFail{.cnx = cnx(), .consumer = consumer()}, line++); break;
      case 4: m.on_event(CloseConsumer{.cnx = cnx(), .consumer = consumer()}, line++); break;
      case 5:
        m.on_event(Flow{.cnx = cnx(), .consumer = consumer(),
                        .permits = *rc::gen::inRange<std::int64_t>(0, 5)},
                   line++);
        break;
      case 6:
      case 7: {
        const Id k = cnx();
        const std::uint64_t who = consumer();
        const Id c = n(*rc::gen::arbitrary<bool>() ? next_cmd++ : next_cmd);
        m.on_event(Message{.cnx = k, .consumer = who, .cmd = c,
                           .message_permits = *rc::gen::inRange<std::uint64_t>(1, 3),
                           .batch_size = 2},
                   line++);
        if (*rc::gen::arbitrary<bool>()) m.on_event(Ack{.cnx = k, .consumer = who, .cmd = c}, line++);
        break;
      }
      case 8: m.on_event(Quiescent{.cnx = cnx(), .consumer = consumer()}, line++); break;
      default: {
        const Id k = cnx();
        m.on_event(Disconnect{.cnx = k}, line++);
        m.on_event(Connect{.cnx = k}, line++);
        break;
      }
    }
  }
  m.on_event(Disconnect{.cnx = s("c1")}, line++);
  m.on_event(Disconnect{.cnx = s("c2")}, line++);
  const MonitorSize size = m.size();
  RC_TAG(retain ? "whole-trace mode" : "streaming mode");
  RC_ASSERT(size.wire_consumers == 0u);
  RC_ASSERT(size.connections == 0u);
  RC_ASSERT(size.commands == 0u);
}

}  // namespace
}  // namespace permitcheck::spec
