// Tap: a transparent TCP proxy between any Pulsar client and any broker. Every byte is
// forwarded unchanged as soon as it arrives (one thread, Nagle off on both sockets); a copy
// goes through a bounded queue to a second thread that decodes it (the same path as a
// capture: wire_trace.h) and checks it live with the Monitor (wire_monitor.h), so forwarding never
// waits on checking. A stream it cannot decode, or cannot check in time, is still forwarded
// untouched and reported as not understood. Memory per connection is bounded (one read
// buffer per direction, the decoder's bounds), and the queue in all. TLS is out of scope: a
// TLS stream is forwarded and reported as not understood.
//
//   Tap tap(TapOptions{.listen = "127.0.0.1:6651", .upstream = "127.0.0.1:6650"}, &checker);
//   absl::Status s = tap.start();      // binds; tap.port() is the port it listens on
//   tap.run();                         // until stop() (from a signal handler's thread, say)
#ifndef PERMITCHECK_TAP_TAP_H_
#define PERMITCHECK_TAP_TAP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "capture/wire_monitor.h"
#include "capture/wire_trace.h"

namespace permitcheck::tap {

// A LOOKUP answer that sends the client past the tap: the consumer it then opens is not seen.
struct LookupBypass {
  std::string connection;  // the connection the lookup was answered on
  double time = 0;
  std::string address;     // HOST:PORT the client was sent to
};

// The HOST:PORT `answer` sends the client to when that is not the tap listening on
// listen_host:listen_port (and the broker did not ask the client to stay, with
// proxy_through_service_url); nullopt when the client stays on the tap or is sent nowhere. A
// wildcard listen host (0.0.0.0, ::) matches any host on the port, and loopback names match
// each other (127.0.0.0/8, localhost, ::1).
std::optional<std::string> lookup_bypass(const capture::LookupAnswer& answer,
                                         std::string_view listen_host, std::uint16_t listen_port);

struct TapOptions {
  std::string listen;    // ADDR:PORT (port 0: any free one)
  std::string upstream;  // HOST:PORT of the broker
  capture::CaptureOptions decode;  // idle, bounds (port is ignored)
  std::string pcap_path;  // when not empty, every forwarded segment is also written here
  // Copies waiting for the checking thread, in bytes: past it a connection is forwarded but
  // no longer checked (reported as not understood), so forwarding never waits on checking.
  std::size_t max_queued_bytes = std::size_t{64} << 20;
  // Called (on the checking thread) for each lookup answer that bypasses the tap.
  std::function<void(const LookupBypass&)> on_bypass;
};

struct TapStats {
  std::uint64_t connections = 0;
  std::uint64_t bytes_to_broker = 0, bytes_to_client = 0;
  std::uint64_t pulsar_connections = 0;  // of them, decoded as Pulsar (once run() returned)
  std::uint64_t lookups = 0;           // LOOKUP answers forwarded (decoded)
  std::vector<std::string> bypassed;   // distinct HOST:PORTs lookups sent clients to, past the tap
};

class Tap {
 public:
  // REQUIRES: `checker` outlives the tap.
  Tap(TapOptions options, capture::WireMonitor* checker);
  ~Tap();

  // Binds the listening socket and opens the --pcap file. InvalidArgument for a bad address,
  // Unavailable when it cannot listen or write.
  absl::Status start();
  std::uint16_t port() const;
  // Serves until stop(); then closes every connection (their disconnects are recorded) and
  // finishes the decoding (last quiescence checks).
  void run();
  // Thread-safe; also what SIGINT and SIGTERM do when `handle_signals` ran.
  void stop();
  void handle_signals();
  // The counts so far; `lookups` and `bypassed` are complete once run() returned.
  TapStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace permitcheck::tap

#endif  // PERMITCHECK_TAP_TAP_H_
