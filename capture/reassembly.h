// TCP reassembly of one direction of one connection: segments in capture order in, the byte
// stream in sequence order out. Out-of-order segments wait (bounded), retransmissions and
// overlaps are trimmed to the bytes not yet delivered, once compared with the copy already
// taken: the last kCompareBytes delivered are kept, and two copies of the same bytes that
// differ are resolved by their TCP checksums where the caller verified them (CopyCheck): a
// copy whose checksum fails (and does not look offloaded) is not delivered but waits for
// another copy, and of two copies that differ the one that verifies is believed, the other
// dropped (counted: take_resolved). When neither or both verify, or it cannot be verified,
// the conflict is a gap, since which copy the receiver took is unknown. A direction whose
// checksums mostly fail (not a corrupted copy: a capture whose checksums are not filled in) is
// not judged by them. A copy older than what is kept is compared where it can be, and said
// (take_uncompared). The bytes are kept by reference when the segments say where the capture
// holds them (their origin, with a PayloadSource to read them there again: nothing is copied
// unless a copy comes), else copied. What cannot be recovered (a segment the
// capture lacks, bytes cut by the snap length) is a gap: the stream ends there, with a reason.
// A FIN that overtakes data waits for it. Memory: max_pending_bytes waiting, kCompareBytes
// kept (once a byte was delivered; by reference, a few words per segment delivered among them,
// the ring taking over before they would take more than kCompareBytes).
//
//   StreamReassembler r(/*max_pending_bytes=*/1 << 20);
//   r.start(syn_seq + 1);
//   std::vector<StreamChunk> out;
//   if (std::optional<std::string> gap = r.add(time, seg.seq, seg.payload, seg.missing, &out))
//     stop_following(*gap);
#ifndef PERMITCHECK_CAPTURE_REASSEMBLY_H_
#define PERMITCHECK_CAPTURE_REASSEMBLY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capture/packet.h"

namespace permitcheck::capture {

// Bytes of the stream, in order, with the capture time by which they had been sent: the
// earliest capture time of these bytes or of any later byte delivered with them (data is sent
// in sequence order, so a later byte seen first bounds the earlier one's time).
// In-order bytes are not copied: they view the segment just added (valid until the caller's
// segment is gone); bytes that waited behind a hole are owned.
struct StreamChunk {
  double time = 0;
  std::string owned;
  std::string_view borrowed;
  std::string_view bytes() const { return owned.empty() ? borrowed : std::string_view(owned); }
};

// What the TCP checksum of a copy shows, as the caller verified it (tcp_checksum_good): kBad
// only for a checksum that fails without looking offloaded (tcp_checksum_offloaded); kUnknown
// when it was not verified (the segment cut by the snap length, a side not judged by them).
enum class CopyCheck : std::uint8_t { kUnknown, kGood, kBad };

// Reads the `n` bytes of the capture at `origin` (a segment's payload, read again to compare a
// later copy with it) into `out`; false when they cannot be read (the file shrank).
using PayloadSource = std::function<bool(std::uint64_t origin, std::size_t n, char* out)>;

class StreamReassembler {
 public:
  // REQUIRES: max_pending_bytes >= 1.
  explicit StreamReassembler(std::size_t max_pending_bytes) : max_pending_(max_pending_bytes) {}

  // The stream's first byte has sequence number `seq` (a SYN's seq + 1, or the first data
  // segment's when the handshake was not captured).
  void start(std::uint32_t seq);
  bool started() const { return started_; }

  // Adds a segment captured at `time` with `missing` payload bytes beyond `payload` that the
  // capture does not hold. Appends newly contiguous bytes to `out` (those of `payload` itself
  // as views of it, when nothing waits). Returns the reason when
  // the stream has a gap from here on (nothing more is delivered after one).
  // `origin`: where the capture holds `payload` (read with the source given to use_source),
  // or kNoOrigin. `check`: what its TCP checksum shows.
  std::optional<std::string> add(double time, std::uint32_t seq, std::string_view payload,
                                 std::uint32_t missing, std::vector<StreamChunk>* out,
                                 std::uint64_t origin = kNoOrigin,
                                 CopyCheck check = CopyCheck::kUnknown);

  // Where segments with an origin are read again. REQUIRES: `source` outlives this (it may be
  // empty: then every byte kept is copied).
  void use_source(const PayloadSource* source) { source_ = source; }

  // The peer acknowledged, at `time`, every byte before `ack`: one the capture never held is a
  // gap. With later bytes waiting behind a hole the capture may merely have reordered them,
  // so the gap is declared when the hole stays open for kReorderSeconds after such an ack.
  // A copy waiting on its failed checksum that the peer acknowledges was taken by it: this
  // direction's checksums, as captured, are not believed from then on, and the bytes waiting
  // are appended to `out` (when given).
  std::optional<std::string> acknowledged(double time, std::uint32_t ack,
                                          std::vector<StreamChunk>* out = nullptr);
  static constexpr double kReorderSeconds = 0.5;

  // The sender's FIN comes after the byte before `seq`. Bytes before it not captured yet are
  // waited for (a FIN may overtake the last data segment): the stream has a hole until they
  // come; still missing at finish(), or once the peer acknowledged the FIN past the reorder
  // delay, they are a gap. Returns a gap only for a FIN before bytes already delivered (the
  // copies conflict).
  std::optional<std::string> ends_at(std::uint32_t seq);
  // Every byte before the FIN (ends_at) has been delivered.
  bool ended() const { return end_ && !broken_ && pending_.empty() && next_ >= *end_; }

  // The end of the stream (FIN, RST, end of capture): a hole still open, or bytes before a FIN
  // never captured, are a gap.
  std::optional<std::string> finish();

  // From now on copies are not compared (and nothing is kept): the caller knows the copies
  // agree (checksums it believes, a tap's copies that are never sent twice).
  void stop_comparing();
  bool comparing() const { return compare_; }
  // Whether a copy older than the bytes kept came since the last call (not wholly compared).
  bool take_uncompared() { return std::exchange(uncompared_, false); }
  // Copies dropped since the last call because they differ from a copy whose TCP checksum
  // verifies while theirs fails (the one that verifies believed).
  std::uint64_t take_resolved() { return std::exchange(resolved_, 0); }
  // Copies seen whose checksum verified / failed (CopyCheck), and whether this direction's
  // checksums are no longer believed (most fail: not filled in by the capture).
  std::uint64_t good_checksums() const { return good_; }
  std::uint64_t bad_checksums() const { return bad_; }
  bool distrusts_checksums() const { return distrust_; }

  // Delivered bytes kept to compare a later copy with.
  static constexpr std::size_t kCompareBytes = 16 * 1024;
  // Bytes this reassembler holds: waiting behind a hole, and kept to compare copies.
  std::size_t memory() const {
    return pending_bytes_ + kept_.size() + refs_.size() * sizeof(Ref);
  }

  // Whether a segment starting at `seq` would begin past the next byte expected, leaving
  // bytes before it never seen (so far): false before start() and once broken.
  bool would_skip(std::uint32_t seq) const {
    return started_ && !broken_ && offset_of(seq) > static_cast<std::int64_t>(next_);
  }
  // The sequence number the stream started at (start()).
  std::uint32_t first_seq() const { return isn_; }

  // Bytes waiting behind a hole (or before a FIN that overtook them).
  bool has_hole() const {
    return !pending_.empty() || (end_ && !broken_ && next_ < *end_);
  }
  std::size_t pending_bytes() const { return pending_bytes_; }
  // Bytes delivered so far.
  std::uint64_t delivered() const { return next_; }
  bool broken() const { return broken_; }

 private:
  struct Pending {
    double time = 0;
    std::string bytes;
    bool cut = false;  // the segment's tail was not captured
    std::uint64_t origin = kNoOrigin;  // where the capture holds `bytes`
    CopyCheck check = CopyCheck::kUnknown;  // kBad: not delivered, waits for another copy
  };
  // Delivered bytes at stream offset `at`, held by the capture at `origin`.
  struct Ref {
    std::uint64_t at = 0, origin = 0;
    std::size_t size = 0;
  };
  // Stream offset of sequence number `seq`, relative to the next byte expected.
  std::int64_t offset_of(std::uint32_t seq) const;
  std::optional<std::string> gap(std::string reason);
  // Delivers pending segments that have become contiguous.
  std::optional<std::string> flush(std::vector<StreamChunk>* out, std::size_t first_new);
  // `bytes`, a copy of stream offset `at` onwards (before next_), against the bytes delivered
  // there: the gap when they differ or are no longer kept.
  // `check`: what the copy's checksum shows; a difference is resolved in favour of the bytes
  // delivered when they verified and this copy fails (resolved_now_ set, no gap).
  std::optional<std::string> compare(std::uint64_t at, std::string_view bytes,
                                     CopyCheck check = CopyCheck::kUnknown);
  // Records `bytes`, just delivered (next_ is past them), among the last kCompareBytes: by
  // reference while every segment has an origin (and there is a source), else in the ring.
  void keep(std::string_view bytes, std::uint64_t origin);
  // Copies the bytes kept by reference into the ring (a segment without an origin came).
  void to_ring();
  // The first stream offset whose delivered bytes are kept.
  std::uint64_t kept_from() const;
  // Compares `bytes` (a copy of stream offset `at` on, within what is kept) with the bytes
  // kept: by reading them again through the source, or in the ring.
  std::optional<std::string> compare_kept(std::uint64_t at, std::string_view bytes);
  std::optional<std::string> differ(std::uint64_t at, CopyCheck check);
  // Whether the delivered byte at stream offset `at` came from a copy whose checksum verified.
  bool delivered_good(std::uint64_t at) const;
  // Records delivered bytes [at, at + n) as from a copy that verified (bounded: the oldest
  // ranges are forgotten, never made up).
  void mark_good(std::uint64_t at, std::size_t n);
  // Counts a copy's check; past kDistrustBad failures that are most of them, the direction's
  // checksums are no longer believed and the copies waiting on theirs are released.
  void count_check(CopyCheck check);
  // Why the hole at next_ is a gap, when the copy waiting there failed its checksum.
  std::string hole_note() const;

  std::size_t max_pending_;
  bool started_ = false;
  bool broken_ = false;
  std::uint32_t isn_ = 0;     // sequence number of offset 0
  std::uint64_t next_ = 0;    // offset of the next byte to deliver
  std::map<std::uint64_t, Pending> pending_;  // by offset
  std::size_t pending_bytes_ = 0;
  std::optional<double> acked_past_hole_since_;
  std::optional<std::uint64_t> end_;  // offset of the FIN, once seen
  // The last kCompareBytes delivered, as a ring (offset o at o % kCompareBytes); empty until
  // the first byte is delivered.
  std::string kept_;
  // Instead, while every segment delivered had an origin: where the capture holds the bytes
  // delivered from kept_from() on, in order, contiguous.
  std::deque<Ref> refs_;
  bool by_reference_ = true;  // until a byte without an origin (or no source) is kept
  std::uint64_t ring_from_ = 0;  // bytes before it are not in the ring (read back failed)
  const PayloadSource* source_ = nullptr;
  bool compare_ = true;
  bool uncompared_ = false;
  // Checksums: copies that verified / failed, whether they are believed no more, conflicts
  // resolved by them, and where the delivered bytes verified ([from, to) ranges, in order,
  // within what is kept; at most kGoodRanges).
  std::uint64_t good_ = 0, bad_ = 0, resolved_ = 0;
  bool distrust_ = false;
  bool resolved_now_ = false;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> good_ranges_;
  static constexpr std::size_t kGoodRanges = 256;
  static constexpr std::uint64_t kDistrustBad = 3;
};

}  // namespace permitcheck::capture

#endif  // PERMITCHECK_CAPTURE_REASSEMBLY_H_
