#include "solver/internal/z3_util.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <utility>

namespace permitcheck::solver::internal {

z3::expr popcount(const z3::expr& v, unsigned out_width, PopcountEncoding encoding) {
  const unsigned n = v.get_sort().bv_size();
  if (encoding == PopcountEncoding::kBitSum) {
    z3::expr sum = v.ctx().bv_val(0, out_width);
    for (unsigned i = 0; i < n; ++i) sum = sum + resize(v.extract(i, i), out_width);
    return sum;
  }
  // Adder tree: level k adds pairs of (k+1)-bit sums into (k+2)-bit sums, so no adder is wider
  // than it needs to be and the whole tree has about 2n bit-adders.
  std::vector<z3::expr> level;
  level.reserve(n);
  for (unsigned i = 0; i < n; ++i) level.push_back(v.extract(i, i));
  while (level.size() > 1) {
    std::vector<z3::expr> next;
    next.reserve((level.size() + 1) / 2);
    for (std::size_t i = 0; i + 1 < level.size(); i += 2) {
      next.push_back(z3::zext(level[i], 1) + z3::zext(level[i + 1], 1));
    }
    if (level.size() % 2 == 1) next.push_back(z3::zext(level.back(), 1));
    level = std::move(next);
  }
  return resize(level.front(), out_width);
}

z3::expr low_mask(const z3::expr& n) {
  const unsigned width = n.get_sort().bv_size();
  const z3::expr ones = ~n.ctx().bv_val(0, width);
  return ~z3::shl(ones, n);  // a shift by >= width gives 0, so the mask is all ones
}

z3::expr resize(const z3::expr& e, unsigned width) {
  const unsigned w = e.get_sort().bv_size();
  if (w == width) return e;
  if (w < width) return z3::zext(e, width - w);
  return e.extract(width - 1, 0);
}

z3::expr bit(const z3::expr& b, unsigned width) {
  return z3::ite(b, b.ctx().bv_val(1, width), b.ctx().bv_val(0, width));
}

z3::expr bv_from_words(z3::context& ctx, const std::vector<std::uint64_t>& words,
                       unsigned width) {
  const unsigned n = (width + 63) / 64;
  z3::expr out = ctx.bv_val(n > 0 && !words.empty() ? words[0] : 0, 64);
  for (unsigned i = 1; i < n; ++i) {
    out = z3::concat(ctx.bv_val(i < words.size() ? words[i] : 0, 64), out);
  }
  return resize(out, width);
}

unsigned bits_for(std::uint64_t n) {
  unsigned bits = 1;
  while (bits < 64 && (n >> bits) != 0) ++bits;
  return bits;
}

namespace {

thread_local std::uint64_t rlimit_high = 0;

// The contexts of live queries, for interrupt_queries() from the signal thread.
std::mutex live_mutex;
std::multiset<Z3_context> live;
std::atomic<bool> interrupted{false};

// The context's resource count so far (cumulative; a query's `rlimit` is relative to it).
std::uint64_t rlimit_count(z3::solver& s) {
  const z3::stats st = s.statistics();
  for (unsigned i = 0; i < st.size(); ++i) {
    if (st.key(i) == "rlimit count") {
      return st.is_uint(i) ? st.uint_value(i) : static_cast<std::uint64_t>(st.double_value(i));
    }
  }
  return 0;
}

}  // namespace

void interrupt_queries() {
  interrupted.store(true);
  const std::lock_guard<std::mutex> lock(live_mutex);
  for (Z3_context c : live) Z3_interrupt(c);
}

bool queries_interrupted() { return interrupted.load(); }

std::uint64_t rlimit_high_water() { return rlimit_high; }
void reset_rlimit_high_water() { rlimit_high = 0; }

Query::Query(z3::context& ctx, const Limits& limits, bool bit_vectors_only)
    : solver_(bit_vectors_only ? z3::solver(ctx, "QF_FD") : z3::solver(ctx)) {
  // QF_FD is Z3's incremental SAT-based bit-vector solver: with push/pop it keeps bit-blasting
  // and learnt clauses, where the default incremental solver is orders of magnitude slower on
  // wide bit-vectors (NOTES.md).
  z3::params p(ctx);
  p.set("timeout", static_cast<unsigned>(limits.timeout.count()));
  if (limits.rlimit) p.set("rlimit", *limits.rlimit);
  solver_.set(p);
  const std::lock_guard<std::mutex> lock(live_mutex);
  live.insert(ctx);
}

Query::~Query() {
  const std::lock_guard<std::mutex> lock(live_mutex);
  live.erase(live.find(solver_.ctx()));
}

Answer Query::check() {
  ++queries_;
  if (interrupted.load()) return {Verdict::kUnknown, "interrupted"};
  const std::uint64_t before = rlimit_count(solver_);
  z3::check_result result = z3::unknown;
  try {
    result = solver_.check();
  } catch (const z3::exception& e) {  // an interrupt (Z3 "canceled") or another Z3 error
    return {Verdict::kUnknown, interrupted.load() ? "interrupted" : e.msg()};
  }
  const std::uint64_t after = rlimit_count(solver_);
  if (after > before) rlimit_high = std::max(rlimit_high, after - before);
  switch (result) {
    case z3::sat:
      model_ = solver_.get_model();
      return {Verdict::kSat, ""};
    case z3::unsat:
      return {Verdict::kUnsat, ""};
    case z3::unknown:
      break;
  }
  return {Verdict::kUnknown, solver_.reason_unknown()};
}

Answer Query::check(const z3::expr& extra) {
  solver_.push();
  solver_.add(extra);
  Answer a = check();
  solver_.pop();
  return a;
}

Minimized minimize(Query& q, const std::vector<z3::expr>& objectives) {
  Minimized out{q.model(), true};
  int fixed = 0;
  for (const z3::expr& objective : objectives) {
    const bool is_int = objective.is_int();
    auto le = [&](std::uint64_t n) {
      return is_int ? objective <= q.ctx().int_val(n)
                    : z3::ule(objective, q.ctx().bv_val(n, objective.get_sort().bv_size()));
    };
    auto val = [&](const z3::model& m) {
      return is_int ? static_cast<std::uint64_t>(std::max<std::int64_t>(0, signed_value(m, objective)))
                    : value(m, objective);
    };
    std::uint64_t hi = val(out.model);
    std::uint64_t lo = 0;
    // Gallop up from 0 (optima are small), then bisect between the bounds found.
    auto probe_at = [&](std::uint64_t bound) -> Verdict {
      q.push();
      q.add(le(bound));
      const Answer a = q.check();
      if (a.verdict == Verdict::kSat) {
        out.model = q.model();
        hi = val(out.model);
      }
      q.pop();
      return a.verdict;
    };
    for (std::uint64_t probe = 0; lo < hi && probe < hi;
         probe = probe > (UINT64_MAX - 1) / 2 ? hi : 2 * probe + 1) {
      const Verdict v = probe_at(probe);
      if (v == Verdict::kUnknown) {
        out.complete = false;
        break;
      }
      if (v == Verdict::kSat) break;
      lo = probe + 1;
    }
    while (out.complete && lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const Verdict v = probe_at(mid);
      if (v == Verdict::kUnknown) {
        out.complete = false;
      } else if (v == Verdict::kUnsat) {
        lo = mid + 1;
      }
    }
    if (!out.complete) break;
    q.push();
    ++fixed;
    q.add(is_int ? objective == q.ctx().int_val(hi)
                 : objective == q.ctx().bv_val(hi, objective.get_sort().bv_size()));
  }
  for (int i = 0; i < fixed; ++i) q.pop();
  return out;
}

std::uint64_t value(const z3::model& m, const z3::expr& e) {
  const z3::expr v = m.eval(e, true);
  std::uint64_t out = 0;
  if (!v.is_numeral_u64(out)) {
    // Wider than 64 bits: the low word.
    return words(m, e).front();
  }
  return out;
}

std::int64_t signed_value(const z3::model& m, const z3::expr& e) {
  if (e.is_int()) {
    std::int64_t out = 0;
    m.eval(e, true).is_numeral_i64(out);
    return out;
  }
  const unsigned w = e.get_sort().bv_size();
  std::uint64_t u = value(m, e);
  if (w < 64 && (u >> (w - 1)) & 1U) u |= ~std::uint64_t{0} << w;
  return static_cast<std::int64_t>(u);
}

bool truth(const z3::model& m, const z3::expr& b) { return m.eval(b, true).is_true(); }

std::vector<std::uint64_t> words(const z3::model& m, const z3::expr& e) {
  const unsigned w = e.get_sort().bv_size();
  std::vector<std::uint64_t> out;
  for (unsigned lo = 0; lo < w; lo += 64) {
    const unsigned hi = std::min(w, lo + 64) - 1;
    std::uint64_t word = 0;
    m.eval(e.extract(hi, lo), true).is_numeral_u64(word);
    out.push_back(word);
  }
  return out;
}

std::optional<z3::model> model_with(z3::context& ctx, const std::vector<z3::expr>& inputs) {
  z3::solver s(ctx);  // integers too (the induction system); one non-incremental check
  for (const z3::expr& e : inputs) s.add(e);
  if (s.check() != z3::sat) return std::nullopt;
  return s.get_model();
}

}  // namespace permitcheck::solver::internal
