// capture/capture_file.h: a pcap read in place (the records decoded where they lie, libpcap
// taking over at the first record that is not plain) gives exactly what libpcap reading every
// record gives — the same events at the same times, the same connections not understood and
// the same error — for plain captures, microsecond and nanosecond ones, records longer than
// the snapshot length, and files cut inside a record or a record header; a file read window by
// window gives the same, and one truncated while it is read is an error, never a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <cstring>
#include <cstdlib>
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

// The same for a file (read_capture_file), with `on_event` called at each event too.
std::string read_file(const std::string& path, const std::function<void()>& on_event = {},
                      bool reader_thread = false) {
  std::string out;
  WireSink sink{
      .event = [&](const std::string& cnx, TimedEvent&& e) {
        absl::StrAppend(&out, absl::StrFormat("%.6f", e.time), " ", cnx, " ",
                        trace::write_event(e.event), "\n");
        if (on_event) on_event();
      },
      .not_understood = [&](const std::string& cnx, double time, const std::string& reason) {
        absl::StrAppend(&out, absl::StrFormat("%.6f", time), " ", cnx, " not understood: ",
                        reason, "\n");
      }};
  WireTraceBuilder builder(CaptureOptions{}, sink);
  const absl::Status s = read_capture_file(path, &builder, reader_thread);
  absl::StrAppend(&out, "status: ", s.ToString(), "\n");
  return out;
}

// A file of this test's own (tests run side by side never share one).
std::string temp_path(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/in_place_", getpid(), "_", name, ".pcap");
}

// A capture of a few MiB (several of the reader's 512 KiB windows), its records of many sizes:
// a connection, then 60000 messages in segments of 200 to 1500 bytes, each acknowledged, every
// 997th packet sent again three packets later (compared with the first copy, read again from
// the file); with `conflict`, one copy near the end has a byte changed.
std::string large_capture(bool conflict = false) {
  Conversation c(testing::endpoint4(1, 40000), testing::endpoint4(2, 6650));
  c.handshake();
  c.client_sends(frames::connect());
  c.server_sends(frames::connected());
  c.client_sends(frames::subscribe(0, 1));
  c.server_sends(frames::success(1));
  c.client_sends(frames::flow(0, 60000));
  std::string messages;
  for (std::uint64_t e = 1; e <= 60000; ++e) {
    messages += frames::message(0, e, 1);
    if (e % 500 == 0) {
      c.server_sends(messages, 200 + (e * 337) % 1300);
      messages.clear();
    }
  }
  c.pause(1.5);
  c.client_fin();
  std::vector<testing::Packet> packets;
  const std::vector<testing::Packet>& sent = c.packets();
  for (std::size_t i = 0; i < sent.size(); ++i) {
    packets.push_back(sent[i]);
    if (i >= 3 && (i - 3) % 997 == 0 && !sent[i - 3].payload.empty()) {
      packets.push_back(sent[i - 3]);
      packets.back().time = sent[i].time;
      if (conflict && i + 2000 > sent.size() && i + 1000 < sent.size()) {
        packets.back().payload[packets.back().payload.size() / 2] ^= 1;
      }
    }
  }
  return testing::pcap_bytes(LinkKind::kEthernet, packets);
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

TEST(InPlace, FileReadWindowByWindowIsWhatLibpcapReads) {
  const std::string bytes = large_capture();
  ASSERT_GT(bytes.size(), std::size_t{3} << 20);
  const std::string path = temp_path("windows");
  // Whole, and cut around the end of the first window (file offset 24 + 512 KiB: inside a record
  // header, inside a record, at its end) and in the last one.
  std::vector<std::size_t> cuts = {bytes.size(), bytes.size() - 1, bytes.size() - 700};
  for (std::size_t d : {0, 1, 9, 16, 17, 600}) cuts.push_back(24 + (std::size_t{1} << 19) + d);
  for (std::size_t cut : cuts) {
    testing::write_file(path, bytes.substr(0, cut));
    const std::string reference = read(bytes.substr(0, cut), /*in_place=*/false);
    EXPECT_EQ(read_file(path), reference) << "cut at " << cut;
  }
  EXPECT_NE(read(bytes, false).find("status: OK"), std::string::npos);
  EXPECT_EQ(read(bytes, false).find("differ"), std::string::npos);
  // A copy that differs from the first, which the reader reads again from the file.
  const std::string conflicting = large_capture(/*conflict=*/true);
  testing::write_file(path, conflicting);
  const std::string reference = read(conflicting, /*in_place=*/false);
  EXPECT_NE(reference.find("differ"), std::string::npos) << reference.substr(reference.size() - 400);
  EXPECT_EQ(read_file(path), reference);
  std::remove(path.c_str());
}

// A file truncated (by another process, say) while it is read: before, the mapped file's pages
// past the new end faulted (SIGBUS). Now it is read with pread: the packets up to the new end
// are read, then InvalidArgument says the file shrank. The truncation comes at the first event,
// when the reader holds the first window only; each case runs in a child process, so that a
// crash is reported as this test's failure (and its signal), not the end of the test binary.
TEST(InPlace, FileTruncatedWhileReadIsAnErrorNotACrash) {
  const std::string bytes = large_capture();
  // Within the first window (already read), past it inside a record, and past it at the end of
  // a record (a clean end for libpcap: only the size says the file shrank).
  ASSERT_GT(bytes.size(), std::size_t{3} << 20);
  std::size_t record_end = 24;
  for (std::size_t at = 24; at < (std::size_t{5} << 19);) {
    std::uint32_t caplen;
    std::memcpy(&caplen, bytes.data() + at + 8, 4);
    at += 16 + caplen;
    record_end = at;
  }
  for (std::size_t new_size : {std::size_t{100000}, (std::size_t{3} << 19) + 5, record_end}) {
    const std::string path = temp_path(absl::StrCat("truncated_", new_size));
    testing::write_file(path, bytes);
    EXPECT_EXIT(
        {
          bool truncated = false;
          const std::string out = read_file(path, [&] {
            if (!truncated) truncated = truncate(path.c_str(), static_cast<off_t>(new_size)) == 0;
          });
          std::fprintf(stderr, "%s", out.substr(out.rfind("status: ")).c_str());
          std::exit(truncated && out.find("status: INVALID_ARGUMENT") != std::string::npos ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "shrank from [0-9]+ to [0-9]+ bytes while it was read")
        << "truncated to " << new_size;
    std::remove(path.c_str());
  }
}

// `bytes` (a pcap in this machine's byte order) with its headers in the other byte order:
// libpcap reads it (never in place), on a second thread with reader_thread.
std::string swapped(const std::string& bytes) {
  auto swap = [](std::string* b, std::size_t at, std::size_t n) {
    std::reverse(b->begin() + static_cast<long>(at), b->begin() + static_cast<long>(at + n));
  };
  std::string out = bytes;
  swap(&out, 0, 4);
  swap(&out, 4, 2);
  swap(&out, 6, 2);
  for (std::size_t at : {8, 12, 16, 20}) swap(&out, at, 4);
  for (std::size_t at = 24; at + 16 <= out.size();) {
    std::uint32_t caplen;
    std::memcpy(&caplen, bytes.data() + at + 8, 4);
    for (std::size_t k = 0; k < 16; k += 4) swap(&out, at + k, 4);
    at += 16 + caplen;
  }
  return out;
}

// TCP checksums read on libpcap's path on a second thread (each segment's header and payload
// copied into a batch) are verified as where they lie: a copy with a bad checksum on a side
// whose checksums are good is skipped the same way on every path.
TEST(InPlace, ChecksumsReadOnASecondThreadAreVerifiedTheSame) {
  Conversation c(testing::endpoint4(1, 40000), testing::endpoint4(2, 6650));
  c.handshake();
  c.client_sends(frames::connect());
  c.server_sends(frames::connected());
  c.client_sends(frames::subscribe(0, 1));
  c.server_sends(frames::success(1));
  c.client_sends(frames::flow(0, 10));
  for (std::uint64_t e = 1; e <= 40; ++e) {
    c.server_sends(frames::message(0, e, 1));
    c.client_sends(frames::ack(0, e));
    if (e % 5 == 0) c.client_sends(frames::flow(0, 5));
  }
  std::vector<testing::Packet> p = c.packets();
  for (testing::Packet& k : p) k.checksum = true;
  // The client's last Flow (before the broker's ack of it), sent first with a byte changed and
  // a checksum that no longer matches.
  testing::Packet bad = p[p.size() - 2];
  ASSERT_EQ(bad.payload, frames::flow(0, 5));
  bad.payload[bad.payload.size() - 1] ^= 1;
  bad.checksum = false;
  p.insert(p.end() - 2, bad);
  const std::string bytes = testing::pcap_bytes(LinkKind::kEthernet, p);
  const std::string reference = read(bytes, /*in_place=*/false);
  EXPECT_NE(reference.find("status: OK"), std::string::npos) << reference;
  EXPECT_EQ(reference.find("differ"), std::string::npos) << reference;
  const std::string path = temp_path("swapped");
  testing::write_file(path, swapped(bytes));
  EXPECT_EQ(read_file(path, {}, /*reader_thread=*/true), reference);
  EXPECT_EQ(read_file(path, {}, /*reader_thread=*/false), reference);
  testing::write_file(path, bytes);
  EXPECT_EQ(read_file(path), reference);
  // Without the checksums, the bad copy is a differing copy: the checksums did the skipping.
  for (testing::Packet& k : p) k.checksum = false;
  EXPECT_NE(read(testing::pcap_bytes(LinkKind::kEthernet, p), false).find("differ"),
            std::string::npos);
  std::remove(path.c_str());
}

}  // namespace in_place
}  // namespace permitcheck::capture
