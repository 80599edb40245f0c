// Redelivery after a connection the client closed (conformance/internal/broker_impl.h): as a
// Pulsar broker puts a closed consumer's unacknowledged entries back for the subscription, the
// conformance broker writes them again to the replacement, at most 3 times per entry; past that
// the client loops on the entry (closes on it every time) and the broker notes it instead. A
// drop the broker made, or CLOSE_CONSUMER, redelivers nothing (the scenarios drive those).
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "conformance/scenario.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using testing::dump;
using testing::faulty_batch;
using testing::opened;
using testing::params;
using testing::reference_client;
using testing::reference_command;

int extensions(const ScenarioOutcome& o, std::string_view prefix) {
  int n = 0;
  for (const spec::Event& e : o.events) {
    const auto* x = std::get_if<spec::Extension>(&e);
    if (x && x->ev.rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

// Revision C's client closes its pooled connection on an inconsistent batch (F4): each
// replacement gets the entry again, and closes again, until the broker stops at 3.
TEST(ConformanceBroker, AnEntryTheClientClosedOnIsRedeliveredToTheReplacementThreeTimes) {
  ClientSpec c = reference_client();
  c.command = absl::StrCat(reference_command(), " --ruleset rev-c");
  EntrySpec e = faulty_batch(3, EntryFault::kExtraMessages);
  e.extra_messages = 2;
  ScenarioOutcome o = run_scenario(c, params(ScenarioKind::kInconsistentBatch, {e}));
  EXPECT_EQ(extensions(o, "x-redelivered-after-client-close-e1"), 3) << dump(o);
  EXPECT_EQ(extensions(o, "x-redelivery-loop-e1"), 1) << dump(o);
  EXPECT_GE(o.incarnations, 5) << dump(o);
  EXPECT_TRUE(opened(o, "written again 3 times")) << dump(o);
  EXPECT_TRUE(opened(o, "the client loops on entry 1")) << dump(o);
}

// The rev-d client settles the same entry without closing: nothing goes back.
TEST(ConformanceBroker, AnEntryTheClientSettledIsNotRedelivered) {
  EntrySpec e = faulty_batch(3, EntryFault::kExtraMessages);
  e.extra_messages = 2;
  ScenarioOutcome o =
      run_scenario(reference_client(), params(ScenarioKind::kInconsistentBatch, {e}));
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_EQ(extensions(o, "x-redeliver"), 0) << dump(o);
  EXPECT_EQ(o.incarnations, 1) << dump(o);
}

// A connection the broker dropped redelivers nothing: what the client held stays its own.
TEST(ConformanceBroker, ABrokerDropRedeliversNothing) {
  ScenarioParams p = fixed_cases(ScenarioKind::kDropBeforeAck, 10, 5).front();
  ScenarioOutcome o = run_scenario(reference_client(), p);
  EXPECT_FALSE(o.failed()) << dump(o);
  EXPECT_EQ(extensions(o, "x-redelivered-after-client-close"), 0) << dump(o);
}

}  // namespace
}  // namespace permitcheck::conformance
