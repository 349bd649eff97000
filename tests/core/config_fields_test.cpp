// The config field table drives validation and the text forms the command line and
// saved settings use.
#include "core/runs/config_fields.h"

#include <set>

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

TEST(ConfigFields, KeysAndFlagsAreUniqueAndDefaultsValid) {
  std::set<std::string> keys, flags;
  for (const ConfigField& field : config_fields()) {
    EXPECT_TRUE(keys.insert(field.key).second) << field.key;
    EXPECT_TRUE(flags.insert(field.flag).second) << field.flag;
    EXPECT_FALSE(field.label.empty()) << field.key;
    EXPECT_FALSE(field.help.empty()) << field.key;
    EXPECT_NO_THROW(check_field(field, TrainConfig{})) << field.key;
  }
  EXPECT_NO_THROW(validate(TrainConfig{}));
}

// Issue 49, item 8: the screen wrote 0.006 where run names write 6e-3. Shown, a small
// number takes the run names' form where that says it exactly; files keep field_text.
TEST(ConfigFields, ShownTextWritesSmallNumbersAsRunNamesDo) {
  const ConfigField& rate = config_field("peak_lr");
  TrainConfig c;
  c.peak_lr = 6e-3;
  EXPECT_EQ(shown_text(rate, c), "6e-3");
  EXPECT_EQ(field_text(rate, c), "0.006");
  c.peak_lr = 0.0006;
  EXPECT_EQ(shown_text(rate, c), "6e-4");
  c.peak_lr = 0.00123456789;  // the short form would round it
  EXPECT_EQ(shown_text(rate, c), field_text(rate, c));
  c.model.layers = 12;
  EXPECT_EQ(shown_text(config_field("layers"), c), "12");
}

// Every field survives its own text form: what saved settings and the command line rely on.
TEST(ConfigFields, TextRoundTripsEveryField) {
  TrainConfig c;
  c.model.norm = NormPlacement::Post;
  c.peak_lr = 0.00123456789;
  c.clip_grad_norm = 0.1;
  c.seed = 18'000'000'000'000'000'000ull;
  c.device = "cpu";
  c.corpus_path = "/data/text with spaces.txt";
  c.model.layers = 5;
  for (const ConfigField& field : config_fields()) {
    TrainConfig back;
    set_field_text(field, back, field_text(field, c));
    EXPECT_EQ(field_text(field, back), field_text(field, c)) << field.key;
  }
  TrainConfig back;
  for (const ConfigField& field : config_fields()) set_field_text(field, back, field_text(field, c));
  EXPECT_EQ(back.peak_lr, c.peak_lr);
  EXPECT_EQ(back.clip_grad_norm, c.clip_grad_norm);
  EXPECT_EQ(back.seed, c.seed);
  EXPECT_EQ(back.model.norm, NormPlacement::Post);
  EXPECT_EQ(back.corpus_path, c.corpus_path);
}

TEST(ConfigFields, BadTextNamesTheFieldAndWhatItTakes) {
  TrainConfig c;
  EXPECT_THAT(user_error([&] { set_field_text(config_field("peak_lr"), c, "fast"); }),
              HasSubstr("peak learning rate needs a number, not 'fast'"));
  EXPECT_THAT(user_error([&] { set_field_text(config_field("layers"), c, "-3"); }), HasSubstr("whole number"));
  EXPECT_THAT(user_error([&] { set_field_text(config_field("layers"), c, "99999999999"); }),
              HasSubstr("between 1 and 64"));
  EXPECT_THAT(user_error([&] { set_field_text(config_field("device"), c, "tpu"); }),
              HasSubstr("'auto', 'cpu' or 'cuda', not 'tpu'"));
  EXPECT_EQ(c.model.layers, TrainConfig{}.model.layers) << "a refused text changes nothing";
}

TEST(ConfigFields, ValidateChecksEveryRangeFromTheTable) {
  auto refused = [](auto change) {
    TrainConfig c;
    change(c);
    return user_error([&] { validate(c); });
  };
  EXPECT_THAT(refused([](TrainConfig& c) { c.model.layers = 65; }), HasSubstr("layers must be between 1 and 64"));
  EXPECT_THAT(refused([](TrainConfig& c) { c.peak_lr = 0; }), HasSubstr("above 0 and at most 1"));
  EXPECT_THAT(refused([](TrainConfig& c) { c.weight_decay = -1; }), HasSubstr("0 or more"));
  EXPECT_THAT(refused([](TrainConfig& c) { c.device = "tpu"; }), HasSubstr("'tpu'"));
  EXPECT_THAT(refused([](TrainConfig& c) { c.model.heads = 3; }), HasSubstr("heads must divide d_model"));
  EXPECT_THAT(refused([](TrainConfig& c) { c.model.norm = NormPlacement(std::size(kPlacements)); }),
              HasSubstr("norm placement"));
}

// That info(value) is value's row, config.h's static_assert(in_enum_order(kPlacements))
// holds; here, what is built from the table: each choice the settings panel offers, taken
// by its name, sets the placement whose formula the panel shows beside it.
TEST(ConfigFields, PlacementTableGivesNamesFormulasAndFinalNorm) {
  for (const PlacementInfo& row : kPlacements) EXPECT_EQ(parse_norm(row.name), row.value);
  EXPECT_TRUE(info(NormPlacement::Pre).final_norm);
  EXPECT_FALSE(info(NormPlacement::Post).final_norm);
  const ConfigField& norm = config_field("norm");
  ASSERT_EQ(norm.choices.size(), std::size(kPlacements));
  std::set<NormPlacement> chosen;
  for (const Choice& choice : norm.choices) {
    TrainConfig c;
    set_field_text(norm, c, choice.name);
    chosen.insert(c.model.norm);
    EXPECT_EQ(choice.formula, formula(c.model.norm)) << choice.name;
    EXPECT_EQ(field_text(norm, c), choice.name);
  }
  EXPECT_EQ(chosen.size(), std::size(kPlacements)) << "every placement can be chosen";
}

TEST(ConfigFields, SameExperimentComparesEveryFieldThatShapesTheResult) {
  TrainConfig a, b;
  a.name = "one";
  b.name = "two";
  EXPECT_TRUE(same_experiment(a, b));
  std::set<std::string> ignored;
  for (const ConfigField& field : config_fields()) {
    TrainConfig changed = a;
    const std::string other =
        field.choices.empty() ? (field.widget == Widget::File ? "x.txt" : "2") : field.choices.back().name;
    set_field_text(field, changed, other == field_text(field, a) ? "3" : other);
    EXPECT_EQ(same_experiment(a, changed), !field.shapes_result) << field.key;
    if (!field.shapes_result) ignored.insert(field.key);
  }
  // Speed and bookkeeping only; the seed, the corpus and every number of the model count.
  // The CPU precision counts: bf16 is other arithmetic, not the same sum in another order.
  EXPECT_EQ(ignored, (std::set<std::string>{"device", "threads", "cpu_parallel", "cpu_matmul", "fused_loss",
                                            "fused_attention", "layer_stats_every", "text_every", "checkpoint_interval",
                                            "final_checkpoint", "final_weights"}));
  TrainConfig other_lr = a;
  other_lr.peak_lr = 6e-3;
  ASSERT_NE(first_difference(a, other_lr), nullptr);
  EXPECT_EQ(first_difference(a, other_lr)->key, "peak_lr");
  EXPECT_EQ(first_difference(a, b), nullptr);
}

TEST(ConfigFields, RunNamesTellEveryPlacementAndNormTypeApart) {
  std::set<std::string> names;
  std::size_t designs = 0;
  for (const PlacementInfo& row : kPlacements) {
    designs += row.norms ? std::size(kNormTypes) : 1;  // without norms (ReZero) the norm type changes nothing
    for (const NormTypeInfo& type : kNormTypes) {
      for (const Switch qk_norm : {Switch::Off, Switch::On}) {
        for (const Switch scaled_init : {Switch::Off, Switch::On}) {
          TrainConfig c;
          c.model.norm = row.value;
          c.model.norm_type = type.value;
          c.model.qk_norm = qk_norm;
          c.model.scaled_residual_init = scaled_init;
          names.insert(default_run_name(c));
        }
      }
    }
  }
  EXPECT_EQ(names.size(), designs * 4);
  TrainConfig c;
  EXPECT_EQ(default_run_name(c), "pre-norm lr 1e-3 warmup 30");  // as every earlier run was named
  c.model.norm = NormPlacement::DeepNorm;
  c.model.norm_type = NormType::RmsNorm;
  c.model.layers = 16;
  EXPECT_EQ(default_run_name(c), "deepnorm RMSNorm lr 1e-3 warmup 30 layers 16");
  // A corpus by name, not the default: its runs do not take the King James runs' files.
  c.corpus_path = "bookshelf";
  EXPECT_EQ(default_run_name(c), "deepnorm RMSNorm lr 1e-3 warmup 30 layers 16 bookshelf");
  c.corpus_path = kDefaultCorpusName;
  EXPECT_EQ(default_run_name(c), "deepnorm RMSNorm lr 1e-3 warmup 30 layers 16");
  c.corpus_path = "texts/notes.txt";  // a file, unsaid as before
  EXPECT_EQ(default_run_name(c), "deepnorm RMSNorm lr 1e-3 warmup 30 layers 16");
  TrainConfig d;
  d.model.norm_type = NormType::Dyt;
  d.model.qk_norm = Switch::On;
  EXPECT_EQ(default_run_name(d), "pre-norm DyT QK-norm lr 1e-3 warmup 30");
  d.model.dyt_alpha0 = 2;  // α₀ is said once it is not the paper's default
  d.model.qk_norm = Switch::Off;
  d.model.scaled_residual_init = Switch::On;
  EXPECT_EQ(default_run_name(d), "pre-norm DyT alpha0 2 scaled init lr 1e-3 warmup 30");
  d.model.norm = NormPlacement::ReZero;  // no norm: neither the type nor α₀ applies
  EXPECT_EQ(default_run_name(d), "rezero scaled init lr 1e-3 warmup 30");
}

}  // namespace
}  // namespace normlab::test
