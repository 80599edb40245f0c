// Batch: the reader's fast path. The complete lines the LineSource has buffered are parsed
// together, as one stream of documents (one simdjson stage 1 for many lines instead of one per
// line, and no copy of each line), and decoded with LineParser::fast_event. A line is taken
// from the batch only when the batch is sure it is exactly one document on that one line and
// fast_event decodes it; every other line is left to the line-at-a-time path
// (LineParser::begin/event), the reference for what a trace means and for every diagnostic.
//
// Private to trace/.
//
//   Batch batch(max_line_bytes);
//   if (batch.next(lines, parser, &event, &line)) { ... } else { /* read one line slowly */ }
#ifndef PERMITCHECK_TRACE_INTERNAL_BATCH_H_
#define PERMITCHECK_TRACE_INTERNAL_BATCH_H_

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "spec/events.h"
#include "trace/internal/line_parser.h"
#include "trace/internal/line_source.h"

namespace permitcheck::trace::internal {

class Batch {
 public:
  explicit Batch(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Next event from the batch, starting a batch from the buffered lines when none is open.
  // Returns true with *out and *line set, or false: the caller reads the next line the
  // line-at-a-time way, then calls next() again.
  bool next(LineSource& lines, LineParser& parser, spec::Event* out,
            std::uint64_t* line);

 private:
  struct ContentLine {
    std::uint64_t number;
    std::size_t begin;  // offset of the line in the batch's bytes
    std::size_t json;   // offset of its first byte that is not JSON whitespace
    std::size_t end;    // offset just after its "\n"
  };

  // The compact path: decodes the next buffered line with LineParser::compact_event (blank
  // lines and comments before it skipped). False when there is none or it declines.
  bool compact(LineSource& lines, LineParser& parser, spec::Event* out, std::uint64_t* line);
  // Opens a batch over the buffered lines. False when there is none to open.
  bool start(LineSource& lines);
  // Whether the stream is at a document that starts where content line k starts.
  bool at_line(std::size_t k);
  // The document at it_ ends where content line k's text ends (trailing spaces and CR aside).
  bool document_ends_line(std::size_t k);
  // Moves the LineSource to `offset` of the batch's bytes, just after line `last_line`.
  void skip_to(LineSource& lines, std::size_t offset, std::uint64_t last_line);
  // Gives up the batch from content line k on: its lines are read one at a time.
  void abandon(LineSource& lines, std::size_t k);

  std::size_t max_line_bytes_;
  od::parser parser_;
  std::size_t capacity_ = 0;      // the batch size parser_ is allocated for
  od::document_stream stream_;
  od::document_stream::iterator it_;
  std::vector<ContentLine> content_;
  std::size_t next_ = 0;          // content line of the document at it_
  std::size_t consumed_ = 0;      // bytes of the batch the LineSource is past
  std::size_t size_ = 0;          // bytes of the batch (whole lines)
  std::uint64_t last_line_ = 0;   // number of its last line
  std::size_t base_ = 0;          // offset of its first document
  const char* data_ = nullptr;    // the batch's bytes (the LineSource's buffer)
  bool open_ = false;
  std::uint64_t slow_until_ = 0;  // lines up to this one are read one at a time
  // The compact path's view of the buffered lines, valid while the LineSource has read no new
  // chunk and is at quick_pos_ of it (buffered() searches the whole chunk: called once per view).
  LineSource::Buffered quick_;
  std::size_t quick_pos_ = 0;
  std::uint64_t quick_refills_ = 0;
};

}  // namespace permitcheck::trace::internal

#endif  // PERMITCHECK_TRACE_INTERNAL_BATCH_H_
