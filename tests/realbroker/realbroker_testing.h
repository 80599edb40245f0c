// Helpers of the tests that start a real Pulsar standalone (tests/realbroker/,
// tests/realbroker_clients/): where the source tree is, and whether a loopback port still has
// a listener (what a stopped broker or tap must not leave).
#ifndef PERMITCHECK_TESTS_REALBROKER_REALBROKER_TESTING_H_
#define PERMITCHECK_TESTS_REALBROKER_REALBROKER_TESTING_H_

#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>

#include "asio.hpp"

namespace permitcheck::realbroker::testing {

// The source tree (PERMITCHECK_SOURCE_DIR, set by ctest), or the working directory.
inline std::string source_root() {
  const char* dir = std::getenv("PERMITCHECK_SOURCE_DIR");
  return dir ? dir : ".";
}

// Whether something accepts a TCP connection on 127.0.0.1:port.
inline bool port_listening(std::uint16_t port) {
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  std::error_code ec;
  s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  return !ec;
}

}  // namespace permitcheck::realbroker::testing

#endif  // PERMITCHECK_TESTS_REALBROKER_REALBROKER_TESTING_H_
