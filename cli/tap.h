// `permitcheck tap --listen ADDR:PORT --upstream HOST:PORT`: a transparent proxy between a
// Pulsar client and a broker that checks the traffic live (capture/tap.h). Each finding is
// printed when it happens (--format text|json); --trace writes the wire trace, --pcap a
// capture of what passed. SIGINT or SIGTERM ends it with a summary: exit 0, or 1 when a
// violation was seen; 2 for bad usage (an address it cannot listen on, say).
//
//   TapCommand tap(app);          // registers the subcommand
//   app.parse(argc, argv);
//   if (std::optional<int> code = tap.run(std::cout, std::cerr)) return *code;
#ifndef PERMITCHECK_CLI_TAP_H_
#define PERMITCHECK_CLI_TAP_H_

#include <optional>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/options.h"

namespace permitcheck::cli {

class TapCommand {
 public:
  explicit TapCommand(CLI::App& app);
  // The exit code when `tap` was chosen, else nullopt.
  std::optional<int> run(std::ostream& out, std::ostream& err);

 private:
  CLI::App* command_ = nullptr;
  std::string listen_, upstream_, format_ = "text", trace_, pcap_;
  double idle_ = kDefaultIdleSeconds;
  std::string max_memory_ = "1G";  // the decoder's bytes held for all connections
  std::optional<std::int64_t> q_, t_;
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_TAP_H_
