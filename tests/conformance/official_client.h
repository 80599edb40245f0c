// Shared by the tests that pin what an official Pulsar client does under the conformance
// broker (cpp_client_test.cc, go_client_test.cc): the preset's ClientSpec, whether that
// client is installed, and finding lookups.
#ifndef PERMITCHECK_TESTS_CONFORMANCE_OFFICIAL_CLIENT_H_
#define PERMITCHECK_TESTS_CONFORMANCE_OFFICIAL_CLIENT_H_

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "conformance/client_presets.h"
#include "conformance/scenario.h"

namespace permitcheck::conformance::testing {

// The preset NAME[@VERSION] with Q = 10 and its real threshold, judged as an old client.
inline ClientSpec preset_client(std::string_view spec) {
  absl::StatusOr<ResolvedPreset> p = resolve_preset(spec, PERMITCHECK_SOURCE_DIR);
  ClientSpec c;
  if (!p.ok()) {
    c.command = absl::StrCat("echo 'bad preset ", std::string(spec), "' >&2; exit 2");
    return c;
  }
  c.command = p->command;
  c.q = 10;
  c.t = p->preset->threshold(10);
  c.knows_message_permits = p->preset->knows_message_permits;
  c.timeout = std::chrono::milliseconds(20000);
  c.idle = std::chrono::milliseconds(1500);
  return c;
}

// Whether FILE (relative to the source tree) exists, i.e. the client's install script ran.
inline bool installed(std::string_view file) {
#ifdef PERMITCHECK_SANITIZED_BUILD
  (void)file;
  return false;
#else
  return std::filesystem::exists(absl::StrCat(PERMITCHECK_SOURCE_DIR, "/", std::string(file)));
#endif
}

// The reference client (tools/reference-client) under `ruleset`.
inline std::string reference_command(std::string_view ruleset = "rev-d") {
  return absl::StrCat(PERMITCHECK_REFERENCE_CLIENT,
                      " --url {url} --q {q} --delay-ms {delay_ms} --nack-every {nack_every}"
                      " --ruleset ",
                      std::string(ruleset));
}

inline ClientSpec reference_client(std::string_view ruleset = "rev-d") {
  return ClientSpec{.command = reference_command(ruleset), .q = 10, .t = 5,
                    .timeout = std::chrono::milliseconds(15000),
                    .idle = std::chrono::milliseconds(800)};
}

inline bool has(const std::vector<spec::Finding>& findings, spec::RuleId rule,
                std::string_view text = "") {
  return std::any_of(findings.begin(), findings.end(), [&](const spec::Finding& f) {
    return f.rule == rule && f.explanation.find(text) != std::string::npos;
  });
}

// True when one of the scenario's opened windows (its coverage lines) contains `text`.
inline bool opened(const ScenarioOutcome& o, std::string_view text) {
  return std::any_of(o.windows.begin(), o.windows.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// An outcome for a failure message: the scenario, its findings, the client's failure and log
// (dump() adds the grant and debit counts).
inline std::string details(const ScenarioOutcome& o) {
  std::string s = absl::StrCat(describe(o.params), "\n");
  for (const spec::Finding& f : o.violations) absl::StrAppend(&s, spec::format_finding(f), "\n");
  for (const spec::Finding& f : o.deviations) {
    absl::StrAppend(&s, "(deviation) ", spec::format_finding(f), "\n");
  }
  if (o.client_failure) absl::StrAppend(&s, "client: ", *o.client_failure, "\n");
  absl::StrAppend(&s, o.client_log_tail);
  return s;
}

// details() with the grant and debit counts after the scenario line.
inline std::string dump(const ScenarioOutcome& o) {
  const std::string scenario = absl::StrCat(describe(o.params), "\n");
  return absl::StrCat(scenario, "granted ", o.granted, " debited ", o.debited, " incarnations ",
                      o.incarnations, "\n", details(o).substr(scenario.size()));
}

inline EntrySpec batch(std::int64_t b) { return EntrySpec{.batch_size = b, .batched = true}; }

inline EntrySpec faulty_batch(std::int64_t b, EntryFault fault) {
  return EntrySpec{.batch_size = b, .batched = true, .fault = fault};
}

inline ScenarioParams params(ScenarioKind kind, std::vector<EntrySpec> entries,
                             int disrupt_after = 0) {
  return ScenarioParams{.kind = kind, .entries = std::move(entries),
                        .disrupt_after = disrupt_after};
}

}  // namespace permitcheck::conformance::testing

#define SKIP_WITHOUT_CPP_CLIENT()                                                         \
  if (!installed("clients/cpp/.venv/bin/python")) {                           \
    GTEST_SKIP() << "the C++ client (PyPI pulsar-client) is not installed "                \
                    "(ci/install-python-client.sh) or this is a sanitizer build";         \
  }

#endif  // PERMITCHECK_TESTS_CONFORMANCE_OFFICIAL_CLIENT_H_
