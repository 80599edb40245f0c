#include "conformance/internal/listener.h"

#include "absl/strings/str_cat.h"

namespace permitcheck::conformance::internal {

using asio::ip::tcp;

absl::StatusOr<std::uint16_t> listen_loopback(tcp::acceptor& acceptor) {
  asio::error_code ec;
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot listen on 127.0.0.1: ", ec.message()));
  return acceptor.local_endpoint().port();
}

}  // namespace permitcheck::conformance::internal
