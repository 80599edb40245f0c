// Z3 helpers shared by the encodings: bit-vector building blocks (popcount, masks), queries
// with a per-query limit that turn every non-answer into a reason, lexicographic minimization
// of a model, and reading values out of models.
//
//   Query q(ctx, limits);                     // incremental QF_FD solver (push/pop)
//   q.add(constraints);
//   Answer a = q.check(negated_property);     // kSat / kUnsat / kUnknown with reason
//   if (a.verdict == Verdict::kSat) model = minimize(q, {b, p}).model;
#ifndef PERMITCHECK_SOLVER_INTERNAL_Z3_UTIL_H_
#define PERMITCHECK_SOLVER_INTERNAL_Z3_UTIL_H_

#include <z3++.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace permitcheck::solver::internal {

// How popcount is encoded (measured in bench/solver_bench.cc).
enum class PopcountEncoding {
  kAdderTree,  // pairwise sums of exact width: about 2n bit-adders
  kBitSum,     // the sum of n zero-extended bits: n adders of the full output width
};

// Popcount of bit-vector `v` as an unsigned bit-vector of `out_width` bits.
// REQUIRES: 2^out_width > width of v.
z3::expr popcount(const z3::expr& v, unsigned out_width,
                  PopcountEncoding encoding = PopcountEncoding::kAdderTree);

// The `width`-bit mask with bits [0, n) set, for an unsigned bit-vector n of `width` bits
// (n >= width gives every bit).
z3::expr low_mask(const z3::expr& n);

// `e` zero-extended (or truncated) to `width` bits.
z3::expr resize(const z3::expr& e, unsigned width);

// 1 or 0 as a `width`-bit vector.
z3::expr bit(const z3::expr& b, unsigned width = 1);

// A `width`-bit constant from 64-bit words, least significant first (missing words are 0,
// bits at or beyond `width` are dropped).
z3::expr bv_from_words(z3::context& ctx, const std::vector<std::uint64_t>& words, unsigned width);

// Smallest number of bits that hold `n`.
unsigned bits_for(std::uint64_t n);

// Per-query limits. A query that hits one answers kUnknown, never kUnsat.
struct Limits {
  std::chrono::milliseconds timeout{60000};
  std::optional<unsigned> rlimit;  // Z3 resource limit (deterministic), per query
};

enum class Verdict { kSat, kUnsat, kUnknown };

struct Answer {
  Verdict verdict = Verdict::kUnknown;
  std::string reason;  // Z3's reason_unknown() for kUnknown
};

// The largest Z3 resource count ("rlimit count") any one query of this thread used since the
// last reset: what sizes a test's deterministic `Limits::rlimit` (tests/solver/solver_testing.h).
std::uint64_t rlimit_high_water();
void reset_rlimit_high_water();

// Interrupts every live Query of every thread (Z3_interrupt on its context); from then on every
// check answers kUnknown("interrupted") without solving (solver/interrupt.h).
void interrupt_queries();
bool queries_interrupted();

// An incremental solver with limits. Every check() counts in `queries`.
class Query {
 public:
  // `bit_vectors_only`: Z3's QF_FD solver (incremental SAT with bit-blasting, fastest for wide
  // bit-vectors); else Z3's general solver (integers and bit-vectors mixed).
  Query(z3::context& ctx, const Limits& limits, bool bit_vectors_only = true);
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  void add(const z3::expr& e) { solver_.add(e); }
  void push() { solver_.push(); }
  void pop() { solver_.pop(); }

  // Checks the assertions (plus `extra`, asserted only for this check).
  Answer check();
  Answer check(const z3::expr& extra);

  // The model of the last kSat check (also after a pop). REQUIRES: some check was kSat.
  z3::model model() const { return *model_; }
  z3::context& ctx() { return solver_.ctx(); }
  int queries() const { return queries_; }

 private:
  z3::solver solver_;
  std::optional<z3::model> model_;
  int queries_ = 0;
};

// Counterexamples are small: the conservation and finalization checks first search each class
// of situation with 8-bit vectors (a witness there is one for every larger bound), and at the
// full width only when the small search finds none.
inline constexpr int kSmallWidth = 8;

struct Minimized {
  z3::model model;
  bool complete = true;  // false when a tightening query was unknown (model still valid)
};

// Lexicographically minimizes the `objectives` (unsigned bit-vectors or non-negative integers) (first one first) by binary
// search, starting from the current model of a satisfiable `q`. The solver's assertions are
// unchanged afterwards. REQUIRES: the last check of q was kSat.
Minimized minimize(Query& q, const std::vector<z3::expr>& objectives);

// Values in a model (model completion on).
std::uint64_t value(const z3::model& m, const z3::expr& e);          // bit-vector <= 64 bits
std::int64_t signed_value(const z3::model& m, const z3::expr& e);    // two's complement or Int
bool truth(const z3::model& m, const z3::expr& b);
// The 64-bit words of a wide bit-vector, least significant first.
std::vector<std::uint64_t> words(const z3::model& m, const z3::expr& e);

// Evaluates `e` with every variable of `inputs` fixed (used by the agreement properties):
// asserts inputs, checks, returns the model. Returns nullopt if the inputs are inconsistent.
std::optional<z3::model> model_with(z3::context& ctx, const std::vector<z3::expr>& inputs);

}  // namespace permitcheck::solver::internal

#endif  // PERMITCHECK_SOLVER_INTERNAL_Z3_UTIL_H_
