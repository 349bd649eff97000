// Help ▸ Install GPU support… without a window: the install runs on its own thread, its
// progress and outcome arrive as signals on the caller's, and a stop is not an error.
#include "lab/gpu_installer.h"

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QThread>
#include <atomic>
#include <gtest/gtest.h>

#include "core/device/cuda_backend.h"
#include "tests/support/latch.h"
#include "tests/support/stand_in_index.h"

#include "test_support.h"

namespace normlab::lab {
namespace {

struct Outcome {
  bool done = false, ok = false;
  QString message;
  int progress_signals = 0;
  bool progress_on_caller_thread = true;
  qint64 last_done = 0, total = 0;
};

void watch(GpuInstaller& installer, Outcome& outcome) {
  QObject::connect(&installer, &GpuInstaller::progress, &installer,
                   [&](const QString&, const QString&, int, int, qint64 done, qint64 total) {
                     ++outcome.progress_signals;
                     outcome.progress_on_caller_thread &= QThread::currentThread() == qApp->thread();
                     outcome.last_done = done;
                     outcome.total = total;
                   });
  QObject::connect(&installer, &GpuInstaller::finished, &installer, [&](bool ok, const QString& message) {
    outcome.done = true;
    outcome.ok = ok;
    outcome.message = message;
  });
}

// A home with stand-in wheels, their index on 127.0.0.1, and an installer being watched.
class GpuInstallerTest : public ::testing::Test {
 protected:
  GpuInstallerTest() { watch(installer_, outcome_); }
  CudaInstallOptions from(const std::string& index) const { return stand_ins_.options(index, home_); }
  bool ended() {
    return test::wait_until([&] { return outcome_.done; }, 30'000);
  }

  QTemporaryDir dir_;
  const std::filesystem::path home_ = dir_.path().toStdString();
  const normlab::test::StandIns stand_ins_{home_ / "index"};
  normlab::test::IndexServer server_{stand_ins_.root};
  GpuInstaller installer_;
  Outcome outcome_;
};

TEST_F(GpuInstallerTest, InstallsOnItsOwnThreadAndReportsOnTheCallers) {
  ASSERT_TRUE(installer_.start(from(server_.url())));
  EXPECT_FALSE(installer_.start(from(server_.url()))) << "one install at a time";
  ASSERT_TRUE(ended());
  EXPECT_TRUE(outcome_.ok) << outcome_.message.toStdString();
  EXPECT_TRUE(outcome_.message.isEmpty());
  EXPECT_GT(outcome_.progress_signals, 0);
  EXPECT_TRUE(outcome_.progress_on_caller_thread);
  EXPECT_EQ(outcome_.last_done, outcome_.total);
  EXPECT_TRUE(std::filesystem::exists(home_ / "cuda/torch/lib/libtorch_cuda.so"));
}

TEST_F(GpuInstallerTest, AFailureArrivesAsOneLine) {
  ASSERT_TRUE(installer_.start(from("http://127.0.0.1:9/simple")));  // offline
  ASSERT_TRUE(ended());
  EXPECT_FALSE(outcome_.ok);
  EXPECT_TRUE(outcome_.message.startsWith(QStringLiteral("cannot fetch http://127.0.0.1:9/simple/")))
      << outcome_.message.toStdString();
  EXPECT_FALSE(outcome_.message.contains(QLatin1Char('\n')));
}

TEST_F(GpuInstallerTest, AStopEndsItWithoutAnError) {
  installer_.stop();  // before it starts: start() clears it
  ASSERT_TRUE(installer_.start(from(server_.url())));
  installer_.stop();
  ASSERT_TRUE(ended());
  EXPECT_FALSE(outcome_.ok);
  EXPECT_TRUE(outcome_.message.isEmpty()) << "stopped, not failed";
  EXPECT_FALSE(std::filesystem::exists(home_ / "cuda"));
}

// With no driver nothing is looked for and nothing is said; with one (a stand-in here) the
// look-up runs on a thread and the caller's thread is never held up by it: the stand-in
// holds every look-up off the caller's thread until the test lets it go, and on the
// caller's it is asked once only, whether there is a driver at all.
TEST(GpuInstaller, TheGpuLookUpNeverHoldsTheCallerUp) {
  GpuInstaller quiet;
  int notices = 0;
  QObject::connect(&quiet, &GpuInstaller::notice, &quiet, [&] { ++notices; });
  set_nvidia_driver_probe([] { return std::string(); });
  quiet.look_for_gpu(QStringLiteral("Install"));

  const QThread* caller = QThread::currentThread();
  std::atomic<int> asked_here{0}, asked_elsewhere{0};
  normlab::test::Latch release(1);
  set_nvidia_driver_probe([&] {
    if (QThread::currentThread() == caller) {
      ++asked_here;
    } else {
      ++asked_elsewhere;
      release.wait();
    }
    return std::string("/proc/driver/nvidia (stand-in)");
  });
  {
    GpuInstaller looking;
    looking.look_for_gpu(QStringLiteral("Install"));
    EXPECT_EQ(asked_here, 1) << "the look-up is not on this thread";
    release.count_down();
  }  // waits for the look-up's thread
  set_nvidia_driver_probe({});
  EXPECT_EQ(asked_elsewhere, 1) << "the look-up ran, on a thread of its own";
  QCoreApplication::processEvents();
  EXPECT_EQ(notices, 0);
}

}  // namespace
}  // namespace normlab::lab
