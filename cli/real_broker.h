// `permitcheck real-broker`: one client judged against a real Pulsar broker
// (realbroker/run.h). It starts the standalone broker that ci/install-pulsar-broker.sh
// installed (or talks to the user's own, --service-url and --admin-url), puts a tap in front of
// it, runs each scenario with the client's consumer command through the tap, judges the wire
// as an old broker's and compares the broker's own availablePermits with the wire, then stops
// everything. Exit 0 every scenario passed, 1 a finding, 2 usage, a broker that cannot start,
// or a scenario INCOMPLETE (nothing exercised, a timeout).
//
//   RealBrokerCommand rb;                       // a report::Subcommand (cli/commands.cc lists it)
//   CLI::App* sub = report::add_subcommand(app, rb);
//   app.parse(argc, argv);  if (sub->parsed()) return rb.run(std::cin, std::cout, std::cerr);
#ifndef PERMITCHECK_CLI_REAL_BROKER_H_
#define PERMITCHECK_CLI_REAL_BROKER_H_

#include <cstdint>
#include <optional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "report/subcommand.h"

namespace permitcheck::cli {

class RealBrokerCommand final : public report::Subcommand {
 public:
  std::string_view name() const override { return "real-broker"; }
  std::string_view description() const override;
  std::string_view examples() const override;
  void add_options(CLI::App& sub) override;
  int run(std::istream& in, std::ostream& out, std::ostream& err) override;

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
