#include "capture/reassembly.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace permitcheck::capture {

void StreamReassembler::start(std::uint32_t seq) {
  started_ = true;
  isn_ = seq;
  next_ = 0;
}

std::int64_t StreamReassembler::offset_of(std::uint32_t seq) const {
  const std::uint32_t expected = isn_ + static_cast<std::uint32_t>(next_);
  return static_cast<std::int64_t>(next_) +
         static_cast<std::int32_t>(seq - expected);  // wraps like TCP: within 2 GiB of next
}

std::optional<std::string> StreamReassembler::gap(std::string reason) {
  broken_ = true;
  pending_.clear();
  pending_bytes_ = 0;
  return reason;
}

std::optional<std::string> StreamReassembler::add(double time, std::uint32_t seq,
                                                  std::string_view payload,
                                                  std::uint32_t missing,
                                                  std::vector<StreamChunk>* out) {
  if (broken_) return std::nullopt;
  if (!started_) start(seq);
  if (payload.empty() && missing == 0) return std::nullopt;
  std::int64_t at = offset_of(seq);
  const std::int64_t end = at + static_cast<std::int64_t>(payload.size());
  if (end <= static_cast<std::int64_t>(next_)) {
    // A retransmission of delivered bytes; its uncaptured tail may still be new.
    if (missing > 0 && end + missing > static_cast<std::int64_t>(next_)) {
      return gap(absl::StrCat("snap length too short: ", missing, " byte(s) of a segment at "
                              "stream offset ", end, " not captured"));
    }
    return std::nullopt;
  }
  if (at < static_cast<std::int64_t>(next_)) {  // overlaps delivered bytes: keep the new part
    payload.remove_prefix(static_cast<std::size_t>(static_cast<std::int64_t>(next_) - at));
    at = static_cast<std::int64_t>(next_);
  }
  const auto offset = static_cast<std::uint64_t>(at);
  if (offset == next_ && pending_.empty()) {  // in order, the common case: no waiting room
    next_ += payload.size();
    out->push_back(StreamChunk{.time = time, .owned = {}, .borrowed = payload});
    if (missing > 0) {
      return gap(absl::StrCat("snap length too short: bytes from stream offset ", next_,
                              " not captured"));
    }
    return std::nullopt;
  }
  Pending& slot = pending_[offset];
  const bool fresh = slot.bytes.empty() && !slot.cut;
  if (fresh || payload.size() > slot.bytes.size() ||
      (payload.size() == slot.bytes.size() && slot.cut)) {
    pending_bytes_ += payload.size() - slot.bytes.size();
    slot.bytes.assign(payload);
    slot.cut = missing > 0;
    slot.time = fresh ? time : std::min(slot.time, time);
  }
  const std::size_t first_new = out->size();
  if (std::optional<std::string> g = flush(out, first_new)) return g;
  if (pending_bytes_ > max_pending_) {
    return gap(absl::StrCat("lost segment: stream offset ", next_, " never captured while ",
                            pending_bytes_, " later byte(s) waited"));
  }
  return std::nullopt;
}

std::optional<std::string> StreamReassembler::flush(std::vector<StreamChunk>* out,
                                                    std::size_t first_new) {
  std::optional<std::string> result;
  while (!pending_.empty() && pending_.begin()->first <= next_) {
    auto node = pending_.extract(pending_.begin());
    pending_bytes_ -= node.mapped().bytes.size();
    const std::uint64_t at = node.key();
    std::string& bytes = node.mapped().bytes;
    if (at + bytes.size() <= next_) {
      if (node.mapped().cut) {
        result = gap(absl::StrCat("snap length too short: a segment ending at stream offset ",
                                  at + bytes.size(), " was not captured whole"));
        break;
      }
      continue;  // wholly overlapped by what was delivered
    }
    bytes.erase(0, static_cast<std::size_t>(next_ - at));
    next_ += bytes.size();
    out->push_back(StreamChunk{.time = node.mapped().time, .owned = std::move(bytes), .borrowed = {}});
    if (node.mapped().cut) {
      result = gap(absl::StrCat("snap length too short: bytes from stream offset ", next_,
                                " not captured"));
      break;
    }
  }
  // Bytes sent later bound the time of those before them.
  double later = 0;
  for (std::size_t i = out->size(); i > first_new; --i) {
    StreamChunk& c = (*out)[i - 1];
    if (i < out->size()) c.time = std::min(c.time, later);
    later = c.time;
  }
  return result;
}

std::optional<std::string> StreamReassembler::acknowledged(double time, std::uint32_t ack) {
  if (!started_ || broken_) return std::nullopt;
  const std::int64_t at = offset_of(ack);
  // A FIN takes one sequence number: an ack one past the data is not a lost byte.
  if (at <= static_cast<std::int64_t>(next_) + 1) {
    acked_past_hole_since_.reset();
    return std::nullopt;
  }
  if (pending_.empty() ||
      (acked_past_hole_since_ && time - *acked_past_hole_since_ > kReorderSeconds)) {
    return gap(absl::StrCat("lost segment: the peer acknowledged stream offset ", at,
                            " but the capture holds the stream only up to ", next_));
  }
  if (!acked_past_hole_since_) acked_past_hole_since_ = time;
  return std::nullopt;
}

std::optional<std::string> StreamReassembler::ends_at(std::uint32_t seq) {
  if (!started_ || broken_ || !pending_.empty()) return std::nullopt;
  const std::int64_t at = offset_of(seq);
  if (at > static_cast<std::int64_t>(next_)) {
    return gap(absl::StrCat("lost segment: the stream ends at offset ", at,
                            " but the capture holds it only up to ", next_));
  }
  return std::nullopt;
}

std::optional<std::string> StreamReassembler::finish() {
  if (broken_ || pending_.empty()) return std::nullopt;
  return gap(absl::StrCat("lost segment: stream offset ", next_, " never captured (",
                          pending_bytes_, " later byte(s) seen)"));
}

}  // namespace permitcheck::capture
