// A client process that ended during a scripted scenario, as a trace fact, and the finding
// made from it.
//
// `permitcheck conform` sees the client process end (a crash, or an exit with status 0 that
// took its consumer with it: no reconnect logic); no wire event says so. It writes what it saw as an `x-client-exit` extension event
// when it finds the process gone, and the monitor reports it from there, so a saved trace
// reproduces the finding at the same line (docs/trace-format.md).
//
//   const std::string ev = client_exit_event({.rule = RuleId::kC7, .scenario = "corrupt_checksum",
//                                             .granted = 4, .debited = 2, .how = "exit 1"});
//   std::optional<ClientExit> x = parse_client_exit_event(ev);   // the same values
//
// Guarantees: parse(event(x)) == x whenever `scenario` has no space; O(size of the name).
#ifndef PERMITCHECK_SPEC_CLIENT_EXIT_H_
#define PERMITCHECK_SPEC_CLIENT_EXIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "spec/rule_id.h"

namespace permitcheck::spec {

struct ClientExit {
  RuleId rule = RuleId::kE1;  // the scenario's primary rule: what the ended client left unchecked
  std::string scenario;       // the scenario's name (no spaces)
  std::int64_t granted = 0;   // permits the broker saw granted to the live incarnation
  std::int64_t debited = 0;   // and debited from it
  std::string how;            // "crashed: killed by signal 6", free text to the end of the name
  bool operator==(const ClientExit&) const = default;
};

// The extension's `ev` prefix: "x-client-exit rule=C7 scenario=corrupt_checksum granted=4
// debited=2 how=crashed: exit 1" (`how` runs to the end of the name).
inline constexpr std::string_view kClientExitEvent = "x-client-exit";

std::string client_exit_event(const ClientExit& x);

// The facts of an `ev` written by client_exit_event; nullopt for any other name.
std::optional<ClientExit> parse_client_exit_event(std::string_view ev);

// The violation's text: a client that ends during a scenario breaks the scenario's primary
// rule (x.rule; a crash on C7's checksum failure is C7), as its credit never comes back.
std::string client_exit_text(const ClientExit& x);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_CLIENT_EXIT_H_
