#include "matrix/matrix.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/absl_view.h"

namespace permitcheck::matrix {
namespace {

std::string safe(std::string_view part) {
  std::string out(part);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

}  // namespace

std::optional<Outcome> parse_outcome(std::string_view name) {
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kIncomplete, Outcome::kNotApplicable}) {
    if (outcome_name(o) == name) return o;
  }
  return std::nullopt;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kAsExpected: return "as expected";
    case Verdict::kAsPinned: return "as pinned";
    case Verdict::kUnexpected: return "unexpected";
  }
  return "unexpected";
}

std::string CellKey::id() const {
  return absl::StrCat(safe(broker), "/", safe(client), "@", safe(version), "/", safe(scenario));
}

std::string ClientSummary::text() const {
  if (conformance != Conformance::kUnexpected && incomplete > 0) {
    ClientSummary plain = *this;
    plain.incomplete = 0;
    return absl::StrCat(plain.text(), ", ", incomplete, incomplete == 1 ? " cell" : " cells",
                        " INCOMPLETE");
  }
  switch (conformance) {
    case Conformance::kConforms: return "conforms";
    case Conformance::kDeviatesAsPinned:
      return absl::StrCat("deviates as pinned (", pinned_findings,
                          pinned_findings == 1 ? " finding)" : " findings)");
    case Conformance::kUnexpected:
      return absl::StrCat("unexpected (", unexpected.size(),
                          unexpected.size() == 1 ? " cell)" : " cells)");
  }
  return "unexpected";
}

absl::StatusOr<Shard> parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos ||
      !absl::SimpleAtoi(to_absl(text.substr(0, slash)), &s.index) ||
      !absl::SimpleAtoi(to_absl(text.substr(slash + 1)), &s.count) || s.count < 1 || s.index < 1 ||
      s.index > s.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard \"", std::string(text), "\" is not I/N with 1 <= I <= N"));
  }
  return s;
}

std::vector<CellKey> shard_cells(const std::vector<CellKey>& plan, Shard shard) {
  std::vector<CellKey> out;
  for (std::size_t p = 0; p < plan.size(); ++p) {
    if (static_cast<int>(p % static_cast<std::size_t>(shard.count)) == shard.index - 1) {
      out.push_back(plan[p]);
    }
  }
  return out;
}

absl::StatusOr<Matrix> merge(std::vector<Matrix> shards) {
  if (shards.empty()) return absl::InvalidArgumentError("no shard to merge");
  Matrix out;
  out.scenarios = shards.front().scenarios;
  out.plan = shards.front().plan;
  out.seed = shards.front().seed;
  out.idle_seconds = shards.front().idle_seconds;
  std::map<CellKey, std::size_t> position;
  for (std::size_t p = 0; p < out.plan.size(); ++p) position[out.plan[p]] = p;
  std::vector<std::optional<Cell>> cells(out.plan.size());
  for (std::size_t s = 0; s < shards.size(); ++s) {
    Matrix& m = shards[s];
    if (m.plan != out.plan) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shard ", s + 1, " was planned over other cells (", m.plan.size(), " against ",
          out.plan.size(), "): were its shards run with the same options and clients?"));
    }
    for (ClientRow& row : m.clients) {
      const bool known = std::any_of(out.clients.begin(), out.clients.end(), [&](const ClientRow& r) {
        return r.client == row.client && r.version == row.version;
      });
      if (!known) out.clients.push_back(std::move(row));
    }
    for (std::string& note : m.notes) {
      if (std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end()) {
        out.notes.push_back(std::move(note));
      }
    }
    out.wall_seconds = std::max(out.wall_seconds, m.wall_seconds);
    out.jobs = std::max(out.jobs, m.jobs);
    if (s > 0 && (m.seed != out.seed || m.idle_seconds != out.idle_seconds)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shard ", s + 1, " ran with --seed ", m.seed, " --idle ", m.idle_seconds,
          ", shard 1 with --seed ", out.seed, " --idle ", out.idle_seconds,
          ": the shards of one matrix run with the same options"));
    }
    for (Cell& c : m.cells) {
      auto it = position.find(c.key);
      if (it == position.end()) {
        return absl::InvalidArgumentError(absl::StrCat("cell ", c.key.id(), " is not in the plan"));
      }
      if (cells[it->second]) {
        return absl::InvalidArgumentError(absl::StrCat("cell ", c.key.id(), " is in two shards"));
      }
      cells[it->second] = std::move(c);
    }
  }
  for (std::size_t p = 0; p < cells.size(); ++p) {
    if (!cells[p]) {
      return absl::InvalidArgumentError(
          absl::StrCat("cell ", out.plan[p].id(), " is in no shard (a shard is missing?)"));
    }
    out.cells.push_back(std::move(*cells[p]));
  }
  // Rows in plan order.
  std::vector<ClientRow> rows;
  for (const CellKey& k : out.plan) {
    auto it = std::find_if(out.clients.begin(), out.clients.end(), [&](const ClientRow& r) {
      return r.client == k.client && r.version == k.version;
    });
    if (it == out.clients.end()) continue;
    const bool seen = std::any_of(rows.begin(), rows.end(), [&](const ClientRow& r) {
      return r.client == k.client && r.version == k.version;
    });
    if (!seen) rows.push_back(*it);
  }
  out.clients = std::move(rows);
  return out;
}

}  // namespace permitcheck::matrix
