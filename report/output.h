// Where a report goes: every subcommand writes its report through write_report, to a file (-o)
// or standard output, and a write that did not reach its destination is an error, never a
// silent pass.
//
//   const std::string text = validate::format_junit(suite);
//   if (!write_report(output_path, std::cout, text, "check", std::cerr)) return spec::kExitBadInput;
//   return spec::kExitPass;
//
// Guarantees: write_report writes `text` once, flushes, and returns true only when every byte
// was accepted; it never throws.
#ifndef PERMITCHECK_REPORT_OUTPUT_H_
#define PERMITCHECK_REPORT_OUTPUT_H_

#include <ostream>
#include <string>
#include <string_view>

namespace permitcheck::report {

// Writes `text` to the file `path` (empty: to `out`), flushes, and checks that every byte got
// there: a full disk, /dev/full or a closed pipe is reported on `err` as "permitcheck COMMAND:
// cannot write PATH: reason" and gives false (the caller exits spec::kExitBadInput).
bool write_report(const std::string& path, std::ostream& out, std::string_view text,
                  std::string_view command, std::ostream& err);

}  // namespace permitcheck::report

#endif  // PERMITCHECK_REPORT_OUTPUT_H_
