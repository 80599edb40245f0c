#include "capture/reassembly.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "spec/plain_text.h"

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
  kept_.clear();
  kept_.shrink_to_fit();
  refs_.clear();
  good_ranges_.clear();
  return reason;
}

void StreamReassembler::stop_comparing() {
  compare_ = false;
  kept_.clear();
  kept_.shrink_to_fit();
  refs_.clear();
  good_ranges_.clear();
}

void StreamReassembler::count_check(CopyCheck check) {
  if (check == CopyCheck::kGood) ++good_;
  if (check == CopyCheck::kBad) ++bad_;
  // Failing checksums that are most of them are the capture's (not filled in, offloaded in a
  // way we do not recognise), not corrupted copies: copies waiting on theirs are released.
  if (!distrust_ && bad_ >= kDistrustBad && bad_ * 8 > good_) distrust_ = true;
}

void StreamReassembler::mark_good(std::uint64_t at, std::size_t n) {
  if (!compare_ || n == 0) return;
  if (!good_ranges_.empty() && good_ranges_.back().second == at) {
    good_ranges_.back().second += n;
  } else {
    good_ranges_.emplace_back(at, at + n);
  }
  const std::uint64_t from = kept_from();
  while (!good_ranges_.empty() &&
         (good_ranges_.front().second <= from || good_ranges_.size() > kGoodRanges)) {
    good_ranges_.pop_front();
  }
}

bool StreamReassembler::delivered_good(std::uint64_t at) const {
  for (auto it = good_ranges_.rbegin(); it != good_ranges_.rend(); ++it) {
    if (it->first <= at && at < it->second) return true;
    if (it->second <= at) break;
  }
  return false;
}

std::string StreamReassembler::hole_note() const {
  if (distrust_ || pending_.empty() || pending_.begin()->first != next_ ||
      pending_.begin()->second.check != CopyCheck::kBad) {
    return "";
  }
  return " (the only copy captured there fails its TCP checksum: its receiver dropped it, and "
         "no other copy was captured)";
}

std::uint64_t StreamReassembler::kept_from() const {
  if (by_reference_) return next_ - std::min<std::uint64_t>(next_, kCompareBytes);
  return std::max(ring_from_, next_ - std::min<std::uint64_t>(next_, kept_.size()));
}

void StreamReassembler::to_ring() {
  by_reference_ = false;
  // The ring as keep() would have grown it by now (bytes that never wrapped stay in place).
  if (next_ > 0) {
    kept_.resize(static_cast<std::size_t>(
        std::min<std::uint64_t>(kCompareBytes, std::bit_ceil(std::max<std::uint64_t>(next_, 256)))));
  }
  const std::uint64_t from = kept_from();  // the ring's: what it holds from now on
  std::string bytes;
  for (const Ref& r : refs_) {
    if (r.at + r.size <= from) continue;
    const std::uint64_t lo = std::max(from, r.at);
    bytes.resize(static_cast<std::size_t>(r.at + r.size - lo));
    if (!(*source_)(r.origin + (lo - r.at), bytes.size(), bytes.data())) {
      ring_from_ = next_;  // what was kept cannot be read again: nothing before is compared
      continue;
    }
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      kept_[static_cast<std::size_t>((lo + i) % kept_.size())] = bytes[i];
    }
  }
  refs_.clear();
}

void StreamReassembler::keep(std::string_view bytes, std::uint64_t origin) {
  if (!compare_) return;
  const std::uint64_t start = next_ - bytes.size();
  if (by_reference_) {
    if (origin != kNoOrigin && source_ != nullptr && *source_) {
      if (!bytes.empty()) refs_.push_back(Ref{.at = start, .origin = origin, .size = bytes.size()});
      const std::uint64_t from = kept_from();
      while (!refs_.empty() && refs_.front().at + refs_.front().size <= from) refs_.pop_front();
      // Tiny segments: the references would outgrow the ring, which takes over.
      if (refs_.size() * sizeof(Ref) > kCompareBytes) to_ring();
      return;
    }
    next_ = start;  // the ring of the bytes before these
    to_ring();
    next_ = start + bytes.size();
  }
  if (bytes.size() > kCompareBytes) bytes.remove_prefix(bytes.size() - kCompareBytes);
  // A ring: the byte at stream offset o is at o % kept_.size() (next_ already moved past). It
  // grows by doubling up to kCompareBytes while the stream is shorter than it (no byte has
  // wrapped yet, so each stays where it is): a short stream keeps little.
  if (kept_.size() < kCompareBytes && kept_.size() < next_) {
    kept_.resize(static_cast<std::size_t>(
        std::min<std::uint64_t>(kCompareBytes, std::bit_ceil(std::max<std::uint64_t>(next_, 256)))));
  }
  const std::size_t size = kept_.size();
  std::size_t at = static_cast<std::size_t>((next_ - bytes.size()) % size);
  const std::size_t first = std::min(bytes.size(), size - at);
  std::memcpy(kept_.data() + at, bytes.data(), first);
  std::memcpy(kept_.data(), bytes.data() + first, bytes.size() - first);
}

namespace {

// Why two copies that differ cannot be told apart by their checksums (`first` the copy taken
// first, `later` the other).
std::string conflict(std::uint64_t at, CopyCheck first, CopyCheck later) {
  const char* why = "one corrupted? their TCP checksums cannot be verified";
  if (first == CopyCheck::kGood && later == CopyCheck::kGood) {
    why = "both copies' TCP checksums verify";
  } else if (first == CopyCheck::kGood) {
    why = "the first copy's TCP checksum verifies, the later one's cannot be verified";
  } else if (later == CopyCheck::kGood) {
    why = "the later copy's TCP checksum verifies, the first one's (already read) does not or "
          "cannot be verified";
  } else if (later == CopyCheck::kBad || first == CopyCheck::kBad) {
    why = "one copy's TCP checksum fails, the other's cannot be verified";
  }
  return absl::StrCat("two copies of stream offset ", at, " differ (", why,
                      "): which the receiver took is unknown");
}

}  // namespace

std::optional<std::string> StreamReassembler::differ(std::uint64_t at, CopyCheck check) {
  const bool first_good = delivered_good(at);
  if (first_good && check == CopyCheck::kBad && !distrust_) {
    resolved_now_ = true;  // the copy that verifies was taken: this one is dropped
    return std::nullopt;
  }
  return gap(conflict(at, first_good ? CopyCheck::kGood : CopyCheck::kUnknown, check));
}

std::optional<std::string> StreamReassembler::compare(std::uint64_t at, std::string_view bytes,
                                                      CopyCheck check) {
  if (!compare_) return std::nullopt;
  const std::uint64_t kept_from = this->kept_from();
  if (at < kept_from) {
    // Older than what is kept: its part in the window is compared, the rest cannot be (a
    // retransmission from far back; counted, said by the caller).
    uncompared_ = true;
    if (at + bytes.size() <= kept_from) return std::nullopt;
    bytes.remove_prefix(static_cast<std::size_t>(kept_from - at));
    at = kept_from;
  }
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), next_ - at));
  if (by_reference_) {  // the kept bytes read again where the capture holds them
    std::string kept;
    for (const Ref& r : refs_) {
      if (r.at + r.size <= at) continue;
      if (r.at >= at + n) break;
      const std::uint64_t lo = std::max(at, r.at);
      const std::uint64_t hi = std::min<std::uint64_t>(at + n, r.at + r.size);
      kept.resize(static_cast<std::size_t>(hi - lo));
      if (source_ == nullptr || !*source_ ||
          !(*source_)(r.origin + (lo - r.at), kept.size(), kept.data())) {
        uncompared_ = true;  // the capture no longer holds them (it shrank)
        continue;
      }
      const std::string_view copy = bytes.substr(static_cast<std::size_t>(lo - at), kept.size());
      if (copy != kept) {
        std::size_t j = 0;
        while (kept[j] == copy[j]) ++j;
        return differ(lo + j, check);
      }
    }
    return std::nullopt;
  }
  for (std::size_t i = 0; i < n;) {  // at most two runs of the ring
    const std::size_t ring = static_cast<std::size_t>((at + i) % kept_.size());
    const std::size_t run = std::min(n - i, kept_.size() - ring);
    if (std::memcmp(kept_.data() + ring, bytes.data() + i, run) != 0) {
      std::size_t j = 0;
      while (kept_[ring + j] == bytes[i + j]) ++j;
      return differ(at + i + j, check);
    }
    i += run;
  }
  return std::nullopt;
}

std::optional<std::string> StreamReassembler::add(double time, std::uint32_t seq,
                                                  std::string_view payload,
                                                  std::uint32_t missing,
                                                  std::vector<StreamChunk>* out,
                                                  std::uint64_t origin, CopyCheck check) {
  if (broken_) return std::nullopt;
  if (!started_) start(seq);
  if (payload.empty() && missing == 0) return std::nullopt;
  count_check(check);
  // A copy whose checksum fails is not delivered: it waits for another copy (its receiver
  // dropped it), unless this direction's checksums are not believed.
  const bool suspect = check == CopyCheck::kBad && !distrust_;
  resolved_now_ = false;
  std::int64_t at = offset_of(seq);
  const std::int64_t end = at + static_cast<std::int64_t>(payload.size());
  if (end <= static_cast<std::int64_t>(next_)) {
    // A retransmission of delivered bytes: the same bytes, or a conflict. Bytes before the
    // stream's start (a SYN's copy of data? garbage) cannot be compared: not the stream's.
    if (at >= 0) {
      if (std::optional<std::string> g = compare(static_cast<std::uint64_t>(at), payload, check)) {
        return g;
      }
      if (resolved_now_) {
        ++resolved_;
        return std::nullopt;
      }
    }
    // Its uncaptured tail may still be new.
    if (missing > 0 && end + missing > static_cast<std::int64_t>(next_)) {
      return gap(absl::StrCat("snap length too short: ", spec::count_noun(missing, "byte"),
                              " of a segment at stream offset ", end, " not captured"));
    }
    return std::nullopt;
  }
  if (at < static_cast<std::int64_t>(next_)) {  // overlaps delivered bytes: keep the new part
    if (at >= 0) {
      const auto overlap = static_cast<std::size_t>(static_cast<std::int64_t>(next_) - at);
      if (std::optional<std::string> g =
              compare(static_cast<std::uint64_t>(at), payload.substr(0, overlap), check)) {
        return g;
      }
      if (resolved_now_) {
        ++resolved_;
        return std::nullopt;
      }
    }
    const auto trimmed = static_cast<std::size_t>(static_cast<std::int64_t>(next_) - at);
    payload.remove_prefix(trimmed);
    if (origin != kNoOrigin) origin += trimmed;
    at = static_cast<std::int64_t>(next_);
  }
  const auto offset = static_cast<std::uint64_t>(at);
  if (offset == next_ && pending_.empty() && !suspect) {  // in order, the common case
    next_ += payload.size();
    keep(payload, origin);
    if (check == CopyCheck::kGood) mark_good(offset, payload.size());
    out->push_back(StreamChunk{.time = time, .owned = {}, .borrowed = payload});
    if (missing > 0) {
      return gap(absl::StrCat("snap length too short: bytes from stream offset ", next_,
                              " not captured"));
    }
    return std::nullopt;
  }
  Pending& slot = pending_[offset];
  const bool fresh = slot.bytes.empty() && !slot.cut;
  bool replace = fresh || payload.size() > slot.bytes.size() ||
                 (payload.size() == slot.bytes.size() && slot.cut);
  if (!fresh) {  // a copy of waiting bytes: the part both hold must agree
    const std::size_t both = std::min(slot.bytes.size(), payload.size());
    if (std::string_view(slot.bytes).substr(0, both) != payload.substr(0, both)) {
      std::size_t i = 0;
      while (slot.bytes[i] == payload[i]) ++i;
      if (!distrust_ && slot.check == CopyCheck::kBad && check == CopyCheck::kGood) {
        ++resolved_;  // the waiting copy fails its checksum, this one verifies: it replaces it
        replace = true;
      } else if (suspect && slot.check == CopyCheck::kGood) {
        ++resolved_;  // this copy fails its checksum, the waiting one verifies
        return std::nullopt;
      } else {
        return gap(conflict(offset + i, slot.check, check));
      }
    } else if (slot.check == CopyCheck::kBad && !suspect) {
      slot.check = check;  // the same bytes from a copy that does not fail: believed
    }
    if (suspect && slot.check != CopyCheck::kBad) replace = false;  // keep the good copy
  }
  if (replace) {
    pending_bytes_ = pending_bytes_ - slot.bytes.size() + payload.size();
    slot.bytes.assign(payload);
    slot.origin = origin;
    slot.cut = missing > 0;
    slot.time = fresh ? time : std::min(slot.time, time);
    slot.check = suspect ? CopyCheck::kBad : check;
  }
  const std::size_t first_new = out->size();
  if (std::optional<std::string> g = flush(out, first_new)) return g;
  if (pending_bytes_ > max_pending_) {
    return gap(absl::StrCat("lost segment: stream offset ", next_, " never captured while ",
                            spec::count_noun(pending_bytes_, "later byte"), " waited",
                            hole_note()));
  }
  return std::nullopt;
}

std::optional<std::string> StreamReassembler::flush(std::vector<StreamChunk>* out,
                                                    std::size_t first_new) {
  std::optional<std::string> result;
  while (!pending_.empty() && pending_.begin()->first <= next_) {
    if (pending_.begin()->second.check == CopyCheck::kBad && !distrust_) {
      // A copy whose checksum fails: what overlaps the bytes delivered is compared (dropped
      // when those verified), the rest waits at next_ for another copy.
      auto node = pending_.extract(pending_.begin());
      Pending& p = node.mapped();
      const std::uint64_t at = node.key();
      pending_bytes_ -= p.bytes.size();
      const auto overlap =
          static_cast<std::size_t>(std::min<std::uint64_t>(next_ - at, p.bytes.size()));
      if (overlap > 0) {
        resolved_now_ = false;
        if (std::optional<std::string> g =
                compare(at, std::string_view(p.bytes).substr(0, overlap), CopyCheck::kBad)) {
          result = g;
          break;
        }
        if (resolved_now_) {
          ++resolved_;
          continue;
        }
      }
      if (at + p.bytes.size() <= next_ || pending_.contains(next_)) continue;
      p.bytes.erase(0, overlap);
      if (p.origin != kNoOrigin) p.origin += overlap;
      pending_bytes_ += p.bytes.size();
      node.key() = next_;
      pending_.insert(std::move(node));
      break;
    }
    auto node = pending_.extract(pending_.begin());
    pending_bytes_ -= node.mapped().bytes.size();
    const std::uint64_t at = node.key();
    std::string& bytes = node.mapped().bytes;
    // What overlaps the bytes delivered must be the same bytes.
    const CopyCheck check = node.mapped().check;
    if (std::optional<std::string> g =
            compare(at,
                    std::string_view(bytes).substr(
                        0, static_cast<std::size_t>(std::min<std::uint64_t>(next_ - at, bytes.size()))),
                    check)) {
      result = g;
      break;
    }
    if (at + bytes.size() <= next_) {
      if (node.mapped().cut) {
        result = gap(absl::StrCat("snap length too short: a segment ending at stream offset ",
                                  at + bytes.size(), " was not captured whole"));
        break;
      }
      continue;  // wholly overlapped by what was delivered
    }
    std::uint64_t origin = node.mapped().origin;
    if (origin != kNoOrigin) origin += next_ - at;
    bytes.erase(0, static_cast<std::size_t>(next_ - at));
    const std::uint64_t from = next_;
    next_ += bytes.size();
    keep(bytes, origin);
    if (check == CopyCheck::kGood) mark_good(from, bytes.size());
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

std::optional<std::string> StreamReassembler::acknowledged(double time, std::uint32_t ack,
                                                           std::vector<StreamChunk>* out) {
  if (!started_ || broken_) return std::nullopt;
  const std::int64_t at = offset_of(ack);
  if (out != nullptr && !distrust_ && !pending_.empty() && pending_.begin()->first == next_ &&
      pending_.begin()->second.check == CopyCheck::kBad &&
      at > static_cast<std::int64_t>(next_)) {
    // The receiver took a copy whose checksum fails as captured: the capture's checksums of
    // this direction are not what the receiver checked.
    distrust_ = true;
    if (std::optional<std::string> g = flush(out, out->size())) return g;
  }
  // A FIN takes one sequence number: an ack one past the data is not a lost byte.
  if (at <= static_cast<std::int64_t>(next_) + 1) {
    acked_past_hole_since_.reset();
    return std::nullopt;
  }
  const bool waiting = !pending_.empty() || (end_ && next_ < *end_);  // maybe reordered
  if (!waiting ||
      (acked_past_hole_since_ && time - *acked_past_hole_since_ > kReorderSeconds)) {
    return gap(absl::StrCat("lost segment: the peer acknowledged stream offset ", at,
                            " but the capture holds the stream only up to ", next_,
                            hole_note()));
  }
  if (!acked_past_hole_since_) acked_past_hole_since_ = time;
  return std::nullopt;
}

std::optional<std::string> StreamReassembler::ends_at(std::uint32_t seq) {
  if (!started_ || broken_) return std::nullopt;
  const std::int64_t at = offset_of(seq);
  if (at < 0) return std::nullopt;  // before the stream's start: not this stream's FIN
  if (at < static_cast<std::int64_t>(next_)) {
    return gap(absl::StrCat("a FIN at stream offset ", at, " comes before bytes already "
                            "delivered (up to ", next_, "): the copies conflict"));
  }
  // A retransmitted FIN keeps the first one's place; bytes before it may still come.
  if (!end_ || static_cast<std::uint64_t>(at) > *end_) end_ = static_cast<std::uint64_t>(at);
  return std::nullopt;
}

std::optional<std::string> StreamReassembler::finish() {
  if (broken_) return std::nullopt;
  if (!pending_.empty()) {
    return gap(absl::StrCat("lost segment: stream offset ", next_, " never captured (",
                            spec::count_noun(pending_bytes_, "later byte"), " seen)",
                            hole_note()));
  }
  if (end_ && next_ < *end_) {
    return gap(absl::StrCat("lost segment: the stream ends at offset ", *end_,
                            " but the capture holds it only up to ", next_));
  }
  return std::nullopt;
}

}  // namespace permitcheck::capture
