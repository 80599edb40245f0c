// The monitor's handling of a scripted scenario's driver facts (spec/scenario_facts.h): what
// `permitcheck conform` measured beside the wire, judged by spec/scenario_verdict.h.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spec/internal/monitor_state.h"
#include "spec/scenario_facts.h"
#include "spec/scenario_verdict.h"

namespace permitcheck::spec {

// The windows, early failures and late Flow are gathered; `x-drain` ends them and is where the
// scenario's verdict is reported (its line). The invariants are not promised under legacy, so
// there the drain's numbers are no finding (as E5/E6 are not checked). A field-absent excuse
// turns the E5/E6 findings before it into the deviation it names (X1, X6), except those a
// driver reported from the client's exit, a missing consumer or a malformed frame.
bool Monitor::State::on_scenario_fact(std::string_view ev) {
  if (!ev.starts_with("x-")) return false;
  if (std::optional<WindowFact> w = parse_window_event(ev)) {
    scenario_fact_bytes += sizeof(WindowFact) + w->what.capacity();
    scenario_facts.windows.push_back(*std::move(w));
    return true;
  }
  if (std::optional<EarlyFailure> e = parse_early_failure_event(ev)) {
    scenario_fact_bytes += sizeof(EarlyFailure) + e->name.capacity() +
                           e->ack_set.words().size() * sizeof(std::int64_t);
    scenario_facts.early_failures.push_back(*std::move(e));
    return true;
  }
  if (std::optional<std::int64_t> late = parse_late_flow_event(ev)) {
    scenario_facts.late_flow = monitor_internal::sat_add(scenario_facts.late_flow, *late);
    return true;
  }
  if (std::optional<NoConsumer> x = parse_no_consumer_event(ev)) {
    violation(x->rule, absl::StrCat("at quiescence the client has no subscribed consumer (it "
                                    "closed its consumer or connection during ",
                                    x->scenario, ")"));
    driver_fact_lines.push_back(line);
    return true;
  }
  if (std::optional<MalformedFrame> x = parse_malformed_frame_event(ev)) {
    violation(x->rule, absl::StrCat("client sent a malformed frame: ", x->error));
    driver_fact_lines.push_back(line);
    return true;
  }
  std::optional<DrainFact> drain = parse_drain_event(ev);
  if (!drain) return false;
  scenario_facts.drain = *std::move(drain);
  ScenarioFacts facts = std::exchange(scenario_facts, ScenarioFacts{});
  scenario_fact_bytes = 0;
  if (!invariants()) return true;
  ScenarioJudgement j = judge_scenario(facts, header.q.value_or(0), header.t);
  if (j.excuse) {
    std::vector<Finding> kept;
    for (Finding& f : violations) {
      const bool driver = std::find(driver_fact_lines.begin(), driver_fact_lines.end(),
                                    f.line) != driver_fact_lines.end();
      if ((f.rule != RuleId::kE5 && f.rule != RuleId::kE6) || driver) {
        kept.push_back(std::move(f));
        continue;
      }
      absl::StrAppend(&f.explanation, "; explained by known deviation ", j.excuse->text);
      finding_bytes += j.excuse->text.size();
      f.rule = j.excuse->rule;
      deviations.push_back(std::move(f));
    }
    violations = std::move(kept);
    deviation(j.excuse->rule, j.excuse->text);
  }
  for (Finding& f : j.violations) violation(f.rule, std::move(f.explanation));
  return true;
}

}  // namespace permitcheck::spec
