// The steps of a run as rc::state commands over (ModelState, Harness). Every command is total
// (it never has a precondition), so shrinking can drop any step and the rest still runs.
//
//   const auto steps = *rc::state::gen::commands(ModelState::of(config), gen_command);
//   rc::state::runAll(steps, ModelState::of(config), harness);
//
// The mix (gen_command): publishes and scheduler steps most often, the application's
// consumption next, and faults (consumer close, connection loss, subscribe failure, corrupted
// wire values) and races (listener hand-off, redelivery) less often.
#ifndef PERMITCHECK_PROPERTIES_COMMANDS_H_
#define PERMITCHECK_PROPERTIES_COMMANDS_H_

#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "properties/generators.h"
#include "properties/harness.h"
#include "rapidcheck/state.h"

namespace permitcheck::properties {

using StepCommand = rc::state::Command<ModelState, Harness>;
using StepPtr = std::shared_ptr<const StepCommand>;

// One step, drawn for the current model state.
rc::Gen<StepPtr> gen_command(const ModelState& state);

// The shown form of a step (what a counterexample lists).
std::string show_step(const StepCommand& step);

}  // namespace permitcheck::properties

#endif  // PERMITCHECK_PROPERTIES_COMMANDS_H_
