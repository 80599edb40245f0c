#include "impl/scheduler.h"

#include <algorithm>
#include <utility>

namespace permitcheck::impl {

int Scheduler::add_queue(QueueClass cls, std::string name) {
  queues_.push_back(Queue{cls, std::move(name), {}});
  return static_cast<int>(queues_.size()) - 1;
}

void Scheduler::post(int queue, Task task) {
  queues_[static_cast<std::size_t>(queue)].tasks.push_back(std::move(task));
  ++pending_;
}

bool Scheduler::run_front(int queue) {
  Queue& q = queues_[static_cast<std::size_t>(queue)];
  if (q.tasks.empty()) return false;
  Task task = std::move(q.tasks.front());
  q.tasks.pop_front();
  --pending_;
  const int outer = std::exchange(running_, queue);
  ++tasks_run_;
  task();
  running_ = outer;
  return true;
}

void Scheduler::clear(int queue) {
  Queue& q = queues_[static_cast<std::size_t>(queue)];
  pending_ -= q.tasks.size();
  q.tasks.clear();
}

std::vector<int> Scheduler::nonempty() const {
  std::vector<int> out;
  for (int cls = 0; cls <= static_cast<int>(QueueClass::kListener); ++cls) {
    for (std::size_t i = 0; i < queues_.size(); ++i) {
      if (static_cast<int>(queues_[i].cls) == cls && !queues_[i].tasks.empty()) {
        out.push_back(static_cast<int>(i));
      }
    }
  }
  return out;
}

std::uint64_t Scheduler::run_all(std::uint64_t limit) {
  std::uint64_t ran = 0;
  while (pending_ > 0 && ran < limit) {
    for (int q : nonempty()) {
      if (run_front(q)) ++ran;
    }
  }
  return ran;
}

}  // namespace permitcheck::impl
