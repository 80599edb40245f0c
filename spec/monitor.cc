#include "spec/monitor.h"
#include "spec/finding_text.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spec/internal/monitor_state.h"

namespace permitcheck::spec {

std::string format_finding(const Finding& f) { return format_finding(f.rule, f.line, f.explanation); }

std::string format_finding(RuleId rule, std::uint64_t line, std::string_view explanation) {
  return absl::StrCat("line ", line, ": ", to_absl(rule_name(rule)), " ", to_absl(explanation));
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
  if (state_->wire_write_failed) {
    if (const auto* m = std::get_if<Message>(&event)) state_->check_after_write_failure(*m);
  }
  if (state_->options.sends_span_frames) state_->end_frame_run(event);
  std::visit([this](const auto& e) { state_->on(e); }, event);
  if (!std::holds_alternative<Skip>(event)) state_->last_skip.reset();
  if (!state_->compact_due.empty()) state_->compact_ended();
}

void Monitor::finish() {
  State& s = *state_;
  // C4: an out-of-range explicit value must end in a protocol error on its connection.
  for (auto& [id, c] : s.cmds) s.check_protocol_error_raised(c);
  s.compact_ended();
}

const std::vector<Finding>& Monitor::violations() const { return state_->violations; }
const std::vector<Finding>& Monitor::deviations() const { return state_->deviations; }
const Ruleset& Monitor::rules() const { return *state_->rules; }

std::optional<CommandLedger> Monitor::ledger(const Id& cmd) const {
  if (auto it = state_->cmds.find(cmd); it != state_->cmds.end()) {
    return state_->ledger_of(it->second);
  }
  if (auto it = state_->ledgers.find(cmd); it != state_->ledgers.end()) return it->second;
  return std::nullopt;
}

namespace {

// Heap bytes of a Swiss table of `capacity` slots of `slot` bytes (one control byte each).
std::size_t table_bytes(std::size_t capacity, std::size_t slot) { return capacity * (slot + 1); }

constexpr std::string_view kPartNames[] = {"commands in flight", "finished commands", "messages",
                                           "incarnations", "wire consumers", "connections",
                                           "ledgers", "findings"};

}  // namespace

std::string_view MonitorSize::largest() const {
  std::size_t best = 0;
  for (std::size_t i = 1; i < std::size(part_bytes); ++i) {
    if (part_bytes[i] > part_bytes[best]) best = i;
  }
  return kPartNames[best];
}

// An estimate: table capacities times slot sizes; text ids longer than the small-string
// buffer and ack_set words are not counted. Linear in the wire consumers and connections
// (their own sets and lists are sized one by one), constant in everything else.
MonitorSize Monitor::size() const {
  const State& s = *state_;
  using monitor_internal::ClientIncarnation;
  using monitor_internal::Command;
  using monitor_internal::ConsumerKey;
  using monitor_internal::Msg;
  using monitor_internal::Retired;
  using monitor_internal::WireIncarnation;
  MonitorSize out;
  out.commands = s.cmds.size();
  out.finished_commands = s.retired.size();
  out.messages = s.msgs.size() + s.finished_msgs.size();
  out.incarnations = s.incs.size() + s.ended_incs.size();
  out.wire_consumers = s.wire.size();
  out.connections = std::max({s.wire_consumers_on_cnx.size(), s.incs_on_cnx.size(),
                              s.cnx_sent_field.size(), s.unattached_on_cnx.size()});
  out.ledgers = s.ledgers.size();
  out.findings = s.violations.size() + s.deviations.size();
  // The commands, and each wire incarnation's set of the commands in flight on it.
  std::size_t in_flight = 0;
  for (const auto& [key, w] : s.wire) in_flight += table_bytes(w.in_flight.capacity(), sizeof(Id));
  out.part_bytes[0] =
      table_bytes(s.cmds.capacity(), sizeof(std::pair<const Id, Command>)) + in_flight;
  out.part_bytes[1] = s.retired.bytes() + s.retired_incs.bytes() +
                      s.shapes.capacity() * sizeof(Retired) +
                      table_bytes(s.shape_index.capacity(),
                                  sizeof(std::pair<const Retired, std::uint32_t>));
  out.part_bytes[2] = table_bytes(s.msgs.capacity(), sizeof(std::pair<const Id, Msg>)) +
                      s.finished_msgs.bytes();
  out.part_bytes[3] = table_bytes(s.incs.capacity(), sizeof(void*)) +
                      s.incs.size() * sizeof(std::pair<const Id, ClientIncarnation>) +
                      table_bytes(s.current_inc.capacity() + s.last_inc.capacity(),
                                  sizeof(std::pair<const std::uint64_t, Id>)) +
                  s.ended_incs.bytes() + s.compact_due.capacity() * sizeof(Id);
  out.part_bytes[4] =
      table_bytes(s.wire.capacity(), sizeof(std::pair<const ConsumerKey, WireIncarnation>)) +
      table_bytes(s.wire_of_consumer.capacity(), sizeof(std::pair<const std::uint64_t, ConsumerKey>));
  // A connection's lists: the table and each list's own storage.
  std::size_t lists = 0;
  for (const auto& [cnx, consumers] : s.wire_consumers_on_cnx) {
    lists += consumers.capacity() * sizeof(std::uint64_t);
  }
  for (const auto& [cnx, ids] : s.incs_on_cnx) lists += ids.capacity() * sizeof(Id);
  for (const auto& [cnx, ids] : s.unattached_on_cnx) {
    lists += table_bytes(ids.capacity(), sizeof(Id));
  }
  for (const auto& [cnx, closed] : s.closed_on_cnx) lists += closed.bytes();
  out.part_bytes[5] = table_bytes(s.wire_consumers_on_cnx.capacity() + s.incs_on_cnx.capacity(),
                                  sizeof(Id) + sizeof(std::vector<Id>)) +
                      table_bytes(s.unattached_on_cnx.capacity(),
                                  sizeof(Id) + sizeof(absl::flat_hash_set<Id>)) +
                      table_bytes(s.closed_on_cnx.capacity(),
                                  sizeof(Id) + sizeof(monitor_internal::IdRuns<std::uint8_t>)) +
                      lists + table_bytes(s.cnx_sent_field.capacity(), sizeof(Id) + 1);
  out.part_bytes[6] =
      table_bytes(s.ledgers.capacity(), sizeof(std::pair<const Id, CommandLedger>));
  out.part_bytes[7] = (s.violations.capacity() + s.deviations.capacity()) * sizeof(Finding) +
                      s.finding_bytes + s.scenario_fact_bytes;
  for (std::size_t b : out.part_bytes) out.bytes += b;
  return out;
}

MonitorReport check_trace(const TraceHeader& header, const std::vector<Event>& events) {
  Monitor m(header);
  for (std::size_t i = 0; i < events.size(); ++i) m.on_event(events[i], i + 2);
  m.finish();
  return {m.violations(), m.deviations()};
}

}  // namespace permitcheck::spec
