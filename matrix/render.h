// The matrix's reports: a markdown table, one self-contained HTML page and JUnit XML, all
// from the same Matrix (a run's, or the merge of its shards'), so they never disagree.
//
//   apply_expectations(m, expectations);
//   write("matrix.md", render_markdown(m));
//   write("matrix.html", render_html(m));    // no network: inline CSS, JS and SVG
//   write("matrix.junit.xml", render_junit(m));
//
// Rows are (broker, client, version) in plan order, columns the scenarios in catalogue order;
// with more than one broker, one more row per client release ("all brokers") gives each
// scenario across the brokers (across_brokers).
// Guarantees: every output is deterministic in m (no clock, no environment); the page loads
// nothing (no src= or href= outside the page but the cells' relative artifact links); text is
// escaped for its format. Size linear in the cells (each diagram bounded, sequence_svg.h).
#ifndef PERMITCHECK_MATRIX_RENDER_H_
#define PERMITCHECK_MATRIX_RENDER_H_

#include <optional>
#include <string>
#include <string_view>

#include "matrix/matrix.h"

namespace permitcheck::matrix {

// The broker column of a client's row across brokers.
inline constexpr std::string_view kAllBrokers = "all brokers";

// One client release's scenario across the brokers it ran on: the outcomes combined
// (spec::combine: FAIL over INCOMPLETE over PASS, NOT-APPLICABLE only when every cell is),
// the cell's short text when every broker says the same ("PASS", "FAIL E5"), else the combined
// outcome with each broker's ("FAIL (conformance FAIL E5; pulsar-4.2.4 PASS)"); unexpected
// when any of its cells is. nullopt when no broker ran it. Linear in the cells.
struct AcrossBrokers {
  Outcome outcome = Outcome::kNotApplicable;
  std::string text;
  bool unexpected = false;
};
std::optional<AcrossBrokers> across_brokers(const Matrix& m, std::string_view client,
                                            std::string_view version, std::string_view scenario);

std::string render_markdown(const Matrix& m);
std::string render_html(const Matrix& m);
std::string render_junit(const Matrix& m);
// The short text summary: one line per client row and the unexpected cells.
std::string render_summary(const Matrix& m);

}  // namespace permitcheck::matrix

#endif  // PERMITCHECK_MATRIX_RENDER_H_
