#include "spec/monitor.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spec/internal/monitor_state.h"

namespace permitcheck::spec {

std::string format_finding(const Finding& f) {
  return absl::StrCat("line ", f.line, ": ", monitor_internal::av(rule_name(f.rule)), " ",
                      f.explanation);
}


Monitor::Monitor(const TraceHeader& header, MonitorOptions options)
    : state_(std::make_unique<State>()) {
  state_->header = header;
  state_->rules = &ruleset(header.ruleset);
  state_->options = options;
}
Monitor::~Monitor() = default;
Monitor::Monitor(Monitor&&) noexcept = default;
Monitor& Monitor::operator=(Monitor&&) noexcept = default;

void Monitor::on_event(const Event& event, std::uint64_t line) {
  state_->line = line;
  std::visit([this](const auto& e) { state_->on(e); }, event);
  if (!std::holds_alternative<Skip>(event)) state_->last_skip.reset();
}

void Monitor::finish() {
  State& s = *state_;
  // C4: an out-of-range explicit value must end in a protocol error on its connection.
  for (auto& [id, c] : s.cmds) s.check_protocol_error_raised(c);
}

const std::vector<Finding>& Monitor::violations() const { return state_->violations; }
const std::vector<Finding>& Monitor::deviations() const { return state_->deviations; }
const Ruleset& Monitor::rules() const { return *state_->rules; }

std::optional<CommandLedger> Monitor::ledger(const Id& cmd) const {
  auto it = state_->cmds.find(cmd);
  if (it == state_->cmds.end()) return std::nullopt;
  const monitor_internal::Command& c = it->second;
  return CommandLedger{.cmd = c.cmd,
                       .inc = c.inc,
                       .p = c.debited_p(),
                       .claimed = c.claimed,
                       .returned = c.returned(),
                       .dropped = c.dropped,
                       .settled = c.settled};
}

MonitorReport check_trace(const TraceHeader& header, const std::vector<Event>& events) {
  Monitor m(header);
  for (std::size_t i = 0; i < events.size(); ++i) m.on_event(events[i], i + 2);
  m.finish();
  return {m.violations(), m.deviations()};
}

}  // namespace permitcheck::spec
