#include "spec/ack_set.h"

#include <bit>

namespace permitcheck::spec {
namespace {

std::uint64_t as_bits(std::int64_t word) { return static_cast<std::uint64_t>(word); }

}  // namespace

AckSet AckSet::from_indexes(std::initializer_list<std::int64_t> indexes) {
  return from_indexes(std::vector<std::int64_t>(indexes));
}

AckSet AckSet::from_indexes(const std::vector<std::int64_t>& indexes) {
  std::vector<std::int64_t> words;
  for (std::int64_t i : indexes) {
    const auto w = static_cast<std::size_t>(i / 64);
    if (words.size() <= w) words.resize(w + 1, 0);
    words[w] = static_cast<std::int64_t>(as_bits(words[w]) | (std::uint64_t{1} << (i % 64)));
  }
  return AckSet(std::move(words));
}

std::int64_t AckSet::count_all() const {
  std::int64_t n = 0;
  for (std::int64_t w : words_) n += std::popcount(as_bits(w));
  return n;
}

std::int64_t AckSet::count_below(std::int64_t b) const {
  if (b <= 0) return 0;
  std::int64_t n = 0;
  for (std::size_t w = 0; w < words_.size(); ++w) {
    const std::int64_t first = static_cast<std::int64_t>(w) * 64;
    if (first >= b) break;
    std::uint64_t bits = as_bits(words_[w]);
    const std::int64_t in_word = b - first;
    if (in_word < 64) bits &= (std::uint64_t{1} << in_word) - 1;
    n += std::popcount(bits);
  }
  return n;
}

bool AckSet::is_deliverable(std::int64_t i) const {
  if (i < 0) return false;
  const auto w = static_cast<std::size_t>(i / 64);
  if (w >= words_.size()) return false;
  return (as_bits(words_[w]) >> (i % 64)) & 1U;
}

}  // namespace permitcheck::spec
