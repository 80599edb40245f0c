// TraceReader: reads a permit trace (trace-format.md, version 1) as spec values, one event at
// a time, in memory bounded by the longest line and never by the length of the trace.
//
//   absl::StatusOr<TraceReader> reader = TraceReader::open(std::cin);   // reads the header
//   spec::Event event;  std::uint64_t line;
//   for (absl::StatusOr<bool> more; (more = reader->next(&event, &line)).ok() && *more;) {...}
//
// Every error is an InvalidArgument (DataLoss for an I/O failure) whose message starts with
// "line N: " (N the 1-based line of the file) and says precisely what is wrong, e.g.
//   line 7: field "permits" must be an integer in int64 range, got 1e400
// A trace with an error cannot be read on (validate exits 2): after one, next() repeats it.
#ifndef PERMITCHECK_TRACE_READER_H_
#define PERMITCHECK_TRACE_READER_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "spec/events.h"

namespace permitcheck::trace {

// 128 MiB: a line of this size parses in about 1 GiB of memory.
inline constexpr std::size_t kDefaultMaxLineBytes = std::size_t{128} << 20;

struct ReaderOptions {
  // The longest line accepted, in bytes without its line ending. A longer line is an error,
  // reported as soon as the limit is passed. REQUIRES: >= 1.
  std::size_t max_line_bytes = kDefaultMaxLineBytes;
  // Parse the lines already read into memory together, as one stream of documents, which is
  // several times faster; false parses one line at a time. Both read the same events and give
  // the same diagnostics (every line the batch is not sure of is read one at a time).
  bool batched = true;
  // Bytes read from the stream at a time: memory is about this plus the longest line.
  // REQUIRES: >= 1.
  std::size_t chunk_bytes = std::size_t{1} << 17;
};

class TraceReader {
 public:
  // Reads up to and including the header: the first line that is neither blank nor a "#"
  // comment. The header must have trace "pip491-permits", version 1 and a known source; the
  // ruleset, if given, must be one this build supports (spec::parse_ruleset); q >= 0, t >= 1.
  // REQUIRES: `in` outlives the reader; nothing else reads `in` meanwhile.
  static absl::StatusOr<TraceReader> open(std::istream& in, ReaderOptions options = {});

  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;
  ~TraceReader();

  const spec::TraceHeader& header() const;

  // 1-based line of the header.
  std::uint64_t header_line() const;

  // Reads the next event into *out and its 1-based line into *line (when not null). Returns
  // false at the end of the trace; blank lines and comments are skipped. An unknown `ev`
  // starting with "x-" gives a spec::Extension; other unknown `ev` values are errors.
  absl::StatusOr<bool> next(spec::Event* out, std::uint64_t* line = nullptr);

 private:
  struct State;
  explicit TraceReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// A whole trace in memory, for tests, counterexamples and small inputs. Use TraceReader to
// stream long traces.
struct Trace {
  spec::TraceHeader header;
  std::vector<spec::Event> events;
  std::vector<std::uint64_t> lines;  // lines[i]: 1-based line of events[i]
};

absl::StatusOr<Trace> read_trace(std::istream& in, ReaderOptions options = {});
absl::StatusOr<Trace> read_trace_text(std::string_view text, ReaderOptions options = {});

}  // namespace permitcheck::trace

#endif  // PERMITCHECK_TRACE_READER_H_
