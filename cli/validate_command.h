// `permitcheck validate`: checks permit traces and packet captures against the specification
// (validate/validate.h, cli/capture.h) and writes one report for all inputs (validate/report.h).
//
//   ValidateCommand validate;
//   CLI::App* sub = report::add_subcommand(app, validate);
//   app.parse(argc, argv);  if (sub->parsed()) return validate.run(std::cin, std::cout, std::cerr);
//
// Exit (spec/outcome.h): 0 no violation, 1 a violation, 3 INCOMPLETE (a capture not followed
// to its end), 2 an input that could not be read or checked nothing, or bad usage. Never ends
// in std::bad_alloc: running out of memory is exit 2 with a message.
#ifndef PERMITCHECK_CLI_VALIDATE_COMMAND_H_
#define PERMITCHECK_CLI_VALIDATE_COMMAND_H_

#include <cstddef>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"
#include "validate/validate.h"

namespace permitcheck::cli {

class ValidateCommand final : public report::Subcommand {
 public:
  ValidateCommand();
  std::string_view name() const override { return "validate"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

  // Whether progress lines go to stderr (default: when stderr is a terminal).
  void set_progress(bool on) { progress_ = on; }

 private:
  int run_files(std::istream& in, std::ostream& out, std::ostream& err);

  CLI::App* sub_ = nullptr;
  bool progress_ = false;
  bool no_progress_ = false;
  std::vector<std::string> traces_;
  std::string format_ = "text";
  std::string ruleset_;
  std::string output_;
  std::size_t max_line_bytes_ = validate::kValidateMaxLineBytes;
  std::string max_memory_ = "1G";  // validate::kValidateMaxMemory
  int threads_ = 2;
  int jobs_ = 0;  // 0: validate::default_jobs()
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_VALIDATE_COMMAND_H_
