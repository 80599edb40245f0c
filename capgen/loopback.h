// capgen: loopback sockets for the tap's tests and benchmarks (tests/capture/tap_test.cc,
// bench/capture_bench.cc): a listener on a free port, a client connection (TCP_NODELAY), and
// the loops that write and read whole byte strings. Blocking POSIX sockets, 127.0.0.1 only.
//
//   std::uint16_t port = 0;
//   int listener = listen_loopback(&port);           // a broker stand-in accepts on it
//   int fd = connect_loopback(port);                 // -1 when nothing listens
//   send_all(fd, frames::connect());
//   std::string reply(n, '\0');  read_exact(fd, reply.data(), n);
#ifndef PERMITCHECK_CAPGEN_LOOPBACK_H_
#define PERMITCHECK_CAPGEN_LOOPBACK_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace permitcheck::capgen {

inline void no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A listening socket on 127.0.0.1 and a free port (written to *port).
inline int listen_loopback(std::uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(fd, 16);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

// Accepts one connection, with Nagle off.
inline int accept_one(int listener) {
  const int fd = ::accept(listener, nullptr, nullptr);
  if (fd >= 0) no_delay(fd);
  return fd;
}

// A connection to 127.0.0.1:port with Nagle off; -1 when it cannot connect.
inline int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  no_delay(fd);
  return fd;
}

inline bool send_all(int fd, std::string_view bytes) {
  for (std::size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n <= 0) return false;
    at += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly n bytes; false at an early end of stream or an error.
inline bool read_exact(int fd, char* buf, std::size_t n) {
  for (std::size_t at = 0; at < n;) {
    const ssize_t r = ::read(fd, buf + at, n - at);
    if (r <= 0) return false;
    at += static_cast<std::size_t>(r);
  }
  return true;
}

// Everything until the peer ends its side.
inline std::string read_all(int fd) {
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace permitcheck::capgen

#endif  // PERMITCHECK_CAPGEN_LOOPBACK_H_
