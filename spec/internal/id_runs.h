// IdRuns: a set of ids, each with a small value, kept compactly for what the monitor must
// remember about finished commands, messages and ended permit states (issue 18: a reused id or
// a late event is seen in streaming mode too). Numeric ids are kept as runs of consecutive ids
// whose values are alike or rise by one per id (a run of commands finishing alike, of messages
// of one command, or of commands each on the permit state numbered after the previous one's),
// so ids finishing in increasing order cost one run in all; text ids cost one hash entry each
// (and their text).
//
//   IdRuns<std::uint32_t> finished;
//   finished.insert(Id::number(7), 0);
//   if (std::optional<std::uint32_t> v = finished.take(Id::number(7))) { ... }
//
// Cost: 16 bytes per run (24 with a 64-bit value) in a B-tree (nodes at least half full,
// about 1.1x when ids arrive in increasing order), so from almost nothing per id (one run
// for a whole increasing sequence) up to about 32 bytes per id (48 with a 64-bit value) when
// every id is alone in its run.
#ifndef PERMITCHECK_SPEC_INTERNAL_ID_RUNS_H_
#define PERMITCHECK_SPEC_INTERNAL_ID_RUNS_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "spec/events.h"

namespace permitcheck::spec::monitor_internal {

template <typename V>
class IdRuns {
 public:
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }  // ids held

  // Holds `id` with `value` (replacing the value it had, if held).
  void insert(const Id& id, V value) {
    if (!id.is_number()) {
      if (text_.insert_or_assign(id.as_text(), value).second) ++count_;
      return;
    }
    const std::uint64_t n = id.as_number();
    if (past_runs(n)) {
      auto last = runs_.empty() ? runs_.end() : std::prev(runs_.end());
      if (last == runs_.end() || n - last->first != last->second.len ||
          !extend(last->second, value)) {
        runs_.emplace_hint(runs_.end(), n, Run{value, 1, false});
      }
      ++count_;
      return;
    }
    take(id);  // if held (with another value), its run splits around it; re-inserted below
    auto next = runs_.upper_bound(n);
    if (next != runs_.begin()) {
      auto prev = std::prev(next);
      if (n - prev->first == prev->second.len && extend(prev->second, value)) {
        // Joined with the next run when that one continues this one's values.
        if (next != runs_.end() && next->first - n == 1 &&
            next->second.value == at(prev->second, next->first - prev->first) &&
            (next->second.len == 1 || next->second.rising == prev->second.rising) &&
            std::uint64_t{prev->second.len} + next->second.len <= kMaxLen) {
          prev->second.len += next->second.len;
          runs_.erase(next);
        }
        ++count_;
        return;
      }
    }
    if (next != runs_.end() && next->first - n == 1 && next->second.len < kMaxLen) {
      // Prepended to the next run when its values continue from `value`.
      const bool rises = static_cast<V>(value + 1) == next->second.value;
      if ((rises || value == next->second.value) &&
          (next->second.len == 1 || next->second.rising == rises)) {
        const Run joined{value, static_cast<std::uint32_t>(next->second.len + 1u), rises};
        runs_.erase(next);
        runs_.emplace(n, joined);
        ++count_;
        return;
      }
    }
    runs_.emplace(n, Run{value, 1, false});
    ++count_;
  }

  // The value of `id`, if held.
  std::optional<V> find(const Id& id) const {
    if (!id.is_number()) {
      auto it = text_.find(id.as_text());
      return it == text_.end() ? std::nullopt : std::optional<V>(it->second);
    }
    const std::uint64_t n = id.as_number();
    auto it = run_of(n);
    return it == runs_.end() ? std::nullopt : std::optional<V>(at(it->second, n - it->first));
  }

  // The value of `id`, if held; `id` is no longer held.
  std::optional<V> take(const Id& id) {
    if (!id.is_number()) {
      auto it = text_.find(id.as_text());
      if (it == text_.end()) return std::nullopt;
      const V value = it->second;
      text_.erase(it);
      --count_;
      return value;
    }
    const std::uint64_t n = id.as_number();
    auto it = run_of(n);
    if (it == runs_.end()) return std::nullopt;
    const Run run = it->second;
    const std::uint64_t before = n - it->first;          // ids of the run below n
    const std::uint64_t after = run.len - before - 1;    // ids of the run above n
    if (before == 0) {
      runs_.erase(it);
    } else {
      it->second.len = static_cast<std::uint32_t>(before);
    }
    if (after > 0) {
      runs_.emplace(n + 1, Run{at(run, before + 1), static_cast<std::uint32_t>(after), run.rising});
    }
    --count_;
    return at(run, before);
  }

  // Estimated heap bytes.
  std::size_t bytes() const {
    return runs_.size() * sizeof(std::pair<const std::uint64_t, Run>) * 3 / 2 +
           text_.capacity() * (sizeof(std::pair<const std::string, V>) + 1);
  }

 private:
  static constexpr std::uint32_t kMaxLen = (std::uint32_t{1} << 31) - 1;
  struct Run {
    V value;                 // the value of its first id
    std::uint32_t len : 31;  // ids first .. first + len - 1
    std::uint32_t rising : 1;  // id first + i has value + i (else every id has value)
  };
  // The value of the id `offset` after the run's first (modular, as V is unsigned).
  static V at(const Run& run, std::uint64_t offset) {
    return run.rising ? static_cast<V>(run.value + offset) : run.value;
  }
  // Appends the id after the run's last with `value`, if that keeps the run alike or rising.
  static bool extend(Run& run, const V& value) {
    if (run.len >= kMaxLen) return false;
    if (run.len == 1) {  // a single id is alike and rising: the second decides
      if (value != run.value && value != static_cast<V>(run.value + 1)) return false;
      run.rising = value != run.value;
    } else if (value != at(run, run.len)) {
      return false;
    }
    ++run.len;
    return true;
  }

  // Whether n is above every run (the common case of increasing ids, in constant time).
  bool past_runs(std::uint64_t n) const {
    if (runs_.empty()) return true;
    const auto& last = *runs_.rbegin();
    return n >= last.first && n - last.first >= last.second.len;
  }

  // The run holding n, or end().
  typename absl::btree_map<std::uint64_t, Run>::const_iterator run_of(std::uint64_t n) const {
    if (past_runs(n)) return runs_.end();
    auto it = runs_.upper_bound(n);
    if (it == runs_.begin()) return runs_.end();
    --it;
    return n - it->first < it->second.len ? it : runs_.end();
  }
  typename absl::btree_map<std::uint64_t, Run>::iterator run_of(std::uint64_t n) {
    if (past_runs(n)) return runs_.end();
    auto it = runs_.upper_bound(n);
    if (it == runs_.begin()) return runs_.end();
    --it;
    return n - it->first < it->second.len ? it : runs_.end();
  }

  absl::btree_map<std::uint64_t, Run> runs_;  // first id of a run -> the run
  absl::flat_hash_map<std::string, V> text_;
  std::size_t count_ = 0;
};

}  // namespace permitcheck::spec::monitor_internal

#endif  // PERMITCHECK_SPEC_INTERNAL_ID_RUNS_H_
