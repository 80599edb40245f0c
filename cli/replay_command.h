// `permitcheck replay`: re-runs a counterexample trace under every ruleset (cli/replay.h) and
// says which rulesets it separates.
//
//   ReplayCommand replay;
//   CLI::App* sub = report::add_subcommand(app, replay);
//   app.parse(argc, argv);  if (sub->parsed()) return replay.run(std::cin, std::cout, std::cerr);
//
// Exit (spec/outcome.h): 1 when the trace's own ruleset reports a violation, 0 otherwise,
// 2 unreadable input or a report that could not be written.
#ifndef PERMITCHECK_CLI_REPLAY_COMMAND_H_
#define PERMITCHECK_CLI_REPLAY_COMMAND_H_

#include <istream>
#include <ostream>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"

namespace permitcheck::cli {

class ReplayCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "replay"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

 private:
  std::string cex_;
  std::string format_ = "text";
  std::string output_;
  bool all_rulesets_ = false;  // --all-rulesets: the drafts rev-a..rev-c too
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_REPLAY_COMMAND_H_
