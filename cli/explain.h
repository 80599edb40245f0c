// Readable counterexamples: a trace explained in prose, drawn as a Mermaid sequence diagram, or
// written back as canonical JSON Lines (`permitcheck render`).
//
// The prose names each rule the trace breaks (with the rulebook's title) and tells each
// command's story with its numbers, from the Monitor's ledger:
//   command 7 debited P=8; the client returned 1 after a checksum failure; 7 permits are lost.
// The diagram has four participants: Broker, Connection event loop, Client consumer and
// Application; each event is an arrow or a note labelled with its trace line, and each finding
// a note right after the event that exposed it.
//
//   absl::StatusOr<trace::Trace> t = trace::read_trace(file);
//   Explained e = explain(*t);
//   std::cout << render_text(e, "cex.jsonl") << render_mermaid(e);
#ifndef PERMITCHECK_CLI_EXPLAIN_H_
#define PERMITCHECK_CLI_EXPLAIN_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/monitor.h"
#include "trace/reader.h"

namespace permitcheck::cli {

enum class RenderFormat { kText, kMermaid, kJson };
std::optional<RenderFormat> parse_render_format(std::string_view name);  // "text", "mermaid", "json"

// A trace with what the monitor found in it (ledger retained).
struct Explained {
  trace::Trace trace;
  std::vector<spec::Finding> violations;
  std::vector<spec::Finding> deviations;
  std::vector<std::string> commands;  // one sentence per command, in order of appearance
  std::vector<std::string> sends;     // one sentence per broker `send`
};

// Runs `trace` through a fresh Monitor under its header's ruleset and tells every command's
// and send's story.
Explained explain(trace::Trace trace);

// Prose: the verdict, each finding with its rule's title, then each command and send.
std::string render_text(const Explained& e, std::string_view name);

// A Mermaid sequenceDiagram (inside no code fence).
std::string render_mermaid(const Explained& e);

// The trace in the writer's canonical form, then every finding as a trailing "# " comment line
// whose line numbers are those of this output (header on line 1, event i on line i + 2).
std::string render_jsonl(const Explained& e);

}  // namespace permitcheck::cli

#endif  // PERMITCHECK_CLI_EXPLAIN_H_
