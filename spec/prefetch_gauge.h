// The prefetch count gauge as a trace fact, and the M2 decision made from it.
//
// A client's prefetch gauges (count and bytes) are internal state no wire event shows. A
// recorder that can read them writes what it read as an `x-prefetch-gauge` extension event;
// the monitor judges it here (rule M2), so a saved trace reproduces the finding by itself.
//
//   const std::string ev = prefetch_gauge_event({.consumer = 0, .gauge = 1, .held = 0});
//   std::optional<PrefetchGauge> g = parse_prefetch_gauge_event(ev);   // the same values
//   std::optional<std::string> m2 = prefetch_gauge_leak(ruleset(RulesetId::kRevD), *g);
//
// Guarantees: parse(event(g)) == g for every g; parsing is O(size of the name); nothing
// else in a trace is read by it.
#ifndef PERMITCHECK_SPEC_PREFETCH_GAUGE_H_
#define PERMITCHECK_SPEC_PREFETCH_GAUGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "spec/ruleset.h"

namespace permitcheck::spec {

// What a recorder read from one consumer's prefetch gauges at one moment.
struct PrefetchGauge {
  std::uint64_t consumer = 0;  // the wire consumer id
  std::int64_t gauge = 0;      // the prefetch count gauge's value
  std::int64_t held = 0;       // messages received and not yet processed (queued + in listener)
  bool operator==(const PrefetchGauge&) const = default;
};

// The extension's `ev` prefix. The facts ride in the name, so that readers which ignore
// extensions keep ignoring it: "x-prefetch-gauge consumer=0 gauge=1 held=0".
inline constexpr std::string_view kPrefetchGaugeEvent = "x-prefetch-gauge";

std::string prefetch_gauge_event(const PrefetchGauge& g);

// The facts of an `ev` written by prefetch_gauge_event; nullopt for any other name (another
// extension, or a malformed one, which the monitor then ignores like any extension).
std::optional<PrefetchGauge> parse_prefetch_gauge_event(std::string_view ev);

// M2: the prefetch gauges count exactly the messages not yet processed (a stale-epoch discard
// closes them; legacy Pulsar leaks them, section 10's L6). The violation's text when the
// gauge differs from what is held under a ruleset that promises it (rev-d), else nullopt.
std::optional<std::string> prefetch_gauge_leak(const Ruleset& rules, const PrefetchGauge& g);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_PREFETCH_GAUGE_H_
