#include "solver/trace_output.h"

#include <sstream>

#include "trace/writer.h"

namespace permitcheck::solver {

absl::Status write_witness(std::ostream& out, const Witness& w) {
  out << "# " << (w.id.empty() ? "-" : w.id) << " " << spec::rule_name(w.rule) << ": " << w.words
      << "\n";
  return trace::write_trace(out, w.header, w.events);
}

std::string witness_text(const Witness& w) {
  std::ostringstream out;
  (void)write_witness(out, w);
  return out.str();
}

}  // namespace permitcheck::solver
