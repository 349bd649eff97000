// Ctrl-C and SIGTERM sent to real normlab-cli processes at random moments: every stop must
// end the same way, exit status 130 with each run file at `stopped`, its points whole and
// its checkpoint loadable. The moments are spread over the start-up, the first 100 steps
// (layer statistics at every step), evaluations, saves and checkpoint writes (one at
// every evaluation here), a resumed run's first steps and runs side by side. Under the
// asan preset the same tests run the sanitized normlab-cli, whose reports end it otherwise.
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <signal.h>
#include <string_view>
#include <sys/wait.h>
#include <thread>
#include <torch/torch.h>
#include <unistd.h>

#include "core/runs/run_record.h"
#include "core/training/checkpoint.h"
#include "tests/core/test_support.h"
#include "tests/support/stopped_run.h"

namespace normlab::test {
namespace {

using Clock = std::chrono::steady_clock;

// Wide enough that the linear layers run oneDNN's JIT GEMM kernels, whose stack pointer
// into the heap turned a stop into heap corruption (core/system/stop_signals.h); small enough
// that a step takes milliseconds. Evaluations every 25 steps, each with a checkpoint.
constexpr const char* kRun =
    "train --corpus corpus.txt --device cpu --threads 1 --layers 2 --d-model 128 --heads 4 --context 64 "
    "--batch 8 --vocab 256 --steps 100000 --warmup 10 --eval-interval 25 --eval-batches 4 --lr 1e-3 "
    "--checkpoint-interval 0 --out runs ";

class StopTest : public CacheTest {
 protected:
  void SetUp() override {
    CacheTest::SetUp();
    corpus_file(synthetic_corpus());
  }

  // Starts `normlab-cli args` in the temp folder; output in stdout.txt and stderr.txt.
  pid_t start(const std::string& args) const {
    fs::remove(temp_ / "stdout.txt");  // started() waits for the new process's first line
    return start_cli(temp_.path(), args);
  }

  // Waits for `file` to appear (a started run's first save), or for the process to end.
  static bool appears(const fs::path& file, pid_t pid) {
    while (!fs::exists(file)) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Waits for the process's first line (its first stage, printed once main() has routed
  // the signals: before that they still have their default action, and nothing has been
  // written), or for it to end.
  bool started(pid_t pid) const {
    std::error_code missing;
    while (fs::file_size(temp_ / "stdout.txt", missing) == 0 || missing) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // A random moment: `up_to_s` seconds at most.
  double random_delay(double up_to_s) { return std::uniform_real_distribution<double>(0, up_to_s)(random_); }
  int random_signal() { return std::bernoulli_distribution(0.5)(random_) ? SIGINT : SIGTERM; }

  // Sends `signal` to `pid` after `delay_s`, waits for it to end and checks the stop:
  // exit status 130, nothing on stderr, and each of `run_files` stopped and whole. The
  // steps each run reached.
  std::vector<int> stop(pid_t pid, int signal, double delay_s, const std::vector<fs::path>& run_files) {
    std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
    EXPECT_EQ(::kill(pid, signal), 0);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    const std::string out = read_file(temp_ / "stdout.txt"), err = read_file(temp_ / "stderr.txt");
    const std::string what =
        std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") + " after " + std::to_string(int(delay_s * 1000)) + " ms";
    EXPECT_TRUE(WIFEXITED(status)) << what << ": ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                   << "\n"
                                   << out << err;
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 130) << what << "\n" << out << err;
    EXPECT_EQ(err, "") << what;
    std::vector<int> reached;
    for (const fs::path& file : run_files) reached.push_back(expect_whole_with_its_checkpoint(file, what));
    return reached;
  }

  // expect_stopped_and_whole (stopped_run.h), and the checkpoint's payload loaded by
  // LibTorch, holding the same record. The run's last step.
  static int expect_whole_with_its_checkpoint(const fs::path& file, const std::string& what) {
    SCOPED_TRACE(what);
    const RunRecord run = test::expect_stopped_and_whole(file, test::Csv::Beside);
    if (run.steps.empty() || !fs::exists(checkpoint_path(file))) return 0;
    const std::string bytes = read_file(checkpoint_path(file));
    const std::string_view payload = std::string_view(bytes).substr(bytes.find('\n') + 1);
    torch::serialize::InputArchive archive, learner;
    archive.load_from(payload.data(), payload.size(), torch::Device(torch::kCPU));
    archive.read("learner", learner);
    c10::IValue record;
    archive.read("record", record);
    EXPECT_EQ(from_json_text(record.toStringRef()).steps.size(), run.steps.size());
    return run.steps.back().step;
  }

  std::mt19937 random_{std::random_device()()};
};

std::string steps_text(const std::vector<int>& steps) {
  std::string text;
  for (const int step : steps) text += (text.empty() ? "" : " ") + std::to_string(step);
  return text;
}

// 30 stops of one run: some during start-up, the others over its first three seconds of
// training (about the first 250 steps here: the per-step statistics, ten evaluations and
// their checkpoints).
TEST_F(StopTest, AFreshRunStopsCleanlyAtAnyMoment) {
  std::vector<int> stopped_at;
  for (int i = 0; i < 30; ++i) {
    SCOPED_TRACE("stop " + std::to_string(i + 1));
    const fs::path file = temp_ / "runs" / "stopped.json";
    fs::remove_all(temp_ / "runs");
    const pid_t pid = start(std::string(kRun) + "--name stopped");
    ASSERT_GT(pid, 0);
    const bool in_start_up = i % 6 == 0;
    ASSERT_TRUE(in_start_up ? started(pid) : appears(file, pid)) << read_file(temp_ / "stderr.txt");
    const auto reached = stop(pid, random_signal(), random_delay(in_start_up ? 1.5 : 3.0), {file});
    if (HasFailure()) return;
    stopped_at.insert(stopped_at.end(), reached.begin(), reached.end());
  }
  std::printf("stopped after steps: %s\n", steps_text(stopped_at).c_str());
}

// 10 stops of two runs training side by side in one process: both end stopped.
TEST_F(StopTest, RunsSideBySideStopCleanly) {
  std::vector<int> stopped_at;
  for (int i = 0; i < 10; ++i) {
    SCOPED_TRACE("stop " + std::to_string(i + 1));
    fs::remove_all(temp_ / "runs");
    const pid_t pid = start(std::string(kRun) + "--name pair --seeds 2 --side-by-side 2");
    ASSERT_GT(pid, 0);
    const std::vector<fs::path> files{temp_ / "runs" / "pair_seed_1337.json", temp_ / "runs" / "pair_seed_1338.json"};
    for (const fs::path& file : files) ASSERT_TRUE(appears(file, pid)) << read_file(temp_ / "stderr.txt");
    const auto reached = stop(pid, random_signal(), random_delay(3.0), files);
    if (HasFailure()) return;
    stopped_at.insert(stopped_at.end(), reached.begin(), reached.end());
  }
  std::printf("stopped after steps: %s\n", steps_text(stopped_at).c_str());
}

// One run stopped, then resumed and stopped again 10 times, each time at a random moment
// of the resume's start-up or first steps: each goes on from the checkpoint the last stop
// left, and no step is lost or repeated.
TEST_F(StopTest, AResumedRunStopsCleanlyInItsFirstSteps) {
  const fs::path file = temp_ / "runs" / "resumed.json";
  pid_t pid = start(std::string(kRun) + "--name resumed");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(appears(file, pid)) << read_file(temp_ / "stderr.txt");
  int steps = stop(pid, SIGINT, 0.5, {file}).front();
  ASSERT_FALSE(HasFailure());
  ASSERT_GT(steps, 0) << "no checkpoint to resume from: stop later";
  std::vector<int> stopped_at{steps};
  for (int i = 0; i < 10; ++i) {
    SCOPED_TRACE("resume " + std::to_string(i + 1) + " from step " + std::to_string(steps));
    pid = start("train --resume runs/resumed.json");
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(started(pid)) << read_file(temp_ / "stderr.txt");
    const int reached = stop(pid, random_signal(), random_delay(2.5), {file}).front();
    if (HasFailure()) return;
    EXPECT_GE(reached, steps);
    const std::string out = read_file(temp_ / "stdout.txt");
    if (reached > steps) EXPECT_NE(out.find("resumed after step " + std::to_string(steps)), std::string::npos) << out;
    // Until its next evaluation a resumed run shows the last one's held-out loss.
    EXPECT_EQ(out.find("held-out nan"), std::string::npos) << out;
    steps = reached;
    stopped_at.push_back(steps);
  }
  std::printf("stopped after steps: %s\n", steps_text(stopped_at).c_str());
}

}  // namespace
}  // namespace normlab::test
