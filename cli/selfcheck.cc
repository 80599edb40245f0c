#include "cli/selfcheck.h"

#include <algorithm>
#include <cstddef>
#include <set>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/test_names.h"
#include "nlohmann/json.hpp"
#include "report/json.h"
#include "spec/legacy_catalogue.h"

namespace permitcheck::cli {
namespace {

using spec::Finding;
using spec::MonitorReport;
using spec::RuleId;

constexpr std::size_t kExamples = 3;       // example test names per rule row
constexpr std::size_t kListedFailures = 20;  // failing tests listed in the text report

// "1 rule", "9 rules".
std::string count(std::size_t n, std::string_view noun) {
  return absl::StrCat(n, " ", std::string(noun), n == 1 ? "" : "s");
}

bool reports(const std::vector<Finding>& findings, RuleId rule) {
  return std::any_of(findings.begin(), findings.end(),
                     [rule](const Finding& f) { return f.rule == rule; });
}

// "C7,E1": the distinct rules of `findings`, in order of first report.
std::string rule_list(const std::vector<Finding>& findings) {
  std::vector<std::string> names;
  for (const Finding& f : findings) {
    std::string name(spec::rule_name(f.rule));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return absl::StrJoin(names, ",");
}

// "pass", "violation C7", "deviation X2", or both kinds joined by "; ".
std::string verdict(const MonitorReport& report) {
  std::vector<std::string> parts;
  if (!report.violations.empty()) parts.push_back("violation " + rule_list(report.violations));
  if (!report.deviations.empty()) parts.push_back("deviation " + rule_list(report.deviations));
  return parts.empty() ? "pass" : absl::StrJoin(parts, "; ");
}

// Rows of cells as a left-aligned table, columns two spaces apart.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line.append(width[c] - row[c].size() + 2, ' ');
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

nlohmann::ordered_json json_findings(const std::vector<Finding>& findings) {
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const Finding& f : findings) {
    items.push_back({{"rule", std::string(spec::rule_name(f.rule))},
                     {"line", f.line},
                     {"explanation", f.explanation}});
  }
  return items;
}

nlohmann::ordered_json json_check(const MonitorReport& report, bool ok) {
  return {{"ok", ok},
          {"verdict", verdict(report)},
          {"violations", json_findings(report.violations)},
          {"deviations", json_findings(report.deviations)}};
}

// What the rev-d check of a legacy trace must report: "violation C7" or "deviation X2".
std::string expected_rev_d(const CatalogueRow& row) {
  return (row.rev_d_deviation ? "deviation " : "violation ") +
         std::string(spec::rule_name(row.rev_d_rule));
}

// "" when the row is OK, else what went wrong.
std::string row_problem(const CatalogueRow& row) {
  std::vector<std::string> problems;
  if (!row.legacy_ok()) problems.push_back("legacy trace fails the legacy ruleset");
  if (!row.rev_d_ok()) problems.push_back("rev-d should report " + expected_rev_d(row));
  if (!row.correct_ok()) problems.push_back("correct trace fails rev-d");
  return absl::StrJoin(problems, "; ");
}

}  // namespace

bool CatalogueRow::rev_d_ok() const {
  return reports(rev_d_deviation ? legacy_under_rev_d.deviations : legacy_under_rev_d.violations,
                 rev_d_rule);
}

bool SelfCheck::ok() const {
  return tests_failed == 0 && !catalogue.empty() &&
         std::all_of(rules.begin(), rules.end(), [](const RuleRow& r) { return r.ok(); }) &&
         std::all_of(catalogue.begin(), catalogue.end(),
                     [](const CatalogueRow& r) { return r.ok(); });
}

SelfCheck run_selfcheck(const TestResults& results) {
  SelfCheck check;
  for (const auto& file : results.files) check.result_files.push_back(file.filename().string());

  const auto rules = spec::all_rules();
  for (const spec::RuleInfo& info : rules) check.rules.push_back(RuleRow{.rule = &info});
  std::vector<std::vector<std::string>> failing(rules.size()), passing(rules.size());

  for (const TestResult& test : results.tests) {
    if (test.outcome == Outcome::kNotRun) {
      ++check.tests_not_run;
      continue;
    }
    const bool passed = test.outcome == Outcome::kPassed;
    const std::string name = test.full_name();
    ++(passed ? check.tests_passed : check.tests_failed);
    if (!passed) check.failed_tests.push_back(test);

    std::set<std::size_t> pinned;  // a test naming a rule twice counts once
    for (std::string_view token : name_tokens(name)) {
      if (std::optional<RuleId> id = spec::parse_rule_id(token)) {
        pinned.insert(static_cast<std::size_t>(*id));
      }
    }
    for (std::size_t i : pinned) {
      ++(passed ? check.rules[i].passed : check.rules[i].failed);
      (passed ? passing : failing)[i].push_back(name);
    }
  }
  for (std::size_t i = 0; i < rules.size(); ++i) {
    std::vector<std::string>& examples = check.rules[i].examples;
    for (const auto* names : {&failing[i], &passing[i]}) {
      for (const std::string& n : *names) {
        if (examples.size() < kExamples) examples.push_back(n);
      }
    }
  }

  for (const spec::CatalogueEntry& e : spec::legacy_catalogue()) {
    check.catalogue.push_back(CatalogueRow{
        .id = std::string(e.id),
        .situation = std::string(e.situation),
        .legacy_value = e.legacy_value,
        .correct_value = e.correct_value,
        .rev_d_rule = e.rev_d_rule,
        .rev_d_deviation = e.rev_d_deviation,
        .legacy_under_legacy = spec::check_trace(e.header_for(spec::RulesetId::kLegacy), e.legacy),
        .legacy_under_rev_d = spec::check_trace(e.header_for(spec::RulesetId::kRevD), e.legacy),
        .correct_under_rev_d = spec::check_trace(e.header_for(spec::RulesetId::kRevD), e.correct),
    });
  }
  return check;
}

std::string format_text(const SelfCheck& check) {
  std::string out = absl::StrFormat(
      "permitcheck selfcheck: %s (%s), %s: %d passed, %d failed, %d skipped\n",
      count(check.result_files.size(), "result file"), absl::StrJoin(check.result_files, ", "),
      count(check.tests_passed + check.tests_failed + check.tests_not_run, "test"),
      check.tests_passed, check.tests_failed, check.tests_not_run);

  std::vector<std::string> uncovered, failing_rules;
  std::vector<std::vector<std::string>> rows = {
      {"rule", "title", "tests", "passed", "failed", "status", "example tests"}};
  for (const RuleRow& r : check.rules) {
    std::string status = r.failed > 0 ? "FAILING" : r.passed == 0 ? "MISSING" : "ok";
    if (r.failed > 0) failing_rules.emplace_back(r.rule->name);
    if (r.passed == 0) uncovered.emplace_back(r.rule->name);
    rows.push_back({std::string(r.rule->name), std::string(r.rule->title),
                    absl::StrCat(r.tests()), absl::StrCat(r.passed), absl::StrCat(r.failed),
                    status, r.examples.empty() ? "-" : absl::StrJoin(r.examples, ", ")});
  }
  absl::StrAppend(&out, "\nRules (rulebook sections 2-9) and the tests that pin them\n",
                  table(rows));

  std::vector<std::string> wrong_rows;
  rows = {{"id", "situation", "legacy", "correct", "legacy@legacy", "legacy@rev-d",
           "correct@rev-d", "row"}};
  for (const CatalogueRow& r : check.catalogue) {
    std::string problem = row_problem(r);
    if (!problem.empty()) wrong_rows.push_back(r.id);
    rows.push_back({r.id, r.situation, absl::StrCat(r.legacy_value),
                    absl::StrCat(r.correct_value), verdict(r.legacy_under_legacy),
                    verdict(r.legacy_under_rev_d), verdict(r.correct_under_rev_d),
                    problem.empty() ? "ok" : "WRONG: " + problem});
  }
  absl::StrAppend(&out,
                  "\nRulesets: the legacy catalogue (rulebook section 10), each trace checked "
                  "by the monitor\n",
                  table(rows));

  if (!check.failed_tests.empty()) {
    absl::StrAppend(&out, "\nFailing tests\n");
    for (std::size_t i = 0; i < check.failed_tests.size() && i < kListedFailures; ++i) {
      const TestResult& t = check.failed_tests[i];
      absl::StrAppend(&out, "  ", t.full_name(), " (", t.file, ")\n");
    }
    if (check.failed_tests.size() > kListedFailures) {
      absl::StrAppend(&out, "  ... and ", check.failed_tests.size() - kListedFailures, " more\n");
    }
  }

  std::vector<std::string> reasons;
  if (!uncovered.empty()) {
    reasons.push_back(absl::StrCat(count(uncovered.size(), "rule"), " without a passing test (",
                                   absl::StrJoin(uncovered, " "), ")"));
  }
  if (!failing_rules.empty()) {
    reasons.push_back(absl::StrCat(count(failing_rules.size(), "rule"), " with a failing test (",
                                   absl::StrJoin(failing_rules, " "), ")"));
  }
  if (check.tests_failed > 0) reasons.push_back(count(check.tests_failed, "failing test"));
  if (check.catalogue.empty()) reasons.push_back("the legacy catalogue is empty");
  if (!wrong_rows.empty()) {
    reasons.push_back(absl::StrCat(count(wrong_rows.size(), "catalogue row"), " wrong (",
                                   absl::StrJoin(wrong_rows, " "), ")"));
  }
  absl::StrAppend(&out, "\nverdict: ",
                  check.ok() ? "PASS" : "FAIL: " + absl::StrJoin(reasons, "; "), "\n");
  return out;
}

std::string format_json(const SelfCheck& check) {
  using Json = nlohmann::ordered_json;
  Json rules = Json::array();
  for (const RuleRow& r : check.rules) {
    rules.push_back({{"rule", std::string(r.rule->name)},
                     {"title", std::string(r.rule->title)},
                     {"section", std::string(r.rule->section)},
                     {"known_deviation", r.rule->known_deviation},
                     {"tests", r.tests()},
                     {"passed", r.passed},
                     {"failed", r.failed},
                     {"ok", r.ok()},
                     {"examples", r.examples}});
  }
  Json failed = Json::array();
  for (const TestResult& t : check.failed_tests) {
    failed.push_back({{"test", t.full_name()}, {"file", t.file}});
  }
  Json rows = Json::array();
  for (const CatalogueRow& r : check.catalogue) {
    rows.push_back({{"id", r.id},
                    {"situation", r.situation},
                    {"legacy_value", r.legacy_value},
                    {"correct_value", r.correct_value},
                    {"rev_d_rule", std::string(spec::rule_name(r.rev_d_rule))},
                    {"rev_d_deviation", r.rev_d_deviation},
                    {"legacy_under_legacy", json_check(r.legacy_under_legacy, r.legacy_ok())},
                    {"legacy_under_rev_d", json_check(r.legacy_under_rev_d, r.rev_d_ok())},
                    {"correct_under_rev_d", json_check(r.correct_under_rev_d, r.correct_ok())},
                    {"ok", r.ok()}});
  }
  const Json doc = {{"ok", check.ok()},
                    {"result_files", check.result_files},
                    {"tests",
                     {{"passed", check.tests_passed},
                      {"failed", check.tests_failed},
                      {"skipped", check.tests_not_run}}},
                    {"failed_tests", std::move(failed)},
                    {"rules", std::move(rules)},
                    {"catalogue", std::move(rows)}};
  return report::json_indented(doc);
}

}  // namespace permitcheck::cli
