// Stopping proofs on SIGINT and SIGTERM (issue 18): every live solver query is interrupted
// (Z3_interrupt), and every later one answers Unknown("interrupted") at once, so `prove` can
// stop within a second, report what it had and exit 128 + the signal.
//
//   solver::SignalStop stop;             // before any other thread starts
//   for (...) { results.push_back(prove(...)); if (stop.signal()) break; }
//   return stop.signal() ? 128 + stop.signal() : code;
#ifndef PERMITCHECK_SOLVER_INTERRUPT_H_
#define PERMITCHECK_SOLVER_INTERRUPT_H_

#include <atomic>
#include <thread>

namespace permitcheck::solver {

// Interrupts every running query of every thread; later queries answer Unknown("interrupted").
void interrupt_proofs();
bool proofs_interrupted();

// Blocks SIGINT and SIGTERM in the calling thread (and the threads it starts later) and waits
// for them on a thread of its own, which calls interrupt_proofs(). REQUIRES: constructed before
// the process starts other threads.
class SignalStop {
 public:
  SignalStop();
  ~SignalStop();
  SignalStop(const SignalStop&) = delete;
  SignalStop& operator=(const SignalStop&) = delete;

  int signal() const { return signal_.load(); }  // SIGINT, SIGTERM, or 0

 private:
  std::atomic<int> signal_{0};
  std::thread waiter_;
};

}  // namespace permitcheck::solver

#endif  // PERMITCHECK_SOLVER_INTERRUPT_H_
