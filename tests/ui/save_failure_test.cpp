// The window training while its data folder refuses the run's file: a full or read-only
// tiny tmpfs, a folder without write permission, a cap on file size (a disk filling up
// during the run). The user is told once, the run trains on with every point in memory
// and can be exported elsewhere, and what was saved before stays whole. Each test tries
// every way this machine allows (mounting needs root, a read-only mode binds only
// non-root users, the size cap works for anyone), so a real write always fails.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <functional>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lab/lab.h"
#include "lab/run_store.h"
#include "tests/lab/corpus_fixture.h"
#include "tests/support/faults_tried.h"
#include "ui/main_window.h"

#include "test_support.h"

namespace normlab::ui {
namespace {

class SaveFailureTest : public test::CorpusFixture {
 protected:
  void TearDown() override {
    window_.reset();
    for (const QString& dir : mounts_) ::umount2(dir.toUtf8().constData(), MNT_DETACH);
  }

  void open_window(const QString& data_folder) {
    data_ = data_folder;
    MainWindowOptions options;
    options.data_folder = data_folder;
    options.report_error = [this](const QString& title, const QString& text) { errors_ << title + ": " + text; };
    options.confirm = [](const QString&, const QString&) { return true; };
    window_.reset();
    window_ = std::make_unique<MainWindow>(options);
  }

  // A 64 KiB tmpfs as the data folder, if this process may mount one.
  bool mount_tiny_tmpfs(const QString& dir) {
    QDir().mkpath(dir);
    if (::mount("tmpfs", dir.toUtf8().constData(), "tmpfs", 0, "size=64k") != 0) return false;
    mounts_ << dir;
    return true;
  }

  // A copy: the store's entries move when runs are added.
  // Without weights: the 64 KiB tmpfs holds a run file, not its weights.
  lab::RunEntry train(int steps) {
    TrainConfig config = test::tiny_config(corpus_, steps);
    config.final_weights = "drop";
    const int id = window_->lab().queue_run(config);
    EXPECT_TRUE(test::wait_until(
        [&] {
          return window_->store().find(id)->record.status != RunStatus::Running &&
                 window_->store().find(id)->record.status != RunStatus::Queued;
        },
        kTrainTimeoutMs));
    return *window_->store().find(id);
  }

  // Trains one run that saves; makes the data folder refuse writes with `refuse`; trains a
  // second run, checks what the user was told and what is in memory and on disk.
  void check(
      const std::string& fault, const QString& reason, const std::function<void()>& refuse,
      const std::function<void()>& allow = [] {}) {
    SCOPED_TRACE(fault);
    errors_.clear();
    const lab::RunEntry first = train(30);
    ASSERT_EQ(first.record.status, RunStatus::Done) << first.record.message;
    QFile first_file(first.file);
    ASSERT_TRUE(first_file.open(QIODevice::ReadOnly));
    const QByteArray first_bytes = first_file.readAll();
    ASSERT_TRUE(errors_.isEmpty()) << errors_.join('\n').toStdString();

    refuse();
    const lab::RunEntry second = train(30);
    allow();
    EXPECT_EQ(second.record.status, RunStatus::Done) << second.record.message;
    EXPECT_EQ(second.record.steps.size(), 30u);
    EXPECT_EQ(second.record.evals.size(), 4u);
    ASSERT_EQ(errors_.size(), 1) << errors_.join('\n').toStdString();  // told once, not at every save
    EXPECT_TRUE(errors_.front().startsWith(QStringLiteral("Run not saved: "))) << errors_.front().toStdString();
    EXPECT_TRUE(errors_.front().contains(reason)) << errors_.front().toStdString();

    // What reached the disk is whole: the first run as it was, the second as last saved.
    QFile again(first.file);
    ASSERT_TRUE(again.open(QIODevice::ReadOnly));
    EXPECT_EQ(again.readAll(), first_bytes);
    if (QFile::exists(second.file)) {
      EXPECT_LT(read_json(second.file.toStdString()).steps.size(), 30u);
    }
    for (const QString& name : QDir(data_).entryList(QDir::Files)) {
      EXPECT_FALSE(name.contains(QStringLiteral(".tmp-"))) << name.toStdString();
    }
    const QString exported =
        folder_.filePath(QString::fromStdString("export-" + std::to_string(tried_.size()) + ".json"));
    ASSERT_TRUE(window_->export_runs(lab::RunExport::Json, {second.id}, exported));
    EXPECT_EQ(read_json(exported.toStdString()).steps.size(), 30u);
    tried_.push_back(fault);
  }

  QString data_;
  QStringList errors_;
  std::unique_ptr<MainWindow> window_;
  QStringList mounts_;
  std::vector<std::string> tried_;
};

TEST_F(SaveFailureTest, DataFolderRefusingWrites) {
  const QString full = folder_.filePath(QStringLiteral("full"));
  if (mount_tiny_tmpfs(full)) {
    open_window(full);
    check("full tmpfs", QStringLiteral("No space left on device"), [&] {
      QFile filler(QDir(full).filePath(QStringLiteral("filler")));
      ASSERT_TRUE(filler.open(QIODevice::WriteOnly | QIODevice::Unbuffered));
      const QByteArray block(4096, 'x');
      while (filler.write(block) == block.size()) {
      }
    });
  }
  const QString read_only = folder_.filePath(QStringLiteral("read-only"));
  if (mount_tiny_tmpfs(read_only)) {
    open_window(read_only);
    check("read-only tmpfs", QStringLiteral("Read-only file system"), [&] {
      ASSERT_EQ(::mount(nullptr, read_only.toUtf8().constData(), nullptr, MS_REMOUNT | MS_RDONLY, "size=64k"), 0);
    });
  }
  const QString locked = folder_.filePath(QStringLiteral("locked"));
  const auto writable = QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner;
  QDir().mkpath(locked);
  QFile::setPermissions(locked, QFile::ReadOwner | QFile::ExeOwner);
  const bool permissions_bind = ::access(locked.toUtf8().constData(), W_OK) != 0;  // not for root
  QFile::setPermissions(locked, writable);
  if (permissions_bind) {
    open_window(locked);
    check(
        "folder without write permission", QStringLiteral("Permission denied"),
        [&] { QFile::setPermissions(locked, QFile::ReadOwner | QFile::ExeOwner); },
        [&] { QFile::setPermissions(locked, writable); });
  }
  // A disk that fills during the run: each file this process writes is capped at 2 KiB,
  // more than the run's first save needs, less than its later ones.
  const QString capped = folder_.filePath(QStringLiteral("capped"));
  open_window(capped);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);
  check(
      "file size limit", QStringLiteral("File too large"),
      [&] {
        rlimit limited = saved;
        limited.rlim_cur = 2048;
        ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
      },
      [&] { ::setrlimit(RLIMIT_FSIZE, &saved); });
  ::signal(SIGXFSZ, old_handler);

  normlab::test::report_faults_tried(tried_);
}

}  // namespace
}  // namespace normlab::ui
