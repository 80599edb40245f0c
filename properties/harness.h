// Harness: the system under test of the model-based properties. It owns one implementation
// World, the specification's Monitor (the oracle) and a SpecModel, runs one action per step,
// and after every step feeds the new trace events to both and collects what they report.
//
//   Harness h(config, Goal::conform());
//   h.start();
//   h.publish({entry});          // one step; RC_FAILs when the goal says so
//   h.finish();                  // final quiescence: E5/E6, then the end-of-trace checks
//
// A Problem is one thing found: a monitor violation or known deviation (with its rule ID), a
// disagreement with the SpecModel, or a prefetch-gauge leak (M2). Problems that follow from an
// injected wire fault or from a known deviation are marked `explained`. Each is also matched
// against the legacy signatures L1-L11 (rulebook section 10). The checks that judge the
// implementation by what the harness itself knows of the run (injected faults, chunk contexts,
// redelivery counts, an idle world) are defined in harness_checks.cc.
#ifndef PERMITCHECK_PROPERTIES_HARNESS_H_
#define PERMITCHECK_PROPERTIES_HARNESS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "impl/world.h"
#include "properties/coverage.h"
#include "properties/spec_model.h"
#include "spec/driver_facts.h"
#include "spec/monitor.h"

namespace permitcheck::properties {

struct Problem {
  std::string source;  // "monitor", "model", "quiesce"
  std::optional<spec::RuleId> rule;
  bool deviation = false;   // a known deviation (X1-X6): never a failure
  bool explained = false;   // follows from an injected fault or an earlier known deviation
  std::string text;
  std::size_t step = 0;     // 0: set-up; steps + 1: the final quiescence
  std::optional<std::uint64_t> line;  // trace line of the exposing event (monitor findings)
  // "L1".."L11" when it has that legacy bug's signature (legacy implementation), "F1".."F5"
  // when it has that review finding's (an implementation of revision A-D; rulebook 11).
  std::optional<std::string> legacy;
};

std::string format_problem(const Problem& p);

// What makes a run fail.
struct Goal {
  enum class Kind { kConform, kFindLegacy, kNever };
  Kind kind = Kind::kConform;
  std::string legacy_id;  // for kFindLegacy: "L1".."L11"

  static Goal conform() { return {}; }
  static Goal find(std::string id) { return {Kind::kFindLegacy, std::move(id)}; }
  static Goal never() { return {Kind::kNever, {}}; }
  // Whether `p` fails a run with this goal.
  bool fails(const Problem& p) const;
};

// A failing run, kept for the counterexample report and trace file.
struct CaseRecord {
  impl::WorldConfig config;
  std::vector<std::string> steps;  // the actions, shown
  Problem problem;                 // the one that failed the run
  spec::TraceHeader header;
  std::vector<spec::Event> events;
};

class Harness {
 public:
  friend class HarnessTestPeer;  // tests feed hand-built trace events to the trace checks

  // `rules`: what the monitor and the model check against. `last_failure`, if given,
  // receives the run when it fails (the last one written is the minimal counterexample).
  Harness(const impl::WorldConfig& config, Goal goal,
          spec::RulesetId rules = spec::RulesetId::kRevD,
          std::optional<CaseRecord>* last_failure = nullptr);
  ~Harness();

  void start();  // set-up: subscribe, initial grants (step 0)
  // Counts what this case reaches (check --coverage); must outlive the harness's steps.
  void set_coverage(CaseCoverage* coverage) { coverage_ = coverage; }

  // ---- Steps ----
  void publish(const std::vector<impl::EntrySpec>& entries, std::string shown);
  void step(std::uint64_t choice, std::string shown);
  void run_all(std::string shown);
  void consume(int consumer, int n, std::string shown);
  void receive_async(int consumer, std::string shown);
  void redeliver(int consumer, std::string shown);
  // The broker closes `closed` at once, then `consumer` redelivers: one step.
  void redeliver_after_close(int closed, int consumer, std::string shown);
  void close_consumer(int consumer, bool graceful, std::string shown);
  void drop_connection(int slot, std::string shown);
  void fail_next_subscribe(std::string shown);
  void corrupt_next_field(std::uint64_t value, std::string shown);
  void quiesce(std::string shown);

  // Final quiescence and end-of-trace checks.
  void finish();

  const impl::World& world() const { return *world_; }
  const std::vector<Problem>& problems() const { return problems_; }
  std::size_t steps() const { return steps_.size(); }
  // Problems that fail a conformance run.
  std::vector<Problem> failures() const;

 private:
  void after_step(std::string shown);
  // Settles the world, then declares quiescent every consumer the trace shows subscribed,
  // Flow-enabled and holding nothing back; a consumer whose last incarnation ended with no
  // replacement (or never became Flow-enabled) is a stall (E6). False if it did not settle.
  bool quiesce_from_trace();
  // B13 (E6) on an idle world: backlog while a consumer (and the aggregate) has permits, and no
  // key held back, means nothing triggered the read that should have served it.
  void check_dispatch_progress();
  // E6 at quiescence: no stored entry stays pending at a live broker consumer once its client
  // has consumed and acknowledged everything (unless the run left one unacknowledged on purpose).
  void check_drained();
  // The step a problem found now belongs to: the last one, or the final quiescence after it.
  std::size_t current_step() const;
  void follow_consumers(const spec::Event& e);
  // S2 against X4: follows `inc`'s chunk contexts through chunk command `cmd`, which settled
  // returning `settled`; an in-order chunk that took the X4 branch is reported.
  void follow_chunk(std::uint64_t cmd, const impl::Payload& chunk, std::uint64_t inc, std::int64_t settled);
  void forget_chunks(int consumer);  // a redelivery clears the consumer's chunk contexts
  // S5: `cmd` was skipped as a dead letter (or handed off) at the redelivery count the
  // harness counted; reported when that count is not (or is) past maxRedeliverCount.
  void check_dead_letter(std::uint64_t cmd, bool dead_lettered, std::size_t step);
  // K2: a restored unit (message `msg` of command `cmd`) whose hand-off the run did not make
  // fail is reported.
  void check_restore(std::uint64_t cmd, const spec::Id& msg, std::size_t step);
  void collect();
  void add(Problem p);
  // A verdict of spec/driver_verdict.h, when there is one, as the harness's quiescence problem.
  void add_quiesce(std::optional<spec::Finding> f, std::size_t step);
  // What the harness knows about finding `f`'s event `e` beside the trace (spec/driver_facts.h),
  // for the spec/ decisions of its legacy row, review finding and excuse.
  spec::DriverFacts facts_at(const spec::Finding& f, const spec::Event& e) const;
  // The legacy row or review finding of `f` (spec/bug_signature.h); nullopt without its event.
  std::optional<std::string> signature(const spec::Finding& f, bool deviation) const;
  const spec::Event* event_at(std::uint64_t line) const;
  std::optional<std::uint64_t> consumer_of_event(const spec::Event& e) const;

  impl::WorldConfig config_;
  Goal goal_;
  spec::RulesetId rules_;
  std::optional<CaseRecord>* last_failure_;
  std::unique_ptr<SpecModel> model_;
  std::unique_ptr<impl::World> world_;
  std::unique_ptr<spec::Monitor> monitor_;
  CaseCoverage* coverage_ = nullptr;
  std::size_t next_event_ = 0;
  std::size_t violations_seen_ = 0;
  std::size_t deviations_seen_ = 0;
  std::vector<std::string> steps_;
  std::vector<Problem> problems_;
  bool finished_ = false;
  bool model_diverged_ = false;
  std::set<int> gauge_reported_;

  // Context for classifying findings.
  std::map<std::uint64_t, spec::FailureStage> stage_of_;       // cmd -> corrupt stage
  std::set<std::uint64_t> before_start_;                       // cmds with such a skip
  std::map<std::uint64_t, std::uint64_t> consumer_of_cmd_;     // cmd -> consumer
  std::set<std::uint64_t> deviated_consumers_;                 // X1/X2/X5/X6 seen on them
  std::set<std::uint64_t> corrupted_consumers_;                // got an injected wire value
  std::set<std::uint64_t> direct_cmds_;                        // cmds with a direct return
  std::map<std::string, std::uint64_t> consumer_of_inc_;       // client inc -> consumer
  std::map<std::string, std::uint64_t> cmd_of_msg_;            // claimed message -> cmd
  std::map<std::uint64_t, std::string> cnx_of_cmd_;            // cmd -> connection it came on

  // Each consumer's latest incarnation as the trace shows it (not the implementation's flags).
  struct TraceConsumer {
    std::uint64_t inc = 0;
    spec::Id cnx;
    bool live = false;
    bool flow_enabled = false;
    bool holding = false;  // X3 (crypto FAIL) or X4 (chunk failure branch) holds units
    bool closed = false;   // the client closed the consumer itself (S7): it stays closed
    bool flowed = false;   // a Flow was written for this incarnation (its first: the grant of Q)
  };
  std::map<std::uint64_t, TraceConsumer> trace_consumers_;
  std::map<std::uint64_t, std::uint64_t> inc_of_cmd_;          // cmd -> client inc (recv)
  std::set<std::uint64_t> cmds_with_progress_;                 // claims, direct returns, corrupt, skips
  // B13 from the trace: entries published with something to deliver, and those a `send`
  // finalized at least once (by the stored payload the command carries).
  std::size_t deliverable_published_ = 0;
  // C5 from the trace: commands judged inconsistent whose acknowledgement with a validation
  // error has not been written yet (cmd -> connection); the connection's end forgives them.
  std::map<std::uint64_t, std::string> unacked_inconsistent_;
  std::map<std::uint64_t, std::string> cnx_of_inc_;  // client inc -> connection (inc_open)
  // B7 from the trace: commands a send finalized whose `message` has not reached the client
  // yet; a connection's end forgives them all (its frames are dropped).
  std::set<std::uint64_t> unwritten_cmds_;
  // K5 from the trace: received commands without their terminal transition yet (a protocol
  // error ends the one being handled without one).
  std::set<std::uint64_t> unsettled_cmds_;
  // Each stored entry (by the payload its commands carry) -> how many commands a send
  // finalized for it so far; a command's redelivery count is how many came before it (S5).
  std::map<const impl::Payload*, int> sends_of_entry_;
  std::map<std::uint64_t, int> redeliveries_of_cmd_;
  std::optional<spec::Claim> last_claim_;  // K2: a restore names the claim just before it
  // E6 from the trace: the client left a message unacknowledged on purpose (a failed hand-off
  // waits for a redelivery; a skip before startMessageId is never acknowledged), so entries
  // may stay pending at a live consumer.
  bool left_unacknowledged_ = false;
  // S2 from what the run was given: each client incarnation's chunk contexts, message uuid ->
  // the chunk id it expects next.
  std::map<std::uint64_t, std::map<std::int64_t, int>> chunk_next_;
};

}  // namespace permitcheck::properties

#endif  // PERMITCHECK_PROPERTIES_HARNESS_H_
