// The incarnation model of check 3 (E3, N2-N6), symbolic for bounded model checking and
// concrete for turning a model into a trace.
//
// One pooled connection carries consumer 0 and consumer 1. Consumer 0 has up to three
// incarnations (slots 0-2: the first and two replacements, by CommandCloseConsumer on the same
// connection or by reconnecting on a new one); consumer 1 has two (slots 3-4, replaced only by
// the reconnect). Each step is one action:
//   subscribe_ok(s)  the incarnation's Subscribe succeeded: Flow-enabled, initial grant Q (N4)
//   deliver(s)       a command of P = 1 is handed off to a message that retains s (M1)
//   return(s)        a message of s returns its unit: to s while current, else dropped (N3),
//                    or to the consumer's current incarnation (legacy, ReturnScope)
//   run_task(s)      s's queued Flow tasks run on the event loop: written after the identity
//                    re-check (N5) or unconditionally (legacy, FlowRecheck)
//   close_consumer   CommandCloseConsumer: consumer 0's current incarnation is replaced on the
//                    same connection (N2)
//   reconnect        the connection is lost: every incarnation on it ends; both consumers
//                    resubscribe on a new connection (N2)
// The returns, the threshold swap (N5) and the Flow tasks queue are the PermitState of
// spec/permit_state.h; the ruleset's return_scope and flow_recheck pick the formulas.
#ifndef PERMITCHECK_SOLVER_INTERNAL_ISOLATION_H_
#define PERMITCHECK_SOLVER_INTERNAL_ISOLATION_H_

#include <z3++.h>

#include <cstdint>
#include <string>
#include <vector>

#include "spec/events.h"
#include "spec/ruleset.h"

namespace permitcheck::solver::internal {

inline constexpr int kIsoSlots = 5;
inline constexpr int kIsoCounterBits = 8;
inline constexpr int kIsoMaxQ = 8;

inline int iso_consumer(int slot) { return slot < 3 ? 0 : 1; }

enum class IsoAction : unsigned {
  kSubscribeOk,
  kDeliver,
  kReturn,
  kRunTask,
  kCloseConsumer,
  kReconnect,
};
inline constexpr unsigned kIsoActions = 6;

struct IsoStep {
  IsoAction action = IsoAction::kDeliver;
  int slot = 0;  // subscribe_ok, deliver, return, run_task
};

std::string iso_step_name(const IsoStep& step);  // "return(inc 1)", "close_consumer"

// The state after some steps.
struct IsoState {
  std::vector<z3::expr> open, current, enabled, ended_by_close;  // per slot
  std::vector<z3::expr> cnx;                                      // per slot, 1 bit
  std::vector<z3::expr> acc, held, pending;                       // per slot, counters
  std::vector<z3::expr> alive;                                    // per connection (2)
};

struct IsoStepVars {
  z3::expr action;  // 3 bits
  z3::expr slot;    // 3 bits
};

// Violations a step can make, each true when the step makes it.
struct IsoBad {
  z3::expr cross_after_close;      // E3: a unit of an incarnation replaced by CloseConsumer
                                   //     credited to another incarnation (L7)
  z3::expr cross_after_reconnect;  // E3: ... replaced by reconnect (L6)
  z3::expr old_flow;               // N6: an old Flow written after the replacement's Subscribe
  z3::expr flow_not_enabled;       // N4: a Flow written for an incarnation not Flow-enabled
  z3::expr cross_consumer;         // E3: a unit credited to another consumer id
  z3::expr any() const;
};

// What a step did, for the vacuity checks.
struct IsoFacts {
  z3::expr credited;      // a returned unit was credited to some incarnation
  z3::expr flow_written;  // a Flow was written (an initial grant or a task)
};

// The unrolled model: parameters Q and T, and states 0..depth with the steps between them.
class IsoModel {
 public:
  IsoModel(z3::context& ctx, const spec::Ruleset& rules);

  // Adds step depth()+1: its variables, guard and transition, and the violations it makes.
  void extend();
  int depth() const { return static_cast<int>(steps_.size()); }

  // Constraints of the initial state and of every step so far (assert once; extend() returns
  // the new step's constraints through pending_constraints()).
  z3::expr initial() const;
  z3::expr take_constraints();

  const IsoState& state(int t) const { return states_[static_cast<std::size_t>(t)]; }
  const IsoStepVars& step(int t) const { return steps_[static_cast<std::size_t>(t - 1)]; }
  const IsoBad& bad(int t) const { return bad_[static_cast<std::size_t>(t - 1)]; }
  const IsoFacts& facts(int t) const { return facts_[static_cast<std::size_t>(t - 1)]; }
  // Facts about step t for vacuity: what the step did.
  z3::expr step_is(int t, IsoAction action) const;
  z3::expr returned_old_unit(int t) const;  // a return of an incarnation no longer current
  z3::expr ran_old_task(int t) const;       // Flow tasks of a replaced incarnation ran
  const z3::expr& q() const { return q_; }
  const z3::expr& t() const { return t_; }

  std::vector<IsoStep> steps_from(const z3::model& m, int depth) const;

 private:
  z3::context& ctx_;
  const spec::Ruleset& rules_;
  z3::expr q_, t_;
  std::vector<IsoState> states_;
  std::vector<IsoStepVars> steps_;
  std::vector<IsoBad> bad_;
  std::vector<IsoFacts> facts_;
  std::vector<z3::expr> pending_;
};

// The concrete run of a sequence of steps under `rules`, as client accounting events
// (PermitState for the accumulators and the threshold, handle_command for each delivery).
struct IsoRun {
  std::vector<spec::Event> events;
  std::vector<std::int64_t> acc;      // per slot, as PermitState holds it
  std::vector<std::int64_t> pending;  // per slot, units in queued Flow tasks
  std::vector<std::int64_t> held;     // per slot, messages not yet returned
  bool valid = true;                  // every step's guard held
};
IsoRun run_iso(const spec::Ruleset& rules, std::int64_t q, std::int64_t t,
               const std::vector<IsoStep>& steps);

}  // namespace permitcheck::solver::internal

#endif  // PERMITCHECK_SOLVER_INTERNAL_ISOLATION_H_
