#include "trace/internal/batch.h"

#include <algorithm>
#include <cstring>


namespace permitcheck::trace::internal {
namespace {

// A raw character below U+0020 other than the line end: invalid JSON in a string, and outside
// one either invalid or whitespace (tab, CR) the writer never writes. simdjson's stream can
// take a line holding one for a whole document (a fuzzer find: an ESC between fields), so the
// batch leaves such a line to the line-at-a-time path, which names the error.
bool has_control(const char* begin, std::size_t length) {
  return std::any_of(begin, begin + length,
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\n'; });
}

}  // namespace

bool Batch::compact(LineSource& lines, LineParser& parser, spec::Event* out,
                    std::uint64_t* line) {
  if (quick_.data == nullptr || lines.refills() != quick_refills_ ||
      lines.position() != quick_.data + quick_pos_ || quick_pos_ == quick_.size) {
    quick_ = lines.buffered();
    quick_pos_ = 0;
    quick_refills_ = lines.refills();
    if (quick_.size == 0) {
      quick_.data = nullptr;
      return false;
    }
  }
  while (quick_pos_ < quick_.size) {
    const char* begin = quick_.data + quick_pos_;
    std::size_t skipped = 0;  // a blank line or a comment
    if (*begin == '\n') {
      skipped = 1;
    } else if (*begin == '#') {
      skipped = static_cast<std::size_t>(
                    static_cast<const char*>(std::memchr(begin, '\n', quick_.size - quick_pos_)) -
                    begin) + 1;
      if (skipped - 1 > max_line_bytes_) return false;  // too long: the slow path says so
    }
    if (skipped == 0) break;
    lines.skip(skipped, 1);
    quick_pos_ += skipped;
  }
  if (quick_pos_ == quick_.size) return false;
  const char* begin = quick_.data + quick_pos_;
  const char* newline = nullptr;
  if (!parser.compact_event(begin, max_line_bytes_, out, &newline)) return false;
  const std::size_t bytes = static_cast<std::size_t>(newline - begin) + 1;
  lines.skip(bytes, 1);
  quick_pos_ += bytes;
  *line = lines.number();
  return true;
}

bool Batch::start(LineSource& lines) {
  const LineSource::Buffered buffered = lines.buffered();
  if (buffered.size == 0) return false;
  char* data = buffered.data;
  content_.clear();
  std::size_t pos = 0;
  std::uint64_t number = buffered.first_line;
  // Whole lines, up to one the line-at-a-time path would refuse before parsing it (too long,
  // a NUL) or one holding a control character.
  const bool any_control = has_control(data, buffered.size);
  while (pos < buffered.size) {
    char* begin = data + pos;
    const auto* newline = static_cast<char*>(std::memchr(begin, '\n', buffered.size - pos));
    std::size_t length = static_cast<std::size_t>(newline - begin);
    const std::size_t end = pos + length + 1;
    if (length > 0 && begin[length - 1] == '\r') --length;
    if (length > max_line_bytes_ || (any_control && has_control(begin, length))) {
      break;
    }
    if (const std::size_t first = json_start(std::string_view(begin, length));
        first != std::string_view::npos) {
      content_.push_back({number, pos, pos + first, end});
    } else {
      std::memset(begin, ' ', length);  // blank or a comment: blank to the JSON parser
    }
    pos = end;
    ++number;
  }
  if (pos == 0) return false;
  size_ = pos;
  last_line_ = number - 1;
  consumed_ = 0;
  if (content_.empty()) {  // only blank lines and comments
    skip_to(lines, size_, last_line_);
    return true;
  }
  // The last content line is left to the slow path: the stream cannot show that it is one
  // whole document (simdjson drops an incomplete last document from a stream silently).
  if (content_.size() < 2) {
    skip_to(lines, content_.front().begin, content_.front().number - 1);
    return false;
  }
  data_ = data;
  base_ = content_.front().json;
  const std::size_t json_size = size_ - base_;
  // A capacity that only grows: simdjson reallocates its buffers whenever it changes.
  capacity_ = std::max({capacity_, json_size, std::size_t{64}});
  if (parser_.iterate_many(data + base_, json_size, capacity_).get(stream_)) {
    slow_until_ = last_line_;
    return false;
  }
  it_ = stream_.begin();
  next_ = 0;
  open_ = true;
  if (!at_line(0)) abandon(lines, 0);
  return true;
}

bool Batch::document_ends_line(std::size_t k) {
  const std::string_view doc = it_.source();  // from the document's start to its closing brace
  std::size_t end = content_[k].end - 1;      // the line's "\n"
  while (end > content_[k].json && (data_[end - 1] == ' ' || data_[end - 1] == '\r')) --end;
  return doc.data() + doc.size() == data_ + end;
}

bool Batch::at_line(std::size_t k) {
  if (!(it_ != stream_.end()) || (*it_).error()) return false;
  return base_ + it_.current_index() == content_[k].json;
}

void Batch::skip_to(LineSource& lines, std::size_t offset, std::uint64_t last_line) {
  lines.skip(offset - consumed_, last_line - lines.number());
  consumed_ = offset;
}

void Batch::abandon(LineSource& lines, std::size_t k) {
  skip_to(lines, content_[k].begin, content_[k].number - 1);
  open_ = false;
  slow_until_ = last_line_;
}

bool Batch::next(LineSource& lines, LineParser& parser, spec::Event* out,
                 std::uint64_t* line) {
  while (!open_) {
    if (lines.number() < slow_until_) return false;
    if (compact(lines, parser, out, line)) return true;
    if (!start(lines)) return false;
  }
  // Content line k is one document on one line when the next document starts where content
  // line k+1 starts (there is one: the last content line is never decoded here).
  const std::size_t k = next_;
  // The document must also end where line k's text ends: fast_event reads only the fields it
  // needs, and the stream may take text after the object (a stray "}", a fuzzer find) into
  // the same document, which the line-at-a-time path reports as text after the object.
  const bool whole = document_ends_line(k);
  const bool decoded = whole && parser.fast_event((*it_).value_unsafe(), out);
  ++it_;
  const bool aligned = at_line(k + 1);
  next_ = k + 1;
  if (next_ + 1 == content_.size()) open_ = false;  // the last content line: slow path
  if (decoded && aligned) {
    *line = content_[k].number;
    if (!open_) skip_to(lines, content_[next_].begin, content_[next_].number - 1);
    return true;
  }
  // Line k is read the line-at-a-time way. The batch goes on after it if the stream is at
  // line k+1; if it is not, line k may not be one document on one line: the slow path says,
  // and reads the rest of the batch's lines too.
  skip_to(lines, content_[k].begin, content_[k].number - 1);
  if (aligned) {
    consumed_ = content_[k].end;  // the caller reads line k
  } else {
    open_ = false;
    slow_until_ = last_line_;
  }
  return false;
}

}  // namespace permitcheck::trace::internal
