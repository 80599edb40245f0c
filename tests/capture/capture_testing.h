// The capture generator of the capture tests: capgen/capture_gen.h (shared with the
// benchmarks), under the name the tests use, permitcheck::capture::testing.
//
//   Conversation c(endpoint4(1, 40000), endpoint4(2, 6650));
//   c.handshake();
//   write_pcap(path, LinkKind::kEthernet, c.packets());
#ifndef PERMITCHECK_TESTS_CAPTURE_CAPTURE_TESTING_H_
#define PERMITCHECK_TESTS_CAPTURE_CAPTURE_TESTING_H_

#include "capgen/capture_gen.h"

namespace permitcheck::capture::testing {
using namespace ::permitcheck::capgen;
}  // namespace permitcheck::capture::testing

#endif  // PERMITCHECK_TESTS_CAPTURE_CAPTURE_TESTING_H_
