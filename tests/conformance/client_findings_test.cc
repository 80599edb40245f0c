// The deviations of the newest official clients written up in docs/findings/ that no other
// test pins: a batch that fails to decompress returns 1 permit in the C++ client (pulsar-client
// 3.13.0 = pulsar-client-cpp 4.2.0) and the Go client (v0.21.0), although B is known. Each
// skips, saying why, when its client is not installed, and in sanitizer builds.
#include <gtest/gtest.h>

#include "tests/conformance/official_client.h"

namespace permitcheck::conformance {
namespace {

using spec::RuleId;
using namespace testing;  // NOLINT: the shared helpers of these tests

// One batch of B = 5 that does not decompress: 5 debited, 1 returned. The drain measures the
// loss: after 4 single messages the client flushes with the broker at Q - 4.
void expect_decompression_returns_one(const ScenarioOutcome& o) {
  EXPECT_TRUE(has(o.violations, RuleId::kE5, "leaves 5 permit(s) unreturned")) << dump(o);
  EXPECT_EQ(o.debited, 5) << dump(o);
  EXPECT_EQ(o.granted, 10) << dump(o);
  EXPECT_TRUE(o.drain.measured) << o.drain.text << "\n" << dump(o);
  EXPECT_EQ(o.drain.delta, -4) << o.drain.text << "\n" << dump(o);
}

ScenarioParams one_undecompressable_batch() {
  return params(ScenarioKind::kDecompression, {faulty_batch(5, EntryFault::kDecompression)});
}

TEST(CppClient, E5_DecompressionFailureReturnsOneForTheWholeBatch) {
  if (!installed("conformance/clients/cpp/.venv/bin/python")) {
    GTEST_SKIP() << "the C++ client (PyPI pulsar-client) is not installed "
                    "(ci/install-python-client.sh) or this is a sanitizer build";
  }
  // lib/ConsumerImpl.cc:589-592, :917-921, :927-938 at v4.2.0: discardCorruptedMessage, 1.
  expect_decompression_returns_one(run_scenario(preset_client("cpp"),
                                                one_undecompressable_batch()));
}

TEST(GoClient, E5_DecompressionFailureReturnsOneForTheWholeBatch) {
  if (!installed("conformance/clients/go/permitcheck-go-consumer")) {
    GTEST_SKIP() << "the Go client is not built (ci/install-go-client.sh) or this is a "
                    "sanitizer build";
  }
  // pulsar/consumer_partition.go:1330-1336, :2545 at v0.21.0: discardCorruptedMessage, 1.
  expect_decompression_returns_one(run_scenario(preset_client("go"),
                                                one_undecompressable_batch()));
}

}  // namespace
}  // namespace permitcheck::conformance
