// The deviations of the newest official clients written up in docs/findings/ that no other
// test pins: a batch that fails to decompress returns 1 permit in the C++ client (pulsar-client
// 3.13.0 = pulsar-client-cpp 4.2.0) and the Go client (v0.21.0), although B is known; the C++
// client's message listener returns a stale permit to the consumer that replaced its own on
// the same connection. Each skips, saying why, when its client is not installed, and in
// sanitizer builds.
#include <gtest/gtest.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "spec/permit_state.h"
#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using namespace testing;  // NOLINT: the shared helpers of these tests

// One batch of B = 5 that does not decompress: 5 debited, 1 returned (E5, asserted by each test).
// The drain measures the loss: after 4 single messages the client flushes with the broker at Q - 4.
void expect_four_lost(const ScenarioOutcome& o) {
  EXPECT_EQ(o.debited, 5) << dump(o);
  EXPECT_EQ(o.granted, 10) << dump(o);
  EXPECT_TRUE(o.drain.measured) << o.drain.text << "\n" << dump(o);
  EXPECT_EQ(o.drain.delta, -4) << o.drain.text << "\n" << dump(o);
}

ScenarioParams one_undecompressable_batch() {
  return params(ScenarioKind::kDecompression, {faulty_batch(5, EntryFault::kDecompression)});
}

TEST(CppClient, E5_DecompressionFailureReturnsOneForTheWholeBatch) {
  if (!installed("clients/cpp/.venv/bin/python")) {
    GTEST_SKIP() << "the C++ client (PyPI pulsar-client) is not installed "
                    "(ci/install-python-client.sh) or this is a sanitizer build";
  }
  // lib/ConsumerImpl.cc:589-592, :917-921, :927-938 at v4.2.0: discardCorruptedMessage, 1.
  const ScenarioOutcome o = run_scenario(preset_client("cpp"), one_undecompressable_batch());
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "leaves 5 permits unreturned")) << dump(o);
  expect_four_lost(o);
}

TEST(GoClient, E5_DecompressionFailureReturnsOneForTheWholeBatch) {
  if (!installed("clients/go/permitcheck-go-consumer")) {
    GTEST_SKIP() << "the Go client is not built (ci/install-go-client.sh) or this is a "
                    "sanitizer build";
  }
  // pulsar/consumer_partition.go:1330-1336, :2545 at v0.21.0: discardCorruptedMessage, 1.
  const ScenarioOutcome o = run_scenario(preset_client("go"), one_undecompressable_batch());
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "leaves 5 permits unreturned")) << dump(o);
  expect_four_lost(o);
}

// The C++ consumer in a listener mode of consumer.py (PERMITCHECK_CPP_MODE).
ClientSpec cpp_in_mode(std::string_view mode, std::int64_t q) {
  ClientSpec c = preset_client("cpp");
  c.command = absl::StrCat("PERMITCHECK_CPP_MODE=", std::string(mode), " ", c.command);
  c.q = q;
  c.t = spec::default_threshold(q);
  return c;
}

// Single messages held by a slow listener (120 ms each) when CLOSE_CONSUMER comes.
ScenarioParams held_singles() {
  ScenarioParams p = params(ScenarioKind::kHeldCloseConsumer,
                            {EntrySpec{}, EntrySpec{}, EntrySpec{}, EntrySpec{}});
  p.delay_ms = 120;
  return p;
}

TEST(CppClient, E2_E3_ListenerReturnsAStalePermitAfterCloseConsumerOnTheSameConnection) {
  SKIP_WITHOUT_CPP_CLIENT();
  // lib/ConsumerImpl.cc:959 returns the listener's permit after the callback; :1129 tells a
  // stale message only by its connection, which a CLOSE_CONSUMER keeps: the message in the
  // listener is counted for the replacement (Q + 1).
  ScenarioOutcome o = run_scenario(cpp_in_mode("listener", 10), held_singles());
  if (o.windows.empty()) GTEST_SKIP() << "the window did not open (timing): " << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE3, "1 permit too many")) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "to 11, above Q = 10")) << dump(o);
}

TEST(CppClient, E2_E3_ZeroQueueListenerHoldsTwoPermitsAfterCloseConsumer) {
  SKIP_WITHOUT_CPP_CLIENT();
  // The zero-queue form (apache/pulsar#6106 for Java): the replacement's FLOW 1 at the
  // resubscribe (ConsumerImpl.cc:358-359) plus the finishing listener's FLOW 1: 2 for Q = 1.
  ScenarioOutcome o = run_scenario(cpp_in_mode("zero-queue-listener", 1), held_singles());
  if (o.windows.empty()) GTEST_SKIP() << "the window did not open (timing): " << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE3)) << dump(o);
  EXPECT_TRUE(has(o.violations, RuleId::kE2, "to 2, above Q = 1")) << dump(o);
}

TEST(CppClient, ListenerReturnsNoStalePermitAcrossAConnectionDrop) {
  SKIP_WITHOUT_CPP_CLIENT();
  // The same window across a new connection: the connection check drops the stale return.
  ScenarioParams p = held_singles();
  p.kind = ScenarioKind::kHeldReconnect;
  ScenarioOutcome o = run_scenario(cpp_in_mode("listener", 10), p);
  if (o.windows.empty()) GTEST_SKIP() << "the window did not open (timing): " << dump(o);
  EXPECT_FALSE(o.failed()) << dump(o);
}

}  // namespace
}  // namespace permitcheck::conformance
