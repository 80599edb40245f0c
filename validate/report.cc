#include "validate/report.h"

#include "absl/strings/str_cat.h"
#include "validate/json_out.h"
#include "validate/junit.h"
#include "base/absl_view.h"
#include "spec/finding_text.h"
#include "spec/outcome.h"
#include "spec/rule_id.h"

namespace permitcheck::validate {
namespace {


std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return absl::StrCat(n, " ", to_absl(n == 1 ? one : many));
}

// ERROR and NOTHING-CHECKED are exit 2; the others are spec/outcome.h's outcomes.
std::string verdict_word(const FileResult& r) {
  if (r.error) return "ERROR";
  if (r.nothing_checked()) return "NOTHING-CHECKED";
  return std::string(spec::outcome_name(r.outcome()));
}

std::string describe_header(const FileResult& r) {
  if (!r.header) return "";
  const spec::TraceHeader& h = *r.header;
  std::string s = absl::StrCat(to_absl(spec::trace_source_name(h.source)), " trace, ruleset ",
                               to_absl(spec::ruleset(h.ruleset).name));
  if (h.q) absl::StrAppend(&s, ", q ", *h.q);
  if (h.t) absl::StrAppend(&s, ", t ", *h.t);
  if (r.idle_seconds) absl::StrAppend(&s, ", idle ", *r.idle_seconds, " s");
  absl::StrAppend(&s, ", ", plural(r.events, "event", "events"));
  return s;
}

std::string text(const std::vector<FileResult>& results) {
  std::string out;
  std::size_t passed = 0, failed = 0, incomplete = 0, unreadable = 0, unchecked = 0;
  for (const FileResult& r : results) {
    absl::StrAppend(&out, "== ", r.display_name());
    if (r.header) absl::StrAppend(&out, " (", describe_header(r), ")");
    out += " ==\n";
    if (r.error) absl::StrAppend(&out, "error: ", r.display_name(), ": ", *r.error, "\n");
    if (r.header && !r.error) {
      const std::vector<AppliedRules> applied = applied_rules(r.families, *r.header);
      if (applied.empty()) {
        out += "rules checked: none (no events)\n";
      } else {
        out += "rules checked:\n";
        for (const AppliedRules& a : applied) absl::StrAppend(&out, "  ", a.family, ": ", a.rules, "\n");
      }
    }
    if (!r.violations.empty()) {
      out += "violations (rule IDs: docs/rules.md):\n";
      for (const spec::Finding& f : r.violations) absl::StrAppend(&out, spec::format_finding(f), "\n");
    }
    if (!r.deviations.empty()) {
      out += "known deviations (reported apart; they do not fail the trace):\n";
      for (const spec::Finding& f : r.deviations) absl::StrAppend(&out, spec::format_finding(f), "\n");
    }
    if (!r.incomplete.empty()) {
      out += "not seen or not understood (in scope, so not a pass):\n";
      for (const std::string& what : r.incomplete) absl::StrAppend(&out, "  ", what, "\n");
    }
    if (r.error) {
      ++unreadable;
      out += "verdict: ERROR (the trace could not be read to the end)\n";
    } else if (r.nothing_checked()) {
      ++unchecked;
      out += "verdict: NOTHING-CHECKED (no consumer: no subscribe, inc_open or send event)\n";
    } else if (r.violations.empty() && !r.incomplete.empty()) {
      ++incomplete;
      absl::StrAppend(&out, "verdict: INCOMPLETE (",
                      plural(r.incomplete.size(), "part not seen", "parts not seen"),
                      "; no violation in what was seen)\n");
    } else if (r.violations.empty()) {
      ++passed;
      absl::StrAppend(&out, "verdict: PASS (", plural(r.deviations.size(), "known deviation", "known deviations"), ")\n");
    } else {
      ++failed;
      absl::StrAppend(&out, "verdict: FAIL (", plural(r.violations.size(), "violation", "violations"),
                      ", ", plural(r.deviations.size(), "known deviation", "known deviations"), ")\n");
    }
  }
  if (results.size() > 1) {
    absl::StrAppend(&out, "\n", plural(results.size(), "trace", "traces"), ": ", passed,
                    " passed, ", failed, " failed, ",
                    incomplete > 0 ? absl::StrCat(incomplete, " incomplete, ") : "",
                    unreadable, " unreadable",
                    unchecked > 0 ? absl::StrCat(", ", unchecked, " with nothing checked") : "",
                    "\n");
  }
  return out;
}

std::string json(const std::vector<FileResult>& results) {
  std::string out = "{\"tool\":\"permitcheck validate\",\"ok\":";
  out += validate_exit_code(results) == spec::kExitPass ? "true" : "false";
  absl::StrAppend(&out, ",\"exit_code\":", validate_exit_code(results), ",\"files\":[");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const FileResult& r = results[i];
    if (i > 0) out += ",";
    absl::StrAppend(&out, "\n{\"file\":", json_string(r.name), ",\"verdict\":",
                    json_string(verdict_word(r)));
    if (r.error) absl::StrAppend(&out, ",\"error\":", json_string(*r.error));
    if (r.header) {
      const spec::TraceHeader& h = *r.header;
      absl::StrAppend(&out, ",\"source\":", json_string(spec::trace_source_name(h.source)),
                      ",\"ruleset\":", json_string(spec::ruleset(h.ruleset).name));
      if (h.q) absl::StrAppend(&out, ",\"q\":", *h.q);
      if (h.t) absl::StrAppend(&out, ",\"t\":", *h.t);
    }
    if (r.idle_seconds) absl::StrAppend(&out, ",\"idle_seconds\":", *r.idle_seconds);
    absl::StrAppend(&out, ",\"events\":", r.events, ",\"event_families\":{\"wire\":",
                    r.families.wire, ",\"client\":", r.families.client, ",\"broker\":",
                    r.families.broker, ",\"extension\":", r.families.extension, "}");
    out += ",\"rules_checked\":[";
    if (r.header && !r.error) {
      const std::vector<AppliedRules> applied = applied_rules(r.families, *r.header);
      for (std::size_t k = 0; k < applied.size(); ++k) {
        absl::StrAppend(&out, k > 0 ? "," : "", "{\"family\":", json_string(applied[k].family),
                        ",\"rules\":", json_string(applied[k].rules), "}");
      }
    }
    out += "],\"violations\":[";
    for (std::size_t k = 0; k < r.violations.size(); ++k) {
      absl::StrAppend(&out, k > 0 ? "," : "", "\n  ", finding_json(r.violations[k]));
    }
    out += "],\"deviations\":[";
    for (std::size_t k = 0; k < r.deviations.size(); ++k) {
      absl::StrAppend(&out, k > 0 ? "," : "", "\n  ", finding_json(r.deviations[k]));
    }
    out += "],\"incomplete\":[";
    for (std::size_t k = 0; k < r.incomplete.size(); ++k) {
      absl::StrAppend(&out, k > 0 ? "," : "", json_string(r.incomplete[k]));
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

std::string junit(const std::vector<FileResult>& results) {
  JunitSuite suite{.name = "permitcheck validate", .suite = "validate"};
  for (const FileResult& r : results) {
    JunitCase c{.classname = "permitcheck.validate", .name = r.display_name()};
    if (r.error) {
      c.error = JunitCase::Failure{"bad input", absl::StrCat(r.display_name(), ": ", *r.error), ""};
    } else if (r.nothing_checked()) {
      c.error = JunitCase::Failure{"nothing checked",
                                   absl::StrCat(r.display_name(), ": no consumer"), ""};
    } else if (r.violations.empty() && !r.incomplete.empty()) {
      std::string body;
      for (const std::string& what : r.incomplete) absl::StrAppend(&body, what, "\n");
      c.error = JunitCase::Failure{"incomplete", r.incomplete[0], body};
    } else if (!r.violations.empty()) {
      std::string body;
      for (const spec::Finding& f : r.violations) absl::StrAppend(&body, spec::format_finding(f), "\n");
      c.failure = JunitCase::Failure{
          "violation",
          absl::StrCat(plural(r.violations.size(), "violation", "violations"), "; first: ",
                       spec::format_finding(r.violations[0])),
          body};
    }
    if (r.header) absl::StrAppend(&c.system_out, describe_header(r), "\n");
    if (r.header && !r.error) {
      for (const AppliedRules& a : applied_rules(r.families, *r.header)) {
        absl::StrAppend(&c.system_out, "rules checked: ", a.family, ": ", a.rules, "\n");
      }
    }
    for (const spec::Finding& f : r.deviations) {
      absl::StrAppend(&c.system_out, "known deviation: ", spec::format_finding(f), "\n");
    }
    suite.cases.push_back(std::move(c));
  }
  return format_junit(suite);
}

}  // namespace

std::optional<ReportFormat> parse_report_format(std::string_view name) {
  if (name == "text") return ReportFormat::kText;
  if (name == "json") return ReportFormat::kJson;
  if (name == "junit") return ReportFormat::kJunit;
  return std::nullopt;
}

nlohmann::ordered_json finding_object(const spec::Finding& f) {
  return finding_object(f.rule, f.line, f.explanation);
}

nlohmann::ordered_json finding_object(spec::RuleId rule, std::uint64_t line, std::string_view text) {
  return {{"line", line},
          {"rule", std::string(spec::rule_name(rule))},
          {"text", std::string(text)},
          {"message", spec::format_finding(rule, line, text)}};
}

std::string finding_json(const spec::Finding& f) {
  return finding_object(f).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string format_validate(const std::vector<FileResult>& results, ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson: return json(results);
    case ReportFormat::kJunit: return junit(results);
    case ReportFormat::kText: break;
  }
  return text(results);
}

}  // namespace permitcheck::validate
