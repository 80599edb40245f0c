// Coverage of a property run (`permitcheck check --coverage`): for every ruleset decision
// point (spec::Ruleset's fields) and every rule of spec::all_rules(), in how many cases the
// run reached a situation the decision decides or the rule judges, and for each decision
// which way the situation went; plus the generators' distributions (batch sizes, ack_set
// densities, fault kinds, steps per case), tagged as RapidCheck classifications.
//
// Everything is read from the recorded trace events and the run's own inputs (the published
// entries, the configuration), never from the specification's or the implementation's code:
//
//   CaseCoverage c;                       // one per case, fed by the Harness
//   c.publish(entries);  c.observe(event, world);  ...  c.finish(steps);
//   Coverage total;  total.add(c);        // over the cases
//   total.add_distribution(rapidcheck_success.distribution);
//   std::cout << total.format(cases);     // tables, then what was never reached
#ifndef PERMITCHECK_PROPERTIES_COVERAGE_H_
#define PERMITCHECK_PROPERTIES_COVERAGE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "impl/wire.h"
#include "impl/world.h"
#include "rapidcheck.h"
#include "spec/events.h"

namespace permitcheck::properties {

// One case: which rules and decision points it reached, which ways, and its tags.
class CaseCoverage {
 public:
  explicit CaseCoverage(const impl::WorldConfig& config) : config_(config) {}

  void publish(const std::vector<impl::EntrySpec>& entries);
  void observe(const spec::Event& event, const impl::World& world);
  void finish(std::size_t steps);

  const std::set<std::string>& rules() const { return rules_; }
  const std::set<std::string>& decisions() const { return decisions_; }
  const std::set<std::string>& ways() const { return ways_; }  // "decision: way"
  const std::set<std::string>& tags() const { return tags_; }

  // Tags this case with RapidCheck (RC_CLASSIFY); call inside the property.
  void classify() const;

 private:
  void rule(const char* name) { rules_.insert(name); }
  void way(const char* decision, const char* how);

  // One handler per kind of event observe() counts; other events count nothing.
  void on(const spec::Send& e, const impl::World& world);
  void on(const spec::Flow& e, const impl::World& world);
  void on(const spec::Message& e, const impl::World& world);
  void on(const spec::CloseConsumer& e, const impl::World& world);
  void on(const spec::Disconnect& e, const impl::World& world);
  void on(const spec::IncOpen& e, const impl::World& world);
  void on(const spec::Recv& e, const impl::World& world);
  void on(const spec::Resolve& e, const impl::World& world);
  void on(const spec::Metadata& e, const impl::World& world);
  void on(const spec::Corrupt& e, const impl::World& world);
  void on(const spec::ProtocolError& e, const impl::World& world);
  void on(const spec::Claim& e, const impl::World& world);
  void on(const spec::Restore& e, const impl::World& world);
  void on(const spec::Skip& e, const impl::World& world);
  void on(const spec::Transfer& e, const impl::World& world);
  void on(const spec::DirectReturn& e, const impl::World& world);
  void on(const spec::Settle& e, const impl::World& world);
  void on(const spec::MsgReturn& e, const impl::World& world);
  void on(const spec::Drop& e, const impl::World& world);
  void on(const spec::Quiescent& e, const impl::World& world);
  void on(const spec::Extension& e, const impl::World& world);
  template <typename Other>
  void on(const Other& /*event*/, const impl::World& /*world*/) {}

  impl::WorldConfig config_;
  std::set<std::string> rules_, decisions_, ways_, tags_;
  // Trace context.
  std::map<std::uint64_t, std::uint64_t> inc_of_cmd_;      // cmd -> client inc
  std::map<std::uint64_t, spec::PermitSource> source_of_;  // cmd -> first resolve source
  std::map<std::uint64_t, int> claims_;                    // cmd -> hand-offs
  std::map<std::string, std::uint64_t> inc_of_msg_;        // msg -> client inc
  std::map<std::string, int> returns_of_msg_;
  std::map<std::uint64_t, std::uint64_t> current_;         // consumer -> client inc
  std::map<std::uint64_t, int> incs_of_consumer_;
  std::map<std::uint64_t, int> in_flight_;                 // client inc -> messages out
  std::map<std::uint64_t, std::int64_t> wire_available_;   // consumer -> granted - debited
  std::set<std::uint64_t> direct_cmds_, transfer_cmds_, absent_field_cmds_;
};

// The whole run.
class Coverage {
 public:
  void add(const CaseCoverage& c);
  void add_distribution(const rc::detail::Distribution& distribution);

  // Decision points and rules no case reached (M3 excepted: see kExcluded in coverage.cc).
  std::vector<std::string> unreached() const;
  std::string format(int cases) const;

  int cases() const { return cases_; }
  int rule_cases(const std::string& rule) const;
  int decision_cases(const std::string& decision) const;
  int way_cases(const std::string& way) const;

  // The decision points, with the ways each can go.
  static const std::vector<std::pair<std::string, std::vector<std::string>>>& decision_points();

 private:
  int cases_ = 0;
  std::map<std::string, int> rules_, decisions_, ways_, tags_, rc_tags_;
};

}  // namespace permitcheck::properties

#endif  // PERMITCHECK_PROPERTIES_COVERAGE_H_
