// The per-client expectations: a required pass, a pinned finding, the default (every cell
// must pass), and the summary each client row gets.
#include <string>

#include "gtest/gtest.h"
#include "matrix/expectations.h"
#include "tests/matrix/matrix_testing.h"

namespace permitcheck::matrix {
namespace {

const std::vector<std::string> kScenarios = {"complete_batches", "partial_batches", "stale_epoch"};

Expectations parse(const std::string& text, const std::string& client = "go") {
  absl::StatusOr<Expectations> e = parse_expectations(text, client, client + ".txt", kScenarios);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : Expectations{};
}

const ClientSummary& summary(const Matrix& m, const std::string& client) {
  for (const ClientSummary& s : m.summaries) {
    if (s.client == client) return s;
  }
  static const ClientSummary none;
  ADD_FAILURE() << "no summary for " << client;
  return none;
}

TEST(Expectations, FindingFailingWithThePinnedRulesDeviatesAsPinned) {
  Matrix m = testing::sample_matrix();
  apply_expectations(m, {parse("partial_batches fail E2,E5\nstale_epoch incomplete\n")});
  EXPECT_EQ(summary(m, "go").text(), "deviates as pinned (2 findings), 1 cell INCOMPLETE");
  EXPECT_EQ(summary(m, "reference").text(), "conforms");
  EXPECT_FALSE(any_unexpected(m));
}

TEST(Expectations, PinnedFindingThatDisappearsIsUnexpected) {
  Matrix m = testing::sample_matrix();
  m.cells[4].outcome = Outcome::kPass;  // go partial_batches no longer fails
  m.cells[4].rules.clear();
  apply_expectations(m, {parse("partial_batches fail E2,E5\nstale_epoch any\n")});
  const ClientSummary& go = summary(m, "go");
  EXPECT_EQ(go.conformance, Conformance::kUnexpected);
  ASSERT_EQ(go.unexpected.size(), 1u);
  EXPECT_EQ(go.unexpected[0],
            "partial_batches: expected fail E2,E5, got PASS (pinned finding E2,E5 disappeared)");
  EXPECT_TRUE(any_unexpected(m));
}

TEST(Expectations, OnePinnedRuleOfTwoDisappearingIsUnexpected) {
  Matrix m = testing::sample_matrix();
  m.cells[4].rules = {"E2"};
  apply_expectations(m, {parse("partial_batches fail E2,E5\nstale_epoch any\n")});
  ASSERT_EQ(summary(m, "go").unexpected.size(), 1u);
  EXPECT_NE(summary(m, "go").unexpected[0].find("pinned finding E5 disappeared"), std::string::npos);
}

// The broker axis: a line without a broker holds on every broker; BROKER/SCENARIO holds on
// that broker only and wins over it there; an unexpected real-broker cell is named with its
// broker.
TEST(Expectations, ABrokerQualifiedLineDecidesThatBrokersCellsOnly) {
  Matrix m = testing::sample_matrix();
  Cell real = m.cells[4];  // go partial_batches FAIL E2,E5, on the real broker INCOMPLETE
  real.key.broker = "pulsar-4.2.4";
  real.outcome = Outcome::kIncomplete;
  real.rules.clear();
  m.plan.push_back(real.key);
  m.cells.push_back(real);
  Cell real_pass = m.cells[3];  // go complete_batches PASS on both
  real_pass.key.broker = "pulsar-4.2.4";
  m.plan.push_back(real_pass.key);
  m.cells.push_back(real_pass);
  apply_expectations(m, {parse("partial_batches fail E2,E5\n"
                               "pulsar-4.2.4/partial_batches incomplete\n"
                               "stale_epoch any\n")});
  EXPECT_EQ(m.cells[4].expected, "fail E2,E5");
  EXPECT_EQ(m.cells[4].verdict, Verdict::kAsPinned);
  EXPECT_EQ(m.cells[m.cells.size() - 2].expected, "incomplete");
  EXPECT_EQ(m.cells[m.cells.size() - 2].verdict, Verdict::kAsExpected);
  EXPECT_EQ(m.cells.back().expected, "pass or not-applicable");
  EXPECT_FALSE(any_unexpected(m));

  // Without the broker's line the unqualified pin holds on the real broker too.
  apply_expectations(m, {parse("partial_batches fail E2,E5\nstale_epoch any\n")});
  const ClientSummary& go = summary(m, "go");
  ASSERT_EQ(go.unexpected.size(), 1u);
  EXPECT_EQ(go.unexpected[0],
            "pulsar-4.2.4/partial_batches: expected fail E2,E5, got INCOMPLETE (pinned finding "
            "E2,E5 disappeared)");
}

TEST(Expectations, ABrokerLineTwiceOrAnEmptyBrokerIsAnError) {
  auto error = [](const std::string& text) {
    absl::StatusOr<Expectations> e = parse_expectations(text, "go", "go.txt", kScenarios);
    return e.ok() ? std::string("ok") : std::string(e.status().message());
  };
  EXPECT_EQ(error("pulsar-4.2.4/stale_epoch any\nstale_epoch any\n"), "ok");
  EXPECT_EQ(error("pulsar-4.2.4/stale_epoch any\npulsar-4.2.4/stale_epoch pass\n"),
            "go.txt:2: pulsar-4.2.4/stale_epoch is already on line 1");
  EXPECT_EQ(error("/stale_epoch any\n"), "go.txt:1: an empty broker before '/'");
  EXPECT_NE(error("pulsar-4.2.4/no_such any\n").find("unknown scenario \"no_such\""),
            std::string::npos);
}

TEST(Expectations, WithoutAFileEveryCellMustPassOrNotApply) {
  Matrix m = testing::sample_matrix();
  apply_expectations(m, {});
  EXPECT_EQ(summary(m, "go").text(), "unexpected (2 cells)");
  EXPECT_EQ(summary(m, "reference").text(), "conforms");
  m.cells[5].outcome = Outcome::kNotApplicable;
  m.cells[4].outcome = Outcome::kPass;
  m.cells[4].rules.clear();
  apply_expectations(m, {});
  EXPECT_EQ(summary(m, "go").text(), "conforms");
}

TEST(Expectations, ARequiredPassThatIsNotApplicableIsUnexpected) {
  Matrix m = testing::sample_matrix();
  m.cells[2].outcome = Outcome::kNotApplicable;
  apply_expectations(m, {parse("stale_epoch pass\n", "reference")});
  EXPECT_EQ(summary(m, "reference").conformance, Conformance::kUnexpected);
}

TEST(Expectations, ALineForOneReleaseWinsOverTheLineForEvery) {
  Matrix m = testing::sample_matrix();
  apply_expectations(m, {parse("partial_batches pass\npartial_batches@v0.21.0 fail E2,E5\n"
                               "stale_epoch any\n")});
  EXPECT_EQ(summary(m, "go").text(), "deviates as pinned (2 findings), 1 cell INCOMPLETE");
  apply_expectations(m, {parse("partial_batches fail E2,E5\npartial_batches@v0.9.0 pass\n"
                               "stale_epoch any\n")});
  EXPECT_EQ(summary(m, "go").text(), "deviates as pinned (2 findings), 1 cell INCOMPLETE");
}

TEST(Expectations, BadLinesAreRefusedWithTheirLine) {
  const auto error = [](const std::string& text) {
    absl::StatusOr<Expectations> e = parse_expectations(text, "go", "go.txt", kScenarios);
    return e.ok() ? std::string("parsed") : std::string(e.status().message());
  };
  EXPECT_EQ(error("# fine\n\nno_such_scenario pass\n"),
            "go.txt:3: unknown scenario \"no_such_scenario\" (permitcheck conform --list names them)");
  EXPECT_EQ(error("complete_batches fail\n"), "go.txt:1: fail needs its rule IDs: fail E5,K4");
  EXPECT_EQ(error("complete_batches maybe\n").substr(0, 40), "go.txt:1: unknown expectation \"maybe\" (p");
  EXPECT_EQ(error("complete_batches pass E5\n"), "go.txt:1: \"pass\" takes no rule IDs");
  EXPECT_EQ(error("complete_batches pass\ncomplete_batches any\n"),
            "go.txt:2: complete_batches is already on line 1");
  EXPECT_EQ(error("complete_batches\n"), "go.txt:1: expected [BROKER/]SCENARIO[@RELEASE] EXPECTATION [RULES]");
}

TEST(Shards, PartitionThePlanInOrder) {
  const Matrix m = testing::sample_matrix();
  std::vector<CellKey> all;
  for (int i = 1; i <= 4; ++i) {
    for (const CellKey& k : shard_cells(m.plan, Shard{i, 4})) all.push_back(k);
  }
  std::sort(all.begin(), all.end());
  std::vector<CellKey> plan = m.plan;
  std::sort(plan.begin(), plan.end());
  EXPECT_EQ(all, plan);
  EXPECT_EQ(shard_cells(m.plan, Shard{2, 4}), (std::vector<CellKey>{m.plan[1], m.plan[5]}));
  EXPECT_FALSE(parse_shard("3/2").ok());
  EXPECT_FALSE(parse_shard("0/2").ok());
  EXPECT_FALSE(parse_shard("1").ok());
  ASSERT_TRUE(parse_shard("2/3").ok());
  EXPECT_EQ(*parse_shard("2/3"), (Shard{2, 3}));
}

// The sample cut into shards (cells only of each), as `--shard i/n` writes them.
std::vector<Matrix> shards_of(const Matrix& m, int n) {
  std::vector<Matrix> out;
  for (int i = 1; i <= n; ++i) {
    Matrix s = m;
    s.shard = Shard{i, n};
    s.cells.clear();
    for (const CellKey& k : shard_cells(m.plan, Shard{i, n})) {
      for (const Cell& c : m.cells) {
        if (c.key == k) s.cells.push_back(c);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

TEST(Merge, ShardsInAnyOrderGiveThePlanOrder) {
  const Matrix m = testing::sample_matrix();
  std::vector<Matrix> shards = shards_of(m, 3);
  std::swap(shards[0], shards[2]);
  absl::StatusOr<Matrix> merged = merge(shards);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->cells.size(), m.cells.size());
  for (std::size_t i = 0; i < m.cells.size(); ++i) EXPECT_EQ(merged->cells[i].key, m.cells[i].key);
  EXPECT_FALSE(merged->shard.has_value());
  EXPECT_EQ(merged->clients.size(), 2u);
}

TEST(Merge, RefusesAMissingShardADuplicateOrAnotherPlan) {
  const Matrix m = testing::sample_matrix();
  std::vector<Matrix> shards = shards_of(m, 3);
  absl::StatusOr<Matrix> missing = merge({shards[0], shards[1]});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("is in no shard"), std::string::npos) << missing.status();
  absl::StatusOr<Matrix> twice = merge({shards[0], shards[1], shards[2], shards[1]});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("is in two shards"), std::string::npos);
  shards[1].plan.pop_back();
  EXPECT_FALSE(merge(shards).ok());
}

// The seed and idle the cells ran with go into the merged matrix; shards that ran with another
// seed or idle are not one run, and the merge says which.
TEST(Merge, KeepsTheSettingsAndRefusesShardsRunWithOtherSettings) {
  const Matrix m = testing::sample_matrix();
  std::vector<Matrix> shards = shards_of(m, 2);
  absl::StatusOr<Matrix> merged = merge(shards);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->seed, 491u);
  EXPECT_EQ(merged->idle_seconds, 1.5);
  shards[1].seed = 1;
  absl::StatusOr<Matrix> other = merge(shards);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("shard 2 ran with --seed 1 --idle 1.5"),
            std::string::npos)
      << other.status();
}

}  // namespace
}  // namespace permitcheck::matrix
