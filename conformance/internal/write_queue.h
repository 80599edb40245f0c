// The frames waiting to be written on one connection of a conformance broker, written in order
// with one asio::async_write in flight at a time, optionally bounded in bytes. Shared by
// ConformanceBroker (bounded: a client that does not read is closed) and ThroughputBroker.
//
//   internal::WriteQueue writes(socket, std::size_t{16} << 20);  // a member of the connection
//   absl::Status s = writes.push(encode_command(cmd), conn, [this, conn] { close(conn); });
//   // in close(conn): writes.close(), then close the socket
#ifndef PERMITCHECK_CONFORMANCE_INTERNAL_WRITE_QUEUE_H_
#define PERMITCHECK_CONFORMANCE_INTERNAL_WRITE_QUEUE_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "asio.hpp"

namespace permitcheck::conformance::internal {

class WriteQueue {
 public:
  // Writes to `socket`. `max_bytes`: what may wait at once (0: no bound).
  // REQUIRES: `socket` outlives every write (push's `owner` holds what owns both).
  WriteQueue(asio::ip::tcp::socket& socket, std::size_t max_bytes);
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  // Queues `bytes` after what waits and, when no write is in flight, starts writing. Empty
  // bytes and a closed queue queue nothing (OK). ResourceExhausted, nothing queued, when the
  // queue would hold more than max_bytes: the caller decides what that means for the
  // connection. `owner` (the connection that holds the socket and this queue) is kept alive
  // until the write chain ends; when a write fails the queue closes, then `on_failure` runs
  // (that chain's: the one of the push that started it). REQUIRES: the socket's io thread.
  absl::Status push(std::string bytes, std::shared_ptr<void> owner,
                    std::function<void()> on_failure);

  // Nothing more is written: the write in flight, if any, is the last. Idempotent.
  void close() { closed_ = true; }

  std::size_t queued_bytes() const { return queued_bytes_; }
  // Every frame pushed has been handed to the socket (none waits, none in flight).
  bool idle() const { return !writing_ && writes_.empty(); }
  std::size_t max_bytes() const { return max_bytes_; }

 private:
  void write_next(std::shared_ptr<void> owner, std::function<void()> on_failure);

  asio::ip::tcp::socket& socket_;
  const std::size_t max_bytes_;
  std::deque<std::string> writes_;
  std::size_t queued_bytes_ = 0;  // in writes_
  bool writing_ = false;
  bool closed_ = false;
};

}  // namespace permitcheck::conformance::internal

#endif  // PERMITCHECK_CONFORMANCE_INTERNAL_WRITE_QUEUE_H_
