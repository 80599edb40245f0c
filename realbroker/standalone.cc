#include "realbroker/standalone.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "asio.hpp"
#include "base/absl_view.h"

namespace permitcheck::realbroker {
namespace {

using Clock = std::chrono::steady_clock;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

absl::StatusOr<std::uint16_t> free_loopback_port() {
  try {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("no free loopback port: ", e.what()));
  }
}

absl::StatusOr<std::string> installed_classpath(const std::string& root) {
  const std::string path = root + "/brokers/pulsar/target/classpath.txt";
  std::string cp = read_file(path);
  while (!cp.empty() && (cp.back() == '\n' || cp.back() == '\r')) cp.pop_back();
  if (cp.empty() || !absl::StrContains(cp, "pulsar-broker")) {
    return absl::NotFoundError(absl::StrCat("the Pulsar broker is not installed (no ", path,
                                            "): run ci/install-pulsar-broker.sh"));
  }
  return cp;
}

std::string installed_version(const std::string& root) {
  const std::string pom = read_file(root + "/brokers/pulsar/pom.xml");
  const std::size_t a = pom.find("<pulsar.version>");
  const std::size_t b = pom.find("</pulsar.version>");
  if (a == std::string::npos || b == std::string::npos || b < a) return "";
  return pom.substr(a + 16, b - a - 16);
}

absl::StatusOr<BrokerEndpoint> parse_service_url(std::string_view service_url,
                                                 std::string_view admin_url) {
  const std::string bad = absl::StrCat("--service-url: not pulsar://HOST:PORT: ",
                                       to_absl(service_url));
  if (service_url.substr(0, 9) != "pulsar://") return absl::InvalidArgumentError(bad);
  std::string_view rest = service_url.substr(9);
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const std::size_t colon = rest.rfind(':');
  std::uint32_t port = 0;
  if (colon == std::string_view::npos || !absl::SimpleAtoi(to_absl(rest.substr(colon + 1)),
                                                           &port) ||
      port == 0 || port > 65535 || colon == 0) {
    return absl::InvalidArgumentError(bad);
  }
  absl::StatusOr<HttpUrl> admin = parse_http_url(admin_url);
  if (!admin.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--admin-url: ", admin.status().message()));
  }
  return BrokerEndpoint{.service_host = std::string(rest.substr(0, colon)),
                        .service_port = static_cast<std::uint16_t>(port),
                        .admin = *std::move(admin)};
}

StandaloneBroker::StandaloneBroker(StandaloneOptions options) : options_(std::move(options)) {}

StandaloneBroker::~StandaloneBroker() { stop(); }

BrokerEndpoint StandaloneBroker::endpoint() const {
  return BrokerEndpoint{.service_host = "127.0.0.1",
                        .service_port = broker_port_,
                        .admin = HttpUrl{.host = "127.0.0.1", .port = web_port_}};
}

std::string StandaloneBroker::log_tail(std::size_t max_bytes) const {
  if (!process_) return "";
  return process_->log_tail(max_bytes);
}

absl::Status StandaloneBroker::write_config() const {
  const std::string advertised =
      options_.advertised.empty() ? absl::StrCat("127.0.0.1:", broker_port_) : options_.advertised;
  // advertisedListeners with internalListenerName: lookups answer with the tap's address (no
  // advertisedAddress then). listeningInterface keeps the embedded bookie on loopback.
  std::ofstream conf(dir_ + "/standalone.conf");
  conf << "clusterName=standalone\n"
       << "bindAddress=127.0.0.1\n"
       << "brokerServicePort=" << broker_port_ << "\n"
       << "webServicePort=" << web_port_ << "\n"
       << "advertisedListeners=internal:pulsar://" << advertised << "\n"
       << "internalListenerName=internal\n"
       << "allowLoopback=true\n"
       << "listeningInterface=lo\n"
       << "acknowledgmentAtBatchIndexLevelEnabled=true\n"
       << "managedLedgerDefaultEnsembleSize=1\n"
       << "managedLedgerDefaultWriteQuorum=1\n"
       << "managedLedgerDefaultAckQuorum=1\n"
       << "brokerDeleteInactiveTopicsEnabled=false\n"
       << "authenticationEnabled=false\n"
       << "authorizationEnabled=false\n"
       << "functionsWorkerEnabled=false\n"
       << "systemTopicEnabled=false\n"
       << "topicLevelPoliciesEnabled=false\n"
       << "journalDirectory=" << dir_ << "/bookie/journal\n"
       << "ledgerDirectories=" << dir_ << "/bookie/ledgers\n";
  conf.close();
  if (!conf) return absl::UnavailableError(absl::StrCat("cannot write ", dir_, "/standalone.conf"));
  return absl::OkStatus();
}

absl::Status StandaloneBroker::start(std::chrono::milliseconds timeout) {
  if (process_) return absl::FailedPreconditionError("the broker is already running");
  absl::StatusOr<std::string> cp = installed_classpath(options_.root);
  if (!cp.ok()) return cp.status();
  classpath_ = *std::move(cp);
  absl::StatusOr<std::unique_ptr<TempDir>> dir = TempDir::create("permitcheck-pulsar-");
  if (!dir.ok()) return dir.status();
  temp_ = *std::move(dir);
  dir_ = temp_->path();
  for (std::uint16_t* port : {&broker_port_, &web_port_, &bookie_port_}) {
    absl::StatusOr<std::uint16_t> p = free_loopback_port();
    if (!p.ok()) return p.status();
    *port = *p;
  }
  if (absl::Status s = write_config(); !s.ok()) return s;
  return launch(/*wipe=*/true, timeout);
}

absl::Status StandaloneBroker::restart(std::chrono::milliseconds timeout) {
  if (!process_) return absl::FailedPreconditionError("the broker is not running");
  process_->stop(std::chrono::seconds(10));
  process_.reset();
  return launch(/*wipe=*/false, timeout);
}

absl::Status StandaloneBroker::launch(bool wipe, std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {
      options_.java, "-Xms128m", absl::StrCat("-Xmx", options_.max_heap),
      "-XX:+UseSerialGC", "-Dpulsar.allocator.exit_on_oom=true",
      "--add-opens", "java.base/java.lang=ALL-UNNAMED",
      "--add-opens", "java.base/jdk.internal.platform=ALL-UNNAMED",
      "--add-opens", "java.management/sun.management=ALL-UNNAMED",
      "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
      "-cp", classpath_, "org.apache.pulsar.PulsarStandaloneStarter",
      "--config", dir_ + "/standalone.conf", "-nfw", "-nss",
      "--bookkeeper-port", absl::StrCat(bookie_port_),
      "--metadata-dir", dir_ + "/metadata", "--bookkeeper-dir", dir_ + "/bookie"};
  if (wipe) argv.push_back("--wipe-data");
  const Clock::time_point begin = Clock::now();
  process_ = std::make_unique<GroupProcess>();
  if (absl::Status s = process_->start(argv, log_path()); !s.ok()) {
    process_.reset();
    return s;
  }
  PulsarAdmin admin = this->admin();
  while (Clock::now() - begin < timeout) {
    if (!process_->running()) {
      const std::string why = process_->exit_description().value_or("ended");
      const std::string tail = process_->log_tail(1500);
      stop();
      return absl::UnavailableError(absl::StrCat("the Pulsar broker ", why, "; its log ends: ", tail));
    }
    if (admin.ready()) {
      last_start_seconds_ = std::chrono::duration<double>(Clock::now() - begin).count();
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  const std::string tail = process_->log_tail(1500);
  stop();
  return absl::DeadlineExceededError(absl::StrCat("the Pulsar broker was not ready within ",
                                                  timeout.count(), " ms; its log ends: ", tail));
}

void StandaloneBroker::stop() {
  if (process_) {
    process_->stop(std::chrono::seconds(10));
    process_.reset();
  }
  if (options_.keep_log && temp_) {
    std::error_code ec;
    std::filesystem::copy_file(log_path(), absl::StrCat(dir_, ".log"),
                               std::filesystem::copy_options::overwrite_existing, ec);
  }
  temp_.reset();
}

}  // namespace permitcheck::realbroker
