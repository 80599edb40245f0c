// The fidelity comparison's pure parts (realbroker/fidelity.h): the pairing names a scenario of
// each broker and gives the conformance run the real broker's workload; a broker's outcome
// becomes one verdict with sorted rule IDs; two verdicts are the same only with the same rules;
// a difference is explained only by a known difference that matches it, and an unexplained one
// fails the comparison and says so in the table.
#include "realbroker/fidelity.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "conformance/scenario.h"

namespace permitcheck::realbroker {
namespace {

TEST(RealBrokerFidelityTable, EveryPairNamesAScenarioOfEachBrokerOnce) {
  std::set<std::string_view> real, conf;
  for (const FidelityPair& p : fidelity_pairs()) {
    EXPECT_NE(find_real_broker_scenario(p.real_broker), nullptr) << p.real_broker;
    EXPECT_TRUE(conformance::parse_scenario(p.conformance).has_value()) << p.conformance;
    EXPECT_FALSE(p.exercises.empty());
    EXPECT_TRUE(real.insert(p.real_broker).second) << p.real_broker << " paired twice";
    EXPECT_TRUE(conf.insert(p.conformance).second) << p.conformance << " paired twice";
    EXPECT_EQ(find_fidelity_pair(p.real_broker), &p);
    EXPECT_EQ(find_pair_by_conformance(p.conformance), &p);
  }
  for (std::string_view s : {"batches", "partial_redelivery", "unload", "restart"}) {
    EXPECT_NE(find_fidelity_pair(s), nullptr) << s << " has no conformance pair";
  }
  EXPECT_EQ(find_fidelity_pair("no_such_scenario"), nullptr);
}

TEST(RealBrokerFidelityTable, TheConformanceRunGetsTheRealBrokersWorkload) {
  const conformance::ScenarioParams batches = conformance_params(*find_fidelity_pair("batches"));
  EXPECT_EQ(batches.kind, conformance::ScenarioKind::kCompleteBatches);
  EXPECT_FALSE(batches.send_field) << "Pulsar 4.2.4 writes no message_permits";
  ASSERT_EQ(batches.entries.size(), 6u);
  for (const conformance::EntrySpec& e : batches.entries) {
    EXPECT_TRUE(e.batched);
    EXPECT_EQ(e.batch_size, 10);
    EXPECT_TRUE(e.cleared.empty());
  }
  EXPECT_EQ(batches.nack_every, 0);
  const conformance::ScenarioParams nack =
      conformance_params(*find_fidelity_pair("partial_redelivery"));
  EXPECT_EQ(nack.kind, conformance::ScenarioKind::kNegativeAck);
  EXPECT_EQ(nack.nack_every, find_real_broker_scenario("partial_redelivery")->nack_every);
  const conformance::ScenarioParams unload = conformance_params(*find_fidelity_pair("unload"), 4, 8);
  EXPECT_EQ(unload.kind, conformance::ScenarioKind::kCloseConsumer);
  EXPECT_EQ(unload.entries.size(), 8u);
  EXPECT_EQ(unload.entries[0].batch_size, 4);
  EXPECT_EQ(unload.disrupt_after, 4) << "half-way, as the real run unloads";
  EXPECT_EQ(conformance_params(*find_fidelity_pair("restart")).kind,
            conformance::ScenarioKind::kReconnect);
}

// The conformance run's client gets the real run's inputs: partial_redelivery turns on the
// client's batch-index acknowledgement on both brokers (without it the conformance broker
// sees no acknowledged index and redelivers whole entries, a difference of input, not of
// broker); batches gets none, and both run Shared.
TEST(RealBrokerFidelityTable, TheConformanceRunGetsTheRealRunsClientInputs) {
  const std::string cmd = "run {url} {sub_type} {batch_index_ack} {reopen_after}";
  EXPECT_EQ(conformance_command(cmd, *find_fidelity_pair("partial_redelivery")),
            "export PERMITCHECK_BATCH_INDEX_ACK=1; run {url} Shared 1 0");
  EXPECT_EQ(conformance_command(cmd, *find_fidelity_pair("batches")), "run {url} Shared 0 0");
  const ScenarioInfo* real = find_real_broker_scenario("partial_redelivery");
  ASSERT_NE(real, nullptr);
  EXPECT_EQ(with_client_inputs(cmd, *real),
            conformance_command(cmd, *find_fidelity_pair("partial_redelivery")));
}

TEST(RealBrokerFidelityTable, AConformanceOutcomeBecomesOneVerdictWithSortedRules) {
  conformance::ScenarioOutcome fail;
  fail.violations = {spec::Finding{.rule = spec::RuleId::kE5, .line = 3, .explanation = "late"},
                     spec::Finding{.rule = spec::RuleId::kE2, .line = 4, .explanation = "over"},
                     spec::Finding{.rule = spec::RuleId::kE5, .line = 9, .explanation = "again"}};
  const SideVerdict f = verdict_of(fail);
  EXPECT_EQ(f.verdict, "FAIL");
  EXPECT_EQ(f.rules, (std::vector<std::string>{"E2", "E5"}));

  conformance::ScenarioOutcome never;
  never.client_never_started = true;
  EXPECT_EQ(verdict_of(never).verdict, "INCOMPLETE");

  conformance::ScenarioOutcome not_opened;
  not_opened.not_opened = {"no partial batch was redelivered"};
  EXPECT_EQ(verdict_of(not_opened).verdict, "INCOMPLETE");

  conformance::ScenarioOutcome na;
  na.cannot_open = {"its Subscribe names no consumer epoch"};
  EXPECT_EQ(verdict_of(na).verdict, "NOT-APPLICABLE");

  conformance::ScenarioOutcome pass;
  pass.windows = {"6 complete batches"};
  EXPECT_EQ(verdict_of(pass).verdict, "PASS");
  EXPECT_TRUE(verdict_of(pass).rules.empty());
}

TEST(RealBrokerFidelityTable, ARealBrokerOutcomeKeepsItsVerdictAndSortsItsRules) {
  RealBrokerOutcome o;
  o.verdict = "FAIL";
  o.rules = {"E5", "B4", "E5"};
  o.findings = {"E5: late Flow", "B4: over-credit"};
  const SideVerdict v = verdict_of(o);
  EXPECT_EQ(v.verdict, "FAIL");
  EXPECT_EQ(v.rules, (std::vector<std::string>{"B4", "E5"}));
  EXPECT_EQ(v.detail, "E5: late Flow");
}

TEST(RealBrokerFidelityTable, OnlyTheSameVerdictWithTheSameRulesIsTheSame) {
  const FidelityPair& batches = *find_fidelity_pair("batches");
  const FidelityRow same = compare_verdicts("go@v0.21.0", batches, {.verdict = "FAIL", .rules = {"E5"}},
                                            {.verdict = "FAIL", .rules = {"E5"}});
  EXPECT_TRUE(same.same);
  const FidelityRow other_rules = compare_verdicts(
      "go@v0.21.0", batches, {.verdict = "FAIL", .rules = {"E5"}}, {.verdict = "FAIL", .rules = {"E2"}});
  EXPECT_FALSE(other_rules.same);
  const FidelityRow other_verdict =
      compare_verdicts("go@v0.21.0", batches, {.verdict = "PASS"}, {.verdict = "INCOMPLETE"});
  EXPECT_FALSE(other_verdict.same);
  // Two INCOMPLETE verdicts are the same, and the table says they measure nothing.
  const FidelityRow none =
      compare_verdicts("java", batches, {.verdict = "INCOMPLETE"}, {.verdict = "INCOMPLETE"});
  EXPECT_TRUE(none.same);
  EXPECT_NE(render_fidelity_table({none}).find("| INCOMPLETE | INCOMPLETE | no verdict on either |"),
            std::string::npos)
      << render_fidelity_table({none});
}

// A difference no known difference matches is unexplained: fidelity does not hold and the
// table says UNEXPLAINED with both sides' details.
TEST(RealBrokerFidelityTable, AnUnexplainedDifferenceFailsAndIsShownWithBothDetails) {
  const FidelityPair& batches = *find_fidelity_pair("batches");
  const FidelityRow same = compare_verdicts("go@v0.21.0", batches, {.verdict = "PASS"},
                                            {.verdict = "PASS"});
  const FidelityRow diff = compare_verdicts(
      "go@v0.21.0", batches, {.verdict = "PASS", .rules = {}, .detail = "6 batches"},
      {.verdict = "FAIL", .rules = {"E5"}, .detail = "E5: a|b"});
  EXPECT_EQ(diff.known, nullptr);
  EXPECT_TRUE(fidelity_holds({same}));
  EXPECT_FALSE(fidelity_holds({same, diff}));
  const std::string table = render_fidelity_table({same, diff});
  EXPECT_NE(table.find("| go@v0.21.0 | batches / complete_batches | PASS | PASS | same |  |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| PASS | FAIL E5 | different | UNEXPLAINED (conformance: 6 batches; "
                       "Pulsar: E5: a\\|b) |"),
            std::string::npos)
      << table;
}

// Every known difference says which way it was resolved and why; the one found in Pulsar's
// source (a repeated SUBSCRIBE) is fixed in the conformance broker and explains no row.
TEST(RealBrokerFidelityTable, KnownDifferencesSayHowTheyWereResolved) {
  bool subscribe = false;
  for (const KnownDifference& d : known_differences()) {
    EXPECT_FALSE(d.why.empty());
    const std::string text = explain(d);
    EXPECT_TRUE(text.starts_with("fixed in the conformance broker: ") ||
                text.starts_with("deliberate simplification: "))
        << text;
    if (d.why.find("SUBSCRIBE") != std::string_view::npos) {
      subscribe = true;
      EXPECT_EQ(d.resolution, KnownDifference::Resolution::kFixed);
    }
  }
  EXPECT_TRUE(subscribe);
  // The bounded redelivery: explains exactly its own verdicts on its own scenario.
  const FidelityPair& nack = *find_fidelity_pair("partial_redelivery");
  const FidelityRow bounded =
      compare_verdicts("go", nack, {.verdict = "PASS"}, {.verdict = "INCOMPLETE"});
  ASSERT_NE(bounded.known, nullptr);
  EXPECT_EQ(bounded.known->resolution, KnownDifference::Resolution::kSimplification);
  EXPECT_TRUE(fidelity_holds({bounded}));
  EXPECT_EQ(compare_verdicts("go", nack, {.verdict = "FAIL", .rules = {"E2"}},
                             {.verdict = "INCOMPLETE"}).known,
            nullptr);
  EXPECT_EQ(compare_verdicts("go", *find_fidelity_pair("batches"), {.verdict = "PASS"},
                             {.verdict = "INCOMPLETE"}).known,
            nullptr);
  const FidelityRow r = compare_verdicts("go", *find_fidelity_pair("unload"), {.verdict = "PASS"},
                                         {.verdict = "FAIL", .rules = {"N2"}});
  EXPECT_EQ(r.known, nullptr);
}

}  // namespace
}  // namespace permitcheck::realbroker
