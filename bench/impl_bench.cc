// impl_bench: how fast the model-based properties run.
//
//   BM_ImplSteps          steps of the reference implementation alone (no checking)
//   BM_ModelSteps         steps under the monitor and the specification model (a property step)
//   BM_PropertyCases      whole property cases (generation, steps, checks, final quiescence)
//   BM_TenThousandCases   the target: 10,000 cases of up to 50 steps, one iteration
//
// Steps follow the same mix as the properties' gen_command, drawn from a fixed-seed PRNG.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "impl/world.h"
#include "properties/harness.h"
#include "properties/runner.h"

namespace {

using permitcheck::impl::EntrySpec;
using permitcheck::impl::WorldConfig;
namespace properties = permitcheck::properties;

WorldConfig bench_config(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  WorldConfig c;
  c.dispatcher = static_cast<permitcheck::spec::DispatcherKind>(rng() % 7);
  c.consumers = 1 + static_cast<int>(rng() % 3);
  c.connections = 1 + static_cast<int>(rng() % 2);
  const std::int64_t qs[] = {1, 2, 4, 8, 100};
  c.q = qs[rng() % 5];
  return c;
}

EntrySpec bench_entry(std::mt19937_64& rng) {
  EntrySpec e;
  const std::uint64_t r = rng() % 100;
  e.payload.batch_size = r < 35 ? 1 : r < 70 ? 2 + static_cast<std::int64_t>(rng() % 7)
                                 : r < 90 ? 9 + static_cast<std::int64_t>(rng() % 56)
                                          : 65 + static_cast<std::int64_t>(rng() % 936);
  e.payload.batched = e.payload.batch_size > 1;
  e.payload.key = static_cast<int>(rng() % 4);
  if (e.payload.batched && rng() % 3 == 0) {
    for (std::int64_t i = 0; i < e.payload.batch_size; i += 3) e.pre_acked.push_back(i);
  }
  switch (rng() % 10) {
    case 0:
      e.payload.checksum_ok = false;
      break;
    case 1:
      if (e.payload.batched) e.payload.parse_fails_at = e.payload.batch_size / 2;
      break;
    case 2:
      e.payload.handoff_fails_at = 0;
      break;
    default:
      break;
  }
  return e;
}

// One step of the mix, on a harness (checked) or directly on a world (unchecked).
template <typename Target>
void one_step(Target& t, std::mt19937_64& rng, int consumers);

template <>
void one_step(properties::Harness& h, std::mt19937_64& rng, int consumers) {
  const int k = static_cast<int>(rng() % static_cast<std::uint64_t>(consumers));
  switch (rng() % 40) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
      h.publish({bench_entry(rng)}, "publish");
      break;
    case 8: case 9: case 10: case 11: case 12: case 13: case 14: case 15:
      h.step(rng() % 12, "step");
      break;
    case 16: case 17: case 18: case 19:
      h.run_all("run all");
      break;
    case 20: case 21: case 22: case 23: case 24: case 25:
      h.consume(k, 1 + static_cast<int>(rng() % 4), "consume");
      break;
    case 26: case 27: case 28:
      h.receive_async(k, "listener");
      break;
    case 29: case 30:
      h.redeliver(k, "redeliver");
      break;
    case 31: case 32: case 33:
      h.close_consumer(k, rng() % 2 == 0, "close");
      break;
    case 34:
      h.drop_connection(static_cast<int>(rng() % 2), "drop");
      break;
    case 35:
      h.fail_next_subscribe("fail subscribe");
      break;
    default:
      h.quiesce("quiesce");
      break;
  }
}

template <>
void one_step(permitcheck::impl::World& w, std::mt19937_64& rng, int consumers) {
  const int k = static_cast<int>(rng() % static_cast<std::uint64_t>(consumers));
  switch (rng() % 40) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
      w.publish({bench_entry(rng)});
      break;
    case 8: case 9: case 10: case 11: case 12: case 13: case 14: case 15:
      w.step(rng() % 12);
      break;
    case 16: case 17: case 18: case 19:
      w.run_all();
      break;
    case 20: case 21: case 22: case 23: case 24: case 25:
      w.consume(k, 1 + static_cast<int>(rng() % 4));
      break;
    case 26: case 27: case 28:
      w.receive_async(k);
      break;
    case 29: case 30:
      w.redeliver(k);
      break;
    case 31: case 32: case 33:
      w.close_consumer(k, rng() % 2 == 0);
      break;
    case 34:
      w.drop_connection(static_cast<int>(rng() % 2));
      break;
    case 35:
      w.fail_next_subscribe();
      break;
    default:
      w.quiesce();
      break;
  }
}

constexpr int kStepsPerRun = 50;

void BM_ImplSteps(benchmark::State& state) {
  std::uint64_t seed = 1;
  std::int64_t steps = 0;
  std::int64_t events = 0;
  for (auto _ : state) {
    const WorldConfig config = bench_config(seed);
    std::mt19937_64 rng(seed++);
    permitcheck::impl::World world(config);
    world.start();
    for (int i = 0; i < kStepsPerRun; ++i) one_step(world, rng, config.consumers);
    world.quiesce();
    steps += kStepsPerRun;
    events += static_cast<std::int64_t>(world.events().size());
  }
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ImplSteps)->Unit(benchmark::kMillisecond);

void BM_ModelSteps(benchmark::State& state) {
  std::uint64_t seed = 1;
  std::int64_t steps = 0;
  std::int64_t events = 0;
  for (auto _ : state) {
    const WorldConfig config = bench_config(seed);
    std::mt19937_64 rng(seed++);
    properties::Harness h(config, properties::Goal::never());
    h.start();
    for (int i = 0; i < kStepsPerRun; ++i) one_step(h, rng, config.consumers);
    h.finish();
    steps += kStepsPerRun;
    events += static_cast<std::int64_t>(h.world().events().size());
    if (!h.failures().empty()) state.SkipWithError(properties::format_problem(h.failures().front()).c_str());
  }
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ModelSteps)->Unit(benchmark::kMillisecond);

void BM_PropertyCases(benchmark::State& state) {
  properties::PropertyParams params;
  params.cases = static_cast<int>(state.range(0));
  std::int64_t cases = 0;
  for (auto _ : state) {
    const properties::PropertyResult r = properties::run_property({.name = "rev-d"}, params);
    if (!r.passed) state.SkipWithError("the rev-d property failed");
    cases += r.cases;
    ++params.seed;
  }
  state.counters["cases/s"] = benchmark::Counter(static_cast<double>(cases), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PropertyCases)->Arg(1000)->Unit(benchmark::kMillisecond);

// The target: 10,000 cases of up to 50 steps in under 60 s on one core.
void BM_TenThousandCases(benchmark::State& state) {
  properties::PropertyParams params;
  params.cases = 10000;
  params.max_steps = 50;
  for (auto _ : state) {
    const properties::PropertyResult r = properties::run_property({.name = "rev-d"}, params);
    if (!r.passed) state.SkipWithError("the rev-d property failed");
    state.counters["cases"] = r.cases;
    state.counters["cases/s"] = r.cases / r.seconds;
  }
}
BENCHMARK(BM_TenThousandCases)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
