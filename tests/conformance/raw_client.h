// A client of the conformance brokers over a raw socket, for their protocol tests
// (tests/conformance/broker_test.cc, throughput_broker_test.cc): whole commands sent and
// received on a blocking loopback socket whose reads give up after 5 s, so a silent broker
// fails the test instead of hanging it.
//
//   RawClient client(broker.port());
//   ASSERT_TRUE(client.connected());
//   ASSERT_TRUE(client.send(connect));
//   std::optional<wire::BaseCommand> in = client.receive();  // nullopt: timeout or close
#ifndef PERMITCHECK_TESTS_CONFORMANCE_RAW_CLIENT_H_
#define PERMITCHECK_TESTS_CONFORMANCE_RAW_CLIENT_H_

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/frame.h"
#include "tests/capture/socket_testing.h"

namespace permitcheck::conformance::testing {

class RawClient {
 public:
  // Connects to 127.0.0.1:port (connected() says whether it could).
  explicit RawClient(std::uint16_t port) : fd_(capture::testing::connect_loopback(port)) {
    timeval tv{.tv_sec = 5, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return fd_ >= 0; }

  // Whether the whole frame of `cmd` was written.
  bool send(const wire::BaseCommand& cmd) {
    return capture::testing::send_all(fd_, protocol::encode_command(cmd));
  }

  // Whether the whole of an already encoded frame (tests/capture/capture_testing.h's frames)
  // was written.
  bool send_frame(const std::string& frame) { return capture::testing::send_all(fd_, frame); }

  // The next whole frame, or nullopt on timeout, close or a frame that does not decode.
  std::optional<wire::BaseCommand> receive() {
    char buf[65536];
    while (true) {
      absl::StatusOr<std::optional<std::string>> f = splitter_.next();
      if (!f.ok()) return std::nullopt;
      if (f->has_value()) {
        absl::StatusOr<protocol::Frame> frame = protocol::decode_frame(**f);
        if (!frame.ok()) return std::nullopt;
        return frame->command;
      }
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      splitter_.append(std::string_view(buf, static_cast<std::size_t>(n)));
    }
  }

  // Whether a frame (or bytes of one) arrives within `wait`.
  bool more_within(std::chrono::milliseconds wait) {
    if (splitter_.buffered() > 0) return true;
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
  }

 private:
  int fd_;
  protocol::FrameSplitter splitter_;
};

}  // namespace permitcheck::conformance::testing

#endif  // PERMITCHECK_TESTS_CONFORMANCE_RAW_CLIENT_H_
