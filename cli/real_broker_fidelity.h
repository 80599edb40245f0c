// `permitcheck real-broker --fidelity`: the conformance broker's fidelity to the real broker
// (realbroker/fidelity.h) for one client: each real-broker scenario with a conformance pair run
// on both brokers, the table of the two verdicts printed (text: markdown; json), each
// difference explained or reported as unexplained. Exit 0 every row the same or explained,
// 1 an unexplained difference.
//
//   FidelityArgs a{.client_command = cmd, .client_name = "go@v0.21.0", .t = 5};
//   int code = run_fidelity_report(a, broker_control, report, err);
//
// Guarantees: the runs' own (realbroker/fidelity.h); writes one report.
#ifndef PERMITCHECK_CLI_REAL_BROKER_FIDELITY_H_
#define PERMITCHECK_CLI_REAL_BROKER_FIDELITY_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "realbroker/run.h"

namespace permitcheck::cli {

struct FidelityArgs {
  std::string client_command, client_name;
  std::string client_preset;  // NAME[@VERSION] when the client is a preset ("" otherwise)
  std::int64_t q = 10;
  std::optional<std::int64_t> t;
  std::vector<std::string> scenarios;
  std::uint16_t tap_port = 0;
  std::chrono::milliseconds timeout{60000};
  std::string format = "text";
  std::string broker_name;
};

int run_fidelity_report(const FidelityArgs& args, realbroker::BrokerControl& broker,
                        std::ostream& report, std::ostream& err);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_REAL_BROKER_FIDELITY_H_
