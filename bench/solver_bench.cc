// Time per solver check versus its bound: Bmax 8..1024 for the per-command conservation and
// finalization proofs, depth 4..16 for the isolation BMC, the command bound and k for the
// k-induction, and the two popcount encodings side by side. The growth curve matters more than
// the absolute time (solver/NOTES.md has the table).
//
//   cmake --build build --target solver_bench && build/bench/solver_bench
//   build/bench/solver_bench --benchmark_filter=Conservation
//
// Every benchmark runs one full check per iteration and fails the run if the result is not the
// expected one (rev-d proved, legacy counterexample), so a fast wrong answer cannot pass.
#include <benchmark/benchmark.h>

#include <string>

#include "solver/prove.h"
#include "spec/ruleset.h"

namespace {

using permitcheck::solver::Bounds;
using permitcheck::solver::Check;
using permitcheck::solver::Result;
namespace spec = permitcheck::spec;

void run(benchmark::State& state, Check check, spec::RulesetId ruleset, const Bounds& bounds) {
  for (auto _ : state) {
    const Result r = permitcheck::solver::prove(check, spec::ruleset(ruleset), bounds);
    if (!permitcheck::solver::as_expected(r)) {
      state.SkipWithError(("unexpected result: " + permitcheck::solver::format_table({r})).c_str());
      return;
    }
    state.counters["queries"] = r.queries;
  }
}

void BM_ConservationRevD(benchmark::State& state) {
  Bounds b;
  b.bmax = static_cast<int>(state.range(0));
  run(state, Check::kConservation, spec::RulesetId::kRevD, b);
}
BENCHMARK(BM_ConservationRevD)->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kSecond)->Iterations(1);

void BM_ConservationRevDBitSum(benchmark::State& state) {
  Bounds b;
  b.bmax = static_cast<int>(state.range(0));
  b.bit_sum_popcount = true;
  run(state, Check::kConservation, spec::RulesetId::kRevD, b);
}
BENCHMARK(BM_ConservationRevDBitSum)->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kSecond)->Iterations(1);

void BM_ConservationLegacy(benchmark::State& state) {
  Bounds b;
  b.bmax = static_cast<int>(state.range(0));
  run(state, Check::kConservation, spec::RulesetId::kLegacy, b);
}
BENCHMARK(BM_ConservationLegacy)->RangeMultiplier(4)->Range(8, 1024)->Unit(benchmark::kSecond)->Iterations(1);

void BM_FinalizationRevD(benchmark::State& state) {
  Bounds b;
  b.bmax = static_cast<int>(state.range(0));
  run(state, Check::kFinalization, spec::RulesetId::kRevD, b);
}
BENCHMARK(BM_FinalizationRevD)->RangeMultiplier(2)->Range(8, 1024)->Unit(benchmark::kSecond)->Iterations(1);

void BM_FinalizationRevDEntries(benchmark::State& state) {
  Bounds b;
  b.kmax = static_cast<int>(state.range(0));
  run(state, Check::kFinalization, spec::RulesetId::kRevD, b);
}
BENCHMARK(BM_FinalizationRevDEntries)->DenseRange(1, 8, 1)->Unit(benchmark::kSecond)->Iterations(1);

void BM_FinalizationLegacy(benchmark::State& state) {
  Bounds b;
  b.bmax = static_cast<int>(state.range(0));
  run(state, Check::kFinalization, spec::RulesetId::kLegacy, b);
}
BENCHMARK(BM_FinalizationLegacy)->RangeMultiplier(4)->Range(8, 1024)->Unit(benchmark::kSecond)->Iterations(1);

void BM_IsolationRevD(benchmark::State& state) {
  Bounds b;
  b.depth = static_cast<int>(state.range(0));
  run(state, Check::kIsolation, spec::RulesetId::kRevD, b);
}
BENCHMARK(BM_IsolationRevD)->DenseRange(4, 16, 2)->Unit(benchmark::kSecond)->Iterations(1);

void BM_IsolationLegacy(benchmark::State& state) {
  Bounds b;
  b.depth = static_cast<int>(state.range(0));
  run(state, Check::kIsolation, spec::RulesetId::kLegacy, b);
}
BENCHMARK(BM_IsolationLegacy)->DenseRange(6, 16, 2)->Unit(benchmark::kSecond)->Iterations(1);

void BM_InductionRevD(benchmark::State& state) {
  Bounds b;
  b.induction_bmax = static_cast<int>(state.range(0));
  run(state, Check::kInduction, spec::RulesetId::kRevD, b);
}
BENCHMARK(BM_InductionRevD)->RangeMultiplier(2)->Range(8, 64)->Unit(benchmark::kSecond)->Iterations(1);

void BM_InductionRevDK(benchmark::State& state) {
  Bounds b;
  b.induction_k = static_cast<int>(state.range(0));
  run(state, Check::kInduction, spec::RulesetId::kRevD, b);
}
BENCHMARK(BM_InductionRevDK)->DenseRange(1, 4, 1)->Unit(benchmark::kSecond)->Iterations(1);

void BM_InductionLegacy(benchmark::State& state) {
  Bounds b;
  b.depth = static_cast<int>(state.range(0));
  run(state, Check::kInduction, spec::RulesetId::kLegacy, b);
}
BENCHMARK(BM_InductionLegacy)->DenseRange(4, 16, 4)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

// The proofs for every parameter: conservation-all versus the width of its bit-level refinement
// (the summary itself has no width), and each -all check for rev-d and legacy.
void BM_ConservationAllRevD(benchmark::State& state) {
  Bounds b;
  b.bmax = static_cast<int>(state.range(0));
  run(state, Check::kConservationAll, spec::RulesetId::kRevD, b);
}
BENCHMARK(BM_ConservationAllRevD)->RangeMultiplier(2)->Range(8, 64)->Unit(benchmark::kSecond)->Iterations(1);

void BM_AllParameters(benchmark::State& state, Check check, spec::RulesetId ruleset) {
  run(state, check, ruleset, Bounds{});
}
BENCHMARK_CAPTURE(BM_AllParameters, finalization_all_rev_d, Check::kFinalizationAll, spec::RulesetId::kRevD)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_AllParameters, isolation_all_rev_d, Check::kIsolationAll, spec::RulesetId::kRevD)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_AllParameters, induction_all_rev_d, Check::kInductionAll, spec::RulesetId::kRevD)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_AllParameters, conservation_all_legacy, Check::kConservationAll, spec::RulesetId::kLegacy)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_AllParameters, finalization_all_legacy, Check::kFinalizationAll, spec::RulesetId::kLegacy)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_AllParameters, isolation_all_legacy, Check::kIsolationAll, spec::RulesetId::kLegacy)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_AllParameters, induction_all_legacy, Check::kInductionAll, spec::RulesetId::kLegacy)->Unit(benchmark::kSecond)->Iterations(1);

BENCHMARK_MAIN();
