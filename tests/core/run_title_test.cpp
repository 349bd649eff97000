#include "core/runs/run_title.h"

#include <set>

#include "core/runs/presets.h"
#include "core/runs/seeds.h"

#include "test_support.h"

namespace normlab::test {
namespace {

TrainConfig at_cpu_scale(NormPlacement norm, double lr) {
  TrainConfig c = scaled(TrainConfig{}, Scale::Cpu);
  c.model.norm = norm;
  c.peak_lr = lr;
  return c;
}

// The course's runs at their scale's defaults are their design, as before.
TEST(RunTitle, TheCourseRunsAreTheirDesign) {
  for (const Scale scale : {Scale::Cpu, Scale::Full}) {
    for (const TrainConfig& run : workshop_runs(scaled(TrainConfig{}, scale))) {
      EXPECT_EQ(run_title(run), design_name(run));
      EXPECT_EQ(display_name(run), run_title(run));
    }
  }
  EXPECT_EQ(run_title(at_cpu_scale(NormPlacement::Pre, 6e-3)), "pre-norm lr 6e-3 warmup 30");
}

// Issue 30: a 300-step run and the course's 600-step one read the same; the title says
// what differs from the defaults of the run's scale.
TEST(RunTitle, SaysWhatDiffersFromItsScale) {
  TrainConfig short_run = at_cpu_scale(NormPlacement::Pre, 6e-3);
  short_run.steps = 300;
  EXPECT_EQ(run_title(short_run), "pre-norm lr 6e-3 warmup 30 \u00b7 steps 300");

  TrainConfig full;
  full.model.layers = 16;
  full.model.d_model = 256;
  full.model.heads = 8;
  full.seed = 7;
  full.corpus_path = "/home/me/texts/shakespeare.txt";
  EXPECT_EQ(run_title(full),
            "pre-norm lr 1e-3 warmup 30 \u00b7 layers 16, d-model 256, heads 8, seed 7, corpus shakespeare.txt");
  EXPECT_EQ(run_title(full, SeedInTitle::Unsaid),
            "pre-norm lr 1e-3 warmup 30 \u00b7 layers 16, d-model 256, heads 8, corpus shakespeare.txt");

  // A corpus by name: said unless it is the default, by its name or by none.
  TrainConfig shelf;
  shelf.corpus_path = "bookshelf";
  EXPECT_EQ(run_title(shelf), "pre-norm lr 1e-3 warmup 30 \u00b7 corpus bookshelf");
  shelf.corpus_path = kDefaultCorpusName;
  EXPECT_EQ(run_title(shelf), "pre-norm lr 1e-3 warmup 30");

  // At the full scale, the CPU scale's batch is a difference.
  TrainConfig small_batch;
  small_batch.batch_size = 8;
  EXPECT_EQ(run_title(small_batch), "pre-norm lr 1e-3 warmup 30 \u00b7 batch 8");
}

// Settings that change how fast a run goes or what it records are not what sets it apart.
TEST(RunTitle, LeavesOutWhatDoesNotShapeTheResult) {
  TrainConfig c = at_cpu_scale(NormPlacement::Post, 1e-3);
  c.threads = 3;
  c.device = "cpu";
  c.layer_stats_every = 0;
  c.text_every = 0;
  c.final_checkpoint = "keep";
  EXPECT_EQ(run_title(c), "post-norm lr 1e-3 warmup 30");
}

// Issue 30: the depth sweep's 8-layer run read as the course's "(2)"; every point of a
// sweep over depth or steps now has a title of its own.
TEST(RunTitle, EveryPointOfASweepHasItsOwnTitle) {
  std::set<std::string> titles;
  for (const int layers : {2, 4, 8, 16}) {
    for (const int steps : {300, 600}) {
      TrainConfig c = at_cpu_scale(NormPlacement::Pre, 1e-3);
      c.model.layers = layers;
      c.steps = steps;
      titles.insert(run_title(c));
    }
  }
  EXPECT_EQ(titles.size(), 8u);
}

TEST(RunTitle, TheUsersLabelComesFirst) {
  TrainConfig c = at_cpu_scale(NormPlacement::Pre, 1e-3);
  c.label = "baseline";
  EXPECT_EQ(display_name(c), "baseline");
  EXPECT_EQ(run_title(c), "pre-norm lr 1e-3 warmup 30") << "the title is the settings' whatever the label";
}

// A group of seeds is called by its runs' title or label without the seed; the runs'
// names in files stay as before.
TEST(RunTitle, SeedGroupsGoByTheTitleWithoutTheSeed) {
  TrainConfig base = at_cpu_scale(NormPlacement::Pre, 6e-3);
  base.steps = 300;
  const auto runs = repeat_over_seeds({base}, 2);
  EXPECT_EQ(runs[1].name, default_run_name(base) + " seed 1338");
  EXPECT_EQ(display_name(runs[1]), "pre-norm lr 6e-3 warmup 30 \u00b7 steps 300, seed 1338");
  EXPECT_EQ(seed_group_title(runs[1]), "pre-norm lr 6e-3 warmup 30 \u00b7 steps 300");
  base.label = "short";
  const auto labelled = repeat_over_seeds({base}, 2);
  EXPECT_EQ(display_name(labelled[1]), "short seed 1338");
  EXPECT_EQ(seed_group_title(labelled[1]), "short");
}

// Issue 49, item 5: after restoring a folder, two rows read "pre-norm lr 1e-3 warmup 30"
// with nothing to tell them apart. Where another run reads the same, the name adds what
// differs, down to when the run started.
TEST(RunTitle, RunsThatReadTheSameAreToldApart) {
  const TrainConfig a = at_cpu_scale(NormPlacement::Pre, 1e-3);
  TrainConfig b = a;
  b.threads = 2;  // shapes no result, so the title leaves it out
  const TrainConfig c = a;
  const TrainConfig other = at_cpu_scale(NormPlacement::Post, 1e-3);
  ASSERT_EQ(display_name(a), display_name(b));
  EXPECT_EQ(distinct_name(other, {&a, &b, &other}), display_name(other)) << "alone in its name: as it is";
  EXPECT_EQ(distinct_name(b, {&a, &b}), display_name(b) + " \u00b7 threads 2");
  EXPECT_EQ(distinct_name(a, {&a, &c}, "started 2026-12-05 17:15:02"),
            display_name(a) + " \u00b7 started 2026-12-05 17:15:02")
      << "the same settings: when it started";
  EXPECT_NE(distinct_name(a, {&a, &c}, "started 1"), distinct_name(c, {&a, &c}, "started 2"));
}

}  // namespace
}  // namespace normlab::test
