// A connection's write queue (conformance/internal/write_queue.h) on a loopback socket pair:
// frames arrive whole and in order, a push past the byte bound queues nothing and says so, and
// a closed queue writes nothing more.
#include "conformance/internal/write_queue.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "asio.hpp"

namespace permitcheck::conformance::internal {
namespace {

using asio::ip::tcp;

// A connected pair on 127.0.0.1; `out` is the queue's socket, `in` reads what it writes.
struct Pair {
  asio::io_context io;
  tcp::socket out{io};
  tcp::socket in{io};
  Pair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    out.connect(acceptor.local_endpoint());
    acceptor.accept(in);
  }
  // Runs the io context until the queue's writes are done; the handlers run (0: no write).
  std::size_t run() {
    io.restart();
    return io.run();
  }
  // Runs the writes, then reads `n` bytes of what they wrote.
  std::string written(std::size_t n) {
    run();
    std::string got(n, '\0');
    asio::read(in, asio::buffer(got));
    return got;
  }
};

TEST(WriteQueue, FramesAreWrittenWholeAndInOrder) {
  Pair p;
  auto owner = std::make_shared<int>(0);
  WriteQueue q(p.out, 0);
  int failures = 0;
  for (const char* frame : {"first ", "", "second ", "third"}) {
    ASSERT_TRUE(q.push(frame, owner, [&] { ++failures; }).ok());
  }
  EXPECT_EQ(p.written(18), "first second third");
  EXPECT_EQ(q.queued_bytes(), 0u);
  EXPECT_EQ(failures, 0);
}

TEST(WriteQueue, APushPastTheBoundQueuesNothing) {
  Pair p;
  auto owner = std::make_shared<int>(0);
  WriteQueue q(p.out, 10);
  ASSERT_TRUE(q.push("123456", owner, [] {}).ok());
  const absl::Status over = q.push("12345", owner, [] {});  // 11 bytes would wait
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted) << over;
  EXPECT_EQ(q.queued_bytes(), 6u);
  ASSERT_TRUE(q.push("1234", owner, [] {}).ok());  // 10: at the bound
  EXPECT_EQ(p.written(10), "1234561234");
}

TEST(WriteQueue, AClosedQueueWritesNothingMore) {
  Pair p;
  auto owner = std::make_shared<int>(0);
  WriteQueue q(p.out, 0);
  q.close();
  EXPECT_TRUE(q.push("dropped", owner, [] {}).ok());
  EXPECT_EQ(q.queued_bytes(), 0u);
  EXPECT_EQ(p.run(), 0u) << "a closed queue starts no write";
}

TEST(WriteQueue, AFailedWriteClosesTheQueueAndCallsOnFailure) {
  Pair p;
  auto owner = std::make_shared<int>(0);
  WriteQueue q(p.out, 0);
  p.out.close();  // every write now fails
  int failures = 0;
  ASSERT_TRUE(q.push("lost", owner, [&] { ++failures; }).ok());
  p.run();
  EXPECT_EQ(failures, 1);
  EXPECT_TRUE(q.push("after", owner, [&] { ++failures; }).ok());
  EXPECT_EQ(p.run(), 0u) << "the failure closed the queue: no write started";
  EXPECT_EQ(failures, 1);
}

}  // namespace
}  // namespace permitcheck::conformance::internal
