// `permitcheck render`: explains a counterexample trace as prose, a Mermaid sequence diagram
// or canonical JSON Lines (cli/explain.h).
//
//   RenderCommand render;
//   CLI::App* sub = report::add_subcommand(app, render);
//   app.parse(argc, argv);  if (sub->parsed()) return render.run(std::cin, std::cout, std::cerr);
//
// Exit (spec/outcome.h): 0 rendered, 2 unreadable input or a report that could not be written.
#ifndef PERMITCHECK_CLI_RENDER_COMMAND_H_
#define PERMITCHECK_CLI_RENDER_COMMAND_H_

#include <istream>
#include <ostream>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"

namespace permitcheck::cli {

class RenderCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "render"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

 private:
  std::string cex_;
  std::string format_ = "text";
  std::string output_;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_RENDER_COMMAND_H_
