#include "spec/permit_state.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spec/finalize.h"
#include "spec/plain_text.h"

namespace permitcheck::spec {

std::int64_t default_threshold(std::int64_t q) { return std::max<std::int64_t>(1, q / 2); }

PermitState::PermitState(std::int64_t q, std::int64_t t) : q_(q), t_(t) {}

absl::StatusOr<std::int64_t> PermitState::enable_flow() {
  if (!current_) {
    return absl::FailedPreconditionError("N4: enable_flow on an ended permit state");
  }
  if (flow_enabled_) {
    return absl::FailedPreconditionError("N4: enable_flow twice (the initial grant is once)");
  }
  flow_enabled_ = true;
  return q_;  // decision 5: the initial grant Q
}

absl::StatusOr<std::optional<std::int64_t>> PermitState::credit(std::int64_t n) {
  if (!current_) {
    return absl::FailedPreconditionError(
        absl::StrCat("N3: ", count_noun(n, "permit"), " for an ended permit state: dropped"));
  }
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("N3: negative credit ", n));
  if (accumulator_ > kMaxPermits - n) {  // N7: checked addition
    return absl::OutOfRangeError(absl::StrCat("N7: accumulator ", accumulator_, " + ", n,
                                              " overflows 2^31-1 = ", kMaxPermits));
  }
  accumulator_ += n;
  if (accumulator_ < t_) return std::optional<std::int64_t>();
  const std::int64_t flow = std::exchange(accumulator_, 0);  // N5: swap to 0
  return std::optional<std::int64_t>(flow);
}

}  // namespace permitcheck::spec
