// libFuzzer target: arbitrary bytes through `validate` as a whole (trace reader, Monitor,
// every report format), as cli/validate.h runs it on a file.
//
// Never a crash, hang or leak; an unreadable input must carry an error that names its line,
// and every report must be produced (the text report names the verdict).
//
//   ./validate_fuzz -dict=fuzz/trace.dict -max_total_time=60 fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "cli/report.h"
#include "cli/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  permitcheck::cli::ValidateOptions options;
  options.max_line_bytes = 1024;  // small, so inputs of a few KiB reach the long-line path
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  const permitcheck::cli::FileResult r = permitcheck::cli::validate_stream(in, "fuzz", options);
  if (r.error && r.error->compare(0, 5, "line ") != 0) std::abort();
  const std::string text = permitcheck::cli::format_validate({r}, permitcheck::cli::ReportFormat::kText);
  if (text.find("verdict: ") == std::string::npos) std::abort();
  (void)permitcheck::cli::format_validate({r}, permitcheck::cli::ReportFormat::kJson);
  (void)permitcheck::cli::format_validate({r}, permitcheck::cli::ReportFormat::kJunit);
  const int code = permitcheck::cli::validate_exit_code({r});
  if (code != (r.error ? 2 : (r.violations.empty() ? 0 : 1))) std::abort();
  return 0;
}
