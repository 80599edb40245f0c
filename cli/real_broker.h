// `permitcheck real-broker`: one client judged against a real Pulsar broker
// (realbroker/run.h). It starts the standalone broker that ci/install-pulsar-broker.sh
// installed (or talks to the user's own, --service-url and --admin-url), puts a tap in front of
// it, runs each scenario with the client's consumer command through the tap, judges the wire
// as an old broker's and compares the broker's own availablePermits with the wire, then stops
// everything. Exit 0 every scenario passed, 1 a finding, 2 usage, a broker that cannot start,
// or a scenario INCOMPLETE (nothing exercised, a timeout).
//
//   RealBrokerCommand rb(app);    // registers the subcommand
//   app.parse(argc, argv);
//   if (std::optional<int> code = rb.run(std::cout, std::cerr)) return *code;
#ifndef PERMITCHECK_CLI_REAL_BROKER_H_
#define PERMITCHECK_CLI_REAL_BROKER_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace permitcheck::cli {

class RealBrokerCommand {
 public:
  explicit RealBrokerCommand(CLI::App& app);
  // The exit code when `real-broker` was chosen, else nullopt.
  std::optional<int> run(std::ostream& out, std::ostream& err);

 private:
  CLI::App* command_ = nullptr;
  std::string client_, client_preset_, service_url_, admin_url_;
  std::vector<std::string> scenarios_;
  std::string format_ = "text", output_, trace_, pcap_;
  std::int64_t q_ = 10;
  std::optional<std::int64_t> t_;
  double timeout_ = 90;
  bool list_ = false;
  bool fidelity_ = false;  // --fidelity (cli/real_broker_fidelity.h)
};

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_REAL_BROKER_H_
