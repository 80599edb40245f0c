// Counterexample witnesses as trace-format files (trace-format.md), via trace/writer.h: one
// comment line with the numbers in words, then the header and the events, so `validate`
// re-checks the file and reports the witness's rule.
//
//   std::ofstream f("L1.jsonl");
//   absl::Status s = write_witness(f, witness);   // "# L1 C7: B=2 (batch), ..."
//
// Built only when the trace module is (PERMITCHECK_SOLVER_HAS_TRACE).
#ifndef PERMITCHECK_SOLVER_TRACE_OUTPUT_H_
#define PERMITCHECK_SOLVER_TRACE_OUTPUT_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "solver/prove.h"

namespace permitcheck::solver {

// Writes `w` as a trace file. DataLoss if the stream fails.
absl::Status write_witness(std::ostream& out, const Witness& w);

// The same, as a string.
std::string witness_text(const Witness& w);

}  // namespace permitcheck::solver

#endif  // PERMITCHECK_SOLVER_TRACE_OUTPUT_H_
