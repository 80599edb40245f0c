// A counterexample's trace drawn as a sequence diagram in plain SVG (no script, no network):
// two lifelines, Client and Broker; each wire event an arrow in its direction (Flow, ack,
// subscribe to the broker; message, CLOSE_CONSUMER, subscribe answers to the client), each
// accounting event a note on its side, each finding a red note right after the event that
// exposed it. Every label starts with the event's trace line.
//
//   std::string svg = sequence_svg(trace_jsonl, findings, "cell-7");
//   page += svg;  // <svg ...>...</svg>, ids prefixed "cell-7-"
//
// Guarantees: at most kMaxSequenceEvents events are drawn (the rest counted in a last note),
// so the SVG's size is bounded by that times the longest label; text is XML-escaped; a trace
// that does not parse gives a small SVG saying why, never an error.
#ifndef PERMITCHECK_MATRIX_SEQUENCE_SVG_H_
#define PERMITCHECK_MATRIX_SEQUENCE_SVG_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "matrix/matrix.h"

namespace permitcheck::matrix {

inline constexpr std::size_t kMaxSequenceEvents = 300;

std::string sequence_svg(std::string_view trace_jsonl, const std::vector<CellFinding>& findings,
                         std::string_view id_prefix);

// Text for XML and HTML: & < > " ' escaped, invalid UTF-8 replaced by U+FFFD.
std::string xml_text(std::string_view s);

}  // namespace permitcheck::matrix

#endif  // PERMITCHECK_MATRIX_SEQUENCE_SVG_H_
