// The review findings of rulebook section 11: each engine finds each finding in the revision
// that had it, and neither finds it in rev-d. One test per (finding, engine); test names carry
// the finding and the rev-d rule it breaks. The rulebook's own numbers are pinned beside them.
#include "review/review.h"

#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "impl/world.h"
#include "spec/client_command.h"
#include "spec/finalize.h"

#ifndef PERMITCHECK_SANITIZED
#define PERMITCHECK_SANITIZED 0
#endif
#ifndef PERMITCHECK_REVIEW_TRACE_DIR
#define PERMITCHECK_REVIEW_TRACE_DIR "counterexamples/review"
#endif

namespace permitcheck::review {
namespace {

// Every finding's witness is tiny (B <= 2, 4 steps): small solver bounds find them all, and
// the rev-d proofs at the default bounds are solver_tests' own.
Options options() {
  Options o = Options::defaults(PERMITCHECK_SANITIZED != 0);
  o.trace_dir = PERMITCHECK_REVIEW_TRACE_DIR;
  o.bounds.bmax = 16;
  o.bounds.depth = 8;
  return o;
}

const ReviewFinding& finding(std::string_view id) {
  const ReviewFinding* f = find_review_finding(id);
  if (f == nullptr) throw std::runtime_error("no such finding");
  return *f;
}

// Found in its revision (re-checked from the trace file to the same rule), not in rev-d.
void expect_properties(std::string_view id, spec::RuleId rule) {
  const Options o = options();
  const ReviewFinding& f = finding(id);
  const Search in = search_properties(f, f.revision, o);
  const Search d = search_properties(f, spec::RulesetId::kRevD, o);
  std::cout << format_findings_table({in, d});
  EXPECT_TRUE(in.found) << id << " not found in " << spec::ruleset(f.revision).name << " within "
                        << in.cases << " cases " << in.note;
  EXPECT_EQ(in.rule, rule) << in.finding_text;
  EXPECT_TRUE(in.recheck_ok) << in.note;
  EXPECT_FALSE(d.found) << id << " found in rev-d: " << d.counterexample << "\n" << d.finding_text;
}

void expect_solver(std::string_view id, spec::RuleId rule) {
  const Options o = options();
  const ReviewFinding& f = finding(id);
  const solver::Result r = solver::prove(f.check, spec::ruleset(f.revision), o.bounds);
  const solver::Result rd = solver::prove(f.check, spec::ruleset(spec::RulesetId::kRevD), o.bounds);
  const Search in = search_solver(f, r, o);
  const Search d = search_solver(f, rd, o);
  std::cout << format_findings_table({in, d});
  EXPECT_TRUE(in.found) << id << " not found: " << solver::format_table({r});
  EXPECT_EQ(in.rule, rule) << in.finding_text;
  EXPECT_TRUE(in.recheck_ok) << in.note;
  EXPECT_FALSE(d.found);
  EXPECT_TRUE(std::holds_alternative<solver::Proved>(rd.outcome)) << solver::format_table({rd});
}

// ---- F1: double return on the four direct-return paths (revision B) ----

TEST(ReviewF1, F1_K7_PropertiesFindDoubleReturnInRevBNotRevD) {
  expect_properties("F1", spec::RuleId::kK7);
}

TEST(ReviewF1, F1_K7_SolverFindsDoubleReturnInRevBNotRevD) {
  expect_solver("F1", spec::RuleId::kK7);
}

// The rulebook's numbers, from the specification and from the implementation.
TEST(ReviewF1, FourDirectReturnPathsReturnTwiceInRevB) {
  const spec::Ruleset& rev_b = spec::ruleset(spec::RulesetId::kRevB);
  const spec::Ruleset& rev_d = spec::ruleset(spec::RulesetId::kRevD);
  auto single = [](spec::IndexFate fate) {
    return spec::CommandSituation{.inc = spec::Id::number(1), .cmd = spec::Id::number(1),
                                  .message_permits = 1, .batch_size = 1, .fates = {fate}};
  };
  for (spec::IndexFate fate : {spec::IndexFate::kDuplicate, spec::IndexFate::kDeadLetter}) {
    EXPECT_EQ(spec::handle_command(rev_b, single(fate)).returned_by_command, 2);
    EXPECT_EQ(spec::handle_command(rev_d, single(fate)).returned_by_command, 1);
  }
  spec::CommandSituation chunk = single(spec::IndexFate::kDeliver);
  chunk.path = spec::PayloadPath::kChunkNonFinal;
  EXPECT_EQ(spec::handle_command(rev_b, chunk).returned_by_command, 2);  // per chunk
  EXPECT_EQ(spec::handle_command(rev_d, chunk).returned_by_command, 1);
  const spec::CommandSituation discard{.inc = spec::Id::number(1), .cmd = spec::Id::number(1),
                                       .message_permits = 8, .batch_size = 8, .batched = true,
                                       .path = spec::PayloadPath::kCryptoDiscard};
  EXPECT_EQ(spec::handle_command(rev_b, discard).returned_by_command, 16);
  EXPECT_EQ(spec::handle_command(rev_d, discard).returned_by_command, 8);

  // The implementation: crypto DISCARD of a complete batch P = B = 8.
  for (impl::Mode mode : {impl::Mode::kRevB, impl::Mode::kRevD}) {
    impl::WorldConfig c{.mode = mode, .q = 16};
    c.options.crypto_action = impl::CryptoAction::kDiscard;
    impl::World w(c);
    w.start();
    w.publish({impl::EntrySpec{.payload = {.batch_size = 8, .batched = true, .encrypted = true}}});
    w.run_all();
    EXPECT_EQ(w.command_returned(1), mode == impl::Mode::kRevB ? 16 : 8) << impl::mode_name(mode);
  }
}

// ---- F2: sticky-key aggregate debited with the pre-admission sum (revision B) ----

TEST(ReviewF2, F2_B6_PropertiesFindStickyKeyAggregateInRevBNotRevD) {
  expect_properties("F2", spec::RuleId::kB6);
}

TEST(ReviewF2, F2_B6_SolverFindsStickyKeyAggregateInRevBNotRevD) {
  expect_solver("F2", spec::RuleId::kB6);
}

TEST(ReviewF2, KeySharedTwoEntriesOfTenOneRejected) {
  const std::vector<spec::SendEntry> entries = {{.batch_size = 10, .admitted = true},
                                                {.batch_size = 10, .admitted = false}};
  const spec::SendResult b = spec::finalize_permits(
      spec::ruleset(spec::RulesetId::kRevB), spec::DispatcherKind::kPersistentKeyShared, entries);
  ASSERT_FALSE(b.overflow.has_value());
  EXPECT_EQ(b.consumer_debit, 10);
  EXPECT_EQ(b.dispatcher_debit, 20);
  const spec::SendResult d = spec::finalize_permits(
      spec::ruleset(spec::RulesetId::kRevD), spec::DispatcherKind::kPersistentKeyShared, entries);
  ASSERT_FALSE(d.overflow.has_value());
  EXPECT_EQ(d.dispatcher_debit, 10);
}

// ---- F3: dead-letter message released while still held (revision B) ----

TEST(ReviewF3, F3_S5_PropertiesFindDeadLetterReleaseInRevBNotRevD) {
  expect_properties("F3", spec::RuleId::kS5);
}

TEST(ReviewF3, F3_S5_SolverFindsDeadLetterReleaseInRevBNotRevD) {
  expect_solver("F3", spec::RuleId::kS5);
}

// ---- F4: an inconsistent command closes the pooled connection (revision C) ----

TEST(ReviewF4, F4_C5_PropertiesFindDisconnectWidenedInRevCNotRevD) {
  expect_properties("F4", spec::RuleId::kC5);
}

TEST(ReviewF4, F4_C6_SolverFindsDisconnectWidenedInRevCNotRevD) {
  expect_solver("F4", spec::RuleId::kC6);
}

// The rulebook's situation: old broker (field absent), ack_set popcount 3 ({0, 1, 3}), and a
// corrupt payload (B = 3 in its metadata) that decodes 4 messages, more deliverable ones than P.
TEST(ReviewF4, OldBrokerCorruptPayloadClosesTheConnectionInRevC) {
  const spec::CommandSituation s{.inc = spec::Id::number(1), .cmd = spec::Id::number(1),
                                 .cnx = spec::Id::text("c1"),
                                 .ack_set = spec::AckSet(std::vector<std::int64_t>{0b1011}),
                                 .batch_size = 3, .decoded = 4, .batched = true};
  EXPECT_TRUE(spec::handle_command(spec::ruleset(spec::RulesetId::kRevC), s).closes_connection);
  EXPECT_FALSE(spec::handle_command(spec::ruleset(spec::RulesetId::kRevD), s).closes_connection);
}

// ---- F5: connection-scoped credit (revision A) ----

TEST(ReviewF5, F5_E3_PropertiesFindCreditCrossingInRevANotRevD) {
  expect_properties("F5", spec::RuleId::kE3);
}

TEST(ReviewF5, F5_E3_SolverFindsCreditCrossingInRevANotRevD) {
  expect_solver("F5", spec::RuleId::kE3);
}

// ---- permitcheck review --from --to ----

TEST(ReviewCompare, F1_F2_F3_F4_RevCFixesRevBAndBreaksF4) {
  Options o = options();
  o.searches = 1;
  o.params.find_cases = PERMITCHECK_SANITIZED ? 150 : 400;
  o.bounds.bmax = 8;
  o.bounds.depth = 6;
  o.checks = {solver::Check::kConservation, solver::Check::kFinalization,
              solver::Check::kIsolation};
  o.trace_dir.clear();
  const Comparison c = compare(spec::RulesetId::kRevB, spec::RulesetId::kRevC, o);
  std::cout << format_comparison(c);
  auto has = [](const std::vector<Change>& v, std::string_view key) {
    for (const Change& ch : v) {
      if (ch.key == key) return true;
    }
    return false;
  };
  EXPECT_TRUE(c.regressed());
  EXPECT_TRUE(has(c.breaks, "F4"));
  for (std::string_view id : {"F1", "F2", "F3"}) EXPECT_TRUE(has(c.fixes, id)) << id;
  EXPECT_FALSE(has(c.fixes, "F5"));
}

}  // namespace
}  // namespace permitcheck::review
