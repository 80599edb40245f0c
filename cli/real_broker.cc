#include "cli/real_broker.h"

#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "spec/outcome.h"
#include "spec/plain_text.h"
#ifdef PERMITCHECK_HAVE_REALBROKER
#include "cli/real_broker_fidelity.h"
#include "conformance/client_presets.h"
#include "nlohmann/json.hpp"
#include "realbroker/run.h"
#include "realbroker/standalone.h"
#endif

namespace permitcheck::cli {

std::string_view RealBrokerCommand::description() const {
  return "Judge a client against a real Pulsar broker: starts the Pulsar standalone installed by "
      "ci/install-pulsar-broker.sh on loopback (or uses --service-url/--admin-url), puts a tap "
      "in front of it, runs the client's consumer through the tap in each scenario, judges the "
      "wire as an old broker's (no message_permits) and compares the broker's own "
      "availablePermits and unackedMessages with the wire (B4, both directions; B11 the "
      "consumer count). Exit 0 all passed, 1 a finding, 2 usage or a broker that cannot start, "
      "3 a scenario INCOMPLETE (nothing failed).";
}

std::string_view RealBrokerCommand::examples() const {
  return "  permitcheck real-broker --client-preset cpp --scenarios partial_redelivery\n"
      "  permitcheck real-broker --client-preset java@3.2.1 --scenarios "
      "partial_redelivery,reopen,failover\n"
      "  permitcheck real-broker --client-preset go --format json -o go.json\n"
      "  permitcheck real-broker --client 'my-consumer {url} {topic} {subscription} {q}' \\\n"
      "      --service-url pulsar://127.0.0.1:6650 --admin-url http://127.0.0.1:8080";
}

void RealBrokerCommand::add_options(CLI::App& sub) {
  command_ = &sub;
  command_->add_option("--client", client_,
                       "Consumer command line; placeholders {url} {topic} {subscription} {q} "
                       "{delay_ms} {nack_every} {sub_type} {batch_index_ack} {reopen_after} "
                       "(docs/real-broker.md)");
  command_->add_option("--client-preset", client_preset_,
                       "A shipped consumer NAME[@VERSION] (permitcheck conform --list-clients)")
      ->excludes("--client");
  command_->add_option("--service-url", service_url_,
                       "pulsar://HOST:PORT of your own broker (default: start the installed "
                       "standalone); it must advertise the tap's address for lookups")
      ->needs(command_->add_option("--admin-url", admin_url_,
                                   "http://HOST:PORT of your own broker's admin REST API"));
  command_->add_option("--scenarios", scenarios_, "Scenarios to run (default: all; --list)")
      ->delimiter(',');
  command_->add_option("--q", q_, "Receiver queue size Q given to the client")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}))
      ->capture_default_str();
  command_->add_option("--threshold", t_, "The client's Flow threshold T (default: the preset's)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100000}));
  command_->add_option("--format", format_, "Report format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command_->add_option("-o,--output", output_, "Write the report here (default: stdout)");
  command_->add_option("--trace", trace_, "Write the tap's wire trace of each scenario to "
                                          "PATH.SCENARIO.jsonl");
  command_->add_option("--pcap", pcap_, "Write the tap's capture of each scenario to "
                                        "PATH.SCENARIO.pcap");
  command_->add_option("--timeout", timeout_, "Seconds one scenario may take (restarts apart)")
      ->check(CLI::Range(5.0, 3600.0))
      ->capture_default_str();
  command_->add_flag("--list", list_, "List the scenarios and exit");
  command_->add_flag("--fidelity", fidelity_,
                     "Also run each scenario's conformance pair on permitcheck's own broker and "
                     "print the two verdicts side by side (exit 1 on an unexplained difference; "
                     "docs/real-broker.md, Fidelity)");
}

#ifndef PERMITCHECK_HAVE_REALBROKER

int RealBrokerCommand::run(std::istream&, std::ostream&, std::ostream& err) {
  err << "permitcheck real-broker: not built in this configuration (needs the tap: libpcap, "
         "protobuf, asio)\n";
  return spec::kExitBadInput;
}

#else

namespace {

using realbroker::RealBrokerOutcome;

void write_text(const std::vector<RealBrokerOutcome>& runs, const std::string& broker,
                std::ostream& out) {
  out << "real broker: " << broker << "\n";
  for (const RealBrokerOutcome& o : runs) {
    out << o.verdict << "  " << o.scenario << "  (" << o.client << ")"
        << (o.rules.empty() ? "" : absl::StrCat("  rules ", absl::StrJoin(o.rules, ","))) << "\n";
    out << "  subscription " << (o.sub_type.empty() ? "?" : o.sub_type) << ", Q " << o.q
        << (o.broker_above_q() ? "; the broker's availablePermits went ABOVE Q" : "") << "\n";
    out << "  published " << spec::count_noun(o.published, "message") << "; through the tap: "
        << spec::count_noun(o.consumers, "consumer") << ", " << spec::count_noun(o.flows, "flow")
        << ", " << spec::count_noun(o.messages, "MESSAGE command") << ", "
        << spec::count_noun(o.acks, "ack") << "; peak available permits: wire " << o.peak_available
        << ", broker stats " << o.broker_peak_available << "; " << absl::StrFormat("%.1f", o.seconds)
        << " s\n";
    for (const realbroker::StatsComparison& c : o.comparisons) {
      out << "  stats " << c.when << ": availablePermits " << c.broker_available << " (wire "
          << c.wire_available << "), unackedMessages " << c.broker_unacked << ", consumers "
          << c.broker_consumers << " (wire " << c.wire_consumers << ")"
          << (c.matches() ? "  match" : "  MISMATCH") << "\n";
    }
    for (const std::string& f : o.findings) out << "  finding: " << f << "\n";
    for (const std::string& d : o.deviations) out << "  known deviation: " << d << "\n";
    for (const std::string& n : o.notes) out << "  note: " << n << "\n";
  }
}

void write_json(const std::vector<RealBrokerOutcome>& runs, const std::string& broker,
                std::ostream& out) {
  nlohmann::json report = {{"broker", broker}, {"runs", nlohmann::json::array()}};
  for (const RealBrokerOutcome& o : runs) {
    nlohmann::json comparisons = nlohmann::json::array();
    for (const realbroker::StatsComparison& c : o.comparisons) {
      comparisons.push_back({{"when", c.when},
                             {"broker_available_permits", c.broker_available},
                             {"wire_available_permits", c.wire_available},
                             {"broker_unacked_messages", c.broker_unacked},
                             {"broker_consumers", c.broker_consumers},
                             {"wire_consumers", c.wire_consumers},
                             {"match", c.matches()}});
    }
    report["runs"].push_back({{"scenario", o.scenario}, {"client", o.client},
                              {"verdict", o.verdict}, {"rules", o.rules},
                              {"findings", o.findings}, {"deviations", o.deviations}, {"notes", o.notes},
                              {"stats", comparisons}, {"published", o.published},
                              {"consumers", o.consumers}, {"flows", o.flows},
                              {"messages", o.messages}, {"acks", o.acks},
                              {"peak_wire_available", o.peak_available},
                              {"peak_broker_available", o.broker_peak_available},
                              {"q", o.q}, {"broker_above_q", o.broker_above_q()},
                              {"subscription_type", o.sub_type},
                              {"seconds", o.seconds}});
  }
  out << report.dump(2) << "\n";
}

struct ClientChoice {
  std::string command, name;
  std::optional<std::int64_t> t;
};

std::optional<ClientChoice> choose_client(const std::string& client, const std::string& preset,
                                          std::int64_t q, std::ostream& err) {
  if (!preset.empty()) {
    absl::StatusOr<conformance::ResolvedPreset> p =
        conformance::resolve_preset(preset, conformance::presets_root());
    if (!p.ok()) {
      err << "permitcheck real-broker: --client-preset: " << p.status().message() << "\n";
      return std::nullopt;
    }
    // The shipped consumers take the subscription type as a 7th argument (Shared without it).
    return ClientChoice{.command = absl::StrCat(p->command, " {sub_type}"),
                        .name = absl::StrCat(p->preset->name, "@", p->version),
                        .t = p->preset->threshold(q)};
  }
  if (client.empty()) {
    err << "permitcheck real-broker: --client or --client-preset is required\n";
    return std::nullopt;
  }
  if (client.find("{url}") == std::string::npos) {
    err << "permitcheck real-broker: --client must contain the {url} placeholder\n";
    return std::nullopt;
  }
  return ClientChoice{.command = client, .name = client, .t = std::nullopt};
}

}  // namespace

int RealBrokerCommand::run(std::istream&, std::ostream& out, std::ostream& err) {
  if (list_) {
    for (const realbroker::ScenarioInfo& s : realbroker::real_broker_scenarios()) {
      out << s.name << "  " << s.what << "\n";
    }
    return spec::kExitPass;
  }
  std::optional<ClientChoice> client = choose_client(client_, client_preset_, q_, err);
  if (!client) return spec::kExitBadInput;
  std::vector<std::string> scenarios = scenarios_;
  if (scenarios.empty()) {
    for (const realbroker::ScenarioInfo& s : realbroker::real_broker_scenarios()) {
      scenarios.push_back(s.name);
    }
  }
  for (const std::string& s : scenarios) {
    if (!realbroker::find_real_broker_scenario(s)) {
      err << "permitcheck real-broker: --scenarios: unknown scenario " << s << " (--list)\n";
      return spec::kExitBadInput;
    }
  }
  std::ofstream file;
  if (!output_.empty()) {
    file.open(output_, std::ios::binary);
    if (!file.is_open()) {
      err << "permitcheck real-broker: -o: cannot write " << output_ << "\n";
      return spec::kExitBadInput;
    }
  }
  std::ostream& report = output_.empty() ? out : file;

  absl::StatusOr<std::uint16_t> tap_port = realbroker::free_loopback_port();
  if (!tap_port.ok()) {
    err << "permitcheck real-broker: " << tap_port.status().message() << "\n";
    return spec::kExitBadInput;
  }
  std::unique_ptr<realbroker::StandaloneBroker> standalone;
  std::unique_ptr<realbroker::BrokerControl> control;
  std::string broker_name;
  if (!service_url_.empty()) {
    absl::StatusOr<realbroker::BrokerEndpoint> e =
        realbroker::parse_service_url(service_url_, admin_url_);
    if (!e.ok()) {
      err << "permitcheck real-broker: " << e.status().message() << "\n";
      return spec::kExitBadInput;
    }
    control = std::make_unique<realbroker::OwnBrokerControl>(*e);
    broker_name = absl::StrCat("your broker at ", service_url_);
  } else {
    const std::string root = conformance::presets_root();
    standalone = std::make_unique<realbroker::StandaloneBroker>(realbroker::StandaloneOptions{
        .root = root, .advertised = absl::StrCat("127.0.0.1:", *tap_port)});
    err << "permitcheck real-broker: starting the Pulsar " << realbroker::installed_version(root)
        << " standalone broker\n";
    if (absl::Status s = standalone->start(std::chrono::seconds(180)); !s.ok()) {
      err << "permitcheck real-broker: " << s.message() << "\n";
      return spec::kExitBadInput;
    }
    err << "permitcheck real-broker: broker ready in "
        << absl::StrFormat("%.1f", standalone->last_start_seconds()) << " s\n";
    control = std::make_unique<realbroker::StandaloneControl>(standalone.get());
    broker_name = absl::StrCat("Pulsar ", realbroker::installed_version(root),
                               " standalone (started by permitcheck)");
  }

  if (fidelity_) {
    const int code = run_fidelity_report(
        FidelityArgs{.client_command = client->command, .client_name = client->name,
                     .client_preset = client_preset_, .q = q_, .t = t_ ? t_ : client->t,
                     .scenarios = scenarios_, .tap_port = *tap_port,
                     .timeout = std::chrono::milliseconds(static_cast<int>(timeout_ * 1000)),
                     .format = format_, .broker_name = broker_name},
        *control, report, err);
    if (standalone) standalone->stop();
    return code;
  }
  std::vector<RealBrokerOutcome> runs;
  for (const std::string& s : scenarios) {
    err << "permitcheck real-broker: " << s << " ...\n";
    runs.push_back(realbroker::run_on_real_broker(
        *control, realbroker::RealBrokerRun{
                      .client_command = client->command,
                      .client_name = client->name,
                      .q = q_,
                      .t = t_ ? t_ : client->t,
                      .scenario = s,
                      .tap_port = *tap_port,
                      .timeout = std::chrono::milliseconds(static_cast<int>(timeout_ * 1000)),
                      .trace_path = trace_.empty() ? "" : absl::StrCat(trace_, ".", s, ".jsonl"),
                      .pcap_path = pcap_.empty() ? "" : absl::StrCat(pcap_, ".", s, ".pcap")}));
  }
  if (standalone) standalone->stop();
  if (format_ == "json") {
    write_json(runs, broker_name, report);
  } else {
    write_text(runs, broker_name, report);
  }
  report.flush();
  if (!report) {
    err << "permitcheck real-broker: cannot write the report\n";
    return spec::kExitBadInput;
  }
  bool fail = false, incomplete = false;
  for (const RealBrokerOutcome& o : runs) {
    fail |= o.verdict == "FAIL";
    incomplete |= o.verdict == "INCOMPLETE";
  }
  return fail ? spec::kExitViolation : incomplete ? spec::kExitIncomplete : spec::kExitPass;
}

#endif

}  // namespace permitcheck::cli
