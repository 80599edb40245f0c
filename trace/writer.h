// Trace writer: spec values to trace-format.md version 1, the inverse of trace/reader.h.
// Counterexamples from the properties and the solver are written with it, so each one can be
// replayed through `validate`.
//
//   std::string line = write_event(spec::Claim{.cmd = spec::Id::number(1),
//                                              .msg = spec::Id::text("m0"), .index = 0});
//   // line == R"({"ev":"claim","cmd":1,"msg":"m0","index":0})"
//   absl::Status s = write_trace(std::cout, header, events);
//
// Fields appear in the order of the format's tables; optional fields only when present (an
// empty ack_set is absent; msg_return's n only when it is not the default 1). Reading the
// output gives back equal values (round trip), for strings that are valid UTF-8: a byte
// sequence that is not is written as U+FFFD, so the output is always a readable trace.
#ifndef PERMITCHECK_TRACE_WRITER_H_
#define PERMITCHECK_TRACE_WRITER_H_

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "spec/events.h"

namespace permitcheck::trace {

// The header line, without "\n"; the ruleset is always written.
// {"trace":"pip491-permits","version":1,"source":"client","ruleset":"rev-d","q":4,"t":2}
std::string write_header(const spec::TraceHeader& header);

// One event as one JSON object, without "\n".
// REQUIRES: an Extension's ev starts with "x-" (others are not readable back).
std::string write_event(const spec::Event& event);

// Appends write_event(event) to *out, reusing its capacity.
void append_event(std::string* out, const spec::Event& event);

// Appends `s` as a JSON string literal, quotes included: control characters escaped, and any
// byte sequence that is not valid UTF-8 written as U+FFFD, so the output is always valid JSON.
// The one JSON string quoting of the project (trace lines, reports, tables).
void append_json_string(std::string* out, std::string_view s);
std::string json_string(std::string_view s);

// The header and then every event, one per line, each ending in "\n". DataLoss if the
// stream fails.
absl::Status write_trace(std::ostream& out, const spec::TraceHeader& header,
                         const std::vector<spec::Event>& events);

}  // namespace permitcheck::trace

#endif  // PERMITCHECK_TRACE_WRITER_H_
