// The mutation score: the rev-d conformance property run against every seeded single-point
// mutant of the implementation (test-only build permitcheck_impl_mutants) must kill at least
// 95% of them. Prints the table: mutant, rule, killed by, cases needed, counterexample length.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "impl/mutant.h"
#include "properties/harness.h"
#include "properties/runner.h"

namespace permitcheck::properties {
namespace {

TEST(MutationScore, PropertiesKillAtLeast95PercentOfMutants) {
  ASSERT_TRUE(impl::mutants_compiled_in()) << "linked against the default implementation";
  ASSERT_GE(impl::all_mutants().size(), 25u);
  const PropertyParams params = PropertyParams::from_env(300);
  const std::vector<MutantResult> results = run_mutation(params);
  std::cout << format_mutation_table(results);
  EXPECT_GE(kill_ratio(results), 0.95) << format_mutation_table(results);
}

// The mutants that break B5 (the unacked count) and M2 (the stale-epoch discard), rules no
// check reports by their own ID, are each killed: the property catches an implementation that
// breaks them.
TEST(MutationScore, B5_M2_EachMutantBreakingTheRuleIsKilled) {
  ASSERT_TRUE(impl::mutants_compiled_in()) << "linked against the default implementation";
  const PropertyParams params = PropertyParams::from_env(300);
  int checked = 0;
  for (const impl::MutantInfo& m : impl::all_mutants()) {
    if (m.rule != "B5" && m.rule != "M2") continue;
    SCOPED_TRACE(std::string(m.name));
    ::setenv("PERMITCHECK_MUTANT_FILTER", std::string(m.name).c_str(), 1);
    const std::vector<MutantResult> results = run_mutation(params);
    ::unsetenv("PERMITCHECK_MUTANT_FILTER");
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].killed) << format_mutation_table(results);
    ++checked;
  }
  EXPECT_GE(checked, 3);  // unacked_uses_batch_size (B5); stale_epoch_to_current, stale_keeps_gauges (M2)
}

TEST(MutationScore, NoMutantIsActiveByDefault) {
  const PropertyParams params = PropertyParams::from_env(50);
  const PropertyResult r = run_property({.name = "rev-d, mutant build, no mutant"}, params);
  EXPECT_TRUE(r.passed) << format_failure(r);
}

// The problems of `h` the harness itself found with `rule`.
long own_problems(const Harness& h, spec::RuleId rule) {
  return std::count_if(h.problems().begin(), h.problems().end(),
                       [rule](const Problem& p) { return p.source == "quiesce" && p.rule == rule; });
}

// Runs `scenario` on a harness of `config` twice: with the seeded `mutant`, the harness's own
// check of `rule` reports it once; without, nothing at all is reported.
template <typename Scenario>
void expect_reported_only_with(impl::Mutant mutant, impl::WorldConfig config, spec::RuleId rule,
                               Scenario scenario) {
  ASSERT_TRUE(impl::mutants_compiled_in()) << "linked against the default implementation";
  for (const impl::Mutant m : {mutant, impl::Mutant::kNone}) {
    SCOPED_TRACE(m == impl::Mutant::kNone ? "no mutant" : "the seeded mutant");
    config.mutant = m;
    Harness h(config, Goal::never());
    h.start();
    scenario(h);
    EXPECT_EQ(own_problems(h, rule), m == impl::Mutant::kNone ? 0 : 1);
    if (m == impl::Mutant::kNone) {
      for (const Problem& p : h.problems()) ADD_FAILURE() << format_problem(p);
    }
  }
}

impl::WorldConfig one_consumer(spec::DispatcherKind dispatcher, std::int64_t q) {
  impl::WorldConfig c;
  c.dispatcher = dispatcher;
  c.consumers = 1;
  c.q = q;
  return c;
}

// B13 at quiescence (the harness's own check), fed a known-bad broker: the seeded mutant
// flow_without_read applies a Flow without starting a read. The broker closes the consumer
// while it holds one of the entries (nothing is acknowledged); the replacement's initial Flow
// starts nothing, so the entries stay in the backlog while it has permits. (The sticky-key
// branch is fed a hand-built trace in tests/properties/harness_test.cc.)
TEST(HarnessQuiescence, B13_BacklogLeftWhileTheConsumerHasPermitsIsReported) {
  expect_reported_only_with(impl::Mutant::kFlowWithoutRead, one_consumer(spec::DispatcherKind::kPersistentShared, 1),
                            spec::RuleId::kB13, [](Harness& h) {
                              impl::EntrySpec e;
                              h.publish({e, e, e, e}, "publish 4 x B=1");
                              h.close_consumer(0, false, "broker closes consumer 0 at once");
                              h.finish();
                            });
}

// E5 for a zero-queue consumer at quiescence (the harness's own check), fed a known-bad
// client: the seeded mutant zero_queue_grants_two grants 2 permits for a receive() that finds
// the queue empty. Receives on an empty topic leave the broker consumer 2 permits; without the
// mutant it keeps the 1 of its waiting receive().
TEST(HarnessQuiescence, E5_AZeroQueueConsumerHoldingMoreThanItsWaitingReceiveIsReported) {
  impl::WorldConfig c = one_consumer(spec::DispatcherKind::kPersistentShared, 0);
  c.t = 0;
  c.options.zero_queue = true;
  expect_reported_only_with(impl::Mutant::kZeroQueueGrantsTwo, c, spec::RuleId::kE5, [](Harness& h) {
    for (int i = 0; i < 3; ++i) {
      h.consume(0, 1, "receive() on an empty queue");
      h.run_all("run every task");
    }
    h.finish();
  });
}

// E6 at quiescence (the harness's own check), fed a known-bad broker: the seeded mutant
// ack_ignored drops every acknowledgement, so the entries the client consumed stay pending at
// their live consumer for good. Without the mutant nothing stays pending.
TEST(HarnessQuiescence, E6_EntriesLeftPendingAfterTheClientAcknowledgedThemAreReported) {
  for (const spec::DispatcherKind kind : {spec::DispatcherKind::kPersistentShared, spec::DispatcherKind::kSingleActive,
                                          spec::DispatcherKind::kPersistentKeyShared}) {
    SCOPED_TRACE(static_cast<int>(kind));
    expect_reported_only_with(impl::Mutant::kAckIgnored, one_consumer(kind, 4), spec::RuleId::kE6, [](Harness& h) {
      impl::EntrySpec e;
      h.publish({e, e}, "publish 2 x B=1");
      h.finish();
    });
  }
}

// B13 while the application holds what it was sent (the harness judges it after a run_all
// that leaves the world idle), fed a known-bad broker: the seeded mutant
// key_shared_no_next_read reads nothing further after a send. Six entries and Q = 8 for one
// Key_Shared consumer: the first read carries four, and two stay in the backlog while the
// consumer has 4 permits. Without the mutant all six are sent.
TEST(HarnessDispatch, B13_BacklogLeftWhileAnIdleKeySharedConsumerHasPermitsIsReported) {
  expect_reported_only_with(impl::Mutant::kKeySharedNoNextRead,
                            one_consumer(spec::DispatcherKind::kPersistentKeyShared, 8), spec::RuleId::kB13,
                            [](Harness& h) {
                              impl::EntrySpec e;
                              h.publish({e, e, e, e, e, e}, "publish 6 x B=1");
                              h.run_all("run every queue until idle");
                            });
}

}  // namespace
}  // namespace permitcheck::properties
