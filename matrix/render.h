// The matrix's reports: a markdown table, one self-contained HTML page and JUnit XML, all
// from the same Matrix (a run's, or the merge of its shards'), so they never disagree.
//
//   apply_expectations(m, expectations);
//   write("matrix.md", render_markdown(m));
//   write("matrix.html", render_html(m));    // no network: inline CSS, JS and SVG
//   write("matrix.junit.xml", render_junit(m));
//
// Rows are (broker, client, version) in plan order, columns the scenarios in catalogue order.
// Guarantees: every output is deterministic in m (no clock, no environment); the page loads
// nothing (no src= or href= outside the page but the cells' relative artifact links); text is
// escaped for its format. Size linear in the cells (each diagram bounded, sequence_svg.h).
#ifndef PERMITCHECK_MATRIX_RENDER_H_
#define PERMITCHECK_MATRIX_RENDER_H_

#include <string>

#include "matrix/matrix.h"

namespace permitcheck::matrix {

std::string render_markdown(const Matrix& m);
std::string render_html(const Matrix& m);
std::string render_junit(const Matrix& m);
// The short text summary: one line per client row and the unexpected cells.
std::string render_summary(const Matrix& m);

}  // namespace permitcheck::matrix

#endif  // PERMITCHECK_MATRIX_RENDER_H_
