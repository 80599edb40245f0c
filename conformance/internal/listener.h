// The conformance brokers' listening socket: 127.0.0.1 on an ephemeral port, reuse_address
// set. Shared by ConformanceBroker::start and ThroughputBroker::start.
//
//   asio::ip::tcp::acceptor acceptor(io);
//   absl::StatusOr<std::uint16_t> port = internal::listen_loopback(acceptor);
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_LISTENER_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_LISTENER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "asio.hpp"

namespace permitcheck::conformance::internal {

// Opens, binds and listens `acceptor` on 127.0.0.1:0; the port it got. Unavailable, with the
// system's reason, when any step fails. REQUIRES: `acceptor` is not open.
absl::StatusOr<std::uint16_t> listen_loopback(asio::ip::tcp::acceptor& acceptor);

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_LISTENER_H_
