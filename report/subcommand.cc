#include "report/subcommand.h"

#include <string>

namespace permitcheck::report {

CLI::App* add_subcommand(CLI::App& app, Subcommand& command) {
  CLI::App* sub =
      app.add_subcommand(std::string(command.name()), std::string(command.description()));
  // The footer before the options: a nested subcommand (matrix merge) shows its parent's
  // examples. The group after them: a nested one keeps CLI11's own group, "Subcommands".
  if (!command.examples().empty()) sub->footer("\nExamples:\n" + std::string(command.examples()));
  command.add_options(*sub);
  sub->group(std::string(command.audience() == Audience::kMaintainer ? kMaintainerGroup
                                                                     : kUserGroup));
  return sub;
}

}  // namespace permitcheck::report
