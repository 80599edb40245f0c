// SpecModel: the specification's accounting of a run, computed with the specification's own
// functions (finalize_permits, handle_command, PermitState, BrokerConsumer) from what the run
// was given (the stored payloads, the broker's Flow applications, the client's skip and
// hand-off decisions) and compared with the implementation's own counters after every step.
//
//   SpecModel model(spec::RulesetId::kRevD, config);
//   impl::World world(config, &model);              // the model observes broker facts
//   ... after each step:
//   for (; i < world.events().size(); ++i) model.on_event(world.events()[i], world);
//   std::vector<ModelMismatch> m;  model.compare(world, &m);   // empty when they agree
//
// Compared quantities (the "observable accounting"): the broker balance and unacked increases
// of every live incarnation (B4, B5, B9, B10), each dispatcher aggregate (B6), the permit
// accumulator of every consumer's current incarnation (N2, N3, N5), and what each command
// returned by itself and handed off (C1-C7, K1-K8, S1-S3). Under the legacy ruleset the
// accumulators are not compared (see compare()).
#ifndef PERMITCHECK_PROPERTIES_SPEC_MODEL_H_
#define PERMITCHECK_PROPERTIES_SPEC_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "impl/world.h"
#include "spec/broker_consumer.h"
#include "spec/events.h"
#include "spec/permit_state.h"
#include "spec/rule_id.h"

namespace permitcheck::properties {

// T as the rulebook defines it: the configured threshold, else Java's default
// (spec::default_threshold). Never WorldConfig::threshold(), which the implementation uses:
// a wrong default there must show as a disagreement, not be shared by the model.
std::int64_t rulebook_threshold(const impl::WorldConfig& config);

// The trace header the oracle checks a run with: Q as configured, T from the rulebook.
spec::TraceHeader rulebook_header(const impl::WorldConfig& config, spec::RulesetId rules);

struct ModelMismatch {
  spec::RuleId rule;  // the rule the disagreement is about
  std::string text;   // "broker b2 available: implementation -3, specification 1"
};

class SpecModel : public impl::BrokerObserver {
 public:
  SpecModel(spec::RulesetId rules, const impl::WorldConfig& config);

  void consumer_added(const std::string& inc, std::uint64_t consumer_id) override;
  void flow_applied(const std::string& inc, std::int64_t permits) override;
  void consumer_removed(const std::string& inc) override;

  // Applies the broker facts above where they happened among the recorded events (a fact
  // reported while `trace` held n events is applied before the model follows event n), so a
  // send is judged (B12) by the balances at its own moment, not at the end of the step.
  // Without it each fact is applied when reported. `trace` must outlive the model's use.
  void follow_trace(const std::vector<spec::Event>* trace) { trace_ = trace; }

  // Follows one recorded event. `world` tells what the broker stored for a command and what
  // the client counted as the command's own returns.
  void on_event(const spec::Event& event, const impl::World& world);

  // Appends every disagreement between the implementation and the model now.
  void compare(const impl::World& world, std::vector<ModelMismatch>* out);

 private:
  struct BrokerInc {
    spec::BrokerConsumer balance;
    std::int64_t unacked_total = 0;
    bool live = true;
  };
  struct ClientInc {
    spec::PermitState state;
    std::uint64_t consumer = 0;
    spec::Id cnx;
    // A zero-queue consumer grants per receive() (S7's ZeroQueueConsumerImpl), never from its
    // returns: they only add up (N7 still bounds the sum), no threshold swaps them.
    std::int64_t zero_queue_returned = 0;
  };
  // N7/N5: `n` units returned to `ci` (current); false when the accumulator overflows.
  bool credit_units(ClientInc& ci, std::int64_t n);
  struct PendingCommand {
    std::uint64_t inc = 0;
    spec::Id cnx;
    std::optional<std::uint64_t> message_permits;
    spec::AckSet ack_set;
    std::map<std::int64_t, int> fates;  // index -> spec::IndexFate
    std::map<std::string, std::int64_t> claim_index;
    std::set<std::string> handed_off;   // net of restores, as the implementation did it
    bool chunk_transfer = false;
    bool chunk_direct = false;
    bool protocol_error = false;
    std::multiset<int> corrupt_stages;  // spec::FailureStage of each `corrupt` recorded
  };

  // A broker fact (consumer_added, flow_applied, consumer_removed) and the number of events
  // recorded when it was reported.
  struct BrokerFact {
    enum class Kind { kAdded, kFlow, kRemoved } kind;
    std::string inc;
    std::int64_t permits = 0;
    std::size_t at = 0;
  };
  void report(BrokerFact fact);
  void apply(const BrokerFact& fact);
  void apply_facts();  // those reported before the next event the model follows

  void complete(std::uint64_t cmd, PendingCommand& pending, const impl::World& world);
  void credit(std::uint64_t inc, std::int64_t n);
  void end_incs_on(const spec::Id& cnx);
  ClientInc* inc(std::uint64_t id);

  const spec::Ruleset& rules_;
  impl::WorldConfig config_;
  std::map<std::string, BrokerInc> broker_;
  std::map<std::uint64_t, ClientInc> incs_;
  std::map<std::uint64_t, std::uint64_t> current_;  // consumer -> inc
  std::map<std::uint64_t, PendingCommand> pending_;
  std::map<std::string, std::uint64_t> message_inc_;  // handed-off message -> incarnation
  bool last_event_was_send_ = false;  // a send continues the dispatch round (B12)
  std::vector<ModelMismatch> command_mismatches_;     // found while following events
  spec::Id last_cnx_;
  const std::vector<spec::Event>* trace_ = nullptr;
  std::vector<BrokerFact> facts_;  // reported, not yet applied (in order)
  std::size_t events_seen_ = 0;
};

}  // namespace permitcheck::properties

#endif  // PERMITCHECK_PROPERTIES_SPEC_MODEL_H_
