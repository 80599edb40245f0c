// `permitcheck tap --listen ADDR:PORT --upstream HOST:PORT`: a transparent proxy between a
// Pulsar client and a broker that checks the traffic live (capture/tap.h). Each finding is
// printed when it happens (--format text|json); --trace writes the wire trace, --pcap a
// capture of what passed. SIGINT or SIGTERM ends it with a summary: exit 0, or 1 when a
// violation was seen; 2 for bad usage (an address it cannot listen on, say).
//
//   TapCommand tap;                       // a report::Subcommand (cli/commands.cc lists it)
//   CLI::App* sub = report::add_subcommand(app, tap);
//   app.parse(argc, argv);  if (sub->parsed()) return tap.run(std::cin, std::cout, std::cerr);
#ifndef PERMITCHECK_CLI_TAP_H_
#define PERMITCHECK_CLI_TAP_H_

#include <optional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"
#include "cli/options.h"

namespace permitcheck::cli {

class TapCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "tap"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

 private:
  CLI::App* command_ = nullptr;
  std::string listen_, upstream_, format_ = "text", trace_, pcap_;
  double idle_ = kDefaultIdleSeconds;
  std::string max_memory_ = "1G";  // the decoder's bytes held for all connections
  std::optional<std::int64_t> q_, t_;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_TAP_H_
