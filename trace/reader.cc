#include "trace/reader.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "trace/internal/batch.h"
#include "trace/internal/line_parser.h"
#include "trace/internal/line_source.h"

namespace permitcheck::trace {
using internal::Batch;
using internal::LineParser;

struct TraceReader::State {
  State(std::istream& in, ReaderOptions options)
      : lines(in, std::max<std::size_t>(options.max_line_bytes, 1),
              std::max<std::size_t>(options.chunk_bytes, 1)),
        parser(std::max<std::size_t>(options.max_line_bytes, 1)),
        batch(std::max<std::size_t>(options.max_line_bytes, 1)),
        batched(options.batched) {}

  // The next line that is neither blank nor a comment; false at the end.
  absl::StatusOr<bool> next_content_line() {
    while (true) {
      absl::StatusOr<bool> more = lines.next();
      if (!more.ok() || !*more) return more;
      if (internal::json_start(lines.line()) != std::string_view::npos) return true;
    }
  }

  internal::LineSource lines;
  LineParser parser;
  Batch batch;
  bool batched;
  spec::TraceHeader header;
  std::uint64_t header_line = 0;
  absl::Status error;
  bool done = false;
};

TraceReader::TraceReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

absl::StatusOr<TraceReader> TraceReader::open(std::istream& in, ReaderOptions options) {
  auto state = std::make_unique<State>(in, options);
  absl::StatusOr<bool> found = state->next_content_line();
  if (!found.ok()) return found.status();
  if (!*found) {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", state->lines.number() + 1,
                     ": the trace has no header (expected a first JSON line like "
                     "{\"trace\":\"pip491-permits\",\"version\":1,\"source\":\"client\"})"));
  }
  std::string_view line = state->lines.line();
  if (state->lines.number() == 1 && line.starts_with("\xEF\xBB\xBF")) {
    // A UTF-8 byte order mark, as some editors write: not part of the JSON.
    return absl::InvalidArgumentError(
        "line 1: the trace starts with a UTF-8 byte order mark (remove it: JSON Lines has none)");
  }
  if (absl::Status s = state->parser.begin(state->lines); !s.ok()) return s;
  if (absl::Status s = state->parser.header(&state->header); !s.ok()) return s;
  state->header_line = state->lines.number();
  return TraceReader(std::move(state));
}

const spec::TraceHeader& TraceReader::header() const { return state_->header; }

std::uint64_t TraceReader::header_line() const { return state_->header_line; }

absl::StatusOr<bool> TraceReader::next(spec::Event* out, std::uint64_t* line) {
  State& s = *state_;
  if (!s.error.ok()) return s.error;
  if (s.done) return false;
  std::uint64_t batch_line = 0;
  if (s.batched && s.batch.next(s.lines, s.parser, out, &batch_line)) {
    if (line != nullptr) *line = batch_line;
    return true;
  }
  absl::StatusOr<bool> found = s.next_content_line();
  absl::Status status = found.status();
  if (status.ok() && !*found) {
    s.done = true;
    return false;
  }
  if (status.ok()) status = s.parser.begin(s.lines);
  if (status.ok()) status = s.parser.event(out);
  if (!status.ok()) {
    s.error = status;
    return status;
  }
  if (line != nullptr) *line = s.lines.number();
  return true;
}

absl::StatusOr<Trace> read_trace(std::istream& in, ReaderOptions options) {
  absl::StatusOr<TraceReader> reader = TraceReader::open(in, options);
  if (!reader.ok()) return reader.status();
  Trace trace;
  trace.header = reader->header();
  while (true) {
    spec::Event event;
    std::uint64_t line = 0;
    absl::StatusOr<bool> more = reader->next(&event, &line);
    if (!more.ok()) return more.status();
    if (!*more) break;
    trace.events.push_back(std::move(event));
    trace.lines.push_back(line);
  }
  return trace;
}

absl::StatusOr<Trace> read_trace_text(std::string_view text, ReaderOptions options) {
  std::istringstream in{std::string(text)};
  return read_trace(in, options);
}

}  // namespace permitcheck::trace
