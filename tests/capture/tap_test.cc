// Tests of capture/tap.h: what passes through the tap is byte for byte what was sent, in both
// directions, whether it is Pulsar (checked live: a known-bad exchange fails with its rule) or
// not (forwarded untouched, reported as not understood).
#include "tap/tap.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
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
using tap::lookup_bypass;
using tap::Tap;
using tap::TapOptions;

struct Exchange {
  std::string broker_got, client_got;
  std::vector<spec::Finding> violations;
  std::vector<NotUnderstood> not_understood;
  std::uint64_t events = 0;
  spec::Outcome outcome = spec::Outcome::kPass;  // checked_outcome: the tap's verdict
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
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire}, nullptr);
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
  x.outcome = checked_outcome(checker);
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
  WireMonitor again(spec::TraceHeader{.source = spec::TraceSource::kWire}, nullptr);
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
  // What was dropped was not checked: the verdict is INCOMPLETE (before: the loss was only
  // printed, and the run counted as checked).
  EXPECT_EQ(x.outcome, spec::Outcome::kIncomplete);
}

TEST(Tap, BadAddressesAreUsageErrors) {
  WireMonitor checker(spec::TraceHeader{.source = spec::TraceSource::kWire}, nullptr);
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


// A LOOKUP answer decides where the client's consumer goes: past the tap unless it names the
// tap (or asks the client to stay, proxy_through_service_url).
TEST(TapLookup, OnlyAnAnswerNamingAnotherAddressBypassesTheTap) {
  auto to = [](std::string url, bool proxy = false) {
    return LookupAnswer{.time = 0, .broker_url = std::move(url), .proxy_through = proxy};
  };
  EXPECT_EQ(lookup_bypass(to("pulsar://127.0.0.1:6650"), "127.0.0.1", 6651), "127.0.0.1:6650");
  EXPECT_EQ(lookup_bypass(to("pulsar://10.0.0.2:6651"), "127.0.0.1", 6651), "10.0.0.2:6651");
  EXPECT_EQ(lookup_bypass(to("pulsar://broker-1"), "127.0.0.1", 6651), "broker-1");
  EXPECT_EQ(lookup_bypass(to("pulsar://127.0.0.1:6651"), "127.0.0.1", 6651), std::nullopt);
  EXPECT_EQ(lookup_bypass(to("pulsar://localhost:6651/"), "127.0.0.1", 6651), std::nullopt);
  EXPECT_EQ(lookup_bypass(to("pulsar://10.0.0.9:6651"), "0.0.0.0", 6651), std::nullopt);
  EXPECT_EQ(lookup_bypass(to("pulsar://127.0.0.1:6650", true), "127.0.0.1", 6651), std::nullopt);
  EXPECT_EQ(lookup_bypass(to(""), "127.0.0.1", 6651), std::nullopt);
}

#ifdef PERMITCHECK_BIN
namespace lookup_frames {
std::string lookup(std::uint64_t request) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::LOOKUP);
  c.mutable_lookuptopic()->set_topic("persistent://public/default/t");
  c.mutable_lookuptopic()->set_request_id(request);
  return frames::command(c);
}
std::string lookup_response(std::uint64_t request, const std::string& url) {
  wire::BaseCommand c;
  c.set_type(wire::BaseCommand::LOOKUP_RESPONSE);
  auto* r = c.mutable_lookuptopicresponse();
  r->set_request_id(request);
  r->set_brokerserviceurl(url);
  r->set_response(wire::CommandLookupTopicResponse::Connect);
  r->set_authoritative(true);
  return frames::command(c);
}
}  // namespace lookup_frames

struct CliRun {
  int exit = -1;
  std::string out;
};

// `permitcheck tap ARGS` in front of a hand-made broker: the client and the broker take turns,
// the client sending steps[i].first and the broker answering steps[i].second; then SIGTERM.
CliRun tap_cli(const std::vector<std::pair<std::string, std::string>>& steps,
               const std::string& format, const std::string& max_memory = "1G") {
  std::uint16_t broker_port = 0;
  const int listener = listen_loopback(&broker_port);
  std::thread broker([&] {
    const int fd = testing::accept_one(listener);
    for (const auto& [up, down] : steps) {
      std::string got(up.size(), '\0');
      if (!testing::read_exact(fd, got.data(), got.size())) break;
      send_all(fd, down);
    }
    read_all(fd);
    ::close(fd);
  });
  const std::string dir = ::testing::TempDir();
  // One pair of files per test process: ctest runs these tests side by side.
  const std::string stem = dir + "/tap-cli-" + std::to_string(::getpid());
  const std::string out_path = stem + ".out", err_path = stem + ".err";
  std::remove(out_path.c_str());  // not the last run's "listening on"
  std::remove(err_path.c_str());
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen(out_path.c_str(), "w", stdout);
    std::freopen(err_path.c_str(), "w", stderr);
    const std::string up = "127.0.0.1:" + std::to_string(broker_port);
    ::execl(PERMITCHECK_BIN, PERMITCHECK_BIN, "tap", "--listen", "127.0.0.1:0", "--upstream",
            up.c_str(), "--format", format.c_str(), "--idle", "0.1", "--max-memory",
            max_memory.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::uint16_t tap_port = 0;
  for (int i = 0; i < 200 && tap_port == 0; ++i) {
    std::ifstream err(err_path);
    const std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    const std::size_t at = text.find("listening on 127.0.0.1:");
    if (at != std::string::npos) tap_port = static_cast<std::uint16_t>(std::atoi(text.c_str() + at + 23));
    else std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  CliRun run;
  const int client = tap_port ? connect_loopback(tap_port) : -1;
  EXPECT_GE(client, 0) << "the tap did not start";
  if (client >= 0) {
    for (const auto& [up, down] : steps) {
      send_all(client, up);
      std::string got(down.size(), '\0');
      EXPECT_TRUE(testing::read_exact(client, got.data(), got.size()));
      EXPECT_EQ(got, down);  // forwarded unchanged
    }
    ::shutdown(client, SHUT_WR);
    read_all(client);
    ::close(client);
  } else {
    ::close(connect_loopback(broker_port));  // the broker stops waiting
  }
  broker.join();
  ::close(listener);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // checked, quiescence seen
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out(out_path);
  run.out.assign((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  return run;
}

// The conformance broker's own default: a lookup answered with the broker's address. The tap
// forwards it, warns naming the address, sees no consumer, and says NOT-EXERCISED (exit 2),
// never a clean pass.
TEST(TapLookup, ALookupSendingTheClientPastTheTapIsWarnedAndTheRunIsNotExercised) {
  const CliRun r = tap_cli({{frames::connect(), frames::connected()},
                            {lookup_frames::lookup(1),
                             lookup_frames::lookup_response(1, "pulsar://127.0.0.1:1")}},
                           "json");
  EXPECT_EQ(r.exit, 2) << r.out;
  EXPECT_NE(r.out.find("{\"warning\":\"lookup_bypass\",\"address\":\"127.0.0.1:1\""),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the client was sent to 127.0.0.1:1, bypassing the tap: that traffic is "
                       "not checked"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"ok\":false,\"verdict\":\"NOT-EXERCISED\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"consumers\":0,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"lookups\":1,\"bypassed\":[\"127.0.0.1:1\"]"), std::string::npos) << r.out;
}

// A consumer checked through the tap: the summary counts it, its flow, message and ack.
TEST(TapLookup, AConsumerCheckedThroughTheTapIsCountedAndPasses) {
  const CliRun r = tap_cli({{frames::connect(), frames::connected()},
                            {frames::subscribe(0, 1), frames::success(1)},
                            {frames::flow(0, 10), frames::message(0, 1, 1)},
                            {frames::ack(0, 1), ""}},
                           "text");
  EXPECT_EQ(r.exit, 0) << r.out;
  EXPECT_NE(r.out.find("checked: 1 consumer subscribed, 1 flow, 1 message, 1 ack; "
                       "0 lookups answered\nverdict: PASS\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warning:"), std::string::npos) << r.out;
}

// The same consumer, then the start of a 1 MB command frame that the decoding keeps whole while
// it comes, with the memory limit below it: the connection is no longer checked, and the run is
// INCOMPLETE (exit 3) naming the limit, never PASS.
TEST(TapLookup, PastTheMemoryLimitTheRunIsIncompleteNotPass) {
  std::string partial = testing::be32((1 << 20) - 4) + testing::be32((1 << 20) - 8);
  partial.resize(400, 'z');
  const CliRun r = tap_cli({{frames::connect(), frames::connected()},
                            {frames::subscribe(0, 1), frames::success(1)},
                            {frames::flow(0, 10), frames::message(0, 1, 1)},
                            {frames::ack(0, 1), ""},
                            {partial, ""}},
                           "text", "100");
  EXPECT_EQ(r.exit, 3) << r.out;
  EXPECT_NE(r.out.find("memory limit of 100 bytes (--max-memory)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: INCOMPLETE"), std::string::npos) << r.out;
}

// What python3's XML parser makes of `xml`: "ROOT-TAG tests=N failures=N errors=N", or the
// parser's complaint.
std::string parse_junit(const std::string& xml) {
  const std::string stem = ::testing::TempDir() + "/tap-junit-" + std::to_string(::getpid());
  std::ofstream(stem + ".xml") << xml;
  const std::string command =
      "python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
      "s = r.find(\"testsuite\"); print(r.tag, \"tests=\" + s.get(\"tests\"), "
      "\"failures=\" + s.get(\"failures\"), \"errors=\" + s.get(\"errors\"), end=\"\")' " +
      stem + ".xml > " + stem + ".txt 2>&1";
  (void)std::system(command.c_str());
  std::ifstream in(stem + ".txt");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// --format junit prints nothing while it runs and one JUnit XML document at the end, which an
// XML parser reads: a checked consumer is one passing test case, with the idle in system-out.
TEST(TapLookup, JunitReportOfAPassingRunParsesAsOnePassingCase) {
  const CliRun r = tap_cli({{frames::connect(), frames::connected()},
                            {frames::subscribe(0, 1), frames::success(1)},
                            {frames::flow(0, 10), frames::message(0, 1, 1)},
                            {frames::ack(0, 1), ""}},
                           "junit");
  EXPECT_EQ(r.exit, 0) << r.out;
  EXPECT_EQ(r.out.rfind("<?xml", 0), 0u) << r.out;
  EXPECT_EQ(parse_junit(r.out), "testsuites tests=1 failures=0 errors=0") << r.out;
  EXPECT_NE(r.out.find("settings: --idle 0.1"), std::string::npos) << r.out;
}

// A Flow before the subscribe succeeded (N4): the JUnit case fails naming the rule, and the
// JSON summary lists the finding as every report's finding object (line, rule, text, message).
TEST(TapLookup, N4_JunitFailsTheCaseAndJsonSummaryListsTheFinding) {
  const std::vector<std::pair<std::string, std::string>> steps = {
      {frames::connect(), frames::connected()},
      {frames::subscribe(0, 1) + frames::flow(0, 10), frames::success(1)}};
  const CliRun junit = tap_cli(steps, "junit");
  EXPECT_EQ(junit.exit, 1) << junit.out;
  EXPECT_EQ(parse_junit(junit.out), "testsuites tests=1 failures=1 errors=0") << junit.out;
  EXPECT_NE(junit.out.find("N4"), std::string::npos) << junit.out;
  const CliRun json = tap_cli(steps, "json");
  EXPECT_EQ(json.exit, 1) << json.out;
  const std::size_t summary = json.out.find("{\"summary\":");
  ASSERT_NE(summary, std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"idle_seconds\":0.1", summary), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"findings\":[{\"line\":", summary), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"rule\":\"N4\"", summary), std::string::npos) << json.out;
}
#endif
}  // namespace
}  // namespace permitcheck::capture
#endif
