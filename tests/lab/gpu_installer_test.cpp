// Help ▸ Install GPU support… without a window: the install runs on its own thread, its
// progress and outcome arrive as signals on the caller's, and a stop is not an error.
#include "gpu_installer.h"

#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QElapsedTimer>
#include <QThread>

#include "cuda_backend.h"
#include "stand_in_index.h"
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

TEST(GpuInstaller, InstallsOnItsOwnThreadAndReportsOnTheCallers) {
  QTemporaryDir dir;
  const std::filesystem::path home = dir.path().toStdString();
  const normlab::test::StandIns stand_ins(home / "index");
  normlab::test::IndexServer server(stand_ins.root);
  GpuInstaller installer;
  Outcome outcome;
  watch(installer, outcome);
  ASSERT_TRUE(installer.start(stand_ins.options(server.url(), home)));
  EXPECT_FALSE(installer.start(stand_ins.options(server.url(), home))) << "one install at a time";
  ASSERT_TRUE(test::wait_until([&] { return outcome.done; }, 30'000));
  EXPECT_TRUE(outcome.ok) << outcome.message.toStdString();
  EXPECT_TRUE(outcome.message.isEmpty());
  EXPECT_GT(outcome.progress_signals, 0);
  EXPECT_TRUE(outcome.progress_on_caller_thread);
  EXPECT_EQ(outcome.last_done, outcome.total);
  EXPECT_TRUE(std::filesystem::exists(home / "cuda/torch/lib/libtorch_cuda.so"));
}

TEST(GpuInstaller, AFailureArrivesAsOneLine) {
  QTemporaryDir dir;
  const std::filesystem::path home = dir.path().toStdString();
  const normlab::test::StandIns stand_ins(home / "index");
  GpuInstaller installer;
  Outcome outcome;
  watch(installer, outcome);
  ASSERT_TRUE(installer.start(stand_ins.options("http://127.0.0.1:9/simple", home)));
  ASSERT_TRUE(test::wait_until([&] { return outcome.done; }, 30'000));
  EXPECT_FALSE(outcome.ok);
  EXPECT_TRUE(outcome.message.startsWith(QStringLiteral("cannot fetch http://127.0.0.1:9/simple/"))) << outcome.message.toStdString();
  EXPECT_FALSE(outcome.message.contains(QLatin1Char('\n')));
}

TEST(GpuInstaller, AStopEndsItWithoutAnError) {
  QTemporaryDir dir;
  const std::filesystem::path home = dir.path().toStdString();
  const normlab::test::StandIns stand_ins(home / "index");
  normlab::test::IndexServer server(stand_ins.root);
  GpuInstaller installer;
  Outcome outcome;
  watch(installer, outcome);
  installer.stop();  // before it starts: start() clears it
  ASSERT_TRUE(installer.start(stand_ins.options(server.url(), home)));
  installer.stop();
  ASSERT_TRUE(test::wait_until([&] { return outcome.done; }, 30'000));
  EXPECT_FALSE(outcome.ok);
  EXPECT_TRUE(outcome.message.isEmpty()) << "stopped, not failed";
  EXPECT_FALSE(std::filesystem::exists(home / "cuda"));
}

// With no driver nothing is looked for and nothing is said; with one (a stand-in here) the
// look-up runs on a thread and the caller's thread is never held up by it.
TEST(GpuInstaller, TheGpuLookUpNeverHoldsTheCallerUp) {
  GpuInstaller quiet;
  int notices = 0;
  QObject::connect(&quiet, &GpuInstaller::notice, &quiet, [&] { ++notices; });
  set_nvidia_driver_probe([] { return std::string(); });
  quiet.look_for_gpu(QStringLiteral("Install"));
  set_nvidia_driver_probe([] { return std::string("/proc/driver/nvidia (stand-in)"); });
  GpuInstaller looking;
  QElapsedTimer timer;
  timer.start();
  looking.look_for_gpu(QStringLiteral("Install"));
  EXPECT_LT(timer.elapsed(), 100) << "the look-up is not on this thread";
  QCoreApplication::processEvents();
  set_nvidia_driver_probe({});
  EXPECT_EQ(notices, 0);
}

}  // namespace
}  // namespace normlab::lab
