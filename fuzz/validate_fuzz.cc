// libFuzzer target: arbitrary bytes through `validate` as a whole (trace reader, Monitor,
// every report format), as cli/validate.h runs it on a file.
//
// Never a crash, hang or leak; an unreadable input must carry an error that names its line,
// and every report must be produced (the text report names the verdict). One input in 16 is
// also validated reading on a second thread, in blocks of 1-8 events, and must get the same
// verdict (only one in 16: a thread per input would slow the fuzzer tenfold).
//
//   ./validate_fuzz -dict=fuzz/trace.dict -max_total_time=60 fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "validate/report.h"
#include "validate/validate.h"

namespace {

std::string findings(const std::vector<permitcheck::spec::Finding>& list) {
  std::string out;
  for (const permitcheck::spec::Finding& f : list) out += permitcheck::spec::format_finding(f) + "\n";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  permitcheck::validate::ValidateOptions options;
  options.max_line_bytes = 1024;  // small, so inputs of a few KiB reach the long-line path
  options.threads = 1;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  const permitcheck::validate::FileResult r = permitcheck::validate::validate_stream(in, "fuzz", options);
  if (size % 16 == 0 && size > 0) {
    options.threads = 2;
    options.block_events = 1 + data[0] % 8;
    std::istringstream again(std::string(reinterpret_cast<const char*>(data), size));
    const permitcheck::validate::FileResult two =
        permitcheck::validate::validate_stream(again, "fuzz", options);
    if (r.error != two.error || r.events != two.events || r.last_line != two.last_line ||
        findings(r.violations) != findings(two.violations) ||
        findings(r.deviations) != findings(two.deviations)) {
      std::abort();
    }
  }
  if (r.error && r.error->compare(0, 5, "line ") != 0) std::abort();
  const std::string text = permitcheck::validate::format_validate({r}, permitcheck::validate::ReportFormat::kText);
  if (text.find("verdict: ") == std::string::npos) std::abort();
  (void)permitcheck::validate::format_validate({r}, permitcheck::validate::ReportFormat::kJson);
  (void)permitcheck::validate::format_validate({r}, permitcheck::validate::ReportFormat::kJunit);
  const int code = permitcheck::validate::validate_exit_code({r});
  const int expected = r.error || r.nothing_checked() ? 2 : !r.violations.empty() ? 1
                       : !r.incomplete.empty()                 ? 3
                                                               : 0;
  if (code != expected) std::abort();
  return 0;
}
