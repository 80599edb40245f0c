// A deterministic scheduler: every thread of the real systems (broker connection I/O, the
// topic's ordered executor, each client connection's event loop, the client timer and the
// message-listener executor) is a FIFO task queue here, and the test decides which queue runs
// next. Races such as "old Flow vs replacement Subscribe" or "old return vs recreation" are
// therefore reproducible from the sequence of choices alone.
//
//   Scheduler s;
//   int loop = s.add_queue(QueueClass::kClientLoop, "client-loop c1");
//   s.post(loop, [] { ... });
//   s.run_front(loop);            // runs the task; s.running() == loop meanwhile
#ifndef PERMITCHECK_IMPL_SCHEDULER_H_
#define PERMITCHECK_IMPL_SCHEDULER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace permitcheck::impl {

// The kind of thread a queue stands for; run_all() visits classes in this order.
enum class QueueClass { kBrokerIo, kBrokerTopic, kClientLoop, kClientTimer, kListener };

class Scheduler {
 public:
  using Task = std::function<void()>;

  // A new empty queue; ids are dense and never reused.
  int add_queue(QueueClass cls, std::string name);

  // Appends a task. Posting to a cleared (dead) queue is allowed; clear() drops it again.
  void post(int queue, Task task);

  // Runs the front task of `queue`; false when it is empty.
  bool run_front(int queue);

  // Drops every pending task (a connection closed: its pending reads and writes are lost).
  void clear(int queue);

  std::size_t size(int queue) const { return queues_[static_cast<std::size_t>(queue)].tasks.size(); }
  const std::string& name(int queue) const { return queues_[static_cast<std::size_t>(queue)].name; }
  QueueClass queue_class(int queue) const { return queues_[static_cast<std::size_t>(queue)].cls; }
  int queue_count() const { return static_cast<int>(queues_.size()); }

  // The queue whose task is running now; -1 outside any task.
  int running() const { return running_; }

  // Non-empty queues in run_all() order (class, then id).
  std::vector<int> nonempty() const;
  bool idle() const { return pending_ == 0; }

  // Runs one task of each non-empty queue per round, in run_all() order, until every queue is
  // empty or `limit` tasks ran. Returns the number of tasks run.
  std::uint64_t run_all(std::uint64_t limit);

  std::uint64_t tasks_run() const { return tasks_run_; }

 private:
  struct Queue {
    QueueClass cls;
    std::string name;
    std::deque<Task> tasks;
  };
  std::vector<Queue> queues_;
  std::size_t pending_ = 0;
  int running_ = -1;
  std::uint64_t tasks_run_ = 0;
};

}  // namespace permitcheck::impl

#endif  // PERMITCHECK_IMPL_SCHEDULER_H_
