#include "cli/real_broker_fidelity.h"

#include "absl/strings/str_cat.h"
#include "conformance/client_presets.h"
#include "nlohmann/json.hpp"
#include "realbroker/fidelity.h"
#include "spec/outcome.h"

namespace permitcheck::cli {

int run_fidelity_report(const FidelityArgs& args, realbroker::BrokerControl& broker,
                        std::ostream& report, std::ostream& err) {
  realbroker::FidelityOptions o{.client_command = args.client_command,
                                .client_name = args.client_name,
                                .q = args.q,
                                .t = args.t,
                                .scenarios = args.scenarios,
                                .tap_port = args.tap_port,
                                .real_broker_timeout = args.timeout,
                                .conformance_timeout = args.timeout};
  if (!args.client_preset.empty()) {
    absl::StatusOr<conformance::ResolvedPreset> p =
        conformance::resolve_preset(args.client_preset, conformance::presets_root());
    if (p.ok()) {
      o.knows_message_permits = p->preset->knows_message_permits;
      o.startup = p->preset->startup;
    }
  }
  const std::vector<realbroker::FidelityRow> rows = realbroker::run_fidelity(
      broker, o, [&err](std::string_view line) { err << "permitcheck real-broker: " << line; });
  const bool holds = realbroker::fidelity_holds(rows);
  if (args.format == "json") {
    nlohmann::json j = {{"broker", args.broker_name}, {"fidelity_holds", holds},
                        {"rows", nlohmann::json::array()}};
    for (const realbroker::FidelityRow& r : rows) {
      auto side = [](const realbroker::SideVerdict& v) {
        return nlohmann::json{{"verdict", v.verdict}, {"rules", v.rules}, {"detail", v.detail}};
      };
      j["rows"].push_back(
          {{"client", r.client},
           {"real_broker_scenario", std::string(r.pair->real_broker)},
           {"conformance_scenario", std::string(r.pair->conformance)},
           {"exercises", std::string(r.pair->exercises)},
           {"conformance", side(r.conformance)},
           {"real_broker", side(r.real_broker)},
           {"same", r.same},
           {"difference", r.same ? "" : r.known ? realbroker::explain(*r.known) : "unexplained"}});
    }
    report << j.dump(2) << "\n";
  } else {
    report << "fidelity of the conformance broker to " << args.broker_name << "\n\n"
           << realbroker::render_fidelity_table(rows) << "\n"
           << (holds ? "every difference explained\n"
                     : "an UNEXPLAINED difference: the conformance broker differs from Pulsar\n");
  }
  if (rows.empty()) {
    err << "permitcheck real-broker: --fidelity: no scenario with a conformance pair\n";
    return spec::kExitBadInput;
  }
  return holds ? spec::kExitPass : spec::kExitViolation;
}

}  // namespace permitcheck::cli
