// The Pulsar standalone broker installed by ci/install-pulsar-broker.sh, run on loopback: free
// ports for the broker, its web/admin service and the embedded bookie, metadata and ledgers
// under a temporary directory, `advertisedListeners` naming a given address (a tap in front
// of the broker) so that lookups send clients there. Or a user's own broker, not started.
//
//   StandaloneBroker broker(StandaloneOptions{.advertised = "127.0.0.1:6651"});
//   absl::Status s = broker.start(std::chrono::seconds(90));   // ready: admin REST answers
//   broker.restart(std::chrono::seconds(90));                  // same data, same ports
//   broker.stop();       // SIGTERM to the JVM's group, SIGKILL after 10 s; temp dir removed
//
// Guarantees: start() returns within its timeout, the JVM stopped on failure; nothing is left
// running or on disk after stop(), the destructor, an error, or SIGINT/SIGTERM of this process
// (process.h). Ports are chosen free just before the start (another process may take one in
// between: the start then fails with the broker's log tail, and is not retried).
#ifndef PERMITCHECK_REALBROKER_STANDALONE_H_
#define PERMITCHECK_REALBROKER_STANDALONE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "realbroker/admin.h"
#include "realbroker/process.h"

namespace permitcheck::realbroker {

// Where the installed broker is: the classpath file ci/install-pulsar-broker.sh writes under
// ROOT (the source tree). NotFound, saying how to install it, when it is not there.
absl::StatusOr<std::string> installed_classpath(const std::string& root);

// The Pulsar release brokers/pulsar/pom.xml pins, read from it ("4.2.4"); "" when unreadable.
std::string installed_version(const std::string& root);

struct StandaloneOptions {
  std::string root;        // source tree with brokers/pulsar/target/classpath.txt
  std::string advertised;  // HOST:PORT lookups answer with (the tap); empty: the broker itself
  std::string java = "java";
  std::string max_heap = "768m";
  bool keep_log = false;   // keep the broker's log (its path is log_path()) after stop()
};

// A broker the runs talk to: started here or the user's own.
struct BrokerEndpoint {
  std::string service_host = "127.0.0.1";
  std::uint16_t service_port = 0;  // the broker's own binary-protocol port
  HttpUrl admin;
};

// "pulsar://HOST:PORT" -> endpoint parts. InvalidArgument otherwise.
absl::StatusOr<BrokerEndpoint> parse_service_url(std::string_view service_url,
                                                 std::string_view admin_url);

class StandaloneBroker {
 public:
  explicit StandaloneBroker(StandaloneOptions options);
  ~StandaloneBroker();  // stop()

  // Picks ports, writes the config, starts the JVM with --wipe-data, waits for readiness.
  absl::Status start(std::chrono::milliseconds timeout);
  // Stops the JVM and starts it again on the same data and ports (no --wipe-data).
  absl::Status restart(std::chrono::milliseconds timeout);
  void stop();

  BrokerEndpoint endpoint() const;
  PulsarAdmin admin() const { return PulsarAdmin(endpoint().admin); }
  std::string log_path() const { return dir_ + "/broker.log"; }
  std::string log_tail(std::size_t max_bytes) const;
  bool running() const { return process_ != nullptr; }
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  double last_start_seconds() const { return last_start_seconds_; }

 private:
  absl::Status launch(bool wipe, std::chrono::milliseconds timeout);
  absl::Status write_config() const;

  StandaloneOptions options_;
  std::string classpath_;
  std::unique_ptr<TempDir> temp_;
  std::string dir_;  // temp_'s path: config, metadata, bookie, log
  std::uint16_t broker_port_ = 0, web_port_ = 0, bookie_port_ = 0;
  std::unique_ptr<GroupProcess> process_;
  double last_start_seconds_ = 0;
};

// A free TCP port on 127.0.0.1 (bound and released). Unavailable when none.
absl::StatusOr<std::uint16_t> free_loopback_port();

}  // namespace permitcheck::realbroker

#endif  // PERMITCHECK_REALBROKER_STANDALONE_H_
