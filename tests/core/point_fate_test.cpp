// The one rule for a point's fate (core/sweeps/point_fate.h), in the cases each front end
// had: the command line's sweep reading back its folder, a Slurm task finding its own
// earlier attempt, the window's course and sweeps finding runs left queued or cut short.
#include "core/sweeps/point_fate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runs/config.h"
#include "core/runs/run_record.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

TrainConfig point() {
  TrainConfig c;
  c.name = "pre-norm lr 1e-3 warmup 30";
  c.steps = 600;
  return c;
}

RunRecord run_of(const TrainConfig& config, RunStatus status, double final_val = 5.09) {
  RunRecord r;
  r.config = config;
  r.status = status;
  r.evals = {{0, 0, 9.0}, {config.steps, 60, final_val}};
  return r;
}

// A checkpoint check that goes on from `step`, or refuses with `refused`; counts its calls.
struct Checkpoints {
  int step = 300;
  std::string refused;
  int asked = 0;
  CheckpointCheck check() {
    return [this](std::size_t) {
      ++asked;
      return CheckpointAnswer{refused.empty() ? step : -1, refused};
    };
  }
};

TEST(PointFate, NoRunTrains) {
  Checkpoints checkpoints;
  const PointFate fate = point_fate(point(), {}, checkpoints.check());
  EXPECT_EQ(fate.fate, Fate::Train);
  EXPECT_EQ(fate.run, -1);
  EXPECT_EQ(fate.reason, "not trained before with these settings");
  EXPECT_EQ(checkpoints.asked, 0);
}

TEST(PointFate, ADoneOrDivergedRunIsReusedAndNamed) {
  Checkpoints checkpoints;
  const RunRecord done = run_of(point(), RunStatus::Done, 5.0904);
  PointFate fate = point_fate(point(), {&done}, checkpoints.check());
  EXPECT_EQ(fate.fate, Fate::Reuse);
  EXPECT_EQ(fate.run, 0);
  EXPECT_EQ(fate.reason, "done before with the same settings, final held-out 5.090 nats");

  // The command line's folder: a --seeds sweep's run under another name answers too.
  TrainConfig seeded = point();
  seeded.name = "pre-norm lr 1e-3 warmup 30 seed 1337";
  const RunRecord diverged = run_of(seeded, RunStatus::Diverged, 46.0);
  fate = point_fate(point(), {&diverged}, checkpoints.check());
  EXPECT_EQ(fate.fate, Fate::Reuse);
  EXPECT_THAT(fate.reason, HasSubstr("diverged before with the same settings as \u201cpre-norm lr 1e-3 warmup 30 seed "
                                     "1337\u201d, final held-out 46.000 nats"));
  EXPECT_EQ(checkpoints.asked, 0) << "a run with a result needs no checkpoint";
}

TEST(PointFate, ThreadsAndDeviceDoNotMakeAnotherPointButOtherSettingsDo) {
  Checkpoints checkpoints;
  TrainConfig elsewhere = point();
  elsewhere.threads = 2;
  elsewhere.device = "cuda";
  TrainConfig other_rate = point();
  other_rate.peak_lr = 6e-3;
  const RunRecord same = run_of(elsewhere, RunStatus::Done), other = run_of(other_rate, RunStatus::Done);
  EXPECT_EQ(point_fate(point(), {&other, &same}, checkpoints.check()).run, 1);
  EXPECT_EQ(point_fate(point(), {&other}, checkpoints.check()).fate, Fate::Train);
}

TEST(PointFate, AQueuedOrRunningRunIsWaitedFor) {
  Checkpoints checkpoints;
  const RunRecord queued = run_of(point(), RunStatus::Queued), running = run_of(point(), RunStatus::Running);
  const PointFate fate = point_fate(point(), {&queued}, checkpoints.check());
  EXPECT_EQ(fate.fate, Fate::Wait);
  EXPECT_EQ(fate.reason, "queued already with the same settings");
  EXPECT_EQ(point_fate(point(), {&running}, checkpoints.check()).fate, Fate::Wait);
  EXPECT_EQ(checkpoints.asked, 0);
}

TEST(PointFate, ACutShortRunGoesOnFromASoundCheckpoint) {
  Checkpoints checkpoints;
  checkpoints.step = 250;
  for (const RunStatus status : {RunStatus::Stopped, RunStatus::Interrupted, RunStatus::Failed}) {
    const RunRecord cut = run_of(point(), status);
    const PointFate fate = point_fate(point(), {&cut}, checkpoints.check());
    EXPECT_EQ(fate.fate, Fate::Resume) << to_string(status);
    EXPECT_EQ(fate.run, 0);
    EXPECT_EQ(fate.from_step, 250);
    EXPECT_EQ(fate.reason, to_string(status) + ", goes on from its checkpoint at step 250");
  }
  EXPECT_EQ(checkpoints.asked, 3);
}

TEST(PointFate, ACutShortRunWhoseCheckpointIsRefusedTrainsAfreshSayingWhy) {
  Checkpoints checkpoints;
  checkpoints.refused = "runs/x.ckpt is damaged (its checksum does not match)";
  const RunRecord stopped = run_of(point(), RunStatus::Stopped);
  const PointFate fate = point_fate(point(), {&stopped}, checkpoints.check());
  EXPECT_EQ(fate.fate, Fate::Train);
  EXPECT_EQ(fate.run, 0) << "the refused run is named";
  EXPECT_EQ(fate.reason, "stopped, trained afresh: runs/x.ckpt is damaged (its checksum does not match)");
}

TEST(PointFate, TheBestStandingWinsThenTheLatest) {
  Checkpoints checkpoints;
  const RunRecord stopped = run_of(point(), RunStatus::Stopped), done = run_of(point(), RunStatus::Done, 5.2),
                  later = run_of(point(), RunStatus::Done, 5.1), queued = run_of(point(), RunStatus::Queued);
  EXPECT_EQ(point_fate(point(), {&stopped, &done}, checkpoints.check()).run, 1) << "a result before a cut-short run";
  EXPECT_EQ(point_fate(point(), {&done, &stopped, &later}, checkpoints.check()).run, 2) << "the latest of two";
  EXPECT_EQ(point_fate(point(), {&stopped, &queued}, checkpoints.check()).fate, Fate::Wait)
      << "the window waits for a queued run rather than resume a stopped one";
  EXPECT_EQ(checkpoints.asked, 0);
}

// A Slurm array task owns its point: its own file still saying running is its earlier
// attempt, killed before it could say so, which the task marks interrupted first.
TEST(PointFate, ASlurmTasksOwnRunningFileMarkedInterruptedResumes) {
  Checkpoints checkpoints;
  RunRecord own = run_of(point(), RunStatus::Running);
  mark_interrupted(own, "its task ended while it trained");
  const PointFate fate = point_fate(point(), {&own}, checkpoints.check());
  EXPECT_EQ(fate.fate, Fate::Resume);
  EXPECT_EQ(fate.reason, "interrupted, goes on from its checkpoint at step 300");
}

}  // namespace
}  // namespace normlab::test
