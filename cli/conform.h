// `permitcheck conform`: runs the conformance scenarios (conformance/) against a real client
// process and reports per scenario and per rule, each failure with its minimal counterexample
// as JSON Lines, a Mermaid diagram and prose.
//
//   ConformCommand conform;                       // a report::Subcommand (cli/commands.cc lists it)
//   CLI::App* sub = report::add_subcommand(app, conform);
//   app.parse(argc, argv);  if (sub->parsed()) return conform.run(std::cin, std::cout, std::cerr);
//
// Exit (spec/outcome.h): 0 PASS (NOT-APPLICABLE scenarios aside), 1 a finding, 3 INCOMPLETE
// (a window not opened though it could be, or --deadline came before every scenario ran, and
// nothing failed), 2 bad usage, a client that never started, or every scenario
// NOT-APPLICABLE (nothing checked); SIGINT/SIGTERM: the finished scenarios' report, 130/143.
#ifndef PERMITCHECK_CLI_CONFORM_H_
#define PERMITCHECK_CLI_CONFORM_H_

#include <optional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"
#include "cli/options.h"

namespace permitcheck::conformance {
struct ConformOptions;
}  // namespace permitcheck::conformance

namespace permitcheck::cli {

class ConformCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "conform"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

 private:
  int list_scenarios(std::ostream& out) const;      // --list
  int list_clients(std::ostream& out) const;        // --list-clients
  int run_catalogue(std::ostream& out, std::ostream& err) const;  // --catalogue
  // The run's options from the command line; false, the reason on `err`, when they make none.
  bool configure(conformance::ConformOptions& options, std::ostream& err);
  int run_scenarios(std::ostream& out, std::ostream& err);

  CLI::App* sub_ = nullptr;
  std::string client_;
  std::string scenarios_;
  std::uint64_t seed_ = kDefaultSeed;
  int cases_ = 1;
  int jobs_ = 4;
  double timeout_s_ = 20;
  double idle_s_ = kDefaultIdleSeconds;
  double startup_s_ = 0;  // 0: 10 s, or the preset's own bound
  int start_attempts_ = 3;
  double deadline_s_ = 900;  // the whole run (ConformOptions::deadline)
  std::string format_ = "text";
  std::string trace_dir_;
  std::string output_;
  std::int64_t q_ = 10;
  std::int64_t threshold_ = 0;
  bool old_client_ = false;
  int max_shrinks_ = 12;
  int reproduce_ = 5;
  bool list_ = false;
  bool progress_ = false, no_progress_ = false;
  std::string client_preset_;
  std::string advertised_url_;  // empty: the broker's own
  bool list_clients_ = false;
  bool catalogue_ = false;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_CONFORM_H_
