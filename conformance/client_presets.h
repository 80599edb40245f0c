// The shipped consumers under clients/ as presets of `permitcheck conform
// --client-preset NAME[@VERSION]`: for each, the command line (its `run` script with the
// placeholders), whether it knows message_permits, and its real Flow threshold T as a
// function of Q, with the place in that client's released source that sets it.
//
//   absl::StatusOr<ResolvedPreset> p = resolve_preset("go@v0.12.0", "/path/to/permitcheck");
//   ClientSpec spec{.command = p->command, .q = 10, .t = p->threshold(10),
//                   .knows_message_permits = p->preset->knows_message_permits};
#ifndef PERMITCHECK_CONFORMANCE_CLIENT_PRESETS_H_
#define PERMITCHECK_CONFORMANCE_CLIENT_PRESETS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace permitcheck::conformance {

struct ClientPreset {
  std::string name;                 // clients/<name>/
  std::string library;               // what it runs on, e.g. "PyPI pulsar-client (C++ client 4.2.0)"
  std::string default_version;   // the release its lock file pins
  // Other releases its install script installs side by side (for the bug catalogue).
  std::vector<std::string> other_versions;
  bool knows_message_permits = false;
  std::int64_t (*threshold)(std::int64_t q) = nullptr;  // T for receiver queue Q
  std::string threshold_source;   // file:line in the client's release, or our source
  // How long it may take to subscribe and Flow (a JVM's start on a loaded machine is slow).
  std::chrono::milliseconds startup{10000};
};

// Every shipped consumer, in the order `--list-clients` prints them.
const std::vector<ClientPreset>& all_client_presets();

struct ResolvedPreset {
  const ClientPreset* preset = nullptr;
  std::string version;   // the chosen release
  std::string command;   // shell command line with the {url} ... {nack_every} placeholders
};

// Resolves "NAME" or "NAME@VERSION" against all_client_presets(); the command runs
// ROOT/clients/NAME/run, with PERMITCHECK_CLIENT_VERSION=VERSION for another
// release. Errors (InvalidArgument) name the known clients or versions.
absl::StatusOr<ResolvedPreset> resolve_preset(std::string_view spec, std::string_view root);

// The source tree the presets' run scripts live in: the working directory when it has
// clients/, else the tree this binary was built from.
std::string presets_root();

}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_CLIENT_PRESETS_H_
