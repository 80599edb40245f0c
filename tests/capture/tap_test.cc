// Tests of capture/tap.h: what passes through the tap is byte for byte what was sent, in both
// directions, whether it is Pulsar (checked live: a known-bad exchange fails with its rule) or
// not (forwarded untouched, reported as not understood).
#include "capture/tap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "capture/capture_file.h"
#include "tests/capture/capture_testing.h"
#include "tests/capture/socket_testing.h"

#ifdef PERMITCHECK_HAVE_TAP
namespace permitcheck::capture {
namespace {

namespace frames = testing::frames;

using testing::connect_loopback;
using testing::listen_loopback;
using testing::read_all;
using testing::send_all;

struct Exchange {
  std::string broker_got, client_got;
  std::vector<spec::Finding> violations;
  std::vector<NotUnderstood> not_understood;
  std::uint64_t events = 0;
};

// The client sends `to_broker` and half-closes; the broker reads everything, answers
// `to_client` and closes; all through a tap.
Exchange through_tap(const std::string& to_broker, const std::string& to_client,
                     const std::string& pcap_path = "",
                     std::size_t max_queued_bytes = TapOptions{}.max_queued_bytes) {
  std::uint16_t broker_port = 0;
  const int listener = listen_loopback(&broker_port);
  Exchange x;
  std::thread broker([&] {
    const int fd = testing::accept_one(listener);
    x.broker_got = read_all(fd);
    send_all(fd, to_client);
    ::close(fd);
  });
  WireChecker checker(spec::TraceHeader{.source = spec::TraceSource::kWire}, nullptr);
  Tap tap(TapOptions{.listen = "127.0.0.1:0",
                     .upstream = "127.0.0.1:" + std::to_string(broker_port),
                     .pcap_path = pcap_path,
                     .max_queued_bytes = max_queued_bytes},
          &checker);
  EXPECT_TRUE(tap.start().ok());
  std::thread serving([&] { tap.run(); });
  const int client = connect_loopback(tap.port());
  EXPECT_GE(client, 0);
  send_all(client, to_broker);
  ::shutdown(client, SHUT_WR);
  x.client_got = read_all(client);
  ::close(client);
  broker.join();
  tap.stop();
  serving.join();
  ::close(listener);
  checker.finish();
  x.violations = checker.violations();
  x.not_understood = checker.not_understood();
  x.events = checker.events();
  return x;
}

TEST(Tap, UndecodableBytesAreForwardedUntouchedAndReportedAsNotUnderstood) {
  std::mt19937 rng(491);
  std::string up(3 << 20, '\0'), down(1 << 20, '\0');
  for (char& c : up) c = static_cast<char>(rng());
  for (char& c : down) c = static_cast<char>(rng());
  up[0] = '\x7f';  // a frame size far above the limit
  const Exchange x = through_tap(up, down);
  EXPECT_TRUE(x.broker_got == up) << x.broker_got.size() << " of " << up.size() << " bytes";
  EXPECT_TRUE(x.client_got == down) << x.client_got.size() << " of " << down.size() << " bytes";
  EXPECT_TRUE(x.violations.empty());
  ASSERT_EQ(x.not_understood.size(), 1u);
  EXPECT_NE(x.not_understood[0].reason.find("Pulsar frame"), std::string::npos)
      << x.not_understood[0].reason;
}

TEST(Tap, N4_FlowBeforeSubscribeSucceededIsFoundLiveAndTheBytesPassUnchanged) {
  const std::string up = frames::connect() + frames::subscribe(0, 1) + frames::flow(0, 10);
  const std::string down = frames::connected() + frames::success(1);
  const std::string pcap = ::testing::TempDir() + "/tap-n4.pcap";
  const Exchange x = through_tap(up, down, pcap);
  EXPECT_EQ(x.broker_got, up);
  EXPECT_EQ(x.client_got, down);
  ASSERT_EQ(x.violations.size(), 1u);
  EXPECT_EQ(x.violations[0].rule, spec::RuleId::kN4);
  EXPECT_TRUE(x.not_understood.empty());
  // connect, subscribe, flow, disconnect: the client's FIN ends the connection, as the broker
  // sees it, so the SUCCESS after it is forwarded but opens no incarnation.
  EXPECT_EQ(x.events, 4u);
  // --pcap: the capture of what passed reads back to the same verdict.
  WireChecker again(spec::TraceHeader{.source = spec::TraceSource::kWire}, nullptr);
  WireTraceBuilder builder(CaptureOptions{}, again.sink());
  ASSERT_TRUE(read_capture_file(pcap, &builder).ok());
  again.finish();
  ASSERT_EQ(again.violations().size(), 1u);
  EXPECT_EQ(again.violations()[0].rule, spec::RuleId::kN4);
  EXPECT_EQ(again.events(), 4u);
}

// Checking never holds forwarding up: when the copies waiting for the checker exceed the
// bound, the connection is still forwarded byte for byte but no longer checked, and says so
// (here the N4 exchange, whose violation is then not claimed).
TEST(Tap, ACheckerFallingBehindStopsCheckingNotForwarding) {
  const std::string up = frames::connect() + frames::subscribe(0, 1) + frames::flow(0, 10);
  const std::string down = frames::connected() + frames::success(1);
  const Exchange x = through_tap(up, down, "", /*max_queued_bytes=*/8);
  EXPECT_EQ(x.broker_got, up);
  EXPECT_EQ(x.client_got, down);
  EXPECT_TRUE(x.violations.empty());
  ASSERT_EQ(x.not_understood.size(), 1u);
  EXPECT_NE(x.not_understood[0].reason.find("fell behind"), std::string::npos)
      << x.not_understood[0].reason;
}

TEST(Tap, BadAddressesAreUsageErrors) {
  WireChecker checker(spec::TraceHeader{.source = spec::TraceSource::kWire}, nullptr);
  EXPECT_EQ(Tap(TapOptions{.listen = "nonsense", .upstream = "127.0.0.1:1"}, &checker).start().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Tap(TapOptions{.listen = "127.0.0.1:0", .upstream = "127.0.0.1"}, &checker).start().code(),
            absl::StatusCode::kInvalidArgument);
#ifdef PERMITCHECK_BIN
  // absl::StrCat, not std::string +: GCC 12 warns falsely (-Warray-bounds) on string + literal
  // once the libstdc++ headers come through the precompiled header (docs/build-times.md).
  const int rc = std::system(absl::StrCat(PERMITCHECK_BIN,
                                          " tap --listen 999.1.1.1:1 --upstream 127.0.0.1:1 >/dev/null 2>&1")
                                 .c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 2);
#endif
}

}  // namespace
}  // namespace permitcheck::capture
#endif
