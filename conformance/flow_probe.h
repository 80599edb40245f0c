// The flow probe: one run of the client under test, before the scenarios, that reads its
// receiver queue size Q and Flow threshold T off its own Flows, for `permitcheck conform`
// without --q or --threshold (issue 33). Its own broker and client process: the client's first
// Flow is its Q; then single messages, as many as its permits allow and as fast as it takes
// them, until a replenishing Flow comes, whose permits are its T (each message returned one at
// a time, so the accumulator reaches T exactly; spec/flow_settings.h reads both).
//
//   ClientSpec client{.command = "my-consumer --url {url}", .q = 10};
//   ScenarioOutcome probe = probe_flow_settings(client);
//   // probe.flows_seen.q: 1000, probe.flows_seen.t: 500; probe.client_never_started: no Flow
//
// Guarantees: returns within client.startup + client.timeout + 1 s (the client stopped, no
// process left); the probe is not judged (no findings); it never delivers more messages than
// the client granted permits for.
#ifndef PERMITCHECK_CONFORMANCE_FLOW_PROBE_H_
#define PERMITCHECK_CONFORMANCE_FLOW_PROBE_H_

#include "conformance/scenario.h"

namespace permitcheck::conformance {

ScenarioOutcome probe_flow_settings(const ClientSpec& client);

}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_FLOW_PROBE_H_
