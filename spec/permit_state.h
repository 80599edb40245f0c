// PermitState: the client's permit state of one consumer incarnation (rules N1-N7, E5).
//
// Its identity is the incarnation token (N1): a return carries the state it was retained
// from and only updates that state while it is current (N3). The accumulator collects returns
// until it reaches T, then is swapped to 0 and a Flow is due (N5). Replacement (reconnect or
// CommandCloseConsumer, N2) ends the state; nothing is copied to its successor.
//
//   PermitState s(/*q=*/4, /*t=*/2);
//   int64_t initial = *s.enable_flow();            // 4: the initial grant (N4)
//   std::optional<int64_t> flow = *s.credit(2);    // 2: threshold reached, Flow of 2 is due
//   s.end();  s.credit(1);                         // FailedPrecondition: dropped (N3)
#ifndef PERMITCHECK_SPEC_PERMIT_STATE_H_
#define PERMITCHECK_SPEC_PERMIT_STATE_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace permitcheck::spec {

// Java's default Flow threshold: Q / 2 by integer division, at least 1.
std::int64_t default_threshold(std::int64_t q);

class PermitState {
 public:
  // REQUIRES: q >= 0, t >= 1.
  PermitState(std::int64_t q, std::int64_t t);

  // N4 / decision 5: Subscribe succeeded. Returns the initial grant Q, due as a Flow now.
  // FailedPrecondition if already enabled or ended.
  absl::StatusOr<std::int64_t> enable_flow();

  // N3/N5/N7: n returned units. Returns the Flow now due (accumulator swapped to 0) when the
  // accumulator reaches T, else nullopt. FailedPrecondition when the state has ended (the
  // units are dropped, M1); OutOfRange when the accumulator would exceed 2^31-1 (N7: protocol
  // error on the source connection). REQUIRES: n >= 0.
  absl::StatusOr<std::optional<std::int64_t>> credit(std::int64_t n);

  // N5: a queued Flow task is about to write; true when this state is still current.
  bool may_write_flow() const { return current_ && flow_enabled_; }

  // N2 / decision 4: the incarnation ended. Later credits are dropped.
  void end() { current_ = false; }

  std::int64_t q() const { return q_; }
  std::int64_t t() const { return t_; }
  std::int64_t accumulator() const { return accumulator_; }
  bool current() const { return current_; }
  bool flow_enabled() const { return flow_enabled_; }

 private:
  std::int64_t q_;
  std::int64_t t_;
  std::int64_t accumulator_ = 0;
  bool current_ = true;
  bool flow_enabled_ = false;
};

}  // namespace permitcheck::spec

#endif  // PERMITCHECK_SPEC_PERMIT_STATE_H_
