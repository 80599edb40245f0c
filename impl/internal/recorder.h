// What the implementation records as it runs: client accounting events, wire events seen from
// the client's side of each connection, and the broker's `send` events (trace-format.md).
#ifndef PERMITCHECK_IMPL_INTERNAL_RECORDER_H_
#define PERMITCHECK_IMPL_INTERNAL_RECORDER_H_

#include <vector>

#include "spec/events.h"

namespace permitcheck::impl::internal {

class Recorder {
 public:
  void record(spec::Event event) { events_.push_back(std::move(event)); }
  const std::vector<spec::Event>& events() const { return events_; }

 private:
  std::vector<spec::Event> events_;
};

}  // namespace permitcheck::impl::internal

#endif  // PERMITCHECK_IMPL_INTERNAL_RECORDER_H_
