// validate_all: validates many inputs (traces or captures) on several threads, one input per
// thread at a time, and hands each verdict back on the calling thread in input order, so that
// reports and messages read the same whatever the number of jobs.
//
//   std::vector<FileResult> results = validate_all(paths.size(), /*jobs=*/4,
//       [&](std::size_t i) { return validate_path(paths[i], std::cin, options); },
//       [&](std::size_t i, const FileResult& r) { print_errors(i, r); });   // i = 0, 1, 2, ...
//
// Guarantees: at most `jobs` inputs are in flight (memory: `jobs` times one input's bound);
// `done` is called exactly once per input, on the calling thread, in increasing index order,
// as soon as that input and every one before it are finished; the results are in input order.
// An exception escaping `validate_one` becomes that input's error. Without a thread to spare
// (jobs <= 1, one input, or no thread can be started) everything runs on the calling thread.
#ifndef PERMITCHECK_VALIDATE_PARALLEL_H_
#define PERMITCHECK_VALIDATE_PARALLEL_H_

#include <cstddef>
#include <functional>
#include <vector>

#include "validate/validate.h"

namespace permitcheck::validate {

// The default number of jobs: the cores this process may use (at least 1).
int default_jobs();

std::vector<FileResult> validate_all(
    std::size_t count, int jobs, const std::function<FileResult(std::size_t)>& validate_one,
    const std::function<void(std::size_t, const FileResult&)>& done);

}  // namespace permitcheck::validate

#endif  // PERMITCHECK_VALIDATE_PARALLEL_H_
