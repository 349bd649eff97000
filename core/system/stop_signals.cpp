#include "stop_signals.h"

#include <pthread.h>
#include <signal.h>
#include <thread>

namespace normlab {

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void route_stop_signals(std::function<void(int signal)> on_stop) {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Detached: it waits for the whole life of the process, and exit ends it wherever it is.
  std::thread([set, on_stop = std::move(on_stop)] {
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) == 0) on_stop(signal);
    }
  }).detach();
}

void unblock_stop_signals() {
  const sigset_t set = stop_signals();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);  // async-signal-safe, as a forked child needs
}

}  // namespace normlab
