#include "cli/render_command.h"

#include <optional>
#include <utility>

#include "cli/explain.h"
#include "cli/replay.h"
#include "report/output.h"
#include "spec/outcome.h"

namespace permitcheck::cli {

std::string_view RenderCommand::description() const {
  return "Explain a counterexample trace: prose naming each rule and the numbers (text), a Mermaid "
      "sequence diagram (mermaid), or the canonical JSON Lines with the findings (json). Exit 0 "
      "rendered, 2 unreadable input.";
}

std::string_view RenderCommand::examples() const {
  return "  permitcheck render counterexample.jsonl --format text\n"
         "  permitcheck render counterexample.jsonl --format mermaid";
}

void RenderCommand::add_options(CLI::App& sub) {
  sub.add_option("cex", cex_, "Counterexample trace file; - reads standard input")->required();
  sub.add_option("--format", format_, "Output format")
      ->check(CLI::IsMember({"text", "mermaid", "json"}))
      ->capture_default_str();
  sub.add_option("-o,--output", output_, "Write the rendering to this file instead of stdout");
}

int RenderCommand::run(std::istream& in, std::ostream& out, std::ostream& err) {
  std::optional<trace::Trace> t = read_counterexample(cex_, in, "render", err);
  if (!t) return spec::kExitBadInput;
  const Explained e = explain(*std::move(t));
  std::string text;
  switch (*parse_render_format(format_)) {
    case RenderFormat::kText: text = render_text(e, cex_ == "-" ? "<stdin>" : cex_); break;
    case RenderFormat::kMermaid: text = render_mermaid(e); break;
    case RenderFormat::kJson: text = render_jsonl(e); break;
  }
  return report::write_report(output_, out, text, "render", err) ? spec::kExitPass : spec::kExitBadInput;
}

}  // namespace permitcheck::cli
