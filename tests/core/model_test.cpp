#include "core/model/model.h"

#include <cmath>

#include "test_support.h"

namespace normlab::test {
namespace {

ModelConfig small(NormPlacement norm) {
  ModelConfig m;
  m.layers = 2;
  m.d_model = 32;
  m.heads = 2;
  m.context = 16;
  m.vocab = 512;
  m.norm = norm;
  return m;
}

// Embeddings, then per block two LayerNorms (gain, bias), attention's qkv and output
// projection, the 4x MLP; the output head is tied. Pre-norm adds one final LayerNorm.
std::int64_t expected_parameters(const ModelConfig& m) {
  const std::int64_t d = m.d_model;
  const std::int64_t layer_norm = 2 * d;
  const std::int64_t attention = (d * 3 * d + 3 * d) + (d * d + d);
  const std::int64_t mlp = (d * 4 * d + 4 * d) + (4 * d * d + d);
  const std::int64_t block = 2 * layer_norm + attention + mlp;
  const std::int64_t embeddings = std::int64_t(m.vocab) * d + std::int64_t(m.context) * d;
  return embeddings + m.layers * block + (m.norm == NormPlacement::Pre ? layer_norm : 0);
}

class ModelTest : public ::testing::TestWithParam<NormPlacement> {
 protected:
  void SetUp() override { torch::manual_seed(3); }
};

TEST(Model, ParameterCount) {
  ModelConfig pre;
  Gpt pre_model(pre);
  EXPECT_EQ(pre_model->parameter_count(), expected_parameters(pre));
  EXPECT_EQ(pre_model->parameter_count(), 2'651'392);

  ModelConfig post;
  post.norm = NormPlacement::Post;
  Gpt post_model(post);
  EXPECT_EQ(post_model->parameter_count(), expected_parameters(post));
  EXPECT_EQ(pre_model->parameter_count() - post_model->parameter_count(), 2 * 128);

  for (auto norm : {NormPlacement::Pre, NormPlacement::Post}) {
    Gpt model(small(norm));
    EXPECT_EQ(model->parameter_count(), expected_parameters(small(norm)));
  }
}

TEST_P(ModelTest, LogitsAndInitialLoss) {
  Gpt model(small(GetParam()));
  const auto ids = torch::randint(512, {8, 16}, torch::kInt64);
  const auto targets = torch::randint(512, {8, 16}, torch::kInt64);
  const auto logits = model->forward(ids);
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{8, 16, 512}));
  // Shorter sequences than the context work too.
  EXPECT_EQ(model->forward(ids.narrow(1, 0, 5)).sizes(), (std::vector<std::int64_t>{8, 5, 512}));

  // loss() is the mean cross-entropy of those logits; small init makes it ln(vocab).
  const auto log_probs = logits.log_softmax(-1);
  const double manual = -log_probs.gather(-1, targets.unsqueeze(-1)).mean().item<double>();
  const double loss = model->loss(ids, targets).item<double>();
  EXPECT_NEAR(loss, manual, 1e-5);
  EXPECT_NEAR(loss, std::log(512.0), 0.05);
}

TEST_P(ModelTest, Causal) {
  Gpt model(small(GetParam()));
  model->eval();
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(512, {2, 16}, torch::kInt64);
  auto changed = ids.clone();
  const int k = 9;
  changed.index_put_({torch::indexing::Slice(), k}, (ids.index({torch::indexing::Slice(), k}) + 1) % 512);
  const auto before = model->forward(ids), after = model->forward(changed);
  using torch::indexing::Slice;
  EXPECT_TRUE(torch::allclose(before.index({Slice(), Slice(0, k)}), after.index({Slice(), Slice(0, k)}), 0.0, 1e-6));
  EXPECT_FALSE(torch::allclose(before.index({Slice(), Slice(k)}), after.index({Slice(), Slice(k)}), 0.0, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Norms, ModelTest, ::testing::Values(NormPlacement::Pre, NormPlacement::Post),
                         [](const auto& info) { return to_string(info.param); });

TEST(Model, InitialisationStd) {
  torch::manual_seed(1);
  Gpt model{ModelConfig{}};
  int linears = 0;
  for (auto& module : model->modules(/*include_self=*/false)) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      ++linears;
      EXPECT_NEAR(linear->weight.std().item<double>(), 0.02, 0.002);
      EXPECT_NEAR(linear->weight.mean().item<double>(), 0.0, 0.002);
      EXPECT_EQ(linear->bias.abs().max().item<double>(), 0.0);
    }
  }
  EXPECT_EQ(linears, 8 * 4);  // qkv, proj, up, down per block
  EXPECT_NEAR(model->token_embedding->weight.std().item<double>(), 0.02, 0.001);
  EXPECT_NEAR(model->position_embedding->weight.std().item<double>(), 0.02, 0.002);
}

TEST(Model, OutputTiedToTokenEmbedding) {
  torch::manual_seed(2);
  Gpt model(small(NormPlacement::Pre));
  for (const auto& item : model->named_parameters()) {
    EXPECT_FALSE(item.value().sizes() == model->token_embedding->weight.sizes() &&
                 item.key() != "token_embedding.weight")
        << item.key() << " looks like an untied output head";
  }
  // The head reads the embedding: scaling it changes the logits.
  const auto ids = torch::randint(512, {1, 8}, torch::kInt64);
  torch::NoGradGuard no_grad;
  const auto before = model->forward(ids);
  model->token_embedding->weight.mul_(2);
  EXPECT_FALSE(torch::allclose(before, model->forward(ids)));
}

TEST(Model, PreAndPostDiffer) {
  torch::manual_seed(4);
  Gpt pre(small(NormPlacement::Pre));
  torch::manual_seed(4);
  Gpt post(small(NormPlacement::Post));
  EXPECT_FALSE(pre->final_norm.is_empty());
  EXPECT_TRUE(post->final_norm.is_empty());
  EXPECT_TRUE(pre->named_parameters().contains("final_norm.weight"));
  EXPECT_FALSE(post->named_parameters().contains("final_norm.weight"));
  // Same weights (same seed), different block wiring: different outputs.
  const auto ids = torch::randint(512, {2, 16}, torch::kInt64);
  EXPECT_FALSE(torch::allclose(pre->forward(ids), post->forward(ids), 1e-3, 1e-4));
}

TEST(Model, PostNormBlockNormalisesItsOutput) {
  // Post: Norm(x + f(x)) leaves every position with zero mean and unit variance (gain 1,
  // bias 0 at init). Pre: x + f(Norm x) keeps the residual stream's own scale.
  torch::manual_seed(5);
  const auto x = 10 * torch::randn({2, 16, 32});
  Block post(small(NormPlacement::Post));
  const auto y = post->forward(x);
  EXPECT_LT(y.mean(-1).abs().max().item<double>(), 1e-4);
  EXPECT_NEAR(y.var(-1, /*unbiased=*/false).mean().item<double>(), 1.0, 1e-3);

  Block pre(small(NormPlacement::Pre));
  const auto z = pre->forward(x);
  EXPECT_GT(z.var(-1, /*unbiased=*/false).mean().item<double>(), 50.0);
}

// RMSNorm has a gain and no bias, and leaves every position with unit root mean square.
TEST(Model, RmsNormScalesByTheRootMeanSquare) {
  ModelConfig m = small(NormPlacement::Post);
  m.norm_type = NormType::RmsNorm;
  Gpt model(m);
  const auto names = model->named_parameters();
  EXPECT_TRUE(names.contains("blocks.0.norm1.weight"));
  EXPECT_FALSE(names.contains("blocks.0.norm1.bias"));
  EXPECT_EQ(model->parameter_count(), expected_parameters(small(NormPlacement::Post)) - 2 * m.layers * m.d_model);

  torch::manual_seed(6);
  const auto x = 3 + 10 * torch::randn({2, 16, 32});
  Block block(m);
  const auto y = block->forward(x);
  EXPECT_NEAR(y.pow(2).mean(-1).mean().item<double>(), 1.0, 1e-3);
  EXPECT_GT(y.mean(-1).abs().max().item<double>(), 1e-2);  // not centred, unlike LayerNorm
  const auto ids = torch::randint(512, {2, 16}, torch::kInt64);
  EXPECT_TRUE(std::isfinite(model->loss(ids, ids).item<double>()));
}

// The cache changes how the logits are computed, not what they are: decoding a sequence
// a few positions, then one at a time, then a few again gives the full forward's logits.
TEST(Model, CachedDecodingGivesTheFullForwardsLogits) {
  torch::manual_seed(5);
  for (NormPlacement placement :
       {NormPlacement::Pre, NormPlacement::Post, NormPlacement::Peri, NormPlacement::DeepNorm, NormPlacement::ReZero}) {
    ModelConfig m = small(placement);
    if (placement == NormPlacement::Peri) m.qk_norm = Switch::On;
    Gpt model(m);
    model->eval();
    if (placement == NormPlacement::ReZero) {  // α starts at 0: every block would be the identity
      torch::NoGradGuard no_grad;
      for (auto& b : *model->blocks) b->as<BlockImpl>()->rezero_alpha.fill_(0.5);
    }
    torch::NoGradGuard no_grad;
    const auto ids = torch::randint(64, {3, 16}, torch::kInt64);
    const auto full = model->forward(ids);
    std::vector<AttentionCache> cache;
    auto cached = model->forward_at(ids.narrow(1, 0, 5), cache, 0);
    EXPECT_TRUE(torch::allclose(cached, full.narrow(1, 0, 5), 1e-5, 1e-5)) << to_string(placement);
    for (int t = 5; t < 12; ++t) {
      cached = model->forward_at(ids.narrow(1, t, 1), cache, t);
      EXPECT_TRUE(torch::allclose(cached.select(1, 0), full.select(1, t), 1e-5, 1e-5))
          << to_string(placement) << " position " << t;
    }
    EXPECT_EQ(cache.front().length, 12);
    EXPECT_EQ(cache.front().k.size(2), m.context) << "allocated once, for the whole context";
    const auto buffer = cache.front().k.data_ptr();
    cached = model->forward_at(ids.narrow(1, 12, 4), cache, 12);  // several positions after cached ones: masked
    EXPECT_TRUE(torch::allclose(cached, full.narrow(1, 12, 4), 1e-5, 1e-5)) << to_string(placement);
    EXPECT_EQ(cache.front().k.data_ptr(), buffer) << "written in place";
    // Back to an earlier position: what follows it is written over.
    const auto other = torch::randint(64, {3, 16}, torch::kInt64);
    cached = model->forward_at(other.narrow(1, 8, 1), cache, 8);
    const auto rewritten = model->forward(torch::cat({ids.narrow(1, 0, 8), other.narrow(1, 8, 1)}, 1));
    EXPECT_TRUE(torch::allclose(cached.select(1, 0), rewritten.select(1, 8), 1e-5, 1e-5)) << to_string(placement);
    EXPECT_THROW(model->forward_at(ids.narrow(1, 0, 5), cache, 12), std::invalid_argument) << "past the context";
    EXPECT_THROW(model->forward_at(ids.narrow(1, 0, 1), cache, 10), std::invalid_argument) << "a gap";
    EXPECT_THROW(model->forward_at(ids.narrow(0, 0, 2).narrow(1, 9, 1), cache, 9), std::invalid_argument)
        << "another batch continues nothing";
    cached = model->forward_at(other.narrow(1, 0, 16), cache, 0);
    EXPECT_TRUE(torch::allclose(cached, model->forward(other), 1e-5, 1e-5)) << "position 0 starts afresh";
  }
}

// Issue 52: the one-position step that a CUDA graph replays reads its position on the
// device and attends to the whole context's buffers, the later positions masked. The same
// logits as the full forward, also after a restart over a longer sequence's buffers, whose
// stale keys past the new prompt must stay hidden.
TEST(Model, AStepAtAPositionOnTheDeviceGivesTheFullForwardsLogits) {
  torch::manual_seed(6);
  for (NormPlacement placement : {NormPlacement::Pre, NormPlacement::Post, NormPlacement::Peri}) {
    ModelConfig m = small(placement);
    if (placement == NormPlacement::Peri) m.qk_norm = Switch::On;
    Gpt model(m);
    model->eval();
    torch::NoGradGuard no_grad;
    const auto ids = torch::randint(64, {3, 16}, torch::kInt64);
    const auto full = model->forward(ids);
    std::vector<AttentionCache> cache;
    model->forward_at(ids.narrow(1, 0, 5), cache, 0);
    const auto buffer = cache.front().k.data_ptr();
    for (int t = 5; t < 16; ++t) {
      const auto step = model->forward_step(ids.narrow(1, t, 1), cache, torch::full({1}, t, torch::kInt64));
      ASSERT_EQ(step.sizes(), (std::vector<std::int64_t>{3, 1, m.vocab}));
      EXPECT_TRUE(torch::allclose(step.select(1, 0), full.select(1, t), 1e-5, 1e-5))
          << to_string(placement) << " position " << t;
    }
    EXPECT_EQ(cache.front().k.data_ptr(), buffer) << "written in place";
    const auto other = torch::randint(64, {3, 16}, torch::kInt64);
    const auto other_full = model->forward(other);
    model->forward_at(other.narrow(1, 0, 3), cache, 0);
    for (int t = 3; t < 7; ++t) {
      const auto step = model->forward_step(other.narrow(1, t, 1), cache, torch::full({}, t, torch::kInt64));
      EXPECT_TRUE(torch::allclose(step.select(1, 0), other_full.select(1, t), 1e-5, 1e-5))
          << to_string(placement) << " after a restart, position " << t;
    }
    const auto position = torch::full({1}, 7, torch::kInt64);
    EXPECT_THROW(model->forward_step(other.narrow(1, 7, 2), cache, position), std::invalid_argument)
        << "one position a step";
    EXPECT_THROW(model->forward_step(other.narrow(0, 0, 2).narrow(1, 7, 1), cache, position), std::invalid_argument)
        << "another batch continues nothing";
    std::vector<AttentionCache> empty;
    EXPECT_THROW(model->forward_step(other.narrow(1, 0, 1), empty, position), std::invalid_argument)
        << "a step needs a filled cache";
  }
}

}  // namespace
}  // namespace normlab::test
