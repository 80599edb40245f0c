// ThroughputBroker: the conformance broker's bench mode, for timing a real client (and a tap
// in front of it) rather than judging it. It speaks the same protocol subset on 127.0.0.1
// (the handshake of ConformanceBroker, SUBSCRIBE, FLOW, ACK, PING) and serves a topic with a
// backlog of single messages, debiting one permit each (B1), never sending more than the
// consumer's Flows granted. It records no trace: the rules are checked by whatever watches
// the wire (`permitcheck tap`). A lookup is answered with proxy_through_service_url, so a
// client stays on the address it used (a tap in front of this broker) instead of connecting
// to the broker's own.
//
// A session starts at each SUBSCRIBE and has two phases:
//   1. latency: `latency_messages` messages one at a time, each sent when the previous one is
//      acknowledged; a sample is the time from writing the MESSAGE frame to reading its ACK,
//      both taken on this broker's clock (the client's round trip, without clock skew);
//   2. rate: `rate_messages` more, sent as fast as the permits allow; the rate is those
//      messages over the time from writing the first of them to reading the last ACK.
//
//   ThroughputBroker broker({.latency_messages = 2000, .rate_messages = 200000});
//   broker.start();                                  // binds 127.0.0.1:0
//   // ... start a client on broker.url() ...
//   absl::StatusOr<ThroughputSession> s = broker.wait_session(std::chrono::seconds(60));
#ifndef PERMITCHECK_CONFORMANCE_THROUGHPUT_BROKER_H_
#define PERMITCHECK_CONFORMANCE_THROUGHPUT_BROKER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace permitcheck::conformance {

struct ThroughputOptions {
  int latency_messages = 2000;   // phase 1, one at a time
  int rate_messages = 200'000;   // phase 2, as permits allow
  bool send_message_permits = true;  // W3: MESSAGE carries message_permits (1)
};

// One finished session: every message of both phases acknowledged.
struct ThroughputSession {
  std::vector<double> latency_us;  // phase 1: write of MESSAGE to read of its ACK, in order
  std::vector<double> loaded_us;   // phase 2: the same under the backlog (queueing included)
  double rate_seconds = 0;         // phase 2: first MESSAGE written to last ACK read
  double messages_per_second = 0;  // rate_messages / rate_seconds
  std::int64_t granted = 0;        // the consumer's Flow sum
  int flows = 0;                   // its Flow commands
  std::int64_t acks = 0;           // ACK commands read (duplicates included)
};

class ThroughputBroker {
 public:
  // REQUIRES: options.latency_messages >= 0, options.rate_messages >= 0, and one of them > 0.
  explicit ThroughputBroker(ThroughputOptions options);
  ~ThroughputBroker();
  ThroughputBroker(const ThroughputBroker&) = delete;
  ThroughputBroker& operator=(const ThroughputBroker&) = delete;

  // Binds 127.0.0.1 on an ephemeral port and starts the protocol thread.
  absl::Status start();
  std::uint16_t port() const { return port_; }
  std::string url() const;  // pulsar://127.0.0.1:PORT

  // The next session that finishes (sessions are returned in the order they finished, each
  // once). DeadlineExceeded after `timeout`, saying how far the current session got.
  absl::StatusOr<ThroughputSession> wait_session(std::chrono::milliseconds timeout);

  // Closes every connection and joins the thread. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint16_t port_ = 0;
};

}  // namespace permitcheck::conformance

#endif  // PERMITCHECK_CONFORMANCE_THROUGHPUT_BROKER_H_
