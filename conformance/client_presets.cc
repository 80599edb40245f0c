#include "conformance/client_presets.h"

#include "spec/permit_state.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace permitcheck::conformance {
namespace {

// Flow once the returned count reaches max(Q/2, 1): Q/2 - 1 permits at most wait client-side,
// so at quiescence Q - available < Q/2.
std::int64_t half_queue(std::int64_t q) { return spec::default_threshold(q); }

// pulsar-flex flows ceil(Q/2) once its count of unprocessed grants drops below ceil(Q/2), so up
// to ceil(Q/2) permits wait client-side.
std::int64_t half_queue_rounded_up_plus_one(std::int64_t q) { return (q + 1) / 2 + 1; }

// The Rust client counts every MESSAGE it receives against its window W (its batch size, here
// Q) and Flows W - remaining once remaining < ceil(W/2): up to W/2 (integer) permits wait
// client-side, so T = Q/2 + 1.
std::int64_t half_window_plus_one(std::int64_t q) { return q / 2 + 1; }

}  // namespace

const std::vector<ClientPreset>& all_client_presets() {
  static const std::vector<ClientPreset> presets = {
      {.name = "java",
       .library = "Maven org.apache.pulsar:pulsar-client 4.2.4 (clients/java/pom.xml)",
       .default_version = "4.2.4",
       // clients/java/catalogue-versions (built into target-VERSION/).
       .other_versions = {"3.2.0", "3.2.1", "2.3.0", "2.3.1"},
       .knows_message_permits = false,
       .threshold = half_queue,
       .threshold_source = "pulsar-client ConsumerImpl.java: receiverQueueRefillThreshold = "
                           "receiverQueueSize / 2",
       // Measured: 2.3.0 subscribed 5.6 s after its start at a load average of 14 on 2 cores.
       .startup = std::chrono::milliseconds(30000)},
      {.name = "cpp",
       .library = "PyPI pulsar-client 3.13.0, which bundles the C++ client 4.2.0",
       .default_version = "3.13.0",
       // requirements-VERSION.txt, for the bug catalogue: 3.6.1 bundles the C++ client 3.7.0,
       // 3.7.0 bundles 3.7.1 (pulsar-client-python dependencies.yaml at those tags).
       .other_versions = {"3.6.1", "3.7.0"},
       .knows_message_permits = false,
       .threshold = half_queue,
       .threshold_source = "pulsar-client-cpp v4.2.0 lib/ConsumerImpl.cc:121 "
                           "(receiverQueueRefillThreshold_ = receiverQueueSize / 2), :1210 (Flow "
                           "once availablePermits_ reaches it)"},
      {.name = "go",
       .library = "github.com/apache/pulsar-client-go (Go module proxy)",
       .default_version = "v0.21.0",
       .other_versions = {"v0.9.0", "v0.10.0", "v0.12.0", "v0.12.1", "v0.16.0", "v0.17.0"},
       .knows_message_permits = false,
       .threshold = half_queue,
       .threshold_source = "pulsar-client-go v0.21.0 pulsar/consumer_partition.go:315 "
                           "(flowThreshold = max(maxQueueSize/2, 1)), :319 (Flow once the "
                           "available permits reach it)"},
      {.name = "pulsar-flex",
       .library = "npm pulsar-flex 1.1.1",
       .default_version = "1.1.1",
       .knows_message_permits = false,
       .threshold = half_queue_rounded_up_plus_one,
       .threshold_source = "pulsar-flex 1.1.1: Flow of ceil(Q/2) once fewer than ceil(Q/2) "
                           "grants are unprocessed (conformance/README.md, pulsar-flex)"},
      {.name = "reference",
       .library = "permitcheck-reference-client (rev-d, built from spec/)",
       .default_version = "rev-d",
       .knows_message_permits = true,
       .threshold = half_queue,
       .threshold_source = "conformance/reference_client.cc: "
                           "spec::default_threshold(q)"},
      {.name = "rust",
       .library = "crates.io pulsar 6.9.1 (streamnative/pulsar-rs; clients/rust)",
       .default_version = "6.9.1",
       .knows_message_permits = false,
       .threshold = half_window_plus_one,
       // The window W is the consumer's batch size, which the consumer sets to Q
       // (ConsumerBuilder::with_batch_size; default 1000, src/consumer/topic.rs:68).
       .threshold_source = "pulsar 6.9.1 src/consumer/engine.rs:176 (Flow once "
                           "remaining_messages < batch_size.div_ceil(2)), :182 (a Flow of "
                           "batch_size - remaining_messages), :249-259 (remaining_messages "
                           "falls by num_messages_in_batch, or 1, at each MESSAGE received); "
                           "window: src/retry_op.rs:141 (the first Flow grants batch_size)"},
  };
  return presets;
}

absl::StatusOr<ResolvedPreset> resolve_preset(std::string_view spec, std::string_view root) {
  const std::size_t at = spec.find('@');
  const std::string name(spec.substr(0, at));
  const std::string version(at == std::string_view::npos ? "" : spec.substr(at + 1));
  const std::vector<ClientPreset>& presets = all_client_presets();
  auto it = std::find_if(presets.begin(), presets.end(),
                         [&](const ClientPreset& p) { return p.name == name; });
  if (it == presets.end()) {
    std::vector<std::string> names;
    for (const ClientPreset& p : presets) names.push_back(p.name);
    return absl::InvalidArgumentError(absl::StrCat("unknown client preset \"", name,
                                                   "\" (known: ", absl::StrJoin(names, ", "),
                                                   "; --list-clients)"));
  }
  ResolvedPreset r{.preset = &*it, .version = it->default_version, .command = ""};
  std::string env;
  if (!version.empty() && version != it->default_version) {
    if (std::find(it->other_versions.begin(), it->other_versions.end(), version) ==
        it->other_versions.end()) {
      std::vector<std::string> known = {it->default_version};
      known.insert(known.end(), it->other_versions.begin(), it->other_versions.end());
      return absl::InvalidArgumentError(absl::StrCat("client preset ", name, " has no version \"",
                                                     version, "\" (installed: ",
                                                     absl::StrJoin(known, ", "), ")"));
    }
    r.version = std::string(version);
    env = absl::StrCat("PERMITCHECK_CLIENT_VERSION=", version, " ");
  }
  r.command = absl::StrCat(env, "'", std::string(root), "/clients/", name,
                           "/run' {url} {topic} {subscription} {q} {delay_ms} {nack_every}");
  return r;
}

std::string presets_root() {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (!ec && std::filesystem::exists(cwd / "clients/reference/run", ec)) {
    return cwd.string();
  }
  return PERMITCHECK_SOURCE_DIR;
}

}  // namespace permitcheck::conformance
