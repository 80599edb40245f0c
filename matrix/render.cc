#include "matrix/render.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "matrix/sequence_svg.h"
#include "base/absl_view.h"
#include "spec/plain_text.h"

namespace permitcheck::matrix {
namespace {

struct RowKey {
  std::string broker, client, version;
  friend bool operator==(const RowKey&, const RowKey&) = default;
};

std::vector<RowKey> rows_of(const Matrix& m) {
  std::vector<RowKey> rows;
  const auto add = [&](const CellKey& k) {
    RowKey r{k.broker, k.client, k.version};
    if (std::find(rows.begin(), rows.end(), r) == rows.end()) rows.push_back(std::move(r));
  };
  for (const CellKey& k : m.plan) add(k);
  for (const Cell& c : m.cells) add(c.key);
  return rows;
}

const Cell* cell_at(const Matrix& m, const RowKey& r, const std::string& scenario) {
  for (const Cell& c : m.cells) {
    if (c.key.broker == r.broker && c.key.client == r.client && c.key.version == r.version &&
        c.key.scenario == scenario) {
      return &c;
    }
  }
  return nullptr;
}

const ClientSummary* summary_of(const Matrix& m, const RowKey& r) {
  for (const ClientSummary& s : m.summaries) {
    if (s.client == r.client && s.version == r.version) return &s;
  }
  return nullptr;
}

// "PASS", "FAIL E5,K4", "INCOMPLETE", "N/A".
std::string short_text(const Cell& c) {
  if (c.outcome == Outcome::kNotApplicable) return "N/A";
  std::string s(outcome_name(c.outcome));
  if (!c.rules.empty()) absl::StrAppend(&s, " ", absl::StrJoin(c.rules, ","));
  return s;
}

// The distinct brokers of the rows, in row order.
std::vector<std::string> brokers_of(const std::vector<RowKey>& rows) {
  std::vector<std::string> brokers;
  for (const RowKey& r : rows) {
    if (std::find(brokers.begin(), brokers.end(), r.broker) == brokers.end()) {
      brokers.push_back(r.broker);
    }
  }
  return brokers;
}

// The per-client rows across brokers (only when the matrix has more than one broker): each
// client release once, in row order.
std::vector<RowKey> across_rows(const std::vector<RowKey>& rows) {
  std::vector<RowKey> out;
  if (brokers_of(rows).size() < 2) return out;
  for (const RowKey& r : rows) {
    RowKey k{std::string(kAllBrokers), r.client, r.version};
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(std::move(k));
  }
  return out;
}

}  // namespace

std::optional<AcrossBrokers> across_brokers(const Matrix& m, std::string_view client,
                                            std::string_view version, std::string_view scenario) {
  std::optional<AcrossBrokers> a;
  std::vector<std::string> parts;
  bool differ = false;
  std::string first;
  for (const Cell& c : m.cells) {
    if (c.key.client != client || c.key.version != version || c.key.scenario != scenario) continue;
    const std::string text = short_text(c);
    if (!a) {
      a = AcrossBrokers{.outcome = c.outcome};
      first = text;
    } else {
      a->outcome = spec::combine(a->outcome, c.outcome);
      differ = differ || text != first;
    }
    if (c.verdict == Verdict::kUnexpected) a->unexpected = true;
    parts.push_back(absl::StrCat(c.key.broker, " ", text));
  }
  if (a) {
    a->text = differ ? absl::StrCat(to_absl(outcome_name(a->outcome)), " (",
                                    absl::StrJoin(parts, "; "), ")")
                     : first;
  }
  return a;
}

namespace {

std::string md_escape(std::string_view s) {
  return absl::StrReplaceAll(to_absl(s), {{"|", "\\|"}, {"\n", " "}});
}

std::string seconds_text(double s) { return absl::StrFormat("%.1f", s); }

struct Counts {
  int pass = 0, fail = 0, incomplete = 0, na = 0, unexpected = 0;
};
Counts count(const Matrix& m) {
  Counts n;
  for (const Cell& c : m.cells) {
    switch (c.outcome) {
      case Outcome::kPass: ++n.pass; break;
      case Outcome::kFail: ++n.fail; break;
      case Outcome::kIncomplete: ++n.incomplete; break;
      case Outcome::kNotApplicable: ++n.na; break;
    }
    if (c.verdict == Verdict::kUnexpected) ++n.unexpected;
  }
  return n;
}

std::string counts_line(const Matrix& m) {
  const Counts n = count(m);
  std::string s = absl::StrCat(spec::count_noun(m.cells.size(), "cell"), ": ", n.pass, " PASS, ", n.fail, " FAIL, ",
                               n.incomplete, " INCOMPLETE, ", n.na, " NOT-APPLICABLE; ",
                               n.unexpected, " unexpected");
  if (m.wall_seconds > 0) {
    absl::StrAppend(&s, "; ", seconds_text(m.wall_seconds), " s wall time");
    if (m.jobs > 0) absl::StrAppend(&s, ", ", spec::count_noun(m.jobs, "cell"), " side by side");
  }
  if (m.seed != 0) absl::StrAppend(&s, "; --seed ", m.seed, " --idle ", m.idle_seconds);
  return s;
}

}  // namespace

std::string render_summary(const Matrix& m) {
  std::string out = absl::StrCat("permitcheck matrix: ", counts_line(m), "\n");
  for (const RowKey& r : rows_of(m)) {
    const ClientSummary* s = summary_of(m, r);
    absl::StrAppend(&out, "  ", r.client, " ", r.version, " (", r.broker, "): ",
                    s ? s->text() : "not judged", "\n");
    if (s) {
      for (const std::string& u : s->unexpected) absl::StrAppend(&out, "      unexpected: ", u, "\n");
    }
  }
  for (const std::string& n : m.notes) absl::StrAppend(&out, "  note: ", n, "\n");
  return out;
}

std::string render_markdown(const Matrix& m) {
  std::string out = "# permitcheck matrix\n\n";
  absl::StrAppend(&out, counts_line(m), ".\n\n");
  out += "| broker | client | version | summary |";
  for (const ScenarioColumn& s : m.scenarios) absl::StrAppend(&out, " ", s.name, " |");
  out += "\n| --- | --- | --- | --- |";
  for (std::size_t i = 0; i < m.scenarios.size(); ++i) out += " --- |";
  out += "\n";
  for (const RowKey& r : rows_of(m)) {
    const ClientSummary* s = summary_of(m, r);
    absl::StrAppend(&out, "| ", md_escape(r.broker), " | ", md_escape(r.client), " | ",
                    md_escape(r.version), " | ", s ? s->text() : "not judged", " |");
    for (const ScenarioColumn& col : m.scenarios) {
      const Cell* c = cell_at(m, r, col.name);
      if (c == nullptr) {
        out += " - |";
      } else if (c->verdict == Verdict::kUnexpected) {
        absl::StrAppend(&out, " **", short_text(*c), "** |");
      } else {
        absl::StrAppend(&out, " ", short_text(*c), " |");
      }
    }
    out += "\n";
  }
  for (const RowKey& r : across_rows(rows_of(m))) {
    const ClientSummary* s = summary_of(m, r);
    absl::StrAppend(&out, "| ", md_escape(r.broker), " | ", md_escape(r.client), " | ",
                    md_escape(r.version), " | ", s ? s->text() : "not judged", " |");
    for (const ScenarioColumn& col : m.scenarios) {
      const std::optional<AcrossBrokers> a = across_brokers(m, r.client, r.version, col.name);
      if (!a) {
        out += " - |";
      } else {
        absl::StrAppend(&out, a->unexpected ? " **" : " ", md_escape(a->text),
                        a->unexpected ? "** |" : " |");
      }
    }
    out += "\n";
  }
  out += "\nA bold cell is unexpected: its client's expectations say otherwise. A cell not run "
         "is `-`.";
  if (brokers_of(rows_of(m)).size() > 1) {
    absl::StrAppend(&out, " A row `", to_absl(kAllBrokers),
                    "` gives each client release across the "
                    "brokers: the worst outcome, and each broker's when they differ.");
  }
  out += "\n\n## Scenarios\n\n";
  for (const ScenarioColumn& s : m.scenarios) {
    absl::StrAppend(&out, "- `", s.name, "` (", s.rule, "): ", md_escape(s.summary), "\n");
  }
  bool any = false;
  for (const ClientSummary& s : m.summaries) {
    for (const std::string& u : s.unexpected) {
      if (!any) out += "\n## Unexpected\n\n";
      any = true;
      absl::StrAppend(&out, "- ", s.client, " ", s.version, ": ", md_escape(u), "\n");
    }
  }
  if (!m.notes.empty()) {
    out += "\n## Notes\n\n";
    for (const std::string& n : m.notes) absl::StrAppend(&out, "- ", md_escape(n), "\n");
  }
  return out;
}

namespace {

constexpr std::string_view kStyle = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.5em;margin:0 0 .3em} h2{font-size:1.2em;margin-top:1.5em}
table.matrix{border-collapse:collapse;font-size:12px}
table.matrix th,table.matrix td{border:1px solid #ccc;padding:3px 5px;text-align:center}
table.matrix th.scenario{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;
  vertical-align:bottom;font-weight:600;padding:6px 2px}
table.matrix th.row{text-align:left;white-space:nowrap}
table.matrix td.summary{text-align:left;white-space:nowrap;font-size:11px}
td.cell a{display:block;color:inherit;text-decoration:none;font-weight:600;min-width:3.2em}
td.PASS{background:#d8f3d8} td.FAIL{background:#f9d0d0} td.INCOMPLETE{background:#fbe9b7}
td.NOT-APPLICABLE{background:#e8e8e8;color:#666}
td.unexpected{outline:3px solid #c00;outline-offset:-3px}
td.pinned a::after{content:" (pinned)";font-weight:400;font-size:10px;display:block}
.conforms{color:#17691b} .deviates{color:#8a5a00} .unexpected-text{color:#b00000;font-weight:600}
details.cell{border:1px solid #ccc;border-radius:4px;margin:.5em 0;padding:.3em .8em}
details.cell[open]{background:#fafafa} details.cell summary{cursor:pointer;font-weight:600}
pre{background:#f4f4f4;padding:.6em;overflow:auto;max-height:28em;font-size:12px}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:.2em 1em} dl.facts dt{font-weight:600}
table.legend td{border:0;padding:2px 8px;text-align:left;vertical-align:top}
.seq{background:#fff;border:1px solid #ddd;max-width:100%;height:auto}
)css";

constexpr std::string_view kScript = R"js(
document.addEventListener('click', function (e) {
  var a = e.target.closest('td.cell a');
  if (!a) return;
  var d = document.getElementById(a.getAttribute('href').slice(1));
  if (d) { d.open = true; }
});
window.addEventListener('load', function () {
  if (location.hash) { var d = document.getElementById(location.hash.slice(1)); if (d && d.tagName === 'DETAILS') d.open = true; }
});
)js";

std::string h(std::string_view s) { return xml_text(s); }

std::string conformance_class(const ClientSummary* s) {
  if (s == nullptr) return "";
  switch (s->conformance) {
    case Conformance::kConforms: return "conforms";
    case Conformance::kDeviatesAsPinned: return "deviates";
    case Conformance::kUnexpected: return "unexpected-text";
  }
  return "";
}

std::string cell_anchor(std::size_t i) { return absl::StrCat("cell-", i); }

void details(std::string* out, const Cell& c, std::size_t i) {
  absl::StrAppend(out, "<details class=\"cell\" id=\"", cell_anchor(i), "\" data-outcome=\"",
                  to_absl(outcome_name(c.outcome)), "\">\n<summary>", h(c.key.client), " ", h(c.key.version),
                  " &times; ", h(c.key.scenario), ": ", h(short_text(c)), " (", verdict_name(c.verdict),
                  ")</summary>\n<dl class=\"facts\">\n");
  const auto fact = [&](std::string_view k, std::string_view v) {
    if (!v.empty()) absl::StrAppend(out, "<dt>", to_absl(k), "</dt><dd>", h(v), "</dd>\n");
  };
  fact("broker", c.key.broker);
  fact("outcome", outcome_name(c.outcome));
  fact("expected", c.expected);
  fact("verdict", verdict_name(c.verdict));
  fact("why", c.reason);
  fact("rules", absl::StrJoin(c.rules, ", "));
  fact("runs", absl::StrCat(spec::count_noun(c.runs, "client run"), ", ",
                            spec::count_noun(c.cases_passed, "case"), " passed, ",
                            seconds_text(c.seconds), " s"));
  fact("first failing parameters", c.original);
  if (!c.minimal.empty()) {
    fact("shrunk to", absl::StrCat(c.minimal, " (", spec::count_noun(c.shrink_steps, "step"), ")"));
  }
  fact("client", c.client_failure);
  *out += "</dl>\n";
  if (!c.findings.empty()) {
    *out += "<h4>Findings</h4>\n<ul class=\"findings\">\n";
    for (const CellFinding& f : c.findings) {
      absl::StrAppend(out, "<li><b>", h(f.rule), "</b> ", f.line ? absl::StrCat("(line ", f.line, ") ") : "",
                      h(f.explanation), "</li>\n");
    }
    *out += "</ul>\n";
  }
  if (!c.windows.empty()) {
    *out += "<h4>Windows opened</h4>\n<ul>\n";
    for (const std::string& w : c.windows) absl::StrAppend(out, "<li>", h(w), "</li>\n");
    *out += "</ul>\n";
  }
  if (!c.deviations.empty()) {
    *out += "<h4>Known deviations (not failures)</h4>\n<ul>\n";
    for (const std::string& d : c.deviations) absl::StrAppend(out, "<li>", h(d), "</li>\n");
    *out += "</ul>\n";
  }
  if (!c.trace.empty()) {
    *out += "<h4>Minimal counterexample</h4>\n<div class=\"diagram\">\n";
    *out += sequence_svg(c.trace, c.findings, cell_anchor(i));
    *out += "</div>\n";
  }
  if (!c.prose.empty()) absl::StrAppend(out, "<h4>Explained</h4>\n<pre class=\"prose\">", h(c.prose), "</pre>\n");
  if (!c.trace.empty()) {
    absl::StrAppend(out, "<h4>Trace (JSON Lines)</h4>\n<pre class=\"trace\">", h(c.trace), "</pre>\n");
  }
  *out += "<h4>Artifacts</h4>\n<ul class=\"artifacts\">\n";
  if (!c.trace.empty()) {
    absl::StrAppend(out, "<li><a class=\"trace\" href=\"cells/", h(c.key.id()),
                    "/trace.jsonl\">trace.jsonl</a> (permitcheck validate, render and replay read it)</li>\n");
  }
  if (!c.trace_file.empty()) {
    absl::StrAppend(out, "<li><a class=\"trace\" href=\"", h(c.trace_file),
                    "\">the run's wire trace</a> (permitcheck validate reads it)</li>\n");
  }
  if (!c.capture.empty()) {
    absl::StrAppend(out, "<li><a class=\"capture\" href=\"", h(c.capture), "\">capture (pcap)</a></li>\n");
  } else {
    absl::StrAppend(out, "<li class=\"no-capture\">no capture: ",
                    h(c.capture_note.empty() ? "none was written" : c.capture_note), "</li>\n");
  }
  for (const std::string& l : c.logs) {
    absl::StrAppend(out, "<li><a class=\"log\" href=\"", h(l), "\">client log ", h(l), "</a></li>\n");
  }
  if (c.logs.empty()) *out += "<li>no client log kept</li>\n";
  *out += "</ul>\n</details>\n";
}

}  // namespace

std::string render_html(const Matrix& m) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>permitcheck matrix</title>\n<style>";
  absl::StrAppend(&out, to_absl(kStyle), "</style>\n</head>\n<body>\n<h1>permitcheck matrix</h1>\n<p class=\"counts\">",
                  h(counts_line(m)), "</p>\n");
  // Where each cell's details are: cells in m.cells order.
  std::map<const Cell*, std::size_t> index;
  for (std::size_t i = 0; i < m.cells.size(); ++i) index[&m.cells[i]] = i;
  out += "<table class=\"matrix\">\n<thead><tr><th>broker</th><th>client</th><th>version</th><th>summary</th>";
  for (const ScenarioColumn& s : m.scenarios) {
    absl::StrAppend(&out, "<th class=\"scenario\" title=\"", h(s.summary), "\">", h(s.name), "</th>");
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const RowKey& r : rows_of(m)) {
    const ClientSummary* s = summary_of(m, r);
    absl::StrAppend(&out, "<tr><th class=\"row\">", h(r.broker), "</th><th class=\"row\">", h(r.client),
                    "</th><th class=\"row\">", h(r.version), "</th><td class=\"summary ",
                    conformance_class(s), "\">", h(s ? s->text() : "not judged"), "</td>");
    for (const ScenarioColumn& col : m.scenarios) {
      const Cell* c = cell_at(m, r, col.name);
      if (c == nullptr) {
        out += "<td class=\"missing\">-</td>";
        continue;
      }
      std::string cls = absl::StrCat("cell ", to_absl(outcome_name(c->outcome)));
      if (c->verdict == Verdict::kUnexpected) cls += " unexpected";
      if (c->verdict == Verdict::kAsPinned) cls += " pinned";
      absl::StrAppend(&out, "<td class=\"", cls, "\" title=\"", h(col.name), ": ", h(c->reason),
                      "\"><a href=\"#", cell_anchor(index[c]), "\">", h(short_text(*c)), "</a></td>");
    }
    out += "</tr>\n";
  }
  for (const RowKey& r : across_rows(rows_of(m))) {
    const ClientSummary* s = summary_of(m, r);
    absl::StrAppend(&out, "<tr class=\"across\"><th class=\"row\">", h(r.broker),
                    "</th><th class=\"row\">", h(r.client), "</th><th class=\"row\">",
                    h(r.version), "</th><td class=\"summary ", conformance_class(s), "\">",
                    h(s ? s->text() : "not judged"), "</td>");
    for (const ScenarioColumn& col : m.scenarios) {
      const std::optional<AcrossBrokers> a = across_brokers(m, r.client, r.version, col.name);
      if (!a) {
        out += "<td class=\"missing\">-</td>";
        continue;
      }
      absl::StrAppend(&out, "<td class=\"cell ", to_absl(outcome_name(a->outcome)),
                      a->unexpected ? " unexpected" : "", "\" title=\"", h(col.name),
                      " across the brokers\">", h(a->text), "</td>");
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n<p>Click a cell for its details. A red outline marks an unexpected "
         "cell (its client's expectations say otherwise); \"pinned\" a finding the client's "
         "expectations file records.</p>\n<h2>Scenarios</h2>\n<table class=\"legend\">\n";
  for (const ScenarioColumn& s : m.scenarios) {
    absl::StrAppend(&out, "<tr><td><code>", h(s.name), "</code></td><td>", h(s.rule), "</td><td>",
                    h(s.summary), "</td></tr>\n");
  }
  out += "</table>\n<h2>Clients</h2>\n<ul class=\"clients\">\n";
  for (const ClientRow& r : m.clients) {
    const ClientSummary* s = nullptr;
    for (const ClientSummary& x : m.summaries) {
      if (x.client == r.client && x.version == r.version) s = &x;
    }
    absl::StrAppend(&out, "<li><b>", h(r.client), " ", h(r.version), "</b>: ", h(r.library), "; ",
                    r.knows_message_permits ? "new client" : "old client (judged as field-absent)",
                    "; ", h(r.threshold));
    if (s) {
      absl::StrAppend(&out, "; <span class=\"", conformance_class(s), "\">", h(s->text()), "</span>",
                      s->expectations.empty() ? " (no expectations file: every cell must pass)"
                                              : absl::StrCat(" against ", h(s->expectations)));
      if (!s->unexpected.empty()) {
        out += "<ul>";
        for (const std::string& u : s->unexpected) absl::StrAppend(&out, "<li>", h(u), "</li>");
        out += "</ul>";
      }
    }
    out += "</li>\n";
  }
  out += "</ul>\n";
  if (!m.notes.empty()) {
    out += "<h2>Notes</h2>\n<ul class=\"notes\">\n";
    for (const std::string& n : m.notes) absl::StrAppend(&out, "<li>", h(n), "</li>\n");
    out += "</ul>\n";
  }
  out += "<h2>Cells</h2>\n";
  for (std::size_t i = 0; i < m.cells.size(); ++i) details(&out, m.cells[i], i);
  absl::StrAppend(&out, "<script>", to_absl(kScript), "</script>\n</body>\n</html>\n");
  return out;
}

std::string render_junit(const Matrix& m) {
  std::string suites;
  int tests = 0, failures = 0, skipped = 0;
  double total = 0;
  for (const RowKey& r : rows_of(m)) {
    std::string cases;
    int t = 0, f = 0, sk = 0;
    double secs = 0;
    const std::string classname = absl::StrCat("matrix.", r.broker, ".", r.client, "@", r.version);
    for (const ScenarioColumn& col : m.scenarios) {
      const Cell* c = cell_at(m, r, col.name);
      if (c == nullptr) continue;
      ++t;
      secs += c->seconds;
      absl::StrAppend(&cases, "    <testcase classname=\"", h(classname), "\" name=\"", h(col.name),
                      "\" time=\"", absl::StrFormat("%.3f", c->seconds), "\">\n");
      const std::string what = absl::StrCat(short_text(*c), ", expected ", c->expected);
      std::string body = c->reason;
      for (const CellFinding& x : c->findings) {
        absl::StrAppend(&body, "\n", x.rule, " (line ", x.line, ") ", x.explanation);
      }
      if (c->verdict == Verdict::kUnexpected) {
        ++f;
        absl::StrAppend(&cases, "      <failure type=\"unexpected\" message=\"", h(what), "\">",
                        h(body), "</failure>\n");
      } else if (c->verdict == Verdict::kAsPinned) {
        ++sk;
        absl::StrAppend(&cases, "      <skipped message=\"", h(absl::StrCat("FAIL as pinned: ", absl::StrJoin(c->rules, ","))),
                        "\"/>\n");
      } else if (c->outcome != Outcome::kPass) {
        ++sk;
        absl::StrAppend(&cases, "      <skipped message=\"", h(absl::StrCat(to_absl(outcome_name(c->outcome)), ": ", c->reason)),
                        "\"/>\n");
      }
      if (!body.empty()) absl::StrAppend(&cases, "      <system-out>", h(body), "</system-out>\n");
      cases += "    </testcase>\n";
    }
    tests += t;
    failures += f;
    skipped += sk;
    total += secs;
    absl::StrAppend(&suites, "  <testsuite name=\"", h(classname), "\" tests=\"", t, "\" failures=\"", f,
                    "\" errors=\"0\" skipped=\"", sk, "\" time=\"", absl::StrFormat("%.3f", secs), "\">\n",
                    cases, "  </testsuite>\n");
  }
  return absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"permitcheck matrix\" tests=\"",
                      tests, "\" failures=\"", failures, "\" errors=\"0\" skipped=\"", skipped, "\" time=\"",
                      absl::StrFormat("%.3f", total), "\">\n", suites, "</testsuites>\n");
}

}  // namespace permitcheck::matrix
