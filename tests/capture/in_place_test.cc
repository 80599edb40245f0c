// capture/capture_file.h: a pcap read in place (the records decoded where they lie, libpcap
// taking over at the first record that is not plain) gives exactly what libpcap reading every
// record gives — the same events at the same times, the same connections not understood and
// the same error — for plain captures, microsecond and nanosecond ones, records longer than
// the snapshot length, and files cut inside a record or a record header.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "capture/capture_file.h"
#include "tests/capture/capture_testing.h"
#include "trace/writer.h"

namespace permitcheck::capture {
namespace in_place {

using testing::Conversation;
using testing::LinkKind;
namespace frames = testing::frames;

// Everything the builder handed on, as text, then the read's status.
std::string read(const std::string& bytes, bool in_place) {
  std::string out;
  WireSink sink{
      .event = [&](const std::string& cnx, TimedEvent&& e) {
        absl::StrAppend(&out, absl::StrFormat("%.6f", e.time), " ", cnx, " ",
                        trace::write_event(e.event), "\n");
      },
      .not_understood = [&](const std::string& cnx, double time, const std::string& reason) {
        absl::StrAppend(&out, absl::StrFormat("%.6f", time), " ", cnx, " not understood: ",
                        reason, "\n");
      }};
  WireTraceBuilder builder(CaptureOptions{}, sink);
  const absl::Status s = read_capture_bytes(bytes, &builder, in_place);
  absl::StrAppend(&out, "status: ", s.ToString(), "\n");
  return out;
}

std::string capture() {
  Conversation c(testing::endpoint4(1, 40000), testing::endpoint4(2, 6650));
  c.handshake();
  c.client_sends(frames::connect());
  c.server_sends(frames::connected());
  c.client_sends(frames::subscribe(0, 1));
  c.server_sends(frames::success(1));
  c.client_sends(frames::flow(0, 10));
  std::string messages, acks;
  for (std::uint64_t e = 1; e <= 5; ++e) {
    messages += frames::message(0, e, e % 2 == 0 ? 3 : 1, {}, 1);
    acks += frames::ack(0, e);
  }
  c.server_sends(messages, 200);
  c.client_sends(acks);
  c.client_sends(frames::flow(0, 5));
  c.pause(1.5);
  c.client_fin();
  return testing::pcap_bytes(LinkKind::kEthernet, c.packets());
}

void expect_same(const std::string& bytes, const std::string& what) {
  const std::string reference = read(bytes, /*in_place=*/false);
  EXPECT_EQ(read(bytes, /*in_place=*/true), reference) << what;
}

TEST(InPlace, ReadsWhatLibpcapReads) {
  const std::string bytes = capture();
  const std::string events = read(bytes, false);
  EXPECT_NE(events.find("\"ev\":\"message\""), std::string::npos) << events;
  EXPECT_NE(events.find("status: OK"), std::string::npos) << events;
  expect_same(bytes, "plain");
  // Nanosecond time stamps (the same numbers read as nanoseconds).
  std::string nano = bytes;
  const std::uint32_t magic = 0xA1B23C4D;
  std::memcpy(nano.data(), &magic, 4);
  expect_same(nano, "nanoseconds");
  // A snapshot length shorter than some records: libpcap cuts them, from the first on.
  for (std::uint32_t snaplen : {60u, 120u, 300u}) {
    std::string snapped = bytes;
    std::memcpy(snapped.data() + 16, &snaplen, 4);
    expect_same(snapped, absl::StrCat("snaplen ", snaplen));
  }
  // Cut anywhere: inside a record header, inside a record's bytes, at a record's end.
  for (std::size_t cut = 24; cut < bytes.size(); cut += 37) {
    expect_same(bytes.substr(0, cut), absl::StrCat("cut at ", cut));
  }
}

}  // namespace in_place
}  // namespace permitcheck::capture
