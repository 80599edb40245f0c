#include "matrix/json.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "base/absl_view.h"
#include "spec/rule_id.h"
#include "validate/report.h"

namespace permitcheck::matrix {
namespace {

using nlohmann::ordered_json;

// A finding as every JSON report writes one (validate::finding_object,
// docs/schemas/finding.schema.json); a rule that is no rule ID (never made by the runs) keeps
// the same four fields.
ordered_json finding_json(const CellFinding& f) {
  if (std::optional<spec::RuleId> rule = spec::parse_rule_id(f.rule)) {
    return validate::finding_object(*rule, f.line, f.explanation);
  }
  return {{"line", f.line},
          {"rule", f.rule},
          {"text", f.explanation},
          {"message", absl::StrCat("line ", f.line, ": ", f.rule, " ", f.explanation)}};
}

ordered_json cell_json(const Cell& c) {
  ordered_json j;
  j["broker"] = c.key.broker;
  j["client"] = c.key.client;
  j["version"] = c.key.version;
  j["scenario"] = c.key.scenario;
  j["outcome"] = std::string(outcome_name(c.outcome));
  j["rules"] = c.rules;
  j["seconds"] = c.seconds;
  j["runs"] = c.runs;
  j["cases_passed"] = c.cases_passed;
  j["reason"] = c.reason;
  ordered_json findings = ordered_json::array();
  for (const CellFinding& f : c.findings) findings.push_back(finding_json(f));
  j["findings"] = std::move(findings);
  j["original"] = c.original;
  j["minimal"] = c.minimal;
  j["shrink_steps"] = c.shrink_steps;
  j["client_failure"] = c.client_failure;
  j["windows"] = c.windows;
  j["deviations"] = c.deviations;
  j["prose"] = c.prose;
  j["trace"] = c.trace;
  j["trace_file"] = c.trace_file;
  j["logs"] = c.logs;
  j["capture"] = c.capture;
  j["capture_note"] = c.capture_note;
  j["expected"] = c.expected;
  j["verdict"] = std::string(verdict_name(c.verdict));
  return j;
}

const char* conformance_name(Conformance c) {
  switch (c) {
    case Conformance::kConforms: return "conforms";
    case Conformance::kDeviatesAsPinned: return "deviates as pinned";
    case Conformance::kUnexpected: return "unexpected";
  }
  return "unexpected";
}

// Reads field `key` of `j` into `out`; a missing or mistyped field throws, caught by from_json.
template <typename T>
void get(const ordered_json& j, const char* key, T& out) {
  if (!j.contains(key)) throw std::runtime_error(absl::StrCat("missing field \"", key, "\""));
  try {
    j.at(key).get_to(out);
  } catch (const std::exception& e) {
    throw std::runtime_error(absl::StrCat("field \"", key, "\": ", e.what()));
  }
}

Cell cell_from(const ordered_json& j) {
  Cell c;
  get(j, "broker", c.key.broker);
  get(j, "client", c.key.client);
  get(j, "version", c.key.version);
  get(j, "scenario", c.key.scenario);
  std::string outcome;
  get(j, "outcome", outcome);
  const std::optional<Outcome> o = parse_outcome(outcome);
  if (!o) throw std::runtime_error(absl::StrCat("unknown outcome \"", outcome, "\""));
  c.outcome = *o;
  get(j, "rules", c.rules);
  get(j, "seconds", c.seconds);
  get(j, "runs", c.runs);
  get(j, "cases_passed", c.cases_passed);
  get(j, "reason", c.reason);
  for (const ordered_json& f : j.at("findings")) {
    CellFinding cf;
    get(f, "rule", cf.rule);
    get(f, "line", cf.line);
    get(f, "text", cf.explanation);
    c.findings.push_back(std::move(cf));
  }
  get(j, "original", c.original);
  get(j, "minimal", c.minimal);
  get(j, "shrink_steps", c.shrink_steps);
  get(j, "client_failure", c.client_failure);
  get(j, "windows", c.windows);
  get(j, "deviations", c.deviations);
  get(j, "prose", c.prose);
  get(j, "trace", c.trace);
  get(j, "trace_file", c.trace_file);
  get(j, "logs", c.logs);
  get(j, "capture", c.capture);
  get(j, "capture_note", c.capture_note);
  get(j, "expected", c.expected);
  std::string verdict;
  get(j, "verdict", verdict);
  c.verdict = verdict == "as pinned"     ? Verdict::kAsPinned
              : verdict == "unexpected" ? Verdict::kUnexpected
                                        : Verdict::kAsExpected;
  return c;
}

}  // namespace

std::string to_json(const Matrix& m) {
  ordered_json j;
  j["schema"] = std::string(kSchema);
  if (m.shard) j["shard"] = {{"index", m.shard->index}, {"count", m.shard->count}};
  j["wall_seconds"] = m.wall_seconds;
  j["jobs"] = m.jobs;
  j["settings"] = {{"seed", m.seed}, {"idle_seconds", m.idle_seconds}};
  ordered_json scenarios = ordered_json::array();
  for (const ScenarioColumn& s : m.scenarios) {
    scenarios.push_back({{"name", s.name}, {"rule", s.rule}, {"summary", s.summary}});
  }
  j["scenarios"] = std::move(scenarios);
  ordered_json clients = ordered_json::array();
  for (const ClientRow& r : m.clients) {
    clients.push_back({{"client", r.client},
                       {"version", r.version},
                       {"library", r.library},
                       {"knows_message_permits", r.knows_message_permits},
                       {"threshold", r.threshold}});
  }
  j["clients"] = std::move(clients);
  ordered_json summaries = ordered_json::array();
  for (const ClientSummary& s : m.summaries) {
    summaries.push_back({{"client", s.client},
                         {"version", s.version},
                         {"conformance", std::string(conformance_name(s.conformance))},
                         {"pinned_findings", s.pinned_findings},
                         {"incomplete", s.incomplete},
                         {"unexpected", s.unexpected},
                         {"expectations", s.expectations},
                         {"summary", s.text()}});
  }
  j["summaries"] = std::move(summaries);
  j["notes"] = m.notes;
  ordered_json plan = ordered_json::array();
  for (const CellKey& k : m.plan) {
    plan.push_back({{"broker", k.broker}, {"client", k.client}, {"version", k.version},
                    {"scenario", k.scenario}});
  }
  j["plan"] = std::move(plan);
  ordered_json cells = ordered_json::array();
  for (const Cell& c : m.cells) cells.push_back(cell_json(c));
  j["cells"] = std::move(cells);
  // Invalid UTF-8 (a client's log tail) is replaced, never a throw.
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

absl::StatusOr<Matrix> from_json(std::string_view text) {
  try {
    const ordered_json j = ordered_json::parse(text);
    if (!j.is_object()) return absl::InvalidArgumentError("not a JSON object");
    std::string schema;
    get(j, "schema", schema);
    if (schema != kSchema) {
      return absl::InvalidArgumentError(
          absl::StrCat("schema \"", schema, "\", this permitcheck reads \"", to_absl(kSchema),
                       "\""));
    }
    Matrix m;
    if (j.contains("shard")) {
      Shard s;
      get(j.at("shard"), "index", s.index);
      get(j.at("shard"), "count", s.count);
      m.shard = s;
    }
    get(j, "wall_seconds", m.wall_seconds);
    get(j, "jobs", m.jobs);
    get(j.at("settings"), "seed", m.seed);
    get(j.at("settings"), "idle_seconds", m.idle_seconds);
    for (const ordered_json& s : j.at("scenarios")) {
      ScenarioColumn c;
      get(s, "name", c.name);
      get(s, "rule", c.rule);
      get(s, "summary", c.summary);
      m.scenarios.push_back(std::move(c));
    }
    for (const ordered_json& r : j.at("clients")) {
      ClientRow row;
      get(r, "client", row.client);
      get(r, "version", row.version);
      get(r, "library", row.library);
      get(r, "knows_message_permits", row.knows_message_permits);
      get(r, "threshold", row.threshold);
      m.clients.push_back(std::move(row));
    }
    get(j, "notes", m.notes);
    for (const ordered_json& k : j.at("plan")) {
      CellKey key;
      get(k, "broker", key.broker);
      get(k, "client", key.client);
      get(k, "version", key.version);
      get(k, "scenario", key.scenario);
      m.plan.push_back(std::move(key));
    }
    for (const ordered_json& c : j.at("cells")) m.cells.push_back(cell_from(c));
    for (const ordered_json& s : j.at("summaries")) {
      ClientSummary cs;
      get(s, "client", cs.client);
      get(s, "version", cs.version);
      std::string c;
      get(s, "conformance", c);
      cs.conformance = c == "conforms"             ? Conformance::kConforms
                       : c == "deviates as pinned" ? Conformance::kDeviatesAsPinned
                                                   : Conformance::kUnexpected;
      get(s, "pinned_findings", cs.pinned_findings);
      if (s.contains("incomplete")) get(s, "incomplete", cs.incomplete);
      get(s, "unexpected", cs.unexpected);
      get(s, "expectations", cs.expectations);
      m.summaries.push_back(std::move(cs));
    }
    return m;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("matrix.json: ", e.what()));
  }
}

}  // namespace permitcheck::matrix
