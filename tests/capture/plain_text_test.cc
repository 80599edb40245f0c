// The capture reader's texts in plain words (issue 35): what a gap names is counted as "1 byte"
// or "3 bytes", never "byte(s)".
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture/reassembly.h"

namespace permitcheck::capture {
namespace {

using ::testing::HasSubstr;

// The gap of a retransmission of the stream's first 3 bytes whose `missing` further bytes the
// snap length cut.
std::string cut_segment_gap(std::uint32_t missing) {
  StreamReassembler r(1 << 16);
  r.start(1000);
  std::vector<StreamChunk> out;
  if (std::optional<std::string> g = r.add(0, 1000, "abc", 0, &out)) return *g;
  return r.add(1, 1000, "abc", missing, &out).value_or("no gap");
}

// The gap at the end of a stream whose first byte never came while `later` bytes waited.
std::string lost_segment_gap(const std::string& later) {
  StreamReassembler r(1 << 16);
  r.start(1000);
  std::vector<StreamChunk> out;
  if (std::optional<std::string> g = r.add(0, 1001, later, 0, &out)) return *g;
  return r.finish().value_or("no gap");
}

TEST(CapturePlainText, AGapCountsOneByteAndManyBytes) {
  EXPECT_THAT(cut_segment_gap(1), HasSubstr("snap length too short: 1 byte of a segment"));
  EXPECT_THAT(cut_segment_gap(4), HasSubstr("snap length too short: 4 bytes of a segment"));
  EXPECT_THAT(lost_segment_gap("x"), HasSubstr("(1 later byte seen)"));
  EXPECT_THAT(lost_segment_gap("xyz"), HasSubstr("(3 later bytes seen)"));
}

}  // namespace
}  // namespace permitcheck::capture
