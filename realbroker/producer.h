// A producer that publishes native batches of chosen sizes to a Pulsar broker, written on the
// project's codec (protocol/frame.h) and realbroker/producer_wire.proto: CONNECT, PRODUCER,
// SEND with batch metadata, SEND_RECEIPT, CLOSE_PRODUCER. No client library, no other runtime.
//
//   absl::StatusOr<std::unique_ptr<BatchProducer>> p =
//       BatchProducer::open("127.0.0.1", 6650, "persistent://public/default/t");
//   absl::StatusOr<EntryPosition> at = (*p)->send_batch(10);   // one entry of 10 messages
//   (*p)->close();
//
// Guarantees: every call returns within the timeout given to open() (DeadlineExceeded); a
// broker's SEND_ERROR or ERROR is an error naming it; one entry per send_batch, its receipt
// awaited before the next (so the entries' order is the calls' order). Not thread-safe.
#ifndef PERMITCHECK_REALBROKER_PRODUCER_H_
#define PERMITCHECK_REALBROKER_PRODUCER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace permitcheck::realbroker {

struct EntryPosition {
  std::uint64_t ledger = 0, entry = 0;
};

class BatchProducer {
 public:
  static absl::StatusOr<std::unique_ptr<BatchProducer>> open(
      const std::string& host, std::uint16_t port, const std::string& topic,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(15000));
  ~BatchProducer();  // closes the connection (without CLOSE_PRODUCER when close() was not called)
  BatchProducer(const BatchProducer&) = delete;
  BatchProducer& operator=(const BatchProducer&) = delete;

  // Publishes one batch entry of `size` (1..10000) messages, waits for its receipt.
  absl::StatusOr<EntryPosition> send_batch(int size);
  // CLOSE_PRODUCER, its SUCCESS awaited, then the connection closed.
  absl::Status close();
  std::uint64_t messages_sent() const { return messages_sent_; }

 private:
  BatchProducer(int fd, std::chrono::milliseconds timeout) : fd_(fd), timeout_(timeout) {}
  absl::Status write_all(const std::string& bytes);
  // The next command that is not a PING (answered with PONG on the way).
  absl::StatusOr<std::string> read_command();

  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::string name_;
  std::uint64_t sequence_ = 0, messages_sent_ = 0;
  std::uint64_t producer_id_ = 1, request_id_ = 1;
};

}  // namespace permitcheck::realbroker

#endif  // PERMITCHECK_REALBROKER_PRODUCER_H_
