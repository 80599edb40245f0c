// LineSource: splits a byte stream into lines with bounded memory, for the trace reader.
//
// Memory is bounded by the longest line (never by the stream length): the stream is read in
// fixed chunks and one line is assembled at a time, in a buffer reused for every line. A line
// longer than the limit is an error as soon as the limit is passed, without reading the rest.
// Reads are whole chunks (istream::read): on a live pipe a line is seen once its chunk is full
// or the stream ends, which suits recorded traces, not interactive tailing.
//
// Private to trace/.
//
//   LineSource lines(in, /*max_line_bytes=*/1 << 20);
//   while (true) {
//     absl::StatusOr<bool> more = lines.next();   // false at the end of the stream
//     if (!more.ok() || !*more) break;
//     use(lines.line(), lines.number());            // "\n" and one trailing "\r" removed
//   }
//
// Bulk access, for a reader that parses many lines at once: buffered() is every complete line
// already read into the chunk after the current position, in place; skip_to() moves past the
// lines the caller handled itself. Lines it does not handle it reads with next() as usual.
#ifndef PERMITCHECK_TRACE_INTERNAL_LINE_SOURCE_H_
#define PERMITCHECK_TRACE_INTERNAL_LINE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace permitcheck::trace::internal {

// Where the JSON of a line starts: the offset of its first byte that is not JSON whitespace,
// or npos for a line a trace skips, blank (only JSON whitespace) or a comment ("#" first).
std::size_t json_start(std::string_view line);

class LineSource {
 public:
  // Bytes of readable padding guaranteed after every line (filled with spaces): what simdjson
  // needs to parse the line in place.
  static constexpr std::size_t kPadding = 64;

  // REQUIRES: `in` outlives the LineSource; max_line_bytes >= 1.
  LineSource(std::istream& in, std::size_t max_line_bytes, std::size_t chunk_bytes = 1 << 17);

  // Reads the next line. Returns false at the end of the stream (a final line without "\n"
  // is still returned). Errors, with the line number: the line is longer than the limit, or
  // the stream failed. After an error or the end, every call returns the same.
  absl::StatusOr<bool> next();

  // The current line, without its "\n" and without one "\r" just before it.
  std::string_view line() const { return std::string_view(buffer_.data(), length_); }

  // The line followed by at least kPadding spaces, and the size of that whole buffer.
  const char* padded_data() const { return buffer_.data(); }
  std::size_t padded_size() const { return buffer_.size(); }

  // The complete lines buffered after the current line: `size` bytes at `data`, each line
  // ending with "\n", the first being line `first_line`. The bytes may be overwritten (they are
  // never read again once skipped) and at least kPadding readable bytes follow them. Empty
  // (size 0) when no complete line is buffered: then read the next line with next().
  struct Buffered {
    char* data = nullptr;
    std::size_t size = 0;
    std::uint64_t first_line = 0;
  };
  Buffered buffered();

  // Moves past buffered lines: `bytes` from the start of buffered(), which must end just after
  // a "\n" of it, holding `lines` lines. The last of them becomes the current line (number()).
  void skip(std::size_t bytes, std::uint64_t lines);

  // Where the next buffered byte is, and how many chunks were read so far: the bytes of a
  // buffered() stay in place while both are unchanged (skip() moves the position).
  const char* position() const { return chunk_.data() + chunk_pos_; }
  std::uint64_t refills() const { return refills_; }

  // 1-based number of the current line.
  std::uint64_t number() const { return number_; }

  // Whether the current line ended with "\n" (false only for a last line cut short).
  bool terminated() const { return terminated_; }

 private:
  absl::Status refill();
  absl::Status too_long();  // records and returns the line-length error

  std::istream& in_;
  std::size_t max_line_bytes_;
  std::size_t chunk_bytes_;
  std::vector<char> chunk_;  // chunk_bytes_ read at a time, then kPadding spaces
  std::size_t chunk_pos_ = 0;
  std::size_t chunk_end_ = 0;
  std::uint64_t refills_ = 0;
  bool eof_ = false;
  std::string buffer_;  // line + padding
  std::size_t length_ = 0;
  std::uint64_t number_ = 0;
  bool terminated_ = true;
  bool done_ = false;
  absl::Status error_;
};

}  // namespace permitcheck::trace::internal

#endif  // PERMITCHECK_TRACE_INTERNAL_LINE_SOURCE_H_
