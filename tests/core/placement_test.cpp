// Each placement and norm type computes the formula its table row states: the block's
// output against the same update written out here, with the norms and the attention
// (with and without QK-norm) computed by hand.
#include <cmath>
#include <tuple>
#include <vector>

#include "core/model/model.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using Tensor = torch::Tensor;

constexpr double kEps = 1e-5;  // LayerNorm's, which RMSNorm shares

ModelConfig tiny(NormPlacement placement, NormType type, Switch qk_norm = Switch::Off) {
  ModelConfig m;
  m.layers = 8;  // DeepNorm's alpha is then exactly 2; mix runs blocks 0 and 1 post-norm
  m.d_model = 8;
  m.heads = 2;
  m.context = 4;
  m.vocab = 16;
  m.norm = placement;
  m.norm_type = type;
  m.qk_norm = qk_norm;
  return m;
}

// The norm written out from its definition, with the module's own gain (and bias).
Tensor by_hand(torch::nn::AnyModule& norm, NormType type, const Tensor& x) {
  const auto params = norm.ptr()->named_parameters();
  const Tensor& gain = params["weight"];
  switch (type) {
    case NormType::LayerNorm: {
      const auto centred = x - x.mean(-1, /*keepdim=*/true);
      const auto variance = centred.pow(2).mean(-1, /*keepdim=*/true);
      return centred / (variance + kEps).sqrt() * gain + params["bias"];
    }
    case NormType::RmsNorm: return x / (x.pow(2).mean(-1, /*keepdim=*/true) + kEps).sqrt() * gain;
    case NormType::Dyt: return gain * torch::tanh(params["alpha"] * x) + params["bias"];
  }
  throw std::logic_error("unknown norm type");
}

Tensor rms_by_hand(const Tensor& x, const Tensor& gain) {
  return x / (x.pow(2).mean(-1, /*keepdim=*/true) + kEps).sqrt() * gain;
}

// Causal self-attention written out: softmax(q kᵀ / √d) v over the visible keys, per head,
// with q and k RMS-normalised over each head's dimension first when QK-norm is on.
Tensor attention_by_hand(CausalSelfAttentionImpl& a, const Tensor& x) {
  const auto batch = x.size(0), time = x.size(1), width = x.size(2), head = width / a.heads;
  const Tensor qkv = torch::matmul(x, a.qkv->weight.t()) + a.qkv->bias;
  auto heads_of = [&](int part) {
    return qkv.narrow(-1, part * width, width).reshape({batch, time, a.heads, head}).transpose(1, 2);
  };
  Tensor q = heads_of(0), k = heads_of(1);
  const Tensor v = heads_of(2);
  if (!a.q_norm.is_empty()) {
    q = rms_by_hand(q, a.q_norm.ptr()->named_parameters()["weight"]);
    k = rms_by_hand(k, a.k_norm.ptr()->named_parameters()["weight"]);
  }
  const Tensor future = torch::ones({time, time}).triu(1).to(torch::kBool);
  const Tensor weights = torch::softmax(
      (torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(head))).masked_fill(future, -INFINITY), -1);
  const Tensor y = torch::matmul(weights, v).transpose(1, 2).reshape({batch, time, width});
  return torch::matmul(y, a.proj->weight.t()) + a.proj->bias;
}

// Gains and biases away from 1 and 0, so a norm applied in the wrong place shows.
void randomise_norms(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& item : module.named_parameters()) {
    if (item.key().find("norm") != std::string::npos) item.value().copy_(1 + 0.5 * torch::randn_like(item.value()));
  }
}

class PlacementFormula : public ::testing::TestWithParam<std::tuple<NormPlacement, NormType, Switch>> {};

TEST_P(PlacementFormula, BlockComputesItsRowsUpdate) {
  const NormPlacement placement = std::get<0>(GetParam());
  const NormType type = std::get<1>(GetParam());
  torch::manual_seed(11);
  const ModelConfig config = tiny(placement, type, std::get<2>(GetParam()));
  const Tensor x = 3 * torch::randn({2, 4, 8}) + 1;
  // Mix: block 1 is in the first quarter of 8 (post-norm), block 2 is not (pre-norm).
  for (const int index : {1, 2}) {
    Block block(config, index);
    randomise_norms(*block);
    torch::NoGradGuard no_grad;
    if (placement == NormPlacement::ReZero) block->rezero_alpha.fill_(0.7);  // at its initial 0 a block is the identity
    auto N = [&](torch::nn::AnyModule& norm, const Tensor& t) { return by_hand(norm, type, t); };
    auto A = [&](const Tensor& t) { return attention_by_hand(*block->attention, t); };
    auto M = [&](const Tensor& t) { return block->mlp(t); };
    auto pre = [&] {
      const Tensor h = x + A(N(block->norm1, x));
      return h + M(N(block->norm2, h));
    };
    auto post = [&] {
      const Tensor h = N(block->norm1, x + A(x));
      return N(block->norm2, h + M(h));
    };
    Tensor expected;
    switch (placement) {
      case NormPlacement::Pre: expected = pre(); break;
      case NormPlacement::Post: expected = post(); break;
      case NormPlacement::Peri: {
        const Tensor h = x + N(block->out_norm1, A(N(block->norm1, x)));
        expected = h + N(block->out_norm2, M(N(block->norm2, h)));
        break;
      }
      case NormPlacement::DeepNorm: {
        const double alpha = 2.0;  // (2 * 8)^(1/4)
        const Tensor h = N(block->norm1, alpha * x + A(x));
        expected = N(block->norm2, alpha * h + M(h));
        break;
      }
      case NormPlacement::Mix: expected = index == 1 ? post() : pre(); break;
      case NormPlacement::LayerNormScaling: {
        const double scale = 1 / std::sqrt(index + 1.0);  // ℓ counts the blocks from 1
        const Tensor h = x + A(N(block->norm1, x) * scale);
        expected = h + M(N(block->norm2, h) * scale);
        break;
      }
      case NormPlacement::ReZero: {
        const Tensor h = x + 0.7 * A(x);
        expected = h + 0.7 * M(h);
        break;
      }
    }
    const Tensor actual = block->forward(x);
    EXPECT_TRUE(torch::allclose(actual, expected, 1e-5, 1e-5))
        << to_string(placement) << " block " << index << ": max difference "
        << (actual - expected).abs().max().item<double>();
  }
}

// Every row of the tables: a placement or norm type added there is tested here at once.
template <typename Row, std::size_t N>
auto values_of(const Row (&table)[N]) {
  std::vector<decltype(table[0].value)> values;
  for (const Row& row : table) values.push_back(row.value);
  return ::testing::ValuesIn(values);
}

INSTANTIATE_TEST_SUITE_P(Placements, PlacementFormula,
                         ::testing::Combine(values_of(kPlacements), values_of(kNormTypes),
                                            ::testing::Values(Switch::Off, Switch::On)),
                         [](const auto& info) {
                           return to_string(std::get<0>(info.param)) + "_" +
                                  kNormTypes[std::size_t(std::get<1>(info.param))].name +
                                  (std::get<2>(info.param) == Switch::On ? "_qknorm" : "");
                         });

TEST(NormType, DytIsAScaledTanhWithGainAndBias) {
  Dyt dyt(3, 0.5);
  EXPECT_DOUBLE_EQ(dyt->alpha.item<double>(), 0.5);
  EXPECT_EQ(dyt->alpha.dim(), 0) << "one alpha per DyT";
  // At init (gain 1, bias 0): tanh(0.5 x); tanh(1) = 0.76159.
  const Tensor y = dyt->forward(torch::tensor({{2.0f, 0.0f, -40.0f}}));
  EXPECT_NEAR(y[0][0].item<double>(), 0.7615942, 1e-6);
  EXPECT_EQ(y[0][1].item<double>(), 0.0);
  EXPECT_NEAR(y[0][2].item<double>(), -1.0, 1e-6) << "saturates instead of rescaling";
  // Unlike a norm it keeps the scale: doubling the input changes the output.
  const Tensor x = torch::tensor({{0.1f, 0.2f, 0.3f}});
  EXPECT_FALSE(torch::allclose(dyt->forward(2 * x), dyt->forward(x)));
  ModelConfig config = tiny(NormPlacement::Pre, NormType::Dyt);
  config.dyt_alpha0 = 2;
  Gpt model(config);
  for (const auto& item : model->named_parameters()) {
    if (item.key().find("alpha") != std::string::npos) {
      EXPECT_DOUBLE_EQ(item.value().item<double>(), 2.0) << item.key();
    }
  }
  EXPECT_TRUE(model->named_parameters().contains("final_norm.alpha")) << "the final norm is a DyT too";
}

// The DyT paper's language-model recipe: the embeddings enter the stream multiplied by a
// learnt scalar that starts at √d, so the first DyT does not see values of std 0.02.
TEST(NormType, DytModelsScaleTheEmbeddingsByALearntScalarFromRootD) {
  const ModelConfig config = tiny(NormPlacement::Pre, NormType::Dyt);
  Gpt model(config);
  ASSERT_TRUE(model->embedding_scale.defined());
  EXPECT_TRUE(model->embedding_scale.requires_grad());
  EXPECT_FLOAT_EQ(model->embedding_scale.item<float>(), std::sqrt(float(config.d_model)));
  EXPECT_FALSE(Gpt(tiny(NormPlacement::Pre, NormType::LayerNorm))->embedding_scale.defined());
  EXPECT_FALSE(Gpt(tiny(NormPlacement::ReZero, NormType::Dyt))->embedding_scale.defined())
      << "ReZero has no norm to replace";
  // Doubling the scale doubles what the first block receives: the logits change.
  const Tensor ids = torch::tensor({{1, 2, 3}});
  const Tensor before = model->forward(ids);
  torch::NoGradGuard no_grad;
  model->embedding_scale.mul_(2);
  EXPECT_FALSE(torch::allclose(model->forward(ids), before));
}

TEST(QkNorm, GainsPerHeadDimensionAndOnlyWhenOn) {
  torch::manual_seed(17);
  Gpt off(tiny(NormPlacement::Pre, NormType::LayerNorm));
  torch::manual_seed(17);
  Gpt on(tiny(NormPlacement::Pre, NormType::LayerNorm, Switch::On));
  EXPECT_FALSE(off->named_parameters().contains("blocks.0.attention.q_norm.weight"));
  const auto params = on->named_parameters();
  ASSERT_TRUE(params.contains("blocks.7.attention.k_norm.weight"));
  EXPECT_EQ(params["blocks.0.attention.q_norm.weight"].size(0), 4) << "d_model 8 over 2 heads";
  // The gains start at 1 and draw nothing: every other weight is as without the switch.
  for (const auto& item : off->named_parameters())
    EXPECT_TRUE(torch::equal(item.value(), params[item.key()])) << item.key();
}

// GPT-2's residual scaling: the matrices that write into the stream start 1/√(2N) of the
// usual draw, and nothing else changes.
TEST(ScaledResidualInit, ShrinksOutputAndDownProjectionsOnly) {
  for (const auto placement : {NormPlacement::Pre, NormPlacement::Post, NormPlacement::ReZero}) {
    ModelConfig config;  // 8 blocks of width 128: 2N = 16, std 0.02 / 4
    config.norm = placement;
    torch::manual_seed(16);
    Gpt plain(config);
    config.scaled_residual_init = Switch::On;
    torch::manual_seed(16);
    Gpt scaled(config);
    const auto before = plain->named_parameters();
    for (const auto& item : scaled->named_parameters()) {
      const std::string& name = item.key();
      const bool writes_stream =
          name.find("attention.proj.weight") != std::string::npos || name.find("mlp.down.weight") != std::string::npos;
      const Tensor expected = writes_stream ? before[name] / 4 : before[name];
      EXPECT_TRUE(torch::allclose(item.value(), expected, 0, 1e-9)) << to_string(placement) << " " << name;
      if (writes_stream) {
        EXPECT_NEAR(item.value().std().item<double>(), 0.005, 0.0005) << name;
      }
    }
  }
  TrainConfig deep;
  deep.model.norm = NormPlacement::DeepNorm;
  deep.model.scaled_residual_init = Switch::On;
  EXPECT_THROW(validate(deep), UserError) << "DeepNorm sets its own initial scale";
}

TEST(NormType, RmsNormIsTheRootMeanSquareFormula) {
  torch::manual_seed(12);
  RmsNorm norm(6);
  {
    torch::NoGradGuard no_grad;
    norm->weight.copy_(torch::randn({6}));
  }
  const Tensor x = 2 + 5 * torch::randn({3, 6});
  const Tensor expected = x / torch::sqrt(x.pow(2).sum(-1, true) / 6 + 1e-5) * norm->weight;
  EXPECT_TRUE(torch::allclose(norm->forward(x), expected, 1e-6, 1e-6));
  // One value by hand: [3, 4] has rms sqrt(12.5).
  RmsNorm two(2);
  const Tensor y = two->forward(torch::tensor({{3.0f, 4.0f}}));
  EXPECT_NEAR(y[0][0].item<double>(), 3 / std::sqrt(12.5 + 1e-5), 1e-6);
  EXPECT_NEAR(y[0][1].item<double>(), 4 / std::sqrt(12.5 + 1e-5), 1e-6);
}

TEST(NormType, LayerNormIsCentredAndScaled) {
  torch::manual_seed(13);
  ModelConfig config = tiny(NormPlacement::Pre, NormType::LayerNorm);
  auto norm = make_norm(config);
  randomise_norms(*norm.ptr());
  const Tensor x = 2 + 5 * torch::randn({3, 8});
  EXPECT_TRUE(torch::allclose(norm.forward(x), by_hand(norm, NormType::LayerNorm, x), 1e-5, 1e-5));
}

TEST(DeepNorm, ConstantsFollowDeepNet) {
  EXPECT_DOUBLE_EQ(deepnorm_alpha(8), 2.0);
  EXPECT_NEAR(deepnorm_beta(8), 0.35355339, 1e-8);  // 64^(-1/4) = 1 / (2 sqrt 2)
  EXPECT_NEAR(deepnorm_alpha(2), std::pow(4.0, 0.25), 1e-12);
  EXPECT_NEAR(deepnorm_beta(32), std::pow(256.0, -0.25), 1e-12);
  Block deep(tiny(NormPlacement::DeepNorm, NormType::LayerNorm));
  EXPECT_DOUBLE_EQ(deep->residual_scale, 2.0);
  Block post(tiny(NormPlacement::Post, NormType::LayerNorm));
  EXPECT_DOUBLE_EQ(post->residual_scale, 1.0);
}

// Xavier-normal: std = gain * sqrt(2 / (fan_in + fan_out)), mean 0; checked per matrix.
void expect_xavier(const Tensor& weight, double gain, const std::string& what) {
  const double fans = double(weight.size(0) + weight.size(1));
  const double expected = gain * std::sqrt(2.0 / fans);
  const double n = double(weight.numel());
  EXPECT_NEAR(weight.std().item<double>(), expected, 0.05 * expected) << what;
  EXPECT_NEAR(weight.mean().item<double>(), 0.0, 5 * expected / std::sqrt(n)) << what;
}

TEST(DeepNorm, InitialisesWithBetaExceptQueryAndKey) {
  torch::manual_seed(14);
  ModelConfig config = tiny(NormPlacement::DeepNorm, NormType::LayerNorm);
  config.d_model = 64;  // 4096 weights a matrix: enough for its std to be measured within 5 %
  Gpt model(config);
  const double beta = deepnorm_beta(8);
  const std::int64_t d = config.d_model;
  for (int i = 0; i < config.layers; ++i) {
    auto& block = *model->blocks[i]->as<BlockImpl>();
    const std::string at = "block " + std::to_string(i) + " ";
    const Tensor qkv = block.attention->qkv->weight;
    expect_xavier(qkv.narrow(0, 0, d), 1.0, at + "query");
    expect_xavier(qkv.narrow(0, d, d), 1.0, at + "key");
    expect_xavier(qkv.narrow(0, 2 * d, d), beta, at + "value");
    expect_xavier(block.attention->proj->weight, beta, at + "output projection");
    expect_xavier(block.mlp->up->weight, beta, at + "MLP up");
    expect_xavier(block.mlp->down->weight, beta, at + "MLP down");
    for (auto* linear : {&block.attention->qkv, &block.attention->proj, &block.mlp->up, &block.mlp->down}) {
      EXPECT_EQ((*linear)->bias.abs().max().item<double>(), 0.0) << at;
    }
  }
  // The embeddings keep the GPT-2 init every placement uses.
  EXPECT_NEAR(model->token_embedding->weight.std().item<double>(), 0.02, 0.002);
}

TEST(DeepNorm, OtherPlacementsKeepTheGpt2Init) {
  for (const PlacementInfo& row : kPlacements) {
    const NormPlacement placement = row.value;
    if (placement == NormPlacement::DeepNorm) continue;
    torch::manual_seed(15);
    ModelConfig config;
    config.norm = placement;
    Gpt model(config);
    const auto& block = *model->blocks[0]->as<BlockImpl>();
    EXPECT_NEAR(block.attention->qkv->weight.std().item<double>(), 0.02, 0.001) << to_string(placement);
    EXPECT_NEAR(block.mlp->down->weight.std().item<double>(), 0.02, 0.001) << to_string(placement);
  }
}

TEST(Placements, FinalNormAndNormCountFollowTheTable) {
  for (const auto& row : kPlacements) {
    Gpt model(tiny(row.value, NormType::LayerNorm));
    EXPECT_EQ(!model->final_norm.is_empty(), row.final_norm) << row.name;
    const auto names = model->named_parameters();
    const bool peri = row.value == NormPlacement::Peri;
    EXPECT_EQ(names.contains("blocks.0.out_norm1.weight"), peri) << row.name;
    EXPECT_EQ(names.contains("blocks.7.out_norm2.bias"), peri) << row.name;
    EXPECT_EQ(names.contains("blocks.0.norm1.weight"), row.norms) << row.name;
    EXPECT_EQ(names.contains("blocks.7.norm2.weight"), row.norms) << row.name;
    EXPECT_EQ(names.contains("blocks.3.rezero_alpha"), row.value == NormPlacement::ReZero) << row.name;
  }
}

TEST(Placements, ReZeroStartsEveryBlockAsTheIdentity) {
  Gpt model(tiny(NormPlacement::ReZero, NormType::LayerNorm));
  const Tensor x = torch::randn({2, 4, 8});
  torch::NoGradGuard no_grad;
  for (auto& block : *model->blocks) {
    EXPECT_EQ(block->as<BlockImpl>()->rezero_alpha.item<double>(), 0.0);
    EXPECT_TRUE(torch::equal(block->as<BlockImpl>()->forward(x), x));
  }
}

TEST(Placements, LayerNormScalingDividesByTheRootOfTheDepth) {
  Gpt model(tiny(NormPlacement::LayerNormScaling, NormType::LayerNorm));
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(model->blocks[i]->as<BlockImpl>()->depth_scale, 1 / std::sqrt(i + 1.0));
  Gpt pre(tiny(NormPlacement::Pre, NormType::LayerNorm));
  EXPECT_DOUBLE_EQ(pre->blocks[7]->as<BlockImpl>()->depth_scale, 1.0);
}

TEST(Placements, MixIsPostInTheFirstQuarterOfTheBlocks) {
  for (const int layers : {2, 4, 8, 9, 16}) {
    ModelConfig config = tiny(NormPlacement::Mix, NormType::LayerNorm);
    config.layers = layers;
    Gpt model(config);
    int post = 0;
    for (int i = 0; i < layers; ++i) {
      const auto rule = model->blocks[i]->as<BlockImpl>()->mixed_as;
      EXPECT_EQ(rule, i < layers / 4 ? NormPlacement::Post : NormPlacement::Pre) << layers << " layers, block " << i;
      post += rule == NormPlacement::Post;
    }
    EXPECT_EQ(post, layers / 4);
  }
}

}  // namespace
}  // namespace normlab::test
