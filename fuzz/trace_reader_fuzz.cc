// libFuzzer target: arbitrary bytes into the trace reader (trace/reader.h).
//
// The reader must never crash, hang or leak on any input; errors are fine. A trace it accepts
// must also survive the writer: writing what was read and reading it again gives the same
// events (the writer's form is a fixed point), or the target aborts. And the two ways of
// parsing (ReaderOptions::batched, with a read chunk size taken from the input) must agree
// exactly: the same events on the same lines, or the same error.
//
//   ./trace_reader_fuzz -dict=fuzz/trace.dict -max_total_time=60 fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "trace/reader.h"
#include "trace/writer.h"

namespace {

using permitcheck::trace::ReaderOptions;
using permitcheck::trace::Trace;

std::string write_all(const Trace& trace) {
  std::ostringstream out;
  if (!permitcheck::trace::write_trace(out, trace.header, trace.events).ok()) std::abort();
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A small line limit, so that inputs of a few KiB also reach the over-long-line path.
  ReaderOptions options;
  options.max_line_bytes = 1024;
  const std::string input(reinterpret_cast<const char*>(data), size);
  options.batched = false;
  absl::StatusOr<Trace> trace = permitcheck::trace::read_trace_text(input, options);
  options.batched = true;
  options.chunk_bytes = size > 0 ? 1 + data[size - 1] * 4 : 1;
  absl::StatusOr<Trace> batched = permitcheck::trace::read_trace_text(input, options);
  if (trace.ok() != batched.ok()) std::abort();
  if (!trace.ok() && trace.status() != batched.status()) std::abort();
  if (trace.ok() && (trace->lines != batched->lines || write_all(*trace) != write_all(*batched))) {
    std::abort();
  }
  if (!trace.ok()) {
    // Every error names its line.
    if (trace.status().message().substr(0, 5) != "line ") std::abort();
    return 0;
  }
  const std::string written = write_all(*trace);
  absl::StatusOr<Trace> again = permitcheck::trace::read_trace_text(written);
  if (!again.ok()) std::abort();                   // the writer wrote something unreadable
  if (write_all(*again) != written) std::abort();  // read(write(x)) lost or changed a value
  return 0;
}
