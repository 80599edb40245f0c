// Per-client expectations of the matrix (like quic-interop-runner's required list): which
// cells must pass and which findings are pinned, so a client's CI fails only on a change. One
// text file per client preset, conformance/expectations/<preset>.txt:
//
//   # [BROKER/]SCENARIO[@RELEASE]  EXPECTATION  [RULE,RULE...]      (# starts a comment)
//   duplicate_redelivery  fail  K4        # pinned finding: FAIL with exactly these rules
//   stale_epoch           not-applicable
//   reconnect@v0.9.0      any             # this release only; not judged
//   pulsar-4.2.4/negative_ack incomplete  # this broker only (the matrix's broker axis)
//
// A line without a BROKER holds on every broker (the conformance broker is to behave as
// Pulsar does: docs/real-broker.md, Fidelity); the most specific line decides a cell: broker
// and release, then broker, then release, then neither.
// EXPECTATION is pass, fail RULES, not-applicable, incomplete or any. A scenario not listed
// must be PASS or NOT-APPLICABLE. A pinned finding that disappears (the cell passes, or fails
// with other rules) is unexpected, as is every INCOMPLETE not pinned as such.
//
//   absl::StatusOr<Expectations> e = parse_expectations(text, "go", "go.txt", names);
//   apply_expectations(m, {*e});   // m.cells[i].verdict, m.summaries
//
// Guarantees: a line that does not parse, an unknown scenario or rule-less fail is an
// InvalidArgument naming the source and line. apply_expectations is linear in cells x lines.
#ifndef PERMITCHECK_MATRIX_EXPECTATIONS_H_
#define PERMITCHECK_MATRIX_EXPECTATIONS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "matrix/matrix.h"

namespace permitcheck::matrix {

struct Expectation {
  enum class Kind { kPass, kFail, kNotApplicable, kIncomplete, kAny };
  std::string scenario;
  std::string broker;              // empty: every broker
  std::string release;             // empty: every release of the client
  Kind kind = Kind::kPass;
  std::vector<std::string> rules;  // kFail: the pinned rule IDs, sorted
  int line = 0;
  std::string text() const;        // "pass", "fail E5,K4", ...
};

struct Expectations {
  std::string client;  // the preset it is for
  std::string source;  // the file, for messages
  std::vector<Expectation> lines;
};

absl::StatusOr<Expectations> parse_expectations(std::string_view text, std::string client,
                                                std::string source,
                                                const std::vector<std::string>& scenarios);

// Judges every cell against its client's expectations (a client without any: every cell must
// be PASS or NOT-APPLICABLE) and writes m.summaries, one per client row.
void apply_expectations(Matrix& m, const std::vector<Expectations>& all);

// Whether some cell is unexpected (the matrix command's exit 1).
bool any_unexpected(const Matrix& m);

}  // namespace permitcheck::matrix

#endif  // PERMITCHECK_MATRIX_EXPECTATIONS_H_
