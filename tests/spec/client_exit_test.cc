// The client-exit fact conform records (spec/client_exit.h), alone and through the Monitor.
#include "spec/client_exit.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/monitor.h"
#include "tests/spec/monitor_testing.h"

namespace permitcheck::spec {
namespace {

using namespace monitor_testing;  // NOLINT: the shared shorthands of the monitor's tests

const ClientExit kCrash{.rule = RuleId::kC7, .scenario = "corrupt_checksum", .granted = 4,
                        .debited = 2, .how = "crashed: killed by signal 6 (SIGABRT)"};

TEST(ClientExit, EventNameRoundTripsWithSpacesInHow) {
  EXPECT_EQ(client_exit_event(kCrash),
            "x-client-exit rule=C7 scenario=corrupt_checksum granted=4 debited=2 "
            "how=crashed: killed by signal 6 (SIGABRT)");
  EXPECT_EQ(parse_client_exit_event(client_exit_event(kCrash)), kCrash);
}

TEST(ClientExit, OtherExtensionsAndMalformedNamesAreNotExitFacts) {
  for (const char* ev : {"x-client-crashed", "x-client-exit",
                         "x-client-exits rule=C7 scenario=s granted=1 debited=1 how=x",
                         "x-client-exit rule=Z9 scenario=s granted=1 debited=1 how=x",
                         "x-client-exit rule=C7 scenario=s granted=one debited=1 how=x",
                         "x-client-exit rule=C7 scenario=s granted=1 debited=1"}) {
    EXPECT_EQ(parse_client_exit_event(ev), std::nullopt) << ev;
  }
}

TEST(ClientExit, C7_TheMonitorReportsTheExitAtTheFactsLineUnderTheScenariosRule) {
  Trace t;
  t.wire_subscribed(4).add(Extension{.ev = client_exit_event(kCrash)});
  const MonitorReport r = check(wire(4, 2), t);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations[0].rule, RuleId::kC7) << dump(r.violations);
  EXPECT_EQ(r.violations[0].line, t.events().size() + 1);
  EXPECT_EQ(r.violations[0].explanation,
            "client crashed: killed by signal 6 (SIGABRT) during corrupt_checksum (its incarnation "
            "was debited 2 of 4 granted; nothing more came back)");
}

TEST(ClientExit, ATraceWithoutTheFactHasNoExitFinding) {
  Trace t;
  t.wire_subscribed(4).add(Extension{.ev = "x-client-crashed"});
  EXPECT_TRUE(Clean(check(wire(4, 2), t)));
}

}  // namespace
}  // namespace permitcheck::spec
