#include "trace/internal/line_source.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "trace/internal/json_text.h"

namespace permitcheck::trace::internal {

std::size_t json_start(std::string_view line) {
  if (!line.empty() && line.front() == '#') return std::string_view::npos;
  std::size_t first = 0;
  while (first < line.size() && is_json_whitespace(line[first])) ++first;
  return first < line.size() ? first : std::string_view::npos;
}

LineSource::LineSource(std::istream& in, std::size_t max_line_bytes, std::size_t chunk_bytes)
    : in_(in),
      max_line_bytes_(max_line_bytes),
      chunk_bytes_(chunk_bytes > 0 ? chunk_bytes : 1),
      chunk_(chunk_bytes_ + kPadding, ' ') {}

LineSource::Buffered LineSource::buffered() {
  if (!error_.ok() || done_ || chunk_pos_ == chunk_end_) return {};
  const char* start = chunk_.data() + chunk_pos_;
  const auto* last = static_cast<const char*>(memrchr(start, '\n', chunk_end_ - chunk_pos_));
  if (last == nullptr) return {};
  return Buffered{chunk_.data() + chunk_pos_, static_cast<std::size_t>(last - start) + 1,
                  number_ + 1};
}

void LineSource::skip(std::size_t bytes, std::uint64_t lines) {
  chunk_pos_ += bytes;
  number_ += lines;
  if (lines > 0) terminated_ = true;
}

absl::Status LineSource::refill() {
  chunk_pos_ = 0;
  chunk_end_ = 0;
  ++refills_;
  if (eof_) return absl::OkStatus();
  in_.read(chunk_.data(), static_cast<std::streamsize>(chunk_bytes_));
  chunk_end_ = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) {
    return absl::DataLossError(
        absl::StrCat("line ", number_, ": I/O error while reading the trace"));
  }
  if (chunk_end_ < chunk_bytes_) eof_ = true;
  return absl::OkStatus();
}

absl::Status LineSource::too_long() {
  error_ = absl::InvalidArgumentError(
      absl::StrCat("line ", number_, ": line is longer than ", max_line_bytes_,
                   " bytes, the reader's limit (is this a trace file?)"));
  return error_;
}

absl::StatusOr<bool> LineSource::next() {
  if (!error_.ok()) return error_;
  if (done_) return false;
  buffer_.clear();
  length_ = 0;
  ++number_;
  bool any_byte = false;
  while (true) {
    if (chunk_pos_ == chunk_end_) {
      if (eof_) {
        if (!any_byte) {
          --number_;
          done_ = true;
          return false;
        }
        terminated_ = false;
        break;
      }
      if (absl::Status s = refill(); !s.ok()) {
        error_ = s;
        return error_;
      }
      continue;
    }
    any_byte = true;
    const char* start = chunk_.data() + chunk_pos_;
    const std::size_t available = chunk_end_ - chunk_pos_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', available));
    const std::size_t take =
        newline != nullptr ? static_cast<std::size_t>(newline - start) : available;
    // One byte of slack: a "\r" before the "\n" is not content.
    if (buffer_.size() + take > max_line_bytes_ + 1) return too_long();
    buffer_.append(start, take);
    if (newline != nullptr) {
      chunk_pos_ += take + 1;
      terminated_ = true;
      break;
    }
    chunk_pos_ += take;
  }
  length_ = buffer_.size();
  if (length_ > 0 && buffer_[length_ - 1] == '\r') --length_;
  if (length_ > max_line_bytes_) return too_long();
  buffer_.resize(length_);
  buffer_.append(kPadding, ' ');
  return true;
}

}  // namespace permitcheck::trace::internal
