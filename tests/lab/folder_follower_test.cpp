// Following a folder that others write: runs appear, grow, settle and go; the sweep's
// description rebuilds the sweep; with notifications off (a network mount) polling finds
// every change; and following never writes into the folder, or beside it.
#include "lab/folder_follower.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include "core/system/atomic_file.h"
#include "lab/lab.h"
#include "lab/run_store.h"

#include "test_support.h"

namespace normlab::lab {
namespace {

// A little over one poll, for a change to be seen without a notification on a busy machine.
constexpr int kSeenMs = 3 * FolderFollower::kPollMs;

// Every file and folder under `root` and beside it (a lock would go there): its bytes and
// modification time, and the folder's own.
QMap<QString, QString> snapshot(const QString& root) {
  QMap<QString, QString> seen;
  const QFileInfo folder(root);
  for (const QString& beside : folder.dir().entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)) {
    seen[QStringLiteral("beside/") + beside] = QString();
  }
  seen[root] = folder.lastModified().toString(Qt::ISODateWithMs);
  QDirIterator it(root, QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    QFile file(path);
    const QByteArray bytes = it.fileInfo().isFile() && file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    seen[path] = it.fileInfo().lastModified().toString(Qt::ISODateWithMs) + QLatin1Char(' ') +
                 QString::fromLatin1(bytes.toBase64());
  }
  return seen;
}

class FolderFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(parent_.isValid());
    ASSERT_TRUE(QDir().mkpath(folder()));
  }
  QString folder() const { return parent_.filePath(QStringLiteral("sweep runs")); }
  std::string file(const char* name) const { return QDir(folder()).filePath(QString::fromUtf8(name)).toStdString(); }
  // A run as a trainer saves it after `steps` of its 100.
  static RunRecord run_at(NormPlacement norm, int steps, RunStatus status) {
    RunRecord run = test::synthetic_run(norm, 1e-3, 30, 100, 10);
    run.steps.resize(std::size_t(steps));
    while (!run.evals.empty() && run.evals.back().step > steps) run.evals.pop_back();
    run.status = status;
    return run;
  }

  QTemporaryDir parent_;
};

TEST_F(FolderFollowerTest, PollingAloneFollowsRunsAsTheyChange) {
  const RunRecord done = run_at(NormPlacement::Pre, 100, RunStatus::Done);
  write_json(done, file("pre.json"));
  write_file_atomically(file("other.slurm-jobs.json"), "{\"tasks\": {\"0\": \"12\"}}\n");  // not a run
  write_file_atomically(file("damaged.json"), "{\"version\": 4, \"config\": ");
  Sweep sweep;
  sweep.name = "depth";
  sweep.setting = "layers";
  sweep.values = {"2", "4"};
  sweep.placements = {NormPlacement::Pre, NormPlacement::Post};
  sweep.base = scaled(TrainConfig{}, Scale::Cpu);
  write_file_atomically(sweep_description_path(folder().toStdString(), sweep.name), sweep_json_text(sweep, {}));

  RunStore store;
  FolderFollower follower(store, FolderFollower::Watch::PollingOnly);
  std::optional<Sweep> found;
  QObject::connect(&follower, &FolderFollower::sweep_found, [&](const Sweep& s) { found = s; });
  ASSERT_EQ(follower.follow(folder()), QString());
  ASSERT_EQ(store.runs().size(), 1u) << "the run, not the jobs' record, the damaged file or the description";
  EXPECT_TRUE(store.runs()[0].followed);
  EXPECT_TRUE(store.runs()[0].file.isEmpty()) << "the lab never writes or deletes a followed run's file";
  ASSERT_TRUE(found);
  EXPECT_EQ(found->values, sweep.values);
  EXPECT_EQ(expand(*found).size(), 4u);

  // A new run appears, grows, and settles.
  RunRecord running = run_at(NormPlacement::Post, 20, RunStatus::Running);
  write_json(running, file("post.json"));
  ASSERT_TRUE(test::wait_until([&] { return store.runs().size() == 2; }, kSeenMs));
  const int id = store.runs()[1].id;
  EXPECT_EQ(store.find(id)->record.status, RunStatus::Running);
  EXPECT_EQ(store.find(id)->record.steps.size(), 20u);
  write_json(run_at(NormPlacement::Post, 60, RunStatus::Running), file("post.json"));
  ASSERT_TRUE(test::wait_until([&] { return store.find(id)->record.steps.size() == 60; }, kSeenMs));
  write_json(run_at(NormPlacement::Post, 100, RunStatus::Done), file("post.json"));
  ASSERT_TRUE(test::wait_until([&] { return store.find(id)->record.status == RunStatus::Done; }, kSeenMs));
  EXPECT_EQ(store.find(id)->record.steps.size(), 100u);
  EXPECT_EQ(store.runs().size(), 2u) << "updated in place, not added again";

  // A run whose file goes goes from the view too.
  QFile::remove(QString::fromStdString(file("pre.json")));
  ASSERT_TRUE(test::wait_until([&] { return store.runs().size() == 1; }, kSeenMs));
  EXPECT_EQ(store.runs()[0].id, id);
  EXPECT_TRUE(QFile::exists(QString::fromStdString(file("damaged.json")))) << "a damaged file stays where it is";
}

// What the folder held before following is what it holds after a few polls: the same bytes
// and times, no lock beside it, no folder for damaged files, in a Lab as the window runs it.
TEST_F(FolderFollowerTest, FollowingNeverWritesIntoTheFolder) {
  write_json(run_at(NormPlacement::Pre, 100, RunStatus::Done), file("pre.json"));
  write_json(run_at(NormPlacement::Post, 40, RunStatus::Running), file("post.json"));
  write_file_atomically(file("damaged.json"), "not json");
  const QMap<QString, QString> before = snapshot(folder());

  QTemporaryDir own;
  Lab lab(own.filePath(QStringLiteral("runs")));
  ASSERT_EQ(lab.follow_folder(folder()), QString());
  EXPECT_EQ(lab.store().runs().size(), 2u);
  EXPECT_FALSE(lab.has_runs_to_continue());
  const QList<int> ids{lab.store().runs()[0].id, lab.store().runs()[1].id};
  lab.remove_runs(ids);  // from the view only
  lab.drop_checkpoints(ids);
  test::wait_until([] { return false; }, 2 * FolderFollower::kPollMs + 500);
  lab.shutdown();
  EXPECT_EQ(snapshot(folder()), before);
}

TEST_F(FolderFollowerTest, NotificationsBringAChangeBeforeThePoll) {
  RunStore store;
  FolderFollower follower(store, FolderFollower::Watch::NotificationsAndPolling);
  ASSERT_EQ(follower.follow(folder()), QString());
  test::wait_until([] { return false; }, 50);  // the watch set up
  write_json(run_at(NormPlacement::Pre, 10, RunStatus::Running), file("pre.json"));
  EXPECT_TRUE(test::wait_until([&] { return store.runs().size() == 1; }, FolderFollower::kPollMs - 500));
}

// A run whose file says running but has not changed for a minute lost its process: shown
// as interrupted (the file left as it is), and back to running when its file changes again.
TEST_F(FolderFollowerTest, ARunWhoseFileFellSilentShowsAsInterrupted) {
  write_json(run_at(NormPlacement::Pre, 10, RunStatus::Running), file("pre.json"));
  QFile silent(QString::fromStdString(file("pre.json")));
  ASSERT_TRUE(silent.open(QIODevice::ReadWrite));
  ASSERT_TRUE(silent.setFileTime(QDateTime::currentDateTime().addSecs(-qint64(kLostAfterSeconds) - 5),
                                 QFileDevice::FileModificationTime));
  silent.close();
  const QByteArray bytes = [&] {
    QFile f(silent.fileName());
    f.open(QIODevice::ReadOnly);
    return f.readAll();
  }();
  RunStore store;
  FolderFollower follower(store, FolderFollower::Watch::PollingOnly);
  ASSERT_EQ(follower.follow(folder()), QString());
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].record.status, RunStatus::Interrupted);
  EXPECT_TRUE(QString::fromStdString(store.runs()[0].record.message).contains(QStringLiteral("has not changed")));
  QFile after(silent.fileName());
  ASSERT_TRUE(after.open(QIODevice::ReadOnly));
  EXPECT_EQ(after.readAll(), bytes);

  write_json(run_at(NormPlacement::Pre, 20, RunStatus::Running), file("pre.json"));
  ASSERT_TRUE(test::wait_until([&] { return store.runs()[0].record.status == RunStatus::Running; }, kSeenMs));
  EXPECT_EQ(store.runs()[0].record.steps.size(), 20u);
}

TEST_F(FolderFollowerTest, RefusesWhatIsNotAFolder) {
  RunStore store;
  FolderFollower follower(store);
  EXPECT_TRUE(follower.follow(parent_.filePath(QStringLiteral("nowhere"))).contains(QStringLiteral("not a folder")));
  write_json(run_at(NormPlacement::Pre, 10, RunStatus::Running), file("pre.json"));
  EXPECT_TRUE(follower.follow(QString::fromStdString(file("pre.json"))).contains(QStringLiteral("not a folder")));
  EXPECT_TRUE(store.runs().empty());
}

}  // namespace
}  // namespace normlab::lab
