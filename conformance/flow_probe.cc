#include "conformance/flow_probe.h"

#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "conformance/internal/process.h"
#include "spec/flow_settings.h"

namespace permitcheck::conformance {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

ScenarioOutcome probe_flow_settings(const ClientSpec& client) {
  const auto start = Clock::now();
  ScenarioOutcome out;
  out.params = ScenarioParams{.kind = ScenarioKind::kCompleteBatches, .corner = "flow probe"};
  ConformanceBroker broker(BrokerOptions{.send_message_permits = true,
                                         .topic_hint = {},
                                         .advertised_url = client.advertised_url});
  if (absl::Status s = broker.start(); !s.ok()) {
    out.client_failure = absl::StrCat("broker could not start: ", s.message());
    out.client_never_started = true;
    return out;
  }
  static std::atomic<int> probe_counter{0};
  const std::string log_path = absl::StrCat(client.log_dir, "/permitcheck-conform-probe-",
                                            ::getpid(), "-", probe_counter++, ".log");
  internal::ClientProcess proc;
  proc.keep_log(client.keep_log);
  if (absl::Status s = proc.start(expand_command(client, out.params, broker.url()), log_path);
      !s.ok()) {
    out.client_failure = absl::StrCat("client could not start: ", s.message());
    out.client_never_started = true;
    return out;
  }
  // Bounded waits that give up when the client is gone.
  const auto wait = [&](const std::function<bool(const BrokerView&)>& pred, milliseconds max) {
    const auto until = Clock::now() + max;
    while (Clock::now() < until) {
      if (broker.wait_until(pred, milliseconds(50))) return true;
      if (!proc.running()) return broker.wait_until(pred, milliseconds(0));
    }
    return false;
  };
  if (!wait([](const BrokerView& v) { return v.subscribed && v.flows >= 1; }, client.startup)) {
    out.client_never_started = true;
    out.client_failure = absl::StrCat("hang or start failure: no Subscribe and Flow within ",
                                      client.startup.count(), " ms (",
                                      proc.exit_description().value_or("still running"), ")");
  } else {
    // Single messages while the client has permits and has not Flowed again.
    const auto until = Clock::now() + client.timeout;
    std::uint64_t entry = 1;
    while (Clock::now() < until) {
      if (!wait([](const BrokerView& v) { return !v.subscribed || v.flows >= 2 || v.available > 0; },
                milliseconds(1000))) {
        if (!proc.running()) break;
        continue;  // no permits left: the client is still working through what it has
      }
      const BrokerView v = broker.view();
      if (!v.subscribed || v.flows >= 2) break;
      if (!broker.deliver(Delivery{.entry = entry++}).ok()) break;
    }
    // The replenishing Flow may still be on its way when the last permit was used.
    (void)wait([](const BrokerView& v) { return !v.subscribed || v.flows >= 2; },
               std::min(milliseconds(3000), client.timeout));
  }
  proc.stop(milliseconds(500));
  broker.stop();
  out.client_log_tail = proc.log_tail(2000);
  out.events = broker.trace();
  out.flows_seen = spec::flow_settings_seen(out.events);
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

}  // namespace permitcheck::conformance
