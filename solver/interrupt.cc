#include "solver/interrupt.h"

#include <pthread.h>
#include <signal.h>

#include "solver/internal/z3_util.h"

namespace permitcheck::solver {

void interrupt_proofs() { internal::interrupt_queries(); }
bool proofs_interrupted() { return internal::queries_interrupted(); }

namespace {

// SIGUSR2 only wakes the waiter when SignalStop ends without a signal.
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR2);
  return set;
}

}  // namespace

SignalStop::SignalStop() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  waiter_ = std::thread([this] {
    const sigset_t wait = stop_signals();
    int sig = 0;
    if (sigwait(&wait, &sig) != 0 || sig == SIGUSR2) return;
    signal_.store(sig);
    interrupt_proofs();
  });
}

SignalStop::~SignalStop() {
  if (signal_.load() == 0) pthread_kill(waiter_.native_handle(), SIGUSR2);
  waiter_.join();
}

}  // namespace permitcheck::solver
