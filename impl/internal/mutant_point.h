// PC_MUTANT(id, mutated, original): a mutation point. In the test-only mutant build it
// evaluates `mutated` when mutant `id` is active (read from the member `mutant_` in scope) and
// `original` otherwise; in the default build it is exactly `original`, and `mutated` is never
// compiled.
#ifndef PERMITCHECK_IMPL_INTERNAL_MUTANT_POINT_H_
#define PERMITCHECK_IMPL_INTERNAL_MUTANT_POINT_H_

#include "impl/mutant.h"

#ifdef PERMITCHECK_MUTANTS
#define PC_MUTANT(id, mutated, original) \
  ((mutant_) == ::permitcheck::impl::Mutant::id ? (mutated) : (original))
#else
#define PC_MUTANT(id, mutated, original) (original)
#endif

#endif  // PERMITCHECK_IMPL_INTERNAL_MUTANT_POINT_H_
