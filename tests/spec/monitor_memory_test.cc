// Memory bounded by what is live, for incarnations too (issue 18): an incarnation ended by
// close_consumer or subscribe_fail is released, as a disconnect releases its connection's, and
// an ended permit state keeps only what a late event naming it is judged by; the verdict on
// late events after a release is the same in streaming and whole-trace mode.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"
#include "spec/monitor.h"
#include "tests/spec/monitor_testing.h"

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
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves far more than 64 MiB of address space and keeps "
                  "freed memory in quarantine: the limit is checked in the plain build";
#endif
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlimit limit{.rlim_cur = rlim_t{64} << 20, .rlim_max = rlim_t{64} << 20};
    if (setrlimit(RLIMIT_DATA, &limit) != 0) _exit(4);
    try {
      Monitor m(wire(4, 2), MonitorOptions{.retain_ledger = false});
      std::uint64_t line = 2;
      cycles(m, 0, 1'000'000, 0, line);
      if (m.size().wire_consumers != 0) _exit(5);
      cycles(m, 1'000'000, 100'000, 10, line);
      m.finish();
      if (m.size().wire_consumers != 0 || m.size().connections != 0) _exit(5);
      _exit(m.violations().empty() ? 0 : 1);
    } catch (const std::bad_alloc&) {
      _exit(3);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: violations, 3: bad_alloc under 64 MiB, 4: setrlimit, 5: incarnations kept";
}

// A client trace like the validate bench's (commands of B = 4: recv, metadata, 4 claims,
// settle, 4 message returns, a Flow of what came back whenever T is reached), `events` events
// whose commands all finish, in a child whose heap is limited to `limit_mib` (RLIMIT_DATA).
// Exit 0: clean and fitted; 1: violations; 3: bad_alloc; 4: setrlimit; 5: finished records
// costing more than `max_bytes_per_command` per finished command.
int finished_client_commands_in_child(std::uint64_t events, rlim_t limit_mib,
                                      std::size_t max_bytes_per_command) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    const rlimit limit{.rlim_cur = limit_mib << 20, .rlim_max = limit_mib << 20};
    if (setrlimit(RLIMIT_DATA, &limit) != 0) _exit(4);
    try {
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
      if (size.commands != 0 || size.finished_commands != cmd - 1) _exit(5);
      if (size.part_bytes[1] + size.part_bytes[2] > max_bytes_per_command * (cmd - 1)) _exit(5);
      _exit(m.violations().empty() ? 0 : 1);
    } catch (const std::bad_alloc&) {
      _exit(3);
    }
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// 3 million events (250,000 commands, a million messages), all finished, under a 24 MiB heap:
// what the monitor keeps of a finished command and its messages is a few runs (spec/internal/
// id_runs.h), at most 48 bytes per command here (its 4 messages' run). Before, the records
// took about 130 bytes per event: 399 MiB for the same trace in `permitcheck validate`.
TEST(MonitorMemory, ThreeMillionEventClientTraceOfFinishedCommandsFitsIn24MiB) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves far more address space than the limit: the limit "
                  "is checked in the plain build";
#endif
  EXPECT_EQ(finished_client_commands_in_child(3'000'000, 24, 48), 0)
      << "-1: child failed or killed, 1: violations, 3: bad_alloc under 24 MiB, 4: setrlimit, "
         "5: records larger than expected";
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

// ---- Late events naming a released incarnation: the same verdict in both modes ----

TEST(MonitorMemory, N4_FlowForAClosedAndReleasedConsumerIsReportedInBothModes) {
  Trace t;
  t.wire_subscribed(4);
  for (std::uint64_t c = 1; c <= 3; ++c) {
    t.add(Subscribe{.cnx = s("c1"), .consumer = c})
        .add(SubscribeOk{.cnx = s("c1"), .consumer = c})
        .add(CloseConsumer{.cnx = s("c1"), .consumer = c});
  }
  t.add(Flow{.cnx = s("c1"), .consumer = 2, .permits = 1});
  EXPECT_TRUE(FirstViolation(both(wire(), t), RuleId::kN4,
                             {"Flow of 1 for consumer 2 on connection c1", "no Subscribe"}));
}

TEST(MonitorMemory, N4_FlowOfACurrentPermitStateForAClosedConsumerIsReportedInBothModes) {
  Trace t;
  t.wire_subscribed(std::nullopt)
      .subscribed(1, 4)
      .add(recv(1, 1))
      .add(claim(1, "m0"))
      .add(settle(1, 0))
      .add(msg_return("m0"))  // its accumulator holds 1
      .add(CloseConsumer{.cnx = s("c1"), .consumer = 0})
      .add(flow(1, 1));
  EXPECT_TRUE(FirstViolation(both(client(), t), RuleId::kN4, {"Flow of 1 for consumer 0"}));
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

}  // namespace
}  // namespace permitcheck::spec
