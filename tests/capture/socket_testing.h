// The loopback sockets of the tap's tests: capgen/loopback.h (shared with the benchmarks),
// under the name the tests use, permitcheck::capture::testing.
//
//   std::uint16_t port = 0;
//   int listener = listen_loopback(&port);
//   int fd = connect_loopback(port);
#ifndef PERMITCHECK_TESTS_CAPTURE_SOCKET_TESTING_H_
#define PERMITCHECK_TESTS_CAPTURE_SOCKET_TESTING_H_

#include "capgen/loopback.h"

namespace permitcheck::capture::testing {
using namespace ::permitcheck::capgen;
}  // namespace permitcheck::capture::testing

#endif  // PERMITCHECK_TESTS_CAPTURE_SOCKET_TESTING_H_
