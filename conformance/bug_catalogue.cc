#include "conformance/bug_catalogue.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "conformance/client_presets.h"
#include "spec/plain_text.h"

namespace permitcheck::conformance {
namespace {

EntrySpec corrupt_single() { return EntrySpec{.fault = EntryFault::kChecksum}; }

// A batch of B redelivered with the indexes CLEARED acknowledged before (ack_set).
EntrySpec partial_batch(std::int64_t b, std::vector<std::int64_t> cleared) {
  return EntrySpec{.batch_size = b, .batched = true, .cleared = std::move(cleared)};
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += ' ';
        else out += c;
    }
  }
  return out + "\"";
}

// " Q=1 PERMITCHECK_CPP_MODE=zero-queue": what the row sets besides the scenario.
std::string client_settings(const BugRow& row) {
  return absl::StrCat(" Q=", row.q, row.client_env.empty() ? "" : " ", row.client_env);
}

VersionRun run_version(const BugRow& row, const std::string& version, std::string_view root,
                       std::string* error) {
  VersionRun run{.version = version};
  absl::StatusOr<ResolvedPreset> preset =
      resolve_preset(absl::StrCat(row.client, "@", version), root);
  if (!preset.ok()) {
    *error = std::string(preset.status().message());
    return run;
  }
  const std::string command =
      row.client_env.empty() ? preset->command : absl::StrCat(row.client_env, " ", preset->command);
  ClientSpec client{.command = command, .q = row.q, .t = preset->preset->threshold(row.q),
                    .knows_message_permits = preset->preset->knows_message_permits,
                    .timeout = preset->preset->startup + std::chrono::milliseconds(20000),
                    .startup = preset->preset->startup};
  const ScenarioOutcome o = run_scenario(client, row.scenario);
  run.client_started = !o.client_never_started;
  std::set<std::string> rules;
  for (const spec::Finding& f : o.violations) rules.insert(std::string(spec::rule_name(f.rule)));
  run.rules.assign(rules.begin(), rules.end());
  run.numbers = absl::StrCat("debited ", o.debited, ", granted ", o.granted, ", available ",
                             o.granted - o.debited);
  if (o.client_failure) run.client_failure = *o.client_failure;
  run.failed_starts = o.failed_starts;
  run.seconds = o.seconds;
  return run;
}

}  // namespace

const std::vector<BugRow>& bug_catalogue() {
  static const std::vector<BugRow> rows = {
      {.id = "go-833",
       .client = "go",
       .bug = "apache/pulsar-client-go#833 (fixed by #835)",
       .summary = "a message discarded as corrupt returned no permit: the consumer's permits "
                  "leak until it stalls",
       .affected = "v0.9.0",
       .fixed = "v0.10.0",
       // Five single messages with a bad crc32c (P = 1 each, so X1's fallback of 1 is exact):
       // each discarded one must return its permit.
       .scenario = ScenarioParams{.kind = ScenarioKind::kCorruptChecksum,
                                  .entries = {corrupt_single(), corrupt_single(),
                                              corrupt_single(), corrupt_single(),
                                              corrupt_single()}},
       .rules = {spec::RuleId::kE5, spec::RuleId::kE6}},
      // ---- Java and Go rows (issue 13) ----
      {.id = "java-22091",
       .client = "java",
       .bug = "apache/pulsar#22091 (fixed in 3.2.1)",
       .summary = "a partial-batch redelivery also returned a permit for each index acknowledged "
                  "before (ack_set cleared): the broker is granted more than it debited",
       .affected = "3.2.0",
       .fixed = "3.2.1",
       // B = 2 with index 1 acknowledged (P = 1), B = 3 with 0 and 2 acknowledged (P = 1):
       // 3.2.0 returns 5 for the 2 debited (over-grant 3), 3.2.1 exactly 2.
       .scenario = ScenarioParams{.kind = ScenarioKind::kPartialBatches,
                                  .entries = {partial_batch(2, {1}), partial_batch(3, {0, 2})}},
       .rules = {spec::RuleId::kE2, spec::RuleId::kE5}},
      {.id = "go-1180",
       .client = "go",
       .bug = "apache/pulsar-client-go#1180 (fixed by #1181)",
       .summary = "a redelivered message the client drops as a duplicate of one it acknowledged "
                  "(ack still grouped) returned no permit: the consumer stalls",
       .affected = "v0.12.0",
       .fixed = "v0.12.1",
       // A batch of 5 (= T) a round, delivered again 20 ms after the client's Flow for it:
       // v0.12.0 drops the 5 duplicates and returns none; two rounds and it has stalled.
       .scenario = ScenarioParams{.kind = ScenarioKind::kDuplicateRedelivery,
                                  .entries = {EntrySpec{.batch_size = 5, .batched = true}}},
       .rules = {spec::RuleId::kE5, spec::RuleId::kE6, spec::RuleId::kK4}},
      {.id = "java-3787",
       .client = "java",
       .bug = "apache/pulsar#3787 (fixed in 2.3.1)",
       .summary = "a redelivered message the client drops as a duplicate of one it acknowledged "
                  "(ack still grouped) returned no permit: the consumer stalls",
       .affected = "2.3.0",
       .fixed = "2.3.1",
       // The go-1180 scenario: 2.3.0 drops the batch once all its 5 indexes are acknowledged
       // (the entry's ack is pending) and returns none of it.
       .scenario = ScenarioParams{.kind = ScenarioKind::kDuplicateRedelivery,
                                  .entries = {EntrySpec{.batch_size = 5, .batched = true}}},
       .rules = {spec::RuleId::kE5, spec::RuleId::kE6, spec::RuleId::kK4}},
      // ---- C++ client (PyPI pulsar-client wheels, clients/cpp/requirements-*.txt)
      {.id = "cpp-473",
       .client = "cpp",
       .bug = "apache/pulsar-client-cpp#473 (fixed by that PR, C++ client 3.7.1)",
       .summary = "a zero-queue consumer waiting in receive() never asks again after its topic "
                  "is unloaded (CLOSE_CONSUMER, resubscribe): the replacement sends no Flow and "
                  "stalls",
       .affected = "3.6.1",  // bundles the C++ client 3.7.0
       .fixed = "3.7.0",     // bundles the C++ client 3.7.1
       // Single messages only (a zero-queue consumer takes no batches); CLOSE_CONSUMER after
       // two, with receive() waiting: the replacement must Flow 1 for it.
       .scenario = ScenarioParams{.kind = ScenarioKind::kCloseConsumer,
                                  .entries = {single(), single(), single(), single()},
                                  .disrupt_after = 2},
       .rules = {spec::RuleId::kE5, spec::RuleId::kE6},
       .q = 1,
       .client_env = "PERMITCHECK_CPP_MODE=zero-queue"},
      // ---- Go client, zero-queue consumer (clients/go/versions/v0.16.0, v0.17.0)
      {.id = "go-1404",
       .client = "go",
       .bug = "apache/pulsar-client-go#1330 (fixed by #1404, v0.17.0)",
       .summary = "a zero-queue consumer waiting in Receive() sends no Flow after its topic is "
                  "unloaded (CLOSE_CONSUMER, resubscribe): the reconnect's initial Flow is for "
                  "0 permits and fails, so the replacement stalls",
       .affected = "v0.16.0",
       .fixed = "v0.17.0",
       // Single messages (a zero-queue consumer takes no batches); CLOSE_CONSUMER after two,
       // with Receive() waiting on its Flow 1: the replacement must Flow 1 again.
       .scenario = ScenarioParams{.kind = ScenarioKind::kCloseConsumer,
                                  .entries = {single(), single(), single(), single()},
                                  .disrupt_after = 2},
       .rules = {spec::RuleId::kE5, spec::RuleId::kE6},
       .q = 1,
       .client_env = "PERMITCHECK_GO_MODE=zero-queue"},
  };
  return rows;
}

RowResult run_bug_row(const BugRow& row, std::string_view root) {
  RowResult r{.row = &row};
  r.affected = run_version(row, row.affected, root, &r.error);
  if (!r.error.empty()) return r;
  r.fixed = run_version(row, row.fixed, root, &r.error);
  if (!r.error.empty()) return r;
  r.found = r.affected.client_started &&
            std::any_of(row.rules.begin(), row.rules.end(), [&](spec::RuleId rule) {
              return std::find(r.affected.rules.begin(), r.affected.rules.end(),
                               spec::rule_name(rule)) != r.affected.rules.end();
            });
  r.passes = r.fixed.client_started && r.fixed.rules.empty() && r.fixed.client_failure.empty();
  return r;
}

std::string format_catalogue_text(const std::vector<RowResult>& results) {
  std::string s = "Bug catalogue (each row: found in the affected release, passes in the fixed one)\n";
  int held = 0;
  for (const RowResult& r : results) {
    held += r.holds() ? 1 : 0;
    absl::StrAppend(&s, "\n", r.holds() ? "HOLDS " : "FAILS ", r.row->id, "  ", r.row->bug, " (",
                    r.row->client, ")\n  ", r.row->summary, "\n  scenario: ",
                    describe(r.row->scenario), client_settings(*r.row), "\n");
    if (!r.error.empty()) {
      absl::StrAppend(&s, "  error: ", r.error, "\n");
      continue;
    }
    for (const VersionRun* v : {&r.affected, &r.fixed}) {
      const bool affected = v == &r.affected;
      absl::StrAppend(&s, "  ", affected ? "affected " : "fixed    ", v->version, ": ",
                      v->rules.empty() ? "pass" : absl::StrCat("rules ", absl::StrJoin(v->rules, ",")),
                      " (", v->numbers, ")",
                      v->client_failure.empty() ? "" : absl::StrCat("; client ", v->client_failure),
                      absl::StrFormat(", %.1f s", v->seconds), " -> ",
                      affected ? (r.found ? "found" : "NOT FOUND")
                               : (r.passes ? "passes" : "DOES NOT PASS"),
                      "\n");
      for (const std::string& f : v->failed_starts) {
        absl::StrAppend(&s, "    started again after ", f, "\n");
      }
    }
  }
  absl::StrAppend(&s, "\n", held, " of ", spec::count_noun(results.size(), "row"),
                  held == 1 ? " holds" : " hold", "\nverdict: ",
                  held == static_cast<int>(results.size()) ? "PASS" : "FAIL", "\n");
  return s;
}

std::string format_catalogue_json(const std::vector<RowResult>& results) {
  std::string s;
  auto version = [](const VersionRun& v) {
    std::vector<std::string> rules;
    for (const std::string& r : v.rules) rules.push_back(json_string(r));
    std::vector<std::string> failed;
    for (const std::string& f : v.failed_starts) failed.push_back(json_string(f));
    return absl::StrCat("{\"version\": ", json_string(v.version), ", \"rules\": [",
                        absl::StrJoin(rules, ", "), "], \"numbers\": ", json_string(v.numbers),
                        ", \"client_failure\": ", json_string(v.client_failure),
                        ", \"failed_starts\": [", absl::StrJoin(failed, ", "), "]",
                        ", \"seconds\": ", absl::StrFormat("%.2f", v.seconds), "}");
  };
  for (const RowResult& r : results) {
    absl::StrAppend(&s, "{\"id\": ", json_string(r.row->id), ", \"client\": ",
                    json_string(r.row->client), ", \"bug\": ", json_string(r.row->bug),
                    ", \"scenario\": ", json_string(describe(r.row->scenario)),
                    ", \"q\": ", r.row->q, ", \"client_env\": ", json_string(r.row->client_env),
                    ", \"ok\": ", r.holds() ? "true" : "false", ", \"found\": ",
                    r.found ? "true" : "false", ", \"passes_fixed\": ",
                    r.passes ? "true" : "false");
    if (!r.error.empty()) absl::StrAppend(&s, ", \"error\": ", json_string(r.error));
    else absl::StrAppend(&s, ", \"affected\": ", version(r.affected), ", \"fixed\": ", version(r.fixed));
    absl::StrAppend(&s, "}\n");
  }
  return s;
}

}  // namespace permitcheck::conformance
