// The lab without a widget: queueing, stopping, restoring after a kill, the folder's lock,
// the course experiment and sweeps, all under a QCoreApplication.
#include "lab/lab.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <gtest/gtest.h>
#include <string_view>

#include "core/device/cuda_backend.h"
#include "core/runs/config_fields.h"
#include "core/runs/run_text.h"
#include "core/runs/run_title.h"
#include "core/runs/seeds.h"
#include "core/system/atomic_file.h"
#include "core/training/side_by_side.h"
#include "core/training/trainer.h"
#include "lab/qstring.h"
#include "tests/support/same_losses.h"

#include "corpus_fixture.h"
#include "test_support.h"

namespace normlab::lab {
namespace {

class LabTest : public test::CorpusFixture {
 protected:
  QString runs() const { return folder_.filePath(QStringLiteral("runs")); }
  TrainConfig tiny(int steps) const {
    TrainConfig c = test::tiny_config(corpus_, steps);
    c.threads = 1;
    return c;
  }
  // A run as if trained and finished here before.
  static RunRecord finished(TrainConfig config, RunStatus status = RunStatus::Done) {
    RunRecord run;
    config.name = default_run_name(config);
    run.config = config;
    run.status = status;
    run.baseline_loss = 5;
    run.environment.device = "cpu";
    for (int step = 1; step <= config.steps; ++step) run.steps.push_back({step, 0.01 * step, 1e-3, 4.0, 1000});
    run.evals.push_back({config.steps, 0.01 * config.steps, 4.2});
    return run;
  }
  static bool idle(Lab& lab) {
    return test::wait_until([&] { return !lab.queue().busy(); }, kTrainTimeoutMs);
  }
};

TEST_F(LabTest, TrainsQueuedRunsInOrderAndSavesEachToItsFile) {
  Lab lab(runs());
  lab.probe_device();
  ASSERT_TRUE(test::wait_until([&] { return lab.device_known(); }, 60000));
  lab.set_side_by_side(1);
  const int first = lab.queue_run(tiny(12)), second = lab.queue_run(tiny(12));
  ASSERT_TRUE(first && second);
  EXPECT_NE(lab.store().find(first)->record.config.name, lab.store().find(second)->record.config.name);
  EXPECT_EQ(lab.queue().running(), QList<int>{first});
  EXPECT_EQ(lab.store().find(second)->record.status, RunStatus::Queued);
  ASSERT_TRUE(idle(lab));
  for (const int id : {first, second}) {
    const RunEntry& run = *lab.store().find(id);
    EXPECT_EQ(run.record.status, RunStatus::Done);
    EXPECT_EQ(read_json(run.file.toStdString()).steps.size(), 12u) << "the file holds the whole run";
  }
  EXPECT_TRUE(lab.queue().progress().running.empty());
}

// Issue 16: runs side by side train together, each with its share of the cores, and give
// the numbers they give alone with the same thread count.
TEST_F(LabTest, RunsSideBySideTrainTogetherWithTheNumbersTheyHaveAlone) {
  Lab lab(runs());
  lab.set_side_by_side(2);
  TrainConfig pre = tiny(30), post = tiny(30);
  pre.threads = post.threads = 0;  // the lab's share
  post.model.norm = NormPlacement::Post;
  const int a = lab.queue_run(pre), b = lab.queue_run(post);
  EXPECT_EQ(lab.queue().running(), (QList<int>{a, b})) << "both start at once";
  bool together = false;
  ASSERT_TRUE(test::wait_until(
      [&] {
        const auto& ra = lab.store().find(a)->record;
        const auto& rb = lab.store().find(b)->record;
        together = together || (ra.status == RunStatus::Running && rb.status == RunStatus::Running &&
                                !ra.steps.empty() && !rb.steps.empty());
        return !lab.queue().busy();
      },
      kTrainTimeoutMs));
  EXPECT_TRUE(together) << "both stepped while the other trained";
  for (const auto& [id, config] : {std::pair{a, pre}, std::pair{b, post}}) {
    const RunRecord& run = lab.store().find(id)->record;
    ASSERT_EQ(run.status, RunStatus::Done) << run.message;
    EXPECT_EQ(run.environment.threads, threads_per_run(2));
    TrainConfig alone = config;
    alone.threads = threads_per_run(2);
    normlab::test::expect_same_losses(run, normlab::train(alone, {}));
  }
}

// Stop acts on one run of those side by side; the other trains on and a queued run takes
// the freed place.
TEST_F(LabTest, StoppingOneRunSideBySideLetsTheOtherTrainOn) {
  Lab lab(runs());
  lab.set_side_by_side(2);
  const int first = lab.queue_run(tiny(1'000'000)), second = lab.queue_run(tiny(1'000'000));
  const int third = lab.queue_run(tiny(1'000'000));
  const auto steps = [&](int id) { return lab.store().find(id)->record.steps.size(); };
  ASSERT_TRUE(test::wait_until([&] { return steps(first) >= 3 && steps(second) >= 3; }, kTrainTimeoutMs));
  EXPECT_TRUE(lab.queue().is_queued(third) && !lab.queue().is_running(third));
  lab.stop_runs({first});
  ASSERT_TRUE(test::wait_until([&] { return lab.queue().is_running(third); }, kTrainTimeoutMs));
  EXPECT_EQ(lab.store().find(first)->record.status, RunStatus::Stopped);
  const std::size_t second_steps = steps(second);
  ASSERT_TRUE(
      test::wait_until([&] { return steps(second) >= second_steps + 3 && steps(third) >= 1; }, kTrainTimeoutMs));
  EXPECT_EQ(lab.queue().running(), (QList<int>{second, third}));
  lab.stop_all();
  ASSERT_TRUE(idle(lab));
  for (const int id : {first, second, third}) {
    EXPECT_EQ(read_json(lab.store().find(id)->file.toStdString()).status, RunStatus::Stopped) << id;
  }
}

// The window's numbers are the engine's: a run the lab trains equals normlab::train's.
TEST_F(LabTest, ARunItTrainsEqualsTheEnginesToTheLastDigit) {
  const TrainConfig config = tiny(15);
  const RunRecord direct = normlab::train(config, {});
  Lab lab(runs());
  const int id = lab.queue_run(config);
  ASSERT_TRUE(idle(lab));
  const RunRecord& through = lab.store().find(id)->record;
  ASSERT_EQ(through.steps.size(), direct.steps.size());
  for (std::size_t i = 0; i < direct.steps.size(); ++i)
    EXPECT_EQ(through.steps[i].train_loss, direct.steps[i].train_loss) << i;
  ASSERT_EQ(through.evals.size(), direct.evals.size());
  for (std::size_t i = 0; i < direct.evals.size(); ++i)
    EXPECT_EQ(through.evals[i].val_loss, direct.evals[i].val_loss) << i;
}

TEST_F(LabTest, StopAllKeepsTheRunningRunsPointsAndRemovesTheQueuedWithTheirFiles) {
  Lab lab(runs());
  lab.set_side_by_side(2);
  const QList<int> running{lab.queue_run(tiny(1'000'000)), lab.queue_run(tiny(1'000'000))};
  const int waiting = lab.queue_run(tiny(10));
  const QString waiting_file = lab.store().find(waiting)->file;
  ASSERT_TRUE(QFile::exists(waiting_file)) << "a queued run is saved at once";
  ASSERT_TRUE(test::wait_until(
      [&] {
        return lab.store().find(running[0])->record.steps.size() >= 3 &&
               lab.store().find(running[1])->record.steps.size() >= 3;
      },
      kTrainTimeoutMs));
  lab.stop_all();
  ASSERT_TRUE(idle(lab));
  EXPECT_FALSE(lab.store().find(waiting));
  EXPECT_FALSE(QFile::exists(waiting_file));
  for (const int id : running) {
    EXPECT_EQ(lab.store().find(id)->record.status, RunStatus::Stopped);
    EXPECT_EQ(read_json(lab.store().find(id)->file.toStdString()).status, RunStatus::Stopped);
  }
}

// A real NormLab process killed with SIGKILL while it trains: the next lab on its folder
// takes the folder over and brings every run back, the killed one as interrupted.
TEST_F(LabTest, RestoresEveryRunAfterItsProcessIsKilled) {
  QProcess child;
  child.setProcessChannelMode(QProcess::ForwardedChannels);
  child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--train-until-killed"), runs(), corpus_});
  ASSERT_TRUE(child.waitForStarted());
  // Wait for both runs side by side to have steps in their files, saved as they trained.
  QStringList training;
  ASSERT_TRUE(test::wait_until(
      [&] {
        training.clear();
        for (const QString& name : QDir(runs()).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
          try {
            const RunRecord run = read_json(QDir(runs()).filePath(name).toStdString());
            if (run.status == RunStatus::Running && !run.steps.empty()) training << name;
          } catch (const std::exception&) {
          }
        }
        return training.size() == 2;
      },
      kTrainTimeoutMs));
  {
    Lab meanwhile(runs());
    EXPECT_TRUE(meanwhile.read_only()) << "never two writers of one runs folder";
    EXPECT_TRUE(meanwhile.archive().owner().contains(QString::number(child.processId())))
        << meanwhile.archive().owner().toStdString();
    EXPECT_EQ(meanwhile.queue_run(tiny(5)), 0);
  }
  child.kill();
  ASSERT_TRUE(child.waitForFinished());

  Lab next(runs());
  ASSERT_FALSE(next.read_only()) << "the killed owner's lock is stale";
  const RunArchive::Restored restored = next.restore();
  EXPECT_TRUE(restored.damaged.isEmpty() && restored.unmovable.isEmpty());
  ASSERT_EQ(next.store().runs().size(), 3u);
  for (int i : {0, 1}) {
    const RunEntry& killed = next.store().runs()[std::size_t(i)];
    EXPECT_TRUE(training.contains(QFileInfo(killed.file).fileName())) << killed.file.toStdString();
    EXPECT_EQ(killed.record.status, RunStatus::Interrupted);
    EXPECT_FALSE(killed.record.steps.empty());
  }
  EXPECT_EQ(next.store().runs()[2].record.status, RunStatus::Queued);
  EXPECT_TRUE(next.has_runs_to_continue());
  EXPECT_FALSE(next.queue().busy()) << "nothing starts by itself";
}

// Issue 17: a stopped run goes on from its checkpoint with the numbers it would have had.
TEST_F(LabTest, AStoppedRunResumesWithTheNumbersItWouldHaveHad) {
  TrainConfig config = tiny(60);
  config.checkpoint_interval = 0;  // a checkpoint with every save
  Lab lab(runs());
  const int reference = lab.queue_run(config);
  ASSERT_TRUE(idle(lab));
  const int stopped = lab.queue_run(config);
  ASSERT_TRUE(test::wait_until([&] { return lab.store().find(stopped)->record.steps.size() >= 15; }, kTrainTimeoutMs));
  lab.stop_run();
  ASSERT_TRUE(idle(lab));
  ASSERT_EQ(lab.store().find(stopped)->record.status, RunStatus::Stopped);
  ASSERT_TRUE(lab.has_checkpoint(stopped));
  EXPECT_FALSE(lab.has_checkpoint(reference)) << "a done run drops its checkpoint";
  EXPECT_NE(lab.resume_run(reference), QString()) << "a done run is not resumed";
  ASSERT_EQ(lab.resume_run(stopped), QString());
  ASSERT_TRUE(idle(lab));
  const RunRecord& resumed = lab.store().find(stopped)->record;
  EXPECT_EQ(resumed.status, RunStatus::Done) << resumed.message;
  ASSERT_EQ(resumed.steps.size(), 60u);
  normlab::test::expect_same_losses(resumed, lab.store().find(reference)->record);
  EXPECT_EQ(read_json(lab.store().find(stopped)->file.toStdString()).steps.size(), 60u);
  EXPECT_FALSE(QFile::exists(RunArchive::checkpoint_of(lab.store().find(stopped)->file))) << "done: dropped";
}

// Issue 17, across a kill: a NormLab process killed with SIGKILL while it trains; the next
// lab resumes the interrupted run and it goes on with the uninterrupted run's numbers.
TEST_F(LabTest, AKilledRunResumesInTheNextLabWithTheSameNumbers) {
  QProcess child;
  child.setProcessChannelMode(QProcess::ForwardedChannels);
  child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--train-until-killed"), runs(), corpus_});
  ASSERT_TRUE(child.waitForStarted());
  ASSERT_TRUE(test::wait_until(
      [&] {
        for (const QString& name : QDir(runs()).entryList({QStringLiteral("*.ckpt")}, QDir::Files)) {
          if (QFileInfo(QDir(runs()).filePath(name)).size() > 0) return true;
        }
        return false;
      },
      kTrainTimeoutMs))
      << "no checkpoint was written";
  test::wait_until([] { return false; }, 300);  // a few more steps past it
  child.kill();
  ASSERT_TRUE(child.waitForFinished());

  Lab next(runs());
  next.restore();
  ASSERT_FALSE(next.store().runs().empty());
  const int killed = next.store().runs()[0].id;
  ASSERT_EQ(next.store().find(killed)->record.status, RunStatus::Interrupted);
  ASSERT_TRUE(next.has_checkpoint(killed));
  const int saved_steps = int(next.store().find(killed)->record.steps.size());
  ASSERT_EQ(next.resume_run(killed), QString());
  ASSERT_TRUE(test::wait_until(
      [&] {
        const RunRecord& r = next.store().find(killed)->record;
        return r.status == RunStatus::Running && int(r.steps.size()) >= saved_steps + 20;
      },
      kTrainTimeoutMs));
  next.stop_all();
  ASSERT_TRUE(idle(next));
  const RunRecord resumed = next.store().find(killed)->record;

  // The same run uninterrupted, as far as the resumed one went.
  Lab reference_lab(folder_.filePath(QStringLiteral("reference")));
  const int reference = reference_lab.queue_run(resumed.config);
  ASSERT_TRUE(test::wait_until(
      [&] { return reference_lab.store().find(reference)->record.steps.size() > resumed.steps.size(); },
      kTrainTimeoutMs));
  reference_lab.stop_all();
  ASSERT_TRUE(idle(reference_lab));
  normlab::test::expect_same_losses(resumed, reference_lab.store().find(reference)->record);
}

// Issue 49, item 7: closing the window mid-training marked the runs "stopped by the
// user", so Continue interrupted and queued runs was greyed out for them. A lab shut down
// while a run trains leaves it interrupted, with its checkpoint, and the next one continues it.
TEST_F(LabTest, ShuttingDownMidTrainingLeavesTheRunToContinue) {
  TrainConfig config = tiny(1'000'000);
  config.checkpoint_interval = 0;  // a checkpoint with every save
  QString file;
  {
    Lab lab(runs());
    const int id = lab.queue_run(config);
    ASSERT_TRUE(test::wait_until([&] { return lab.store().find(id)->record.steps.size() >= 3; }, kTrainTimeoutMs));
    file = lab.store().find(id)->file;
    lab.shutdown();
  }
  const RunRecord saved = read_json(file.toStdString());
  EXPECT_EQ(saved.status, RunStatus::Interrupted);
  EXPECT_NE(saved.message.find("closed"), std::string::npos) << saved.message;
  Lab next(runs());
  next.restore();
  ASSERT_EQ(next.store().runs().size(), 1u);
  EXPECT_TRUE(next.has_runs_to_continue());
  QStringList notes;
  QObject::connect(&next, &Lab::note, &next, [&](const QString& text) { notes << text; });
  EXPECT_TRUE(next.continue_runs().isEmpty());
  ASSERT_EQ(notes.size(), 1);
  EXPECT_TRUE(notes[0].contains(QStringLiteral("goes on from step %1").arg(saved.steps.back().step)))
      << notes[0].toStdString();
  next.stop_all();
  ASSERT_TRUE(idle(next));
}

// After kill -9, Continue went back to the checkpoint, about 90 steps before where the run
// had got, without a word. It says from which step, and why.
TEST(ResumeNote, SaysFromWhichStepAndWhyItGoesBack) {
  RunStore store;
  RunRecord run;
  run.config.name = "killed";
  run.status = RunStatus::Interrupted;
  for (int s = 1; s <= 540; ++s) run.steps.push_back({s, 0.0, 1e-3, 6.0, 0.0});
  const int id = store.add(run, {});
  const QString back = resume_note(*store.find(id), 450);
  EXPECT_TRUE(back.contains(QStringLiteral("checkpoint at step 450"))) << back.toStdString();
  EXPECT_TRUE(back.contains(QStringLiteral("90 steps"))) << back.toStdString();
  EXPECT_TRUE(back.contains(QStringLiteral("to step 540"))) << back.toStdString();
  EXPECT_TRUE(resume_note(*store.find(id), 540).contains(QStringLiteral("goes on from step 540")));
}

// Issue 29: after a crash, Resume went on with the selected interrupted runs while the
// runs queued behind them waited for Start queued runs. One action now goes on with what
// the last session left, in the order the runs were queued: interrupted runs resume from
// their checkpoints, queued ones start; a run stopped on purpose stays stopped.
TEST_F(LabTest, ContinuingResumesTheInterruptedRunsAndStartsTheQueuedInTheirOrder) {
  TrainConfig config = tiny(1'000'000);
  config.checkpoint_interval = 0;  // a checkpoint with every save
  QStringList files;
  {
    Lab lab(runs());
    lab.set_side_by_side(1);
    for (int i = 0; i < 2; ++i) {
      const int id = lab.queue_run(config);
      ASSERT_TRUE(test::wait_until([&] { return QFile::exists(RunArchive::checkpoint_of(lab.store().find(id)->file)); },
                                   kTrainTimeoutMs));
      lab.stop_run();
      ASSERT_TRUE(idle(lab));
      files << lab.store().find(id)->file;
    }
    // The first as a killed process leaves it; the second was stopped by hand.
    RunRecord killed = read_json(files[0].toStdString());
    killed.status = RunStatus::Running;
    write_json(killed, files[0].toStdString());
    lab.shutdown();
  }
  // Two runs queued after them, as the course leaves its later seeds.
  for (const char* name : {"later", "last"}) {
    RunRecord queued;
    queued.config = tiny(5);
    queued.config.name = name;
    queued.status = RunStatus::Queued;
    // Named as the archive names them, after the two runs before.
    const QString file = QStringLiteral("99990101-000000-%1-%2.json").arg(files.size() + 1).arg(name);
    files << QDir(runs()).filePath(file);
    write_json(queued, files.back().toStdString());
  }
  Lab next(runs());
  next.set_side_by_side(1);
  next.restore();
  const auto& back = next.store().runs();
  ASSERT_EQ(back.size(), 4u);
  ASSERT_EQ(back[0].record.status, RunStatus::Interrupted);
  ASSERT_EQ(back[1].record.status, RunStatus::Stopped);
  ASSERT_TRUE(next.has_runs_to_continue());
  EXPECT_TRUE(next.continue_runs().isEmpty());
  EXPECT_FALSE(next.has_runs_to_continue());
  EXPECT_EQ(next.queue().running(), QList<int>{back[0].id}) << "the interrupted run goes on first";
  EXPECT_EQ(next.queue().pending(), (QList<int>{back[2].id, back[3].id}));
  EXPECT_EQ(back[1].record.status, RunStatus::Stopped);
  next.stop_all();
  ASSERT_TRUE(idle(next));
}

// A checkpoint that cannot continue the run is refused with the reason; nothing is lost,
// and a sweep or the course then trains that point afresh.
TEST_F(LabTest, ADamagedCheckpointIsRefusedAndThePointTrainsAfresh) {
  TrainConfig config = tiny(1'000'000);
  config.checkpoint_interval = 0;
  Lab lab(runs());
  const int id = lab.queue_run(config);
  ASSERT_TRUE(test::wait_until([&] { return lab.has_checkpoint(id) || lab.store().find(id)->record.steps.size() > 50; },
                               kTrainTimeoutMs));
  lab.stop_run();
  ASSERT_TRUE(idle(lab));
  ASSERT_TRUE(lab.has_checkpoint(id));
  const QString checkpoint = RunArchive::checkpoint_of(lab.store().find(id)->file);
  QFile file(checkpoint);
  ASSERT_TRUE(file.resize(file.size() / 2));  // cut, as by a full disk
  const QString why = lab.resume_run(id);
  EXPECT_FALSE(why.isEmpty());
  EXPECT_EQ(lab.store().find(id)->record.status, RunStatus::Stopped);
  EXPECT_TRUE(QFile::exists(checkpoint) && QFile::exists(lab.store().find(id)->file)) << "nothing deleted";

  Sweep sweep;
  sweep.base = config;
  sweep.setting = "layers";
  sweep.values = {std::to_string(config.model.layers)};
  sweep.placements = {config.model.norm};
  lab.start_sweep(sweep);
  ASSERT_EQ(lab.store().runs().size(), 2u) << "trained afresh beside the stopped run";
  lab.stop_all();
}

TEST_F(LabTest, ASecondLabOnTheFolderOnlyReadsIt) {
  auto first = std::make_unique<Lab>(runs());
  const int id = first->queue_run(tiny(1'000'000));
  Lab second(runs());
  ASSERT_TRUE(second.read_only());
  EXPECT_TRUE(second.archive().owner().contains(QString::number(QCoreApplication::applicationPid())));
  second.restore();
  ASSERT_EQ(second.store().runs().size(), 1u);
  EXPECT_NE(second.store().runs()[0].record.status, RunStatus::Interrupted) << "the owner still trains it";
  EXPECT_EQ(second.queue_run(tiny(5)), 0);
  EXPECT_FALSE(second.removable(second.store().runs()[0].id));
  second.remove_runs({second.store().runs()[0].id});
  EXPECT_TRUE(QFile::exists(first->store().find(id)->file)) << "a reader deletes nothing";
  first.reset();  // its session ends: the folder is free
  Lab third(runs());
  EXPECT_FALSE(third.read_only());
}

// Defect: Start pressed while the device was still being looked for queued a full-size
// run (3000 x 32 x 128) on a CPU; it must wait for the device and take its scale.
TEST_F(LabTest, StartBeforeTheDeviceIsKnownWaitsAndTakesTheDevicesScale) {
  Lab lab(runs());
  int notes = 0;
  QObject::connect(&lab, &Lab::note, [&] { ++notes; });
  TrainConfig defaults;  // the panel's full-scale schedule, untouched
  defaults.corpus_path = corpus_.toStdString();
  lab.start_run(defaults);
  EXPECT_TRUE(lab.store().runs().empty()) << "nothing queued before the device is known";
  EXPECT_EQ(notes, 1) << "and says why";
  lab.probe_device();
  ASSERT_TRUE(test::wait_until([&] { return lab.device_known(); }, 60000));
  ASSERT_EQ(lab.store().runs().size(), 1u);
  const TrainConfig queued = lab.store().runs()[0].record.config;
  const TrainConfig expected = scaled(TrainConfig{}, lab.course_scale());
  EXPECT_EQ(queued.steps, expected.steps);
  EXPECT_EQ(queued.batch_size, expected.batch_size);
  EXPECT_EQ(queued.model.context, expected.model.context);
  lab.stop_all();
  // A schedule the user chose is kept as it is.
  const int mine = lab.queue_run(tiny(7));
  EXPECT_EQ(lab.store().find(mine)->record.config.steps, 7);
  lab.stop_all();
}

// Without a driver there is nothing to look for: the answer is immediate, with no CUDA
// library loaded (it took 13 to 110 s in the window on this machine).
TEST_F(LabTest, WithoutAnNvidiaDriverTheDeviceIsKnownAtOnce) {
  Lab lab(runs());
  lab.probe_device();
  if (nvidia_driver_present()) {  // the worker looks; the answer follows
    ASSERT_TRUE(test::wait_until([&] { return lab.device_known(); }, 120000));
  } else {
    EXPECT_TRUE(lab.device_known());
    EXPECT_FALSE(lab.on_gpu());
    EXPECT_EQ(lab.course_scale(), Scale::Cpu);
  }
}

// Defect: the course experiment queued again runs that had finished with the same settings
// (same seed), doubling them, where a sweep would reuse them.
TEST_F(LabTest, TheCourseExperimentReusesRunsThatAnsweredIt) {
  Lab lab(runs());
  lab.probe_device();
  ASSERT_TRUE(test::wait_until([&] { return lab.device_known(); }, 60000));
  TrainConfig base;
  base.corpus_path = corpus_.toStdString();
  base.device = "cpu";
  TrainConfig course;
  copy_section(Section::DeviceAndData, base, course);
  const std::vector<TrainConfig> runs = workshop_runs(scaled(course, lab.course_scale()));
  ASSERT_EQ(runs.size(), 5u);
  for (std::size_t i = 0; i < 4; ++i) {  // four of five answered before: one done, one diverged…
    RunRecord run = finished(runs[i], i == 1 ? RunStatus::Diverged : RunStatus::Done);
    run.config.threads = 2;  // …even with another thread count: the same experiment
    lab.store().add(run, {});
  }
  lab.store().add(finished(runs[4], RunStatus::Stopped), {});  // cut short: trains again
  lab.start_course_experiment(base, 1);
  ASSERT_EQ(lab.store().runs().size(), 6u);
  EXPECT_TRUE(same_experiment(lab.store().runs().back().record.config, runs[4]));
  EXPECT_TRUE(lab.queue().is_queued(lab.store().runs().back().id));
  lab.start_course_experiment(base, 1);  // pressed again meanwhile
  EXPECT_EQ(lab.store().runs().size(), 6u) << "a run already queued is not queued twice";
  lab.start_course_experiment(base, 2);  // a second seed: five new runs
  EXPECT_EQ(lab.store().runs().size(), 11u);
  lab.stop_all();
}

TEST_F(LabTest, ASweepStandsOnTheRunsThatAnswerItsPoints) {
  Lab lab(runs());
  Sweep sweep;
  sweep.base = tiny(12);
  sweep.setting = "peak_lr";
  sweep.values = {"1e-3", "3e-3"};
  sweep.placements = {NormPlacement::Pre, NormPlacement::Post};
  const std::vector<SweepRun> points = expand(sweep);
  ASSERT_EQ(points.size(), 4u);
  lab.store().add(finished(points[0].config), {});
  lab.store().add(finished(points[1].config, RunStatus::Diverged), {});  // a result: diverging again teaches nothing
  lab.store().add(finished(points[2].config, RunStatus::Interrupted), {});
  const SweepStanding s = stand(sweep, lab);
  EXPECT_EQ(s.results.size(), 3u) << "the interrupted run is drawn until it trains again";
  ASSERT_EQ(s.to_train.size(), 2u);
  EXPECT_TRUE(same_experiment(s.to_train[0], points[2].config));
  EXPECT_TRUE(same_experiment(s.to_train[1], points[3].config));
  EXPECT_TRUE(s.pending.empty());
  EXPECT_EQ(s.ended_with_result(), 2);
  // The command line decides the same way (core's rule).
  EXPECT_TRUE(answers(lab.store().runs()[1].record, points[1].config));
  EXPECT_FALSE(answers(lab.store().runs()[2].record, points[2].config));
}

// Issue 47: the Sweeps tab's standing asked core's find_run while Start asked the fate rule
// (point_fate), so a point stopped with a sound checkpoint read "to train" (and was timed
// as a whole run) while Start resumed it. The standing now takes each point's fate from
// the same rule: the stopped run goes on, only the untrained point trains, and Start does
// what the standing said.
TEST_F(LabTest, ASweepsStandingResumesAStoppedPointAsStartWill) {
  Lab lab(runs());
  Sweep sweep;
  sweep.base = tiny(1'000'000);
  sweep.setting = "peak_lr";
  sweep.values = {"1e-3", "3e-3"};
  sweep.placements = {NormPlacement::Pre};
  const std::vector<SweepRun> points = expand(sweep);
  ASSERT_EQ(points.size(), 2u);
  TrainConfig first = points[0].config;
  first.checkpoint_interval = 0;  // a checkpoint with every save
  const int stopped = lab.queue_run(first);
  ASSERT_TRUE(test::wait_until([&] { return lab.store().find(stopped)->record.steps.size() >= 3; }, kTrainTimeoutMs));
  lab.stop_run();
  ASSERT_TRUE(idle(lab));
  ASSERT_EQ(lab.store().find(stopped)->record.status, RunStatus::Stopped);
  ASSERT_TRUE(lab.has_checkpoint(stopped));

  const SweepStanding before = stand(sweep, lab);
  EXPECT_EQ(before.to_resume, std::vector<int>{stopped}) << "it goes on from its checkpoint";
  ASSERT_EQ(before.to_train.size(), 1u) << "only the point never trained";
  EXPECT_TRUE(same_experiment(before.to_train[0], points[1].config));
  EXPECT_EQ(before.ids, (std::vector<int>{stopped, 0}));
  EXPECT_EQ(before.results.size(), 1u) << "drawn until it trains on";
  EXPECT_EQ(before.ended_with_result(), 0);
  EXPECT_EQ(lab.fate_of(points[0].config).fate, Fate::Resume);

  lab.start_sweep(sweep);
  EXPECT_EQ(lab.store().runs().size(), 2u) << "the stopped run resumed, one new run";
  EXPECT_TRUE(lab.queue().is_queued(stopped));
  const SweepStanding after = stand(sweep, lab);
  EXPECT_TRUE(after.to_resume.empty());
  EXPECT_TRUE(after.to_train.empty());
  EXPECT_EQ(after.pending.size(), 2u);
  lab.stop_all();
  ASSERT_TRUE(idle(lab));
}

// Defect: "Stop sweep" was enabled when a run started by hand matched a sweep point, and
// stopped that run. It acts only on the runs a started sweep queued.
TEST_F(LabTest, StopSweepTouchesOnlyTheRunsTheSweepQueued) {
  Lab lab(runs());
  lab.set_side_by_side(1);  // the sweep's run waits behind the one by hand
  Sweep sweep;
  sweep.base = tiny(1'000'000);
  sweep.setting = "peak_lr";
  sweep.values = {"1e-3", "3e-3"};
  sweep.placements = {NormPlacement::Pre};
  const int by_hand = lab.queue_run(expand(sweep)[0].config);
  const auto trains_on = [&] {
    const std::size_t steps = lab.store().find(by_hand)->record.steps.size();
    return test::wait_until([&] { return lab.store().find(by_hand)->record.steps.size() >= steps + 3; },
                            kTrainTimeoutMs) &&
           lab.store().find(by_hand)->record.status == RunStatus::Running;
  };
  EXPECT_FALSE(lab.sweep_in_progress()) << "no sweep was started";
  lab.stop_sweep();
  EXPECT_TRUE(trains_on()) << "stopping a sweep never started stops nothing";

  lab.start_sweep(sweep);
  ASSERT_EQ(lab.store().runs().size(), 2u) << "the run by hand answers its point";
  const int swept = lab.store().runs().back().id;
  EXPECT_TRUE(lab.sweep_in_progress());
  lab.stop_sweep();
  EXPECT_FALSE(lab.store().find(swept)) << "the sweep's waiting run is gone";
  EXPECT_TRUE(trains_on()) << "the run by hand trains on";
  EXPECT_FALSE(lab.sweep_in_progress());
  lab.stop_all();
}

// Defect: queued behind other runs, the sweep's countdown ignored them ("about 25 s left"
// with about 48 s of runs ahead).
TEST_F(LabTest, ASweepsTimeLeftCountsTheRunsQueuedBeforeIt) {
  Lab lab(runs());
  lab.set_side_by_side(1);                   // one after another: the sweep waits for the whole run ahead
  lab.store().add(finished(tiny(100)), {});  // what speed estimates rest on
  const int ahead = lab.queue_run(tiny(1'000'000));
  Sweep sweep;
  sweep.base = tiny(1000);
  sweep.setting = "layers";
  sweep.values = {"1", "2"};
  sweep.placements = {NormPlacement::Post};
  const std::vector<TrainConfig> own = stand(sweep, lab).to_train;
  lab.start_sweep(sweep);
  const SweepStanding s = stand(sweep, lab);
  ASSERT_EQ(s.pending.size(), 2u);
  const SweepTime time = lab.sweep_time(s, false);
  const double own_seconds = lab.estimate(own).seconds;
  ASSERT_GT(own_seconds, 0);
  EXPECT_GT(time.ahead_seconds, 0) << "the long run before the sweep's";
  EXPECT_NEAR(time.total.seconds, time.ahead_seconds + own_seconds, 1e-6 * time.total.seconds);
  EXPECT_TRUE(lab.queue().is_queued(ahead));
  lab.stop_all();
}

// Issue 29: a sweep's estimate said 41 s before it started and 1 min 16 s once it trained,
// which it took. Before, it rested on the latest finished run, the course's last, which had
// trained alone on every core; once started, on runs side by side, each with its share.
// Both now reckon a run's speed with the threads it will get.
TEST_F(LabTest, ASweepsEstimateBeforeItStartsReckonsTheThreadsEachRunGets) {
  Lab lab(runs());
  lab.set_side_by_side(2);
  const int share = threads_per_run(2);
  RunRecord alone = finished(tiny(100));
  alone.environment.threads = 2 * share;  // trained alone, on the cores two runs share
  lab.store().add(alone, {});
  const double took = alone.steps.back().wall_s;
  const Estimate one = lab.estimate({tiny(100)});
  EXPECT_EQ(one.basis, Estimate::Basis::FinishedRun);
  EXPECT_NEAR(one.seconds, 2 * took, 1e-9 * took) << "with half its threads, half its speed";
  EXPECT_EQ(one.measured_threads, 2 * share);
  EXPECT_EQ(one.threads_now, share);

  Sweep sweep;
  sweep.base = tiny(100);
  sweep.setting = "peak_lr";
  sweep.values = {"2e-3", "3e-3"};
  sweep.placements = {NormPlacement::Pre};
  const SweepStanding s = stand(sweep, lab);
  ASSERT_EQ(s.to_train.size(), 2u);
  EXPECT_NEAR(lab.sweep_time(s, false).total.seconds, 2 * took, 1e-9 * took) << "the two side by side";

  RunRecord shared = alone;  // trained side by side: its speed is a run's now
  shared.environment.threads = share;
  lab.store().add(shared, {});
  EXPECT_NEAR(lab.estimate({tiny(100)}).seconds, took, 1e-9 * took);
}

TEST_F(LabTest, ImportIsAllOrNothingAndKeepsACopy) {
  Lab lab(runs());
  const QString good = folder_.filePath(QStringLiteral("good.json")),
                bad = folder_.filePath(QStringLiteral("bad.json"));
  write_json(finished(tiny(5)), good.toStdString());
  QFile file(bad);
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  file.write("{ not json");
  file.close();
  const Lab::Imported refused = lab.import_runs({good, bad});
  EXPECT_EQ(refused.added, 0);
  EXPECT_EQ(refused.problems.size(), 1);
  EXPECT_TRUE(lab.store().runs().empty());
  RunRecord retrained = finished(tiny(5));  // the same settings and seed trained again: other points
  retrained.evals.back().val_loss = 4.3;
  const QString other = folder_.filePath(QStringLiteral("other.json"));
  write_json(retrained, other.toStdString());
  const Lab::Imported imported = lab.import_runs({good, other});
  EXPECT_EQ(imported.added, 2);
  EXPECT_TRUE(imported.refused.isEmpty());
  ASSERT_EQ(lab.store().runs().size(), 2u);
  EXPECT_NE(lab.store().runs()[0].record.config.name, lab.store().runs()[1].record.config.name);
  EXPECT_TRUE(QFile::exists(lab.store().runs()[1].file));
  lab.remove_runs({lab.store().runs()[1].id});
  EXPECT_EQ(QDir(runs()).entryList({QStringLiteral("*.json")}).size(), 1) << "removed with its file";
}

// Issue 30: importing a run already open drew it twice, as "mean of 1 seed"; the file is
// refused, naming the run, and the same settings and seed trained again come in as a copy.
TEST_F(LabTest, ImportRefusesARunAlreadyOpenAndNamesASecondRunAsACopy) {
  Lab lab(runs());
  const QString good = folder_.filePath(QStringLiteral("good.json"));
  write_json(finished(tiny(5)), good.toStdString());
  ASSERT_EQ(lab.import_runs({good}).added, 1);
  const std::string shown = display_name(lab.store().runs()[0].record.config);

  const Lab::Imported again = lab.import_runs({good});
  EXPECT_EQ(again.added, 0);
  EXPECT_TRUE(again.problems.isEmpty());
  ASSERT_EQ(again.refused.size(), 1);
  EXPECT_EQ(again.refused[0].toStdString(), "\u201c" + shown + "\u201d is already open");
  EXPECT_EQ(lab.store().runs().size(), 1u);

  RunRecord retrained = finished(tiny(5));
  retrained.steps.back().train_loss = 3.9;
  for (const int copy : {2, 3}) {
    const QString other = folder_.filePath(QStringLiteral("copy%1.json").arg(copy));
    retrained.steps.front().train_loss += 0.1;  // each file other points again
    write_json(retrained, other.toStdString());
    ASSERT_EQ(lab.import_runs({other}).added, 1);
    EXPECT_EQ(display_name(lab.store().runs().back().record.config), shown + " (copy " + std::to_string(copy) + ")");
  }
  EXPECT_EQ(read_json(lab.store().runs().back().file.toStdString()).config.label, shown + " (copy 3)");
}

// Issue 29: a run's shade changed across a restart (pre-norm 1e-3 dark blue before, light
// blue after): it was given again from the runs that came back, without the ones removed.
// Its file keeps it now, and a file from before shades were kept is given one to keep.
TEST_F(LabTest, ARunLooksTheSameAfterARestartWhateverWasRemoved) {
  std::string name;
  int shade = -1;
  {
    Lab lab(runs());
    TrainConfig other = tiny(5), kept = tiny(5);
    other.peak_lr = 2e-3;  // the same hue, another experiment
    kept.peak_lr = 1e-3;
    const QString first = folder_.filePath(QStringLiteral("first.json")),
                  second = folder_.filePath(QStringLiteral("second.json"));
    write_json(finished(other), first.toStdString());
    write_json(finished(kept), second.toStdString());
    ASSERT_EQ(lab.import_runs({first, second}).added, 2);
    const RunEntry& run = lab.store().runs()[1];
    name = run.record.config.name;
    shade = run.record.config.shade;
    EXPECT_NE(shade, lab.store().runs()[0].record.config.shade) << "two curves of one hue";
    lab.remove_runs({lab.store().runs()[0].id});
  }
  Lab next(runs());
  next.restore();
  ASSERT_EQ(next.store().runs().size(), 1u);
  EXPECT_EQ(next.store().runs()[0].record.config.name, name);
  EXPECT_EQ(next.store().runs()[0].record.config.shade, shade);

  // A file without a shade: the one it is given is written to it.
  RunRecord old = finished(tiny(5));
  old.config.peak_lr = 3e-3;
  old.config.name = "older";
  const QString older = QDir(runs()).filePath(QStringLiteral("20000101-000000-000-older.json"));
  write_json(old, older.toStdString());
  ASSERT_EQ(read_json(older.toStdString()).config.shade, -1);
  next.shutdown();
  Lab third(runs());
  third.restore();
  ASSERT_EQ(third.store().runs().size(), 2u);
  EXPECT_EQ(read_json(older.toStdString()).config.shade, third.store().runs()[0].record.config.shade);
  EXPECT_EQ(third.store().runs()[1].record.config.shade, shade) << "the run that was there first keeps its look";
}

// Issue 30: a rename and a note are the run file's, and come back with the folder; the
// run's name in files stays, so its file and its sweep point are the same.
TEST_F(LabTest, ARenameAndANoteAreKeptInTheRunFile) {
  QString file;
  {
    Lab lab(runs());
    const QString good = folder_.filePath(QStringLiteral("good.json"));
    write_json(finished(tiny(5)), good.toStdString());
    ASSERT_EQ(lab.import_runs({good}).added, 1);
    const RunEntry& run = lab.store().runs()[0];
    file = run.file;
    const std::string name = run.record.config.name;
    EXPECT_EQ(lab.rename_run(run.id, QStringLiteral("  baseline ")), QString());
    EXPECT_EQ(lab.set_note(run.id, QStringLiteral("the one to beat")), QString());
    EXPECT_EQ(display_name(run.record.config), "baseline");
    const RunRecord saved = read_json(file.toStdString());
    EXPECT_EQ(saved.config.label, "baseline");
    EXPECT_EQ(saved.config.note, "the one to beat");
    EXPECT_EQ(saved.config.name, name);
  }
  Lab next(runs());
  next.restore();
  ASSERT_EQ(next.store().runs().size(), 1u);
  const RunEntry& back = next.store().runs()[0];
  EXPECT_EQ(back.file, file);
  EXPECT_EQ(back.record.config.label, "baseline");
  EXPECT_EQ(back.record.config.note, "the one to beat");
  EXPECT_EQ(next.rename_run(back.id, QString()), QString());
  EXPECT_EQ(display_name(back.record.config), run_title(back.record.config)) << "no label: the title again";
}

TEST_F(LabTest, ARunTrainingCannotBeRenamed) {
  Lab lab(runs());
  const int id = lab.queue_run(tiny(100000));
  ASSERT_TRUE(test::wait_until([&] { return lab.queue().is_running(id); }, kTrainTimeoutMs));
  EXPECT_TRUE(lab.rename_run(id, QStringLiteral("x")).contains(QStringLiteral("is training")));
  EXPECT_EQ(lab.store().find(id)->record.config.label, "");
  lab.stop_all();
  ASSERT_TRUE(idle(lab));
  EXPECT_EQ(lab.rename_run(id, QStringLiteral("x")), QString());
  EXPECT_EQ(read_json(lab.store().find(id)->file.toStdString()).config.label, "x");
}

// A runs folder as today's version (run files of version 7) wrote it: every run comes
// back under its name and file, shown by its title, and a sweep finds its points in it.
TEST_F(LabTest, AFolderOfVersionSevenFilesRestoresAndAnswersItsSweep) {
  QDir().mkpath(runs());
  Sweep sweep;
  sweep.name = "depth";
  sweep.setting = "layers";
  sweep.values = {"1", "2"};
  sweep.placements = {NormPlacement::Pre};
  sweep.base = tiny(5);
  QStringList names;
  for (const SweepRun& point : expand(sweep)) {
    const RunRecord run = finished(point.config);
    // Today's file less the fields version 8 added (later versions added none).
    std::string text = to_json_text(run);
    for (const std::string_view added : {" \"label\": \"\",\n", " \"note\": \"\",\n"})
      text.erase(text.find(added), added.size());
    const std::string today = "\"version\": " + std::to_string(kRunSchemaVersion);
    text.replace(text.find(today), today.size(), "\"version\": 7");
    names << qstr(run.config.name);
    write_file_atomically(QDir(runs()).filePath(qstr(file_stem(run.config.name)) + ".json").toStdString(), text);
  }
  Lab lab(runs());
  lab.restore();
  ASSERT_EQ(lab.store().runs().size(), 2u);
  for (const RunEntry& run : lab.store().runs()) {
    EXPECT_TRUE(names.contains(qstr(run.record.config.name)));
    EXPECT_EQ(run.record.config.label, "");
    EXPECT_EQ(display_name(run.record.config), run_title(run.record.config));
  }
  EXPECT_NE(display_name(lab.store().runs()[0].record.config), display_name(lab.store().runs()[1].record.config));
  lab.start_sweep(sweep);
  EXPECT_EQ(lab.store().runs().size(), 2u) << "both points answered: nothing trains again";
  EXPECT_FALSE(lab.queue().busy());
}

}  // namespace
}  // namespace normlab::lab
