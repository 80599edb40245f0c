// `permitcheck validate` on packet captures: a file whose first bytes are a pcap or pcapng
// magic number is read with libpcap (capture/), its Pulsar connections become a wire trace,
// and the Monitor checks it live. The capture options (--port, --idle, --q, --threshold,
// --trace-out) are registered on the validate subcommand.
//
//   add_capture_options(validate_subcommand);
//   if (capture_file(path)) results.push_back(validate_capture(path, ruleset, std::cerr));
#ifndef PERMITCHECK_CLI_CAPTURE_H_
#define PERMITCHECK_CLI_CAPTURE_H_

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "validate/validate.h"

namespace permitcheck::cli {

// Adds --port, --idle, --q, --threshold and --trace-out (and its deprecated spelling --emit-trace) to `validate`.
void add_capture_options(CLI::App* validate);

// When no input is a capture, the first capture-only option the user gave ("--q"), whose value
// would be ignored (a trace's header gives Q and T); nullopt when none was given or some input
// is a capture. The caller refuses the run (exit 2) rather than ignore it.
std::optional<std::string> ignored_capture_option(const CLI::App& validate,
                                                  const std::vector<std::string>& inputs);

// Whether --trace-out was given.
bool capture_trace_out();

// Whether `path` is a capture (by content); false for "-" and for unreadable files.
bool capture_file(const std::string& path);

// Validates the capture at `path`: the derived wire trace (source wire), checked against
// `ruleset` (default rev-d). Connections it cannot follow are reported on `err`, naming the
// file; a capture without any Pulsar connection, or an unreadable one, is an error (exit 2).
// With `threads` 2, libpcap reads and packet headers are decoded on a second thread (the
// same result). `max_memory` (--max-memory) bounds the bytes held for all its connections
// together: past it the connection that grew is not followed (INCOMPLETE, naming it).
validate::FileResult validate_capture(const std::string& path, std::optional<spec::RulesetId> ruleset,
                            std::ostream& err, int threads = 1,
                            std::size_t max_memory = std::size_t{1} << 30);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_CAPTURE_H_
