// What receiver queue size Q and Flow threshold T a client's own Flows show on the wire, read
// by the rulebook's definitions (docs/rules.md, "Q" and "T"): the first Flow after a Subscribe
// grants Q; a later Flow is due once the returned permits reach T and carries all of them, so
// every replenishing Flow carries at least T, and exactly T when messages are returned one at a
// time. `permitcheck conform` infers Q and T from them when they are not given, and reports a
// given Q that the client's first Flow contradicts as a configuration mismatch, not as a rule
// violation (issue 33). It lives in spec/ because it inverts the rulebook's definitions of Q
// and T on spec events and decides nothing about the wire of its own; the runner
// (conformance/) only feeds it traces.
//
//   FlowSettingsSeen seen = flow_settings_seen(trace.events);
//   // seen.q: 1000 (the first consumer's first Flow); seen.t: 500 (the smallest later Flow)
//   std::optional<std::string> m = q_mismatch(seen, /*q=*/10);   // "the client's first Flow ..."
//
// Guarantees: one pass over the events, O(events) time and O(consumers) memory; nothing but
// Subscribe, Flow, CloseConsumer and Disconnect events is read, and a Flow of no permits (0 or
// less: it grants nothing) is neither Q nor T; no event makes it fail.
#ifndef PERMITCHECK_SPEC_FLOW_SETTINGS_H_
#define PERMITCHECK_SPEC_FLOW_SETTINGS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "spec/events.h"

namespace permitcheck::spec {

struct FlowSettingsSeen {
  // Q: the permits of the first Flow after the trace's first Subscribe, on that consumer (a
  // fresh consumer's initial grant). None: no Flow came after it.
  std::optional<std::int64_t> q;
  // T: the smallest replenishing Flow (any Flow of a consumer after its initial one, across
  // its incarnations). The smallest, not the most common: each carries at least T, and a Flow
  // made due by a batch returned at once carries more. None: no replenishing Flow came.
  std::optional<std::int64_t> t;
  int replenishing_flows = 0;
};

FlowSettingsSeen flow_settings_seen(std::span<const Event> events);

// The client's first Flow contradicts the Q it is judged against: "the client's first Flow
// granted 1000 permits, its receiver queue size Q, not the 10 given". None when it agrees or
// the client sent no Flow.
std::optional<std::string> q_mismatch(const FlowSettingsSeen& seen, std::int64_t q);

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_FLOW_SETTINGS_H_
