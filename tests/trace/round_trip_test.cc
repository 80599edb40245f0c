// Round trip of trace-format.md: whatever the writer writes, the reader reads back as equal
// values, for every event kind, every optional field present or absent, full integer ranges
// and strings that need escaping.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/trace/trace_testing.h"
#include "trace/reader.h"
#include "trace/writer.h"

namespace permitcheck::trace {
namespace {

using testing::gen_event;
using testing::gen_header;

RC_GTEST_PROP(TraceRoundTrip, EveryEventReadsBackEqualAfterWriting, ()) {
  const spec::Event event = *gen_event();
  const std::string line = write_event(event);
  const std::string text = write_header({}) + "\n" + line + "\n";
  absl::StatusOr<Trace> trace = read_trace_text(text);
  RC_ASSERT(trace.ok());
  RC_ASSERT(trace->events.size() == 1u);
  RC_ASSERT(spec::events_equal(trace->events[0], event));
  RC_ASSERT(trace->lines[0] == 2u);
}

RC_GTEST_PROP(TraceRoundTrip, WholeTraceReadsBackEqualWithItsLineNumbers, ()) {
  const spec::TraceHeader header = *gen_header();
  const auto events = *rc::gen::container<std::vector<spec::Event>>(gen_event());
  std::ostringstream out;
  RC_ASSERT(write_trace(out, header, events).ok());
  absl::StatusOr<Trace> trace = read_trace_text(out.str());
  RC_ASSERT(trace.ok());
  RC_ASSERT(spec::headers_equal(trace->header, header));
  RC_ASSERT(trace->events.size() == events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    RC_ASSERT(spec::events_equal(trace->events[i], events[i]));
    RC_ASSERT(trace->lines[i] == i + 2);  // line 1 is the header
  }
}

RC_GTEST_PROP(TraceRoundTrip, WrittenLinesAreSingleLineJsonWithoutRawControlBytes, ()) {
  const std::string line = write_event(*gen_event());
  for (char c : line) RC_ASSERT(static_cast<unsigned char>(c) >= 0x20);
  RC_ASSERT(line.front() == '{');
  RC_ASSERT(line.back() == '}');
}

RC_GTEST_PROP(TraceRoundTrip, WriteIsAFixedPointOfReadThenWrite, ()) {
  // Writing what was read gives the same bytes: the writer's form is canonical.
  const spec::Event event = *gen_event();
  const std::string line = write_event(event);
  absl::StatusOr<Trace> trace = read_trace_text(write_header({}) + "\n" + line);
  RC_ASSERT(trace.ok());
  RC_ASSERT(write_event(trace->events.at(0)) == line);
}

RC_GTEST_PROP(TraceRoundTrip, BlankLinesCommentsAndCrlfDoNotChangeEventsOnlyLineNumbers, ()) {
  const auto events = *rc::gen::container<std::vector<spec::Event>>(gen_event());
  const auto noise =
      *rc::gen::container<std::vector<int>>(events.size() + 1, rc::gen::inRange(0, 4));
  const bool crlf = *rc::gen::arbitrary<bool>();
  const std::string eol = crlf ? "\r\n" : "\n";
  std::string text;
  std::uint64_t line = 0;
  std::vector<std::uint64_t> expected_lines;
  auto add_noise = [&](int kind) {
    if (kind == 1) text += eol;
    if (kind == 2) text += "# a comment {\"ev\":\"connect\"" + eol;
    if (kind == 3) text += " \t " + eol;
    if (kind != 0) ++line;
  };
  add_noise(noise[0]);
  text += write_header({}) + eol;
  ++line;
  for (std::size_t i = 0; i < events.size(); ++i) {
    add_noise(noise[i + 1]);
    text += write_event(events[i]) + eol;
    expected_lines.push_back(++line);
  }
  absl::StatusOr<Trace> trace = read_trace_text(text);
  RC_ASSERT(trace.ok());
  RC_ASSERT(trace->events.size() == events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    RC_ASSERT(spec::events_equal(trace->events[i], events[i]));
  }
  RC_ASSERT(trace->lines == expected_lines);
}

}  // namespace
}  // namespace permitcheck::trace
