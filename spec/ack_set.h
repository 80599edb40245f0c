// AckSet: CommandMessage.ack_set, the deliverable indexes of a partially acknowledged batch.
//
// Layout is Java's BitSet.toLongArray: bit i lives in word i/64 at bit i%64. A set bit means
// "still unacknowledged and deliverable". An empty AckSet means the field is absent.
//
//   AckSet s = AckSet::from_indexes({0, 2, 5});   // words {37}
//   s.count_below(8) == 3;                          // P of a partial batch of B = 8 (B2)
//   s.is_deliverable(1) == false;                   // K3: never touches the budget
#ifndef PERMITCHECK_SPEC_ACK_SET_H_
#define PERMITCHECK_SPEC_ACK_SET_H_

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace permitcheck::spec {

class AckSet {
 public:
  AckSet() = default;
  explicit AckSet(std::vector<std::int64_t> words) : words_(std::move(words)) {}

  // The set with exactly `indexes` set. REQUIRES: every index >= 0.
  static AckSet from_indexes(std::initializer_list<std::int64_t> indexes);
  static AckSet from_indexes(const std::vector<std::int64_t>& indexes);

  // True when the field is absent (no words at all). A present all-zero set is not empty.
  bool absent() const { return words_.empty(); }

  // Number of set bits in every word (C2: B unknown yet; X6).
  std::int64_t count_all() const;

  // Number of set bits in [0, b) (B2, C3). Bits at or beyond b are ignored. b <= 0 gives 0.
  std::int64_t count_below(std::int64_t b) const;

  // Whether index i (>= 0) is set. Indexes beyond the words are not set.
  bool is_deliverable(std::int64_t i) const;

  // True when some bit at or beyond b is set and no bit below b is (C5 decision 2).
  bool only_beyond(std::int64_t b) const { return count_all() > 0 && count_below(b) == 0; }

  const std::vector<std::int64_t>& words() const { return words_; }

  friend bool operator==(const AckSet&, const AckSet&) = default;

 private:
  std::vector<std::int64_t> words_;
};

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_ACK_SET_H_
