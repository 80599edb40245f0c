// Rulebook section 10: every legacy row reproduces its numbers under `legacy` and is reported
// with its rule ID under `rev-d`; the same situation done right passes `rev-d`.
#include "spec/legacy_catalogue.h"

#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spec/monitor.h"

namespace permitcheck::spec {
namespace {

using ::testing::Contains;
using ::testing::Field;
using ::testing::IsEmpty;

CatalogueEntry catalogue_entry(std::string_view id) {
  for (CatalogueEntry& e : legacy_catalogue()) {
    if (e.id == id) return e;
  }
  ADD_FAILURE() << "no catalogue entry " << id;
  return {};
}

std::string finding_lines(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) out += format_finding(f) + "\n";
  return out;
}

// Everything the command (or the messages it handed off) credited, per the ledger.
std::int64_t returned(const CatalogueEntry& e, RulesetId rules, std::uint64_t cmd) {
  Monitor m(e.header_for(rules));
  for (std::size_t i = 0; i < e.legacy.size(); ++i) m.on_event(e.legacy[i], i + 2);
  m.finish();
  return m.ledger(Id::number(cmd))->returned;
}

// The three checks every row must pass: legacy conforms to legacy, is caught by rev-d, and the
// correct handling conforms to rev-d.
void expect_row(std::string_view id) {
  const CatalogueEntry e = catalogue_entry(id);
  const MonitorReport legacy = check_trace(e.header_for(RulesetId::kLegacy), e.legacy);
  EXPECT_THAT(legacy.violations, IsEmpty()) << id << " under legacy:\n" << finding_lines(legacy.violations);

  const MonitorReport caught = check_trace(e.header_for(RulesetId::kRevD), e.legacy);
  const auto& where = e.rev_d_deviation ? caught.deviations : caught.violations;
  ASSERT_FALSE(where.empty()) << id << " not reported under rev-d";
  EXPECT_EQ(where.front().rule, e.rev_d_rule)
      << id << " under rev-d, first finding:\n" << finding_lines(where);
  if (e.rev_d_deviation) {
    EXPECT_THAT(caught.violations, IsEmpty()) << finding_lines(caught.violations);
  }

  const MonitorReport correct = check_trace(e.header_for(RulesetId::kRevD), e.correct);
  EXPECT_THAT(correct.violations, IsEmpty()) << id << " done right:\n" << finding_lines(correct.violations);
}

TEST(LegacyCatalogue, HoldsElevenRowsInRulebookOrder) {
  const std::vector<CatalogueEntry> all = legacy_catalogue();
  ASSERT_EQ(all.size(), 11u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].id, "L" + std::to_string(i + 1));
  }
}

TEST(LegacyCatalogue, L1_E1_ChecksumFailureReturnsOneOfHundred) {
  expect_row("L1");
  const CatalogueEntry e = catalogue_entry("L1");
  EXPECT_EQ(returned(e, RulesetId::kLegacy, 1), 1);
  const MonitorReport r = check_trace(e.header_for(RulesetId::kRevD), e.legacy);
  EXPECT_THAT(r.violations, Contains(Field(&Finding::rule, RuleId::kE1)));
  EXPECT_THAT(r.violations.front().explanation, ::testing::HasSubstr("99 permits lost"));
}

TEST(LegacyCatalogue, L2_MetadataFailureReturnsOneOfTen) {
  expect_row("L2");
  EXPECT_EQ(returned(catalogue_entry("L2"), RulesetId::kLegacy, 1), 1);
}

TEST(LegacyCatalogue, L3_DecompressionFailureReturnsOneOfTen) {
  expect_row("L3");
  EXPECT_EQ(returned(catalogue_entry("L3"), RulesetId::kLegacy, 1), 1);
}

TEST(LegacyCatalogue, L4_BatchFailureReturnsDPlusKPlusOne) {
  expect_row("L4");
  EXPECT_EQ(returned(catalogue_entry("L4"), RulesetId::kLegacy, 1), 4 + 1 + 1);
}

TEST(LegacyCatalogue, L5_E2_PartialBatchFailureOverGrantsOne) {
  expect_row("L5");
  const CatalogueEntry e = catalogue_entry("L5");
  EXPECT_EQ(returned(e, RulesetId::kLegacy, 1), 4);
  const MonitorReport r = check_trace(e.header_for(RulesetId::kRevD), e.legacy);
  EXPECT_THAT(r.violations, Contains(Field(&Finding::rule, RuleId::kE2)));
}

TEST(LegacyCatalogue, L6_StaleEpochReturnCrossesIntoReplacement) { expect_row("L6"); }

TEST(LegacyCatalogue, L7_SamePooledConnectionRecreationOverGrants) { expect_row("L7"); }

TEST(LegacyCatalogue, L8_B6_RejectedEntryStillDebited) {
  expect_row("L8");
  const CatalogueEntry e = catalogue_entry("L8");
  const Send& legacy = std::get<Send>(e.legacy.front());
  EXPECT_EQ(legacy.consumer_debit, 20);
  EXPECT_EQ(legacy.dispatcher_debit, 20);
  const MonitorReport r = check_trace(e.header_for(RulesetId::kRevD), e.legacy);
  EXPECT_THAT(r.violations, Contains(Field(&Finding::rule, RuleId::kB6)));
  const Send& correct = std::get<Send>(e.correct.front());
  EXPECT_EQ(correct.consumer_debit, 10);
  EXPECT_EQ(correct.dispatcher_debit, 10);
}

TEST(LegacyCatalogue, L9_BeforeStartMessageIdReturnsNothing) {
  expect_row("L9");
  EXPECT_EQ(returned(catalogue_entry("L9"), RulesetId::kLegacy, 1), 0);
}

TEST(LegacyCatalogue, L10_CryptoDiscardOfPartialBatchReturnsB) {
  expect_row("L10");
  EXPECT_EQ(returned(catalogue_entry("L10"), RulesetId::kLegacy, 1), 10);
}

TEST(LegacyCatalogue, L11_OldFlowAfterReplacementSubscribe) { expect_row("L11"); }

}  // namespace
}  // namespace permitcheck::spec
