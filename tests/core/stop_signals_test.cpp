// route_stop_signals, in a child process of its own (it changes the process for good):
// a SIGTERM sent to the process runs the handler on the router's thread, while the
// threads started afterwards, which do the work, have both signals blocked.
#include "core/system/stop_signals.h"

#include <atomic>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace normlab {
namespace {

bool blocks_stop_signals() {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, SIGINT) == 1 && sigismember(&mask, SIGTERM) == 1;
}

// The child's exit status says what it saw: 0 when all is as it should be.
int child() {
  static std::atomic<int> signal_taken{0};
  static std::atomic<bool> on_a_worker{false};
  const std::thread::id main_thread = std::this_thread::get_id();
  route_stop_signals([main_thread](int signal) {
    on_a_worker = std::this_thread::get_id() == main_thread;
    signal_taken = signal;
  });
  if (!blocks_stop_signals()) return 1;
  std::atomic<bool> worker_blocks{false}, done{false};
  std::thread worker([&] {
    worker_blocks = blocks_stop_signals();
    while (!done) {
    }  // busy, as a training thread is: the signal must not land here
  });
  ::kill(::getpid(), SIGTERM);
  while (signal_taken == 0) std::this_thread::yield();
  done = true;
  worker.join();
  if (!worker_blocks) return 2;
  if (signal_taken != SIGTERM) return 3;
  if (on_a_worker) return 4;
  return 0;
}

TEST(StopSignals, ATerminationIsTakenOnTheRoutersThreadAndWorkersBlockIt) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(child());
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the caller does not block them; 2: a worker does not; "
                                       "3: another signal; 4: handled on the caller's thread";
}

// A program started from such a process can be stopped as usual.
TEST(StopSignals, AForkedChildUnblocksThem) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    route_stop_signals([](int) {});
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      unblock_stop_signals();
      ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::kill(grandchild, SIGTERM);  // before its unblock it waits, pending, and ends it then
    int status = 0;
    ::waitpid(grandchild, &status, 0);
    ::_exit(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the grandchild did not end by SIGTERM";
}

}  // namespace
}  // namespace normlab
