#include "core/runs/presets.h"

#include <cmath>
#include <functional>
#include <set>

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

struct Expected {
  NormPlacement norm;
  double lr;
  int warmup;
};

void expect_workshop(const std::vector<TrainConfig>& runs, int long_warmup) {
  const std::vector<Expected> expected = {{NormPlacement::Pre, 1e-3, 30},
                                          {NormPlacement::Post, 1e-3, 30},
                                          {NormPlacement::Pre, 6e-3, 30},
                                          {NormPlacement::Post, 6e-3, 30},
                                          {NormPlacement::Post, 1e-3, long_warmup}};
  ASSERT_EQ(runs.size(), expected.size());
  std::set<std::string> names;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].model.norm, expected[i].norm) << i;
    EXPECT_DOUBLE_EQ(runs[i].peak_lr, expected[i].lr) << i;
    EXPECT_EQ(runs[i].warmup_steps, expected[i].warmup) << i;
    EXPECT_EQ(runs[i].name, default_run_name(runs[i]));
    EXPECT_NO_THROW(validate(runs[i]));
    names.insert(runs[i].name);
  }
  EXPECT_EQ(names.size(), runs.size()) << "run names must tell the runs apart";
}

TEST(Presets, WorkshopFullScale) {
  const TrainConfig base = scaled(TrainConfig{}, Scale::Full);
  EXPECT_EQ(base.steps, 3000);
  EXPECT_EQ(base.batch_size, 32);
  EXPECT_EQ(base.model.context, 128);
  expect_workshop(workshop_runs(base), 1000);
}

TEST(Presets, WorkshopCpuScaleShrinksLongWarmup) {
  const TrainConfig base = scaled(TrainConfig{}, Scale::Cpu);
  EXPECT_EQ(base.steps, 600);
  EXPECT_LT(base.batch_size * base.model.context, 32 * 128);
  EXPECT_NO_THROW(validate(base));
  expect_workshop(workshop_runs(base), 200);

  TrainConfig other;
  other.steps = 1500;
  EXPECT_EQ(workshop_runs(other).back().warmup_steps, 500);
  other.steps = 1;
  EXPECT_GE(workshop_runs(other).back().warmup_steps, 1);
}

TEST(Presets, ScalesKeepTheRest) {
  TrainConfig base = scaled(TrainConfig{}, Scale::Cpu);
  base.seed = 7;
  base.model.layers = 3;
  base.corpus_path = "/some/text.txt";
  base.device = "cpu";
  for (const auto& run : workshop_runs(base)) {
    EXPECT_EQ(run.seed, 7u);
    EXPECT_EQ(run.model.layers, 3);
    EXPECT_EQ(run.corpus_path, "/some/text.txt");
    EXPECT_EQ(run.device, "cpu");
    EXPECT_EQ(run.steps, 600);
    EXPECT_EQ(run.batch_size, base.batch_size);
  }

  TrainConfig post;
  post.model.layers = 5;
  post.model.norm = NormPlacement::Post;
  post.peak_lr = 2e-3;
  const TrainConfig cpu = scaled(post, Scale::Cpu);
  EXPECT_EQ(cpu.model.layers, 5);
  EXPECT_EQ(cpu.model.norm, NormPlacement::Post);
  EXPECT_DOUBLE_EQ(cpu.peak_lr, 2e-3);
}

TEST(Presets, ParseScale) {
  EXPECT_EQ(parse_scale("full"), Scale::Full);
  EXPECT_EQ(parse_scale("cpu"), Scale::Cpu);
  EXPECT_EQ(parse_scale(to_string(Scale::Cpu)), Scale::Cpu);
  EXPECT_EQ(parse_scale(to_string(Scale::Full)), Scale::Full);
  EXPECT_THAT(user_error([] { parse_scale("huge"); }), HasSubstr("'huge'"));
  EXPECT_THAT(user_error([] { parse_scale(""); }), HasSubstr("scale"));
  EXPECT_THAT(user_error([] { parse_scale("CPU"); }), HasSubstr("'CPU'"));
}

TEST(Config, NamesAndFormats) {
  EXPECT_EQ(parse_norm("pre"), NormPlacement::Pre);
  EXPECT_EQ(parse_norm("post"), NormPlacement::Post);
  EXPECT_EQ(to_string(NormPlacement::Post), "post");
  EXPECT_THAT(user_error([] { parse_norm("middle"); }), HasSubstr("'middle'"));

  EXPECT_EQ(format_lr(1e-3), "1e-3");
  EXPECT_EQ(format_lr(6e-3), "6e-3");
  EXPECT_EQ(format_lr(2.5e-4), "2.5e-4");
  EXPECT_EQ(format_lr(3e-5), "3e-5");
  EXPECT_EQ(format_lr(0.1), "0.1");

  TrainConfig c;
  c.model.norm = NormPlacement::Post;
  c.peak_lr = 6e-3;
  c.warmup_steps = 30;
  EXPECT_EQ(default_run_name(c), "post-norm lr 6e-3 warmup 30");
}

TEST(Config, DefaultsAreValid) {
  EXPECT_NO_THROW(validate(TrainConfig{}));
  const TrainConfig c;
  EXPECT_EQ(c.model.layers, 8);
  EXPECT_EQ(c.model.d_model, 128);
  EXPECT_EQ(c.model.heads, 4);
  EXPECT_EQ(c.model.context, 128);
  EXPECT_EQ(c.model.vocab, 8192);
  EXPECT_EQ(c.model.norm, NormPlacement::Pre);
  EXPECT_EQ(c.clip_grad_norm, 0.0);
}

TEST(Config, ValidateNamesTheField) {
  const std::vector<std::pair<std::function<void(TrainConfig&)>, std::string>> cases = {
      {[](TrainConfig& c) { c.model.layers = 0; }, "layers"},
      {[](TrainConfig& c) { c.model.d_model = 4; }, "d_model"},
      {[](TrainConfig& c) { c.model.heads = 3; }, "heads"},
      {[](TrainConfig& c) { c.model.heads = 0; }, "heads"},
      {[](TrainConfig& c) { c.model.context = 1; }, "context"},
      {[](TrainConfig& c) { c.model.vocab = 10; }, "vocabulary"},
      {[](TrainConfig& c) { c.peak_lr = 0; }, "learning rate"},
      {[](TrainConfig& c) { c.peak_lr = std::nan(""); }, "learning rate"},
      {[](TrainConfig& c) { c.peak_lr = 2; }, "learning rate"},
      {[](TrainConfig& c) { c.steps = 0; }, "steps"},
      {[](TrainConfig& c) { c.warmup_steps = 0; }, "warmup"},
      {[](TrainConfig& c) { c.batch_size = 0; }, "batch size"},
      {[](TrainConfig& c) { c.weight_decay = -0.1; }, "weight decay"},
      {[](TrainConfig& c) { c.clip_grad_norm = -1; }, "clipping"},
      {[](TrainConfig& c) { c.threads = -1; }, "threads"},
      {[](TrainConfig& c) { c.eval_interval = 0; }, "evaluation interval"},
      {[](TrainConfig& c) { c.eval_batches = 0; }, "evaluation batches"},
      {[](TrainConfig& c) { c.device = "gpu"; }, "device"},
  };
  for (const auto& [change, field] : cases) {
    TrainConfig c;
    change(c);
    EXPECT_THAT(user_error([&] { validate(c); }), HasSubstr(field));
  }
}

}  // namespace
}  // namespace normlab::test
