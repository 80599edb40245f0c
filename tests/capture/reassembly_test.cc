// capture/reassembly.h: the bytes kept to compare copies, kept by reference (read again where
// the capture holds them, through a PayloadSource) give exactly what the copied ring gives —
// the same bytes delivered, the same gaps at the same offsets, the same copies said
// uncompared — also when segments without an origin come after some with one (the kept bytes
// then read back into the ring); a kept byte the capture no longer holds is said uncompared.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capture/reassembly.h"

namespace permitcheck::capture {
namespace reassembly {

// One reassembler fed the same segments as the others, and everything it said.
struct Fed {
  StreamReassembler r{1 << 16};
  std::string said;

  void add(double time, std::uint32_t seq, std::string_view payload, std::uint64_t origin) {
    std::vector<StreamChunk> out;
    const std::optional<std::string> gap = r.add(time, seq, payload, 0, &out, origin);
    for (const StreamChunk& c : out) absl::StrAppend(&said, "deliver ", std::string(c.bytes()), "\n");
    if (gap) absl::StrAppend(&said, "gap: ", *gap, "\n");
    if (r.take_uncompared()) absl::StrAppend(&said, "uncompared\n");
  }
};

// Random streams cut into segments of 1 to 2000 bytes, some swapped with the next, some sent
// again later (from just before to far back, a third of them with one byte changed): a
// reassembler keeping copies (no origin), one keeping references to where the "capture" holds
// each payload, and one given origins for its first segments only say the same.
TEST(KeptBytes, ByReferenceTheySayWhatTheCopiesSay) {
  std::mt19937 rng(491);
  int differing = 0, uncompared = 0, switched = 0;
  for (int scenario = 0; scenario < 200; ++scenario) {
    std::string stream(1000 + rng() % 60000, '\0');
    for (char& ch : stream) ch = static_cast<char>(rng());
    struct Segment {
      std::uint32_t seq;
      std::string payload;
    };
    std::vector<Segment> sent;
    for (std::size_t at = 0; at < stream.size();) {
      const std::size_t n = std::min<std::size_t>(stream.size() - at, 1 + rng() % 2000);
      sent.push_back({static_cast<std::uint32_t>(1000 + at), stream.substr(at, n)});
      at += n;
    }
    std::vector<Segment> order;
    for (std::size_t i = 0; i < sent.size(); ++i) {
      if (rng() % 10 == 0 && i + 1 < sent.size()) {
        order.push_back(sent[i + 1]);
        order.push_back(sent[i]);
        ++i;
      } else {
        order.push_back(sent[i]);
      }
      if (rng() % 7 == 0) {
        Segment again = sent[i - std::min<std::size_t>(i, rng() % 3 == 0 ? rng() % 40 : rng() % 4)];
        if (rng() % 3 == 0) again.payload[rng() % again.payload.size()] ^= 1;
        order.push_back(again);
      }
    }
    std::string capture;  // what a capture file would hold: every payload as sent
    const PayloadSource source = [&](std::uint64_t origin, std::size_t n, char* out) {
      if (origin > capture.size() || n > capture.size() - origin) return false;
      std::copy_n(capture.data() + origin, n, out);
      return true;
    };
    Fed copies, references, switching;
    references.r.use_source(&source);
    switching.r.use_source(&source);
    copies.r.start(1000);
    references.r.start(1000);
    switching.r.start(1000);
    const std::size_t with_origin = rng() % (order.size() + 1);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::uint64_t origin = capture.size();
      capture += order[i].payload;
      copies.add(i, order[i].seq, order[i].payload, kNoOrigin);
      references.add(i, order[i].seq, order[i].payload, origin);
      switching.add(i, order[i].seq, order[i].payload, i < with_origin ? origin : kNoOrigin);
    }
    ASSERT_EQ(references.said, copies.said) << "scenario " << scenario;
    ASSERT_EQ(switching.said, copies.said) << "scenario " << scenario << ", origins for the first "
                                           << with_origin << " segments";
    differing += copies.said.find("differ") != std::string::npos;
    uncompared += copies.said.find("uncompared") != std::string::npos;
    switched += with_origin > 0 && with_origin < order.size() &&
                copies.said.find("differ") != std::string::npos;
  }
  // The cases that tell the ways of keeping apart were met.
  EXPECT_GT(differing, 20);
  EXPECT_GT(uncompared, 20);
  EXPECT_GT(switched, 10);
}

// The gaps above must have been exercised: a changed copy within the kept bytes is a gap.
TEST(KeptBytes, AChangedCopyOfBytesKeptByReferenceIsAGapAtItsFirstDifferingByte) {
  std::string capture = "0123456789abcdefghij";
  const PayloadSource source = [&](std::uint64_t origin, std::size_t n, char* out) {
    if (origin > capture.size() || n > capture.size() - origin) return false;
    std::copy_n(capture.data() + origin, n, out);
    return true;
  };
  Fed f;
  f.r.use_source(&source);
  f.r.start(0);
  f.add(1, 0, std::string_view(capture).substr(0, 10), 0);
  f.add(2, 10, std::string_view(capture).substr(10, 10), 10);
  EXPECT_EQ(f.r.memory(), 0u + 2 * 24) << "two references, no byte copied";
  f.add(3, 5, "56789abXde", kNoOrigin);
  EXPECT_EQ(f.said, "deliver 0123456789\ndeliver abcdefghij\ngap: two copies of stream offset 12 "
                    "differ (one corrupted? their TCP checksums cannot be verified): which "
                    "the receiver took is unknown\n");
}

// One-byte segments: their references would take more than the ring, which takes over (the
// memory kept stays within kCompareBytes) and compares as before.
TEST(KeptBytes, TinySegmentsKeepNoMoreThanTheRing) {
  std::string capture(3 * StreamReassembler::kCompareBytes, '\0');
  for (std::size_t i = 0; i < capture.size(); ++i) capture[i] = static_cast<char>(i * 7 + i / 13);
  const PayloadSource source = [&](std::uint64_t origin, std::size_t n, char* out) {
    if (origin > capture.size() || n > capture.size() - origin) return false;
    std::copy_n(capture.data() + origin, n, out);
    return true;
  };
  Fed f;
  f.r.use_source(&source);
  f.r.start(0);
  for (std::size_t i = 0; i < capture.size(); ++i) {
    f.add(1, static_cast<std::uint32_t>(i), std::string_view(capture).substr(i, 1), i);
    ASSERT_LE(f.r.memory(), StreamReassembler::kCompareBytes) << i;
  }
  const std::size_t recent = capture.size() - 100;
  f.add(2, static_cast<std::uint32_t>(recent), std::string_view(capture).substr(recent, 50), kNoOrigin);
  EXPECT_EQ(f.said.find("gap"), std::string::npos);
  std::string changed = capture.substr(recent, 50);
  changed[7] = static_cast<char>(changed[7] ^ 1);
  f.add(3, static_cast<std::uint32_t>(recent), changed, kNoOrigin);
  EXPECT_NE(f.said.find("gap: two copies of stream offset " + std::to_string(recent + 7) + " differ"),
            std::string::npos);
}

// A kept byte the capture no longer holds (the file shrank) cannot be compared: said, not a
// gap, never a crash.
TEST(KeptBytes, AKeptByteTheCaptureNoLongerHoldsIsSaidUncompared) {
  std::string capture = "0123456789";
  const PayloadSource source = [&](std::uint64_t origin, std::size_t n, char* out) {
    if (origin > capture.size() || n > capture.size() - origin) return false;
    std::copy_n(capture.data() + origin, n, out);
    return true;
  };
  Fed f;
  f.r.use_source(&source);
  f.r.start(0);
  f.add(1, 0, capture, 0);
  capture.clear();
  f.add(2, 2, "2X4", kNoOrigin);
  EXPECT_EQ(f.said, "deliver 0123456789\nuncompared\n");
}

}  // namespace reassembly
}  // namespace permitcheck::capture
