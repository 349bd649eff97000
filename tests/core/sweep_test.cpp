#include "core/sweeps/sweep.h"

#include <cmath>
#include <set>

#include "core/runs/palette.h"
#include "core/runs/run_cost.h"
#include "core/sweeps/sweep_chart.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

Sweep depth_sweep(int seeds) {
  Sweep sweep;
  sweep.name = "depth";
  sweep.setting = "layers";
  sweep.values = {"2", "4"};
  sweep.placements = {NormPlacement::Pre, NormPlacement::Post};
  sweep.seeds = seeds;
  sweep.base = scaled(TrainConfig{}, Scale::Cpu);
  return sweep;
}

TEST(Sweep, ExpandsValueByPlacementBySeed) {
  const auto runs = expand(depth_sweep(3));
  ASSERT_EQ(runs.size(), 2u * 2u * 3u);
  std::set<std::string> names;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const SweepRun& run = runs[i];
    const int value = int(i / 6), placement = int(i / 3 % 2), seed = int(i % 3);
    EXPECT_EQ(run.value, value == 0 ? "2" : "4");
    EXPECT_EQ(run.x, value == 0 ? 2.0 : 4.0);
    EXPECT_EQ(run.config.model.layers, value == 0 ? 2 : 4);
    EXPECT_EQ(run.placement, placement == 0 ? NormPlacement::Pre : NormPlacement::Post);
    EXPECT_EQ(run.config.model.norm, run.placement);
    EXPECT_EQ(run.config.seed, TrainConfig{}.seed + std::uint64_t(seed));
    // Everything else stays as the base has it.
    EXPECT_EQ(run.config.steps, 600);
    EXPECT_EQ(run.config.batch_size, 8);
    EXPECT_DOUBLE_EQ(run.config.peak_lr, 1e-3);
    names.insert(run.config.name);
  }
  EXPECT_EQ(names.size(), runs.size()) << "every run needs its own files";
  EXPECT_EQ(runs[0].config.name, "pre-norm lr 1e-3 warmup 30 layers 2 seed 1337");
}

TEST(Sweep, RunNamesSayTheValueOnce) {
  Sweep sweep = depth_sweep(1);
  EXPECT_EQ(expand(sweep)[0].config.name, "pre-norm lr 1e-3 warmup 30 layers 2");
  sweep.values = {"8"};  // the course's depth: the name a single run of it has
  EXPECT_EQ(expand(sweep)[0].config.name, "pre-norm lr 1e-3 warmup 30");
  sweep.setting = "lr";  // by flag as well as by key
  sweep.values = {"3e-4", "0.01"};
  const auto runs = expand(sweep);
  EXPECT_EQ(runs[0].config.name, "pre-norm lr 3e-4 warmup 30");
  EXPECT_DOUBLE_EQ(runs[2].config.peak_lr, 0.01);
  EXPECT_DOUBLE_EQ(runs[2].x, 0.01);
}

TEST(Sweep, RefusesWhatCannotRun) {
  Sweep sweep = depth_sweep(1);
  sweep.values = {"2", "65"};
  EXPECT_THAT(user_error([&] { expand(sweep); }), HasSubstr("layers must be between 1 and 64"));
  sweep.values = {"two"};
  EXPECT_THAT(user_error([&] { expand(sweep); }), HasSubstr("layers needs a whole number, not 'two'"));
  sweep.values = {};
  EXPECT_THAT(user_error([&] { expand(sweep); }), HasSubstr("at least one value"));
  sweep = depth_sweep(0);
  EXPECT_THAT(user_error([&] { expand(sweep); }), HasSubstr("at least one seed"));
  sweep = depth_sweep(1);
  sweep.placements = {};
  EXPECT_THAT(user_error([&] { expand(sweep); }), HasSubstr("at least one placement"));
  sweep = depth_sweep(1);
  sweep.setting = "batch";
  EXPECT_THAT(user_error([&] { expand(sweep); }),
              HasSubstr("a sweep varies one of 'layers', 'lr', 'warmup', not 'batch'"));
  sweep = depth_sweep(1);
  sweep.values = {"3"};
  sweep.base.model.heads = 3;  // the cross-field rule is checked too
  sweep.base.model.d_model = 128;
  EXPECT_THAT(user_error([&] { expand(sweep); }), HasSubstr("heads must divide d_model"));
}

RunRecord finished(double baseline, std::vector<double> val_losses, RunStatus status = RunStatus::Done) {
  RunRecord run;
  run.config.name = "r";
  run.baseline_loss = baseline;
  run.status = status;
  for (std::size_t i = 0; i < val_losses.size(); ++i) run.evals.push_back({int(i) * 50, 0.0, val_losses[i]});
  return run;
}

TEST(Sweep, ClassifiesStalledAsEndingOnTheBaseline) {
  EXPECT_EQ(classify(finished(7.0, {9.0, 5.5})), Outcome::Trained);
  EXPECT_EQ(classify(finished(7.0, {9.0, 6.95})), Outcome::Stalled);  // within 0.1 nats below
  EXPECT_EQ(classify(finished(7.0, {9.0, 7.4})), Outcome::Stalled);   // above it
  EXPECT_EQ(classify(finished(7.0, {9.0, 6.89})), Outcome::Trained);  // more than kStallMargin below
  EXPECT_EQ(classify(finished(7.0, {9.0, 5.0}, RunStatus::Diverged)), Outcome::Diverged);
  EXPECT_EQ(classify(finished(7.0, {9.0, std::nan("")})), Outcome::Diverged);
  EXPECT_EQ(classify(finished(7.0, {9.0}, RunStatus::Stopped)), Outcome::Stopped);
  EXPECT_EQ(classify(finished(7.0, {9.0}, RunStatus::Failed)), Outcome::Failed);
}

TEST(Sweep, SummaryHasFinalAndBestLossPerRun) {
  const auto runs = expand(depth_sweep(1));
  RunRecord good = finished(7.25, {9.0, 5.5, 5.75});
  good.config = runs[0].config;
  RunRecord stalled = finished(7.25, {9.0, 7.2});
  stalled.config = runs[1].config;
  RunRecord diverged = finished(7.25, {9.0}, RunStatus::Diverged);
  diverged.config = runs[2].config;
  const std::vector<SweepResult> results = {summarise(runs[0], good), summarise(runs[1], stalled),
                                            summarise(runs[2], diverged)};
  EXPECT_EQ(results[0].final_val, 5.75);
  EXPECT_EQ(results[0].best_val, 5.5);
  EXPECT_EQ(results[0].outcome, Outcome::Trained);
  EXPECT_EQ(results[1].outcome, Outcome::Stalled);
  EXPECT_EQ(results[2].outcome, Outcome::Diverged);
  EXPECT_EQ(summary_csv("layers", results),
            "layers,placement,seed,final_val_loss,best_val_loss,baseline_loss,outcome,run\n"
            "2,pre,1337,5.75,5.5,7.25,trained,\"pre-norm lr 1e-3 warmup 30 layers 2\"\n"
            "2,post,1337,7.2,7.2,7.25,stalled,\"post-norm lr 1e-3 warmup 30 layers 2\"\n"
            "4,pre,1337,9,9,7.25,diverged,\"pre-norm lr 1e-3 warmup 30 layers 4\"\n");
}

SweepResult result(NormPlacement placement, double x, double final_val, Outcome outcome) {
  SweepResult r;
  r.placement = placement;
  r.x = x;
  r.final_val = final_val;
  r.outcome = outcome;
  return r;
}

TEST(Sweep, AggregatesSeedsIntoMeanAndRange) {
  using P = NormPlacement;
  const std::vector<SweepResult> results = {
      result(P::Post, 4, 7.0, Outcome::Stalled), result(P::Post, 2, 5.0, Outcome::Trained),
      result(P::Pre, 2, 5.0, Outcome::Trained),  result(P::Pre, 2, 5.6, Outcome::Trained),
      result(P::Pre, 2, 5.3, Outcome::Trained),  result(P::Post, 4, 9.0, Outcome::Diverged),
      result(P::Pre, 2, 6.5, Outcome::Stopped),
  };
  const auto points = aggregate(results);
  ASSERT_EQ(points.size(), 3u);
  // Post first (seen first), by x; then pre.
  EXPECT_EQ(points[0].placement, P::Post);
  EXPECT_EQ(points[0].x, 2.0);
  EXPECT_EQ(points[1].x, 4.0);
  EXPECT_EQ(points[1].runs, 2);
  EXPECT_EQ(points[1].stalled, 1);
  EXPECT_EQ(points[1].diverged, 1);
  EXPECT_EQ(points[1].mean, 7.0);  // the diverged run has no loss to average
  EXPECT_EQ(points[2].placement, P::Pre);
  EXPECT_EQ(points[2].runs, 4);
  EXPECT_NEAR(points[2].mean, 5.3, 1e-12);  // the stopped run's loss is where it was cut: left out
  EXPECT_EQ(points[2].min, 5.0);
  EXPECT_EQ(points[2].max, 5.6);

  const auto all_diverged = aggregate({result(P::Pre, 1, 9.0, Outcome::Diverged)});
  EXPECT_TRUE(std::isnan(all_diverged[0].mean));
  EXPECT_EQ(all_diverged[0].diverged, 1);
}

TEST(Sweep, PresetsFollowTheIssue) {
  const TrainConfig cpu = scaled(TrainConfig{}, Scale::Cpu);
  const Sweep depth = sweep_preset(parse_sweep_preset("depth"), cpu, Scale::Cpu);
  EXPECT_EQ(depth.setting, "layers");
  EXPECT_EQ(depth.values, (std::vector<std::string>{"2", "4", "8", "16"}));
  EXPECT_EQ(depth.placements, (std::vector<NormPlacement>{NormPlacement::Pre, NormPlacement::Post}));
  EXPECT_DOUBLE_EQ(depth.base.peak_lr, 1e-3);
  EXPECT_EQ(depth.base.warmup_steps, 30);
  EXPECT_EQ(depth.base.steps, 600);
  const Sweep full = sweep_preset(SweepPreset::Depth, scaled(TrainConfig{}, Scale::Full), Scale::Full);
  EXPECT_EQ(full.values.back(), "32");

  const Sweep lr = sweep_preset(parse_sweep_preset("learning-rate"), cpu, Scale::Cpu);
  EXPECT_EQ(lr.setting, "peak_lr");
  EXPECT_TRUE(sweep_setting(lr.setting).log_axis);
  EXPECT_EQ(lr.values.front(), "3e-4");
  EXPECT_EQ(lr.values.back(), "1e-2");
  EXPECT_EQ(lr.placements, (std::vector<NormPlacement>{NormPlacement::Pre, NormPlacement::Post, NormPlacement::Peri,
                                                       NormPlacement::DeepNorm}));
  EXPECT_EQ(expand(lr).size(), 20u);
  EXPECT_THAT(user_error([] { parse_sweep_preset("width"); }),
              HasSubstr("sweep preset must be 'depth' or 'learning-rate', not 'width'"));
}

// What a sweep of each setting starts from: the preset's values where one varies it; the
// warmup from a single step through the course's short and long ones.
TEST(Sweep, EachSettingHasValuesToStartFrom) {
  for (const Scale scale : {Scale::Cpu, Scale::Full}) {
    EXPECT_EQ(starting_values("layers", scale),
              sweep_preset(SweepPreset::Depth, scaled(TrainConfig{}, scale), scale).values);
    EXPECT_EQ(starting_values("peak_lr", scale),
              sweep_preset(SweepPreset::LearningRate, scaled(TrainConfig{}, scale), scale).values);
  }
  EXPECT_EQ(starting_values("warmup_steps", Scale::Cpu), (std::vector<std::string>{"1", "30", "200"}));
  EXPECT_EQ(starting_values("warmup_steps", Scale::Full), (std::vector<std::string>{"1", "30", "1000"}));
  for (const SweepSettingInfo& setting : kSweepSettings) {
    Sweep sweep = sweep_preset(SweepPreset::Depth, scaled(TrainConfig{}, Scale::Cpu), Scale::Cpu);
    sweep.setting = setting.key;
    sweep.values = starting_values(setting.key, Scale::Cpu);
    EXPECT_NO_THROW(expand(sweep)) << setting.key << ": every value is one the setting takes";
  }
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

TEST(SweepChart, OneLinePerPlacementWithBaselineAndMarks) {
  using P = NormPlacement;
  std::vector<SweepResult> results = {
      result(P::Pre, 1e-3, 5.5, Outcome::Trained),      result(P::Pre, 1e-2, 5.9, Outcome::Trained),
      result(P::Post, 1e-3, 5.8, Outcome::Trained),     result(P::Post, 1e-2, 7.0, Outcome::Stalled),
      result(P::DeepNorm, 1e-3, 5.7, Outcome::Trained), result(P::DeepNorm, 1e-2, 0, Outcome::Diverged),
  };
  for (auto& r : results) {
    r.baseline = 7.05;
    r.value = r.x == 1e-3 ? "1e-3" : "1e-2";
  }
  results[5].final_val = std::nan("");
  SweepChart chart{"Final held-out loss against peak learning rate", "peak_lr", results};
  const std::string svg = sweep_chart_svg(chart);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(count(svg, "class=\"placement\""), 3u);
  EXPECT_EQ(count(svg, "class=\"baseline\""), 1u);
  EXPECT_THAT(svg, HasSubstr("unigram baseline 7.05"));
  EXPECT_EQ(count(svg, "class=\"trained\""), 4u);
  EXPECT_EQ(count(svg, "class=\"stalled\""), 1u);
  EXPECT_EQ(count(svg, "class=\"diverged\""), 1u);
  EXPECT_EQ(count(svg, "class=\"band\""), 0u) << "one seed: nothing to spread";
  EXPECT_THAT(svg, HasSubstr("Peak learning rate (log scale)"));
  char amber[8];
  std::snprintf(amber, sizeof amber, "#%06x", unsigned(hue_colour(Hue::Amber, 0)));
  EXPECT_THAT(svg, HasSubstr(std::string("data-placement=\"deepnorm\" points=\"")));
  EXPECT_THAT(svg, HasSubstr(amber));

  // Seeds: a band per placement.
  results.push_back(result(P::Pre, 1e-3, 5.3, Outcome::Trained));
  results.back().value = "1e-3";
  chart.results = results;
  EXPECT_EQ(count(sweep_chart_svg(chart), "class=\"band\""), 3u);
}

// The legend names placements only, so the title says a norm type or switch the sweep fixes.
TEST(SweepChart, TheTitleSaysTheDesignTheSweepFixes) {
  Sweep sweep = sweep_preset(SweepPreset::LearningRate, scaled(TrainConfig{}, Scale::Cpu), Scale::Cpu);
  EXPECT_EQ(sweep_chart_title(sweep), "Final held-out loss against peak learning rate (600 steps of 8 x 64 tokens)");
  sweep.base.model.qk_norm = Switch::On;
  EXPECT_EQ(sweep_chart_title(sweep),
            "Final held-out loss against peak learning rate, with QK-norm (600 steps of 8 x 64 tokens)");
  sweep.base.model.norm_type = NormType::Dyt;
  EXPECT_THAT(sweep_chart_title(sweep), HasSubstr(", with DyT QK-norm ("));
}

TEST(SweepChart, LogAxisSpacesDecadesEvenly) {
  using P = NormPlacement;
  std::vector<SweepResult> results = {result(P::Pre, 1e-4, 6, Outcome::Trained),
                                      result(P::Pre, 1e-3, 5, Outcome::Trained),
                                      result(P::Pre, 1e-2, 5.5, Outcome::Trained)};
  const std::string svg = sweep_chart_svg({"lr", "peak_lr", results});
  const auto at = svg.find("data-placement=\"pre\" points=\"");
  ASSERT_NE(at, std::string::npos);
  std::istringstream points(svg.substr(at + std::string("data-placement=\"pre\" points=\"").size()));
  double x[3];
  char comma;
  double y;
  for (double& xi : x) points >> xi >> comma >> y;
  EXPECT_NEAR(x[1] - x[0], x[2] - x[1], 0.2);
}

TEST(SweepChart, MarksSitWhereThePictureDrawsThemAndTheChosenOneIsRinged) {
  using P = NormPlacement;
  std::vector<SweepResult> results = {
      result(P::Pre, 2, 5.0, Outcome::Trained), result(P::Pre, 8, 5.5, Outcome::Trained),
      result(P::Post, 2, 6.0, Outcome::Stalled), result(P::Post, 8, 0, Outcome::Diverged)};
  results[3].final_val = std::nan("");
  for (auto& r : results) r.value = r.x == 2 ? "2" : "8", r.baseline = 6.05;
  SweepChart chart{"depth", "layers", results};
  const auto marks = sweep_chart_marks(chart);
  ASSERT_EQ(marks.size(), 4u);
  const std::string svg = sweep_chart_svg(chart);
  char circle[64];
  std::snprintf(circle, sizeof circle, "cx=\"%.1f\" cy=\"%.1f\"", marks[0].cx, marks[0].cy);
  EXPECT_THAT(svg, HasSubstr(circle)) << "the pre mark at 2 layers";
  EXPECT_LT(marks[0].cx, marks[1].cx);
  EXPECT_GT(marks[0].cy, marks[1].cy) << "a lower loss is drawn lower";
  EXPECT_NEAR(marks[2].cx - marks[0].cx, 4, 1e-9) << "placements at one value sit apart, so neither hides the other";
  EXPECT_LT(marks[3].cy, marks[1].cy) << "a diverged point sits along the top";
  EXPECT_EQ(marks[3].point.diverged, 1);
  EXPECT_EQ(count(svg, "class=\"selected\""), 0u);
  chart.selected = {{P::Post, 2.0}};
  EXPECT_EQ(count(sweep_chart_svg(chart), "class=\"selected\""), 1u);
}

TEST(SweepChart, NothingFinishedYetDrawsOnlyTheFrame) {
  const std::string svg = sweep_chart_svg({"lr", "peak_lr", {}});
  EXPECT_EQ(svg.find("-0.0"), std::string::npos);
  EXPECT_EQ(count(svg, "text-anchor=\"end\">"), 0u) << "no loss labels without a loss";
  EXPECT_EQ(svg.find(">trained<"), std::string::npos) << "no legend without a line";
}

RunRecord record_of(const TrainConfig& config, RunStatus status) {
  RunRecord r;
  r.config = config;
  r.status = status;
  return r;
}

TEST(Sweep, FindsTheRunThatRanAPointPreferringOneThatEnded) {
  const auto runs = expand(depth_sweep(1));
  TrainConfig other_threads = runs[0].config;
  other_threads.threads = 3;  // speed, not the experiment
  other_threads.name = "renamed";
  const RunRecord stopped = record_of(runs[0].config, RunStatus::Stopped);
  const RunRecord done = record_of(other_threads, RunStatus::Done);
  const RunRecord queued = record_of(runs[0].config, RunStatus::Queued);
  const RunRecord elsewhere = record_of(runs[1].config, RunStatus::Done);
  EXPECT_EQ(find_run(runs[0].config, {}), -1);
  EXPECT_EQ(find_run(runs[0].config, {&elsewhere}), -1);
  EXPECT_EQ(find_run(runs[0].config, {&stopped, &elsewhere}), 0);
  EXPECT_EQ(find_run(runs[0].config, {&stopped, &queued}), 1);
  EXPECT_EQ(find_run(runs[0].config, {&done, &stopped, &queued}), 0);
  EXPECT_EQ(find_run(runs[0].config, {&stopped, &stopped}), 1) << "the latest of equal rank";
  TrainConfig other_seed = runs[0].config;
  other_seed.seed += 1;
  EXPECT_EQ(find_run(other_seed, {&done}), -1);
}

TEST(Sweep, EstimatesScaleWithTheWork) {
  const TrainConfig measured = scaled(TrainConfig{}, Scale::Cpu);
  // Seconds `run` takes where `measured` took `seconds`: the lab scales time by the work.
  auto estimated_seconds = [](const TrainConfig& run, const TrainConfig& measured, double seconds) {
    return seconds * run_flops(run) / run_flops(measured);
  };
  EXPECT_DOUBLE_EQ(estimated_seconds(measured, measured, 90), 90);
  TrainConfig twice = measured;
  twice.steps *= 2;
  twice.eval_interval *= 2;  // as many evaluations per step as before, bar the one at step 0
  EXPECT_GT(estimated_seconds(twice, measured, 90), 0.97 * 180);
  EXPECT_LT(estimated_seconds(twice, measured, 90), 180);
  TrainConfig deeper = measured;
  deeper.model.layers = 16;
  // The head (8192 x 128) is a large part of the work at 8 layers, so 16 cost less than twice.
  const double deep = estimated_seconds(deeper, measured, 90);
  EXPECT_GT(deep, 1.3 * 90);
  EXPECT_LT(deep, 2.0 * 90);
  // A step alone is the run without its evaluations (each a third of a step per batch).
  const int evals = measured.steps / measured.eval_interval + 1;
  EXPECT_NEAR(run_flops(measured) / step_flops(measured), measured.steps + evals * measured.eval_batches / 3.0, 1e-6);
  TrainConfig rate = measured;
  rate.peak_lr = 6e-3;
  EXPECT_DOUBLE_EQ(estimated_seconds(rate, measured, 90), 90) << "the rate costs nothing";
  // What is left of a run: all of it before its first step, half at half way, none when done.
  RunRecord run;
  run.config = measured;
  EXPECT_DOUBLE_EQ(remaining_flops(run), run_flops(measured));
  run.steps.push_back({measured.steps / 2, 1.0, 1e-3, 5.0, 1000});
  EXPECT_DOUBLE_EQ(remaining_flops(run), run_flops(measured) / 2);
  run.steps.push_back({measured.steps, 2.0, 1e-3, 5.0, 1000});
  EXPECT_DOUBLE_EQ(remaining_flops(run), 0);
}

}  // namespace
}  // namespace normlab::test
