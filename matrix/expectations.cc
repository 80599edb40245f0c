#include "matrix/expectations.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/absl_view.h"

namespace permitcheck::matrix {
namespace {

absl::Status bad(const std::string& source, int line, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(source, ":", line, ": ", to_absl(why)));
}

// The line that decides `key`: the most specific of broker and release, then broker, then
// release, then neither.
const Expectation* find(const Expectations* e, const CellKey& key) {
  if (e == nullptr) return nullptr;
  const Expectation* best = nullptr;
  int best_rank = -1;
  for (const Expectation& x : e->lines) {
    if (x.scenario != key.scenario) continue;
    if (!x.broker.empty() && x.broker != key.broker) continue;
    if (!x.release.empty() && x.release != key.version) continue;
    const int rank = (x.broker.empty() ? 0 : 2) + (x.release.empty() ? 0 : 1);
    if (rank > best_rank) {
      best = &x;
      best_rank = rank;
    }
  }
  return best;
}

std::string got(const Cell& c) {
  std::string s(outcome_name(c.outcome));
  if (!c.rules.empty()) absl::StrAppend(&s, " (", absl::StrJoin(c.rules, ","), ")");
  return s;
}

}  // namespace

std::string Expectation::text() const {
  switch (kind) {
    case Kind::kPass: return "pass";
    case Kind::kFail: return absl::StrCat("fail ", absl::StrJoin(rules, ","));
    case Kind::kNotApplicable: return "not-applicable";
    case Kind::kIncomplete: return "incomplete";
    case Kind::kAny: return "any";
  }
  return "any";
}

absl::StatusOr<Expectations> parse_expectations(std::string_view text, std::string client,
                                                std::string source,
                                                const std::vector<std::string>& scenarios) {
  Expectations out{.client = std::move(client), .source = std::move(source), .lines = {}};
  int n = 0;
  for (absl::string_view raw : absl::StrSplit(to_absl(text), '\n')) {
    ++n;
    absl::string_view line = raw.substr(0, raw.find('#'));
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    if (words.size() < 2) return bad(out.source, n, "expected [BROKER/]SCENARIO[@RELEASE] EXPECTATION [RULES]");
    Expectation e;
    e.line = n;
    absl::string_view key = words[0];
    if (const std::size_t slash = key.find('/'); slash != absl::string_view::npos) {
      e.broker = std::string(key.substr(0, slash));
      key = key.substr(slash + 1);
      if (e.broker.empty()) return bad(out.source, n, "an empty broker before '/'");
    }
    const std::size_t at = key.find('@');
    e.scenario = std::string(key.substr(0, at));
    if (at != absl::string_view::npos) e.release = std::string(key.substr(at + 1));
    if (std::find(scenarios.begin(), scenarios.end(), e.scenario) == scenarios.end()) {
      return bad(out.source, n, absl::StrCat("unknown scenario \"", e.scenario,
                                             "\" (permitcheck conform --list names them)"));
    }
    const absl::string_view kind = words[1];
    if (kind == "pass") e.kind = Expectation::Kind::kPass;
    else if (kind == "fail") e.kind = Expectation::Kind::kFail;
    else if (kind == "not-applicable") e.kind = Expectation::Kind::kNotApplicable;
    else if (kind == "incomplete") e.kind = Expectation::Kind::kIncomplete;
    else if (kind == "any") e.kind = Expectation::Kind::kAny;
    else {
      return bad(out.source, n, absl::StrCat("unknown expectation \"", std::string(kind),
                                             "\" (pass, fail RULES, not-applicable, incomplete, any)"));
    }
    if (e.kind == Expectation::Kind::kFail) {
      if (words.size() != 3) return bad(out.source, n, "fail needs its rule IDs: fail E5,K4");
      std::set<std::string> rules;
      for (absl::string_view r : absl::StrSplit(words[2], ',', absl::SkipEmpty())) rules.emplace(r);
      e.rules.assign(rules.begin(), rules.end());
    } else if (words.size() != 2) {
      return bad(out.source, n, absl::StrCat("\"", std::string(kind), "\" takes no rule IDs"));
    }
    for (const Expectation& before : out.lines) {
      if (before.scenario == e.scenario && before.release == e.release &&
          before.broker == e.broker) {
        return bad(out.source, n, absl::StrCat(std::string(words[0]), " is already on line ",
                                               before.line));
      }
    }
    out.lines.push_back(std::move(e));
  }
  return out;
}

void apply_expectations(Matrix& m, const std::vector<Expectations>& all) {
  m.summaries.clear();
  for (const ClientRow& row : m.clients) {
    const Expectations* mine = nullptr;
    for (const Expectations& e : all) {
      if (e.client == row.client) mine = &e;
    }
    ClientSummary s{.client = row.client, .version = row.version};
    s.expectations = mine ? mine->source : "";
    for (Cell& c : m.cells) {
      if (c.key.client != row.client || c.key.version != row.version) continue;
      const Expectation* x = find(mine, c.key);
      c.verdict = Verdict::kAsExpected;
      if (x == nullptr) {
        c.expected = "pass or not-applicable";
        if (c.outcome != Outcome::kPass && c.outcome != Outcome::kNotApplicable) {
          c.verdict = Verdict::kUnexpected;
        }
      } else {
        c.expected = x->text();
        switch (x->kind) {
          case Expectation::Kind::kPass:
            if (c.outcome != Outcome::kPass) c.verdict = Verdict::kUnexpected;
            break;
          case Expectation::Kind::kFail:
            if (c.outcome == Outcome::kFail && c.rules == x->rules) {
              c.verdict = Verdict::kAsPinned;
              s.pinned_findings += static_cast<int>(c.rules.size());
            } else {
              c.verdict = Verdict::kUnexpected;
            }
            break;
          case Expectation::Kind::kNotApplicable:
            if (c.outcome != Outcome::kNotApplicable) c.verdict = Verdict::kUnexpected;
            break;
          case Expectation::Kind::kIncomplete:
            if (c.outcome != Outcome::kIncomplete) c.verdict = Verdict::kUnexpected;
            break;
          case Expectation::Kind::kAny:
            break;
        }
      }
      if (c.verdict != Verdict::kUnexpected && c.outcome == Outcome::kIncomplete) ++s.incomplete;
      if (c.verdict == Verdict::kUnexpected) {
        std::string why = absl::StrCat(c.key.broker == "conformance" ? "" : c.key.broker + "/",
                                       c.key.scenario, ": expected ", c.expected, ", got ", got(c));
        if (x != nullptr && x->kind == Expectation::Kind::kFail) {
          std::vector<std::string> gone;
          for (const std::string& r : x->rules) {
            if (c.outcome != Outcome::kFail ||
                std::find(c.rules.begin(), c.rules.end(), r) == c.rules.end()) {
              gone.push_back(r);
            }
          }
          if (!gone.empty()) {
            absl::StrAppend(&why, " (pinned finding ", absl::StrJoin(gone, ","), " disappeared)");
          }
        }
        s.unexpected.push_back(std::move(why));
      }
    }
    s.conformance = !s.unexpected.empty()      ? Conformance::kUnexpected
                    : s.pinned_findings > 0    ? Conformance::kDeviatesAsPinned
                                               : Conformance::kConforms;
    m.summaries.push_back(std::move(s));
  }
}

bool any_unexpected(const Matrix& m) {
  return std::any_of(m.cells.begin(), m.cells.end(),
                     [](const Cell& c) { return c.verdict == Verdict::kUnexpected; });
}

}  // namespace permitcheck::matrix
