// The flow-control loop of check 4 (E5, E6) as a transition system over unbounded runs, for
// k-induction, and its concrete run for turning a path into a trace.
//
// State of the current incarnation: broker available (signed: whole-entry dispatch may overdraw
// it, B9), units in commands on the wire, units held by messages, the client accumulator, units
// in queued Flow tasks and in Flows on the wire; plus what replaced incarnations still hold
// (messages and Flow tasks). Q and 1 <= T <= Q are parameters. Steps:
//   dispatch(n)       the broker sends an entry of n <= bmax units while available > 0
//   receive           the client handles one command (command_encoding.h, any B <= bmax,
//                     honest wire: message_permits = the broker's P); its messages are held,
//                     its direct returns and terminal transition credit the accumulator
//   return            a held message returns its unit
//   flow_task(n)      queued Flow tasks write n units
//   broker_flow(n)    the broker receives a Flow of n units (B10)
//   replace_close     CommandCloseConsumer: a new incarnation on the same connection, Q granted
//   replace_reconnect the connection is lost; a new incarnation on a new one, Q granted
//   old_return        a message of a replaced incarnation returns (ReturnScope decides where)
//   old_flow_task(n)  a replaced incarnation's queued Flow task runs (FlowRecheck decides)
// The inductive invariant: available + wire + held + accumulator + tasks + Flows on the wire
// = Q, with 0 <= accumulator < T, the other parts >= 0 and available >= 1 - bmax (B9). Safety (E5/E6): when nothing is in
// flight, available + accumulator = Q and available >= 1.
#ifndef PERMITCHECK_SOLVER_INTERNAL_INDUCTION_H_
#define PERMITCHECK_SOLVER_INTERNAL_INDUCTION_H_

#include <z3++.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "solver/internal/command_encoding.h"
#include "solver/internal/summary.h"
#include "spec/client_command.h"
#include "spec/events.h"
#include "spec/ruleset.h"

namespace permitcheck::solver::internal {


enum class IndAction : unsigned {
  kDispatch,
  kReceive,
  kReturn,
  kFlowTask,
  kBrokerFlow,
  kReplaceClose,
  kReplaceReconnect,
  kOldReturn,
  kOldFlowTask,
};
inline constexpr unsigned kIndActions = 9;

// The counters are mathematical integers (so runs are unbounded and Q is any positive
// number); only the command inside a receive is bit-vectors, converted at its outputs.
struct IndState {
  z3::expr avail, wire, held, acc, tasks, wflow;  // current incarnation
  z3::expr old_held, old_tasks;                    // replaced incarnations
};

struct IndStep {
  z3::expr action;     // 4 bits
  z3::expr n;          // integer
  CommandVars cmd;     // receive
  CommandOutcome out;  // the command under the ruleset
  std::optional<SummaryVars> sum;         // receive, in a system of command summaries
  std::optional<SummaryOutcome> sum_out;  // the summary under the ruleset
};

// The system under one ruleset. Q and T are shared by every state of a query.
class IndSystem {
 public:
  // `summaries`: a receive handles a command summary (summary.h: every B and P up to 2^31-1)
  // instead of a bit-level command of B <= bmax; a dispatch then sends up to 2^31-1 units.
  IndSystem(z3::context& ctx, const spec::Ruleset& rules, unsigned bmax, bool summaries = false);

  IndState fresh_state(const std::string& name);
  // A new step from `s`: its variables, and through *constraints its guard and the next state.
  IndStep fresh_step(const std::string& name);
  IndState next(const IndState& s, const IndStep& step, z3::expr* guard);

  z3::expr params() const;  // Q >= 1, 1 <= T <= Q
  z3::expr init(const IndState& s) const;
  z3::expr conservation(const IndState& s) const;  // the equation alone
  z3::expr invariant(const IndState& s) const;     // the inductive invariant
  z3::expr invariant_without_threshold(const IndState& s) const;
  z3::expr quiescent(const IndState& s) const;
  z3::expr safety(const IndState& s) const;        // E5 and E6 at quiescence
  z3::expr action_is(const IndStep& step, IndAction a) const;

  const z3::expr& q() const { return q_; }
  const z3::expr& t() const { return t_; }
  unsigned bmax() const { return bmax_; }

 private:
  // PermitState::credit of n units: the accumulator and the queued tasks after it.
  void credit(z3::expr& acc, z3::expr& tasks, const z3::expr& n) const;

  z3::context& ctx_;
  const spec::Ruleset& rules_;
  unsigned bmax_;
  bool summaries_;
  z3::expr q_, t_;
};

// A path of `depth` steps from an initial state: its states, its steps, and the constraints
// (parameters, initial state, every step's guard).
struct IndPath {
  std::vector<IndState> states;
  std::vector<IndStep> steps;
  z3::expr constraints;
};
IndPath unroll_from_init(IndSystem& sys, int depth);

// One concrete step, read from a model.
struct IndConcreteStep {
  IndAction action = IndAction::kDispatch;
  std::int64_t n = 0;
  spec::CommandSituation command;  // receive
};
std::string ind_step_name(const IndConcreteStep& step);

// The concrete run: client accounting events (handle_command and PermitState), drained to
// quiescence at the end and closed with a `quiescent` event.
struct IndRun {
  std::vector<spec::Event> events;
  std::int64_t acc = 0;        // the current PermitState's accumulator before the drain
  std::int64_t held = 0;       // messages of the current incarnation not yet returned
  std::int64_t tasks = 0;      // units in queued Flow tasks of the current incarnation
  bool valid = true;
};
IndRun run_ind(const spec::Ruleset& rules, std::int64_t q, std::int64_t t,
               const std::vector<IndConcreteStep>& steps, bool drain);

}  // namespace permitcheck::solver::internal

#endif  // PERMITCHECK_SOLVER_INTERNAL_INDUCTION_H_
