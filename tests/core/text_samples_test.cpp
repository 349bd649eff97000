// The text a run writes (core/training/text_samples.h): where the prompts come from, the
// continuation with and without the model's key-value cache, and the sampler's seeds.
#include "core/training/text_samples.h"

#include <set>
#include <torch/torch.h>

#include "core/training/graphed_decode.h"
#include "core/training/learner.h"

#include "test_support.h"

namespace normlab::test {
namespace {

TEST(TextSamples, PromptsAreHeldOutWindowsAtFixedPlaces) {
  const auto ids = torch::arange(1000, torch::kInt64);
  const auto prompts = fixed_prompts(ids, 128);
  ASSERT_EQ(prompts.size(), std::size_t(kPromptCount));
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_EQ(prompts[i].size(), std::size_t(kPromptTokens));
    const int start = prompts[i].front();
    EXPECT_EQ(start, (1000 - kPromptTokens) * int(i + 1) / (kPromptCount + 1));
    for (std::size_t k = 0; k < prompts[i].size(); ++k) EXPECT_EQ(prompts[i][k], start + int(k));
  }
  EXPECT_EQ(fixed_prompts(ids, 16).front().size(), 8u) << "half a short context";
  EXPECT_EQ(fixed_prompts(ids, 128), prompts) << "the same for every run on the corpus";
}

// What follows each prompt, as long as the context leaves room for after it.
TEST(TextSamples, ReferencesFollowTheirPrompts) {
  const auto ids = torch::arange(1000, torch::kInt64);
  for (const int context : {128, 16}) {
    const auto prompts = fixed_prompts(ids, context);
    const auto references = fixed_references(ids, context);
    ASSERT_EQ(references.size(), prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      EXPECT_EQ(int(references[i].size()), std::min<int>(kContinuationTokens, context - int(prompts[i].size())));
      EXPECT_EQ(references[i].front(), prompts[i].back() + 1);
      EXPECT_EQ(references[i].back(), references[i].front() + int(references[i].size()) - 1);
    }
  }
}

TEST(TextSamples, EachStepAndPromptDrawsFromItsOwnSeed) {
  std::set<std::uint64_t> seeds;
  for (std::uint64_t run : {1ULL, 2ULL}) {
    for (int step : {0, 1, 50}) {
      for (int prompt = 0; prompt < 3; ++prompt) seeds.insert(sample_seed(run, step, prompt));
    }
  }
  EXPECT_EQ(seeds.size(), 18u);
  EXPECT_EQ(sample_seed(7, 50, 2), sample_seed(7, 50, 2));
}

// A stand-in model over 10 tokens whose likeliest next token is the last one + 1; it
// counts how it is called.
struct CountingDecoder {
  int starts = 0, nexts = 0;
  std::vector<std::int64_t> widths;
  torch::Tensor logits_after(const torch::Tensor& ids) {
    const auto last = ids.select(1, -1).remainder(10);
    auto logits = torch::zeros({ids.size(0), 10});
    for (std::int64_t r = 0; r < ids.size(0); ++r) logits[r][(last[r].item<std::int64_t>() + 1) % 10] = 5;
    return logits;
  }
  Decoder decoder(int context) {
    return {[this](const torch::Tensor& ids) {
              ++starts;
              widths.push_back(ids.size(1));
              return logits_after(ids);
            },
            [this](const torch::Tensor& ids) {
              ++nexts;
              EXPECT_EQ(ids.size(1), 1);
              return logits_after(ids);
            },
            context};
  }
};

TEST(TextSamples, GreedyTakesTheLikeliestAndSamplesFollowTheirSeed) {
  CountingDecoder model;
  const std::vector<std::vector<int>> prompts{{1, 2, 3}, {7, 8, 9}};
  const auto first = continue_prompts(model.decoder(100), prompts, 12, 1.0, {11, 12}, torch::kCPU);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].greedy, (std::vector<int>{4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(first[1].greedy.front(), 0);
  EXPECT_EQ(model.starts, 1) << "both prompts have one length: one batch";
  EXPECT_EQ(model.nexts, 11) << "after the prompt, one cached position a token";
  const auto again = continue_prompts(model.decoder(100), prompts, 12, 1.0, {11, 12}, torch::kCPU);
  EXPECT_EQ(again[0].sampled, first[0].sampled);
  const auto other = continue_prompts(model.decoder(100), prompts, 12, 1.0, {13, 12}, torch::kCPU);
  EXPECT_NE(other[0].sampled, first[0].sampled) << "another seed, other samples";
  EXPECT_EQ(other[1].sampled, first[1].sampled) << "each prompt its own generator";
}

TEST(TextSamples, PastTheContextTheModelSeesTheLastContextTokens) {
  CountingDecoder model;
  continue_prompts(model.decoder(5), {{1, 2, 3}}, 6, 1.0, {1}, torch::kCPU);
  // Lengths 3, 4, 5 fit (a start, then two cached steps); from 6 on, each token restarts on the last 5.
  EXPECT_EQ(model.widths, (std::vector<std::int64_t>{3, 5, 5, 5}));
  EXPECT_EQ(model.nexts, 2);
}

// A decoder without a cache: each call runs the whole sequence so far through the model,
// the text as it is without any caching.
Decoder full_forward_decoder(Gpt model) {
  auto history = std::make_shared<torch::Tensor>();
  auto run = [model, history](const torch::Tensor& ids, bool fresh) mutable {
    torch::NoGradGuard no_grad;
    model->eval();
    *history = fresh ? ids : torch::cat({*history, ids}, 1);
    auto last = model->forward(*history).select(1, -1);
    model->train();
    return last;
  };
  return {[run](const torch::Tensor& ids) mutable { return run(ids, true); },
          [run](const torch::Tensor& ids) mutable { return run(ids, false); }, model->config.context};
}

// The learner's decoder, with its cache of keys and values, writes the text a full
// forward pass per token writes: past the context too, and for prompts of two lengths.
TEST(TextSamples, TheCachedDecoderWritesTheFullForwardsText) {
  for (NormPlacement placement : {NormPlacement::Pre, NormPlacement::Post, NormPlacement::Peri}) {
    TrainConfig config = tiny_config("unused");
    config.model.context = 16;
    config.model.norm = placement;
    Learner learner(config, 256, torch::kCPU);
    const std::vector<std::vector<int>> prompts{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14, 15, 16}, {17, 18}};
    const std::vector<std::uint64_t> seeds{1, 2, 3};
    const auto cached = continue_prompts(learner.decoder(), prompts, kContinuationTokens, 1.0, seeds, torch::kCPU);
    const auto full =
        continue_prompts(full_forward_decoder(learner.model()), prompts, kContinuationTokens, 1.0, seeds, torch::kCPU);
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      EXPECT_EQ(cached[i].greedy, full[i].greedy) << to_string(placement) << " prompt " << i;
      EXPECT_EQ(cached[i].sampled, full[i].sampled) << to_string(placement) << " prompt " << i;
      EXPECT_EQ(cached[i].greedy.size(), std::size_t(kContinuationTokens));
    }
  }
}

// The device path (for a GPU) run on the CPU: its greedy text is the host path's, for a
// real model with prompts of two lengths and past the context, read from the device once.
TEST(TextSamplesOnDevice, GreedyTextIsTheHostPathsAndIsReadOnce) {
  TrainConfig config = tiny_config("unused");
  config.model.context = 16;
  Learner learner(config, 256, torch::kCPU);
  const std::vector<std::vector<int>> prompts{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11}, {17, 18, 19, 20, 21, 22, 23, 24}};
  const std::vector<std::uint64_t> seeds{1, 2, 3};
  const auto host = continue_prompts(learner.decoder(), prompts, kContinuationTokens, 1.0, seeds, torch::kCPU);
  int reads = 0;
  const auto device =
      continue_prompts_on_device(learner.decoder(), prompts, kContinuationTokens, 1.0, seeds, torch::kCPU, &reads);
  EXPECT_EQ(reads, 1) << "every group's tokens in one copy";
  ASSERT_EQ(device.size(), prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(device[i].greedy, host[i].greedy) << "prompt " << i;
    EXPECT_EQ(device[i].sampled.size(), std::size_t(kContinuationTokens));
  }

  CountingDecoder counting, counted_on_device;
  const auto on_host = continue_prompts(counting.decoder(5), {{1, 2, 3}}, 6, 1.0, {1}, torch::kCPU);
  const auto on_device =
      continue_prompts_on_device(counted_on_device.decoder(5), {{1, 2, 3}}, 6, 1.0, {1}, torch::kCPU);
  EXPECT_EQ(on_device[0].greedy, on_host[0].greedy);
  EXPECT_EQ(counted_on_device.widths, counting.widths) << "restarts past the context as the host path does";
  EXPECT_EQ(counted_on_device.nexts, counting.nexts);
}

// Samples repeat for a seed (a resumed run writes the same text) and differ across seeds
// and prompts.
TEST(TextSamplesOnDevice, SamplesFollowTheirSeed) {
  TrainConfig config = tiny_config("unused");
  Learner learner(config, 256, torch::kCPU);
  const std::vector<std::vector<int>> prompts{{1, 2, 3, 4}, {1, 2, 3, 4}};
  const auto first = continue_prompts_on_device(learner.decoder(), prompts, 20, 1.0, {11, 12}, torch::kCPU);
  const auto again = continue_prompts_on_device(learner.decoder(), prompts, 20, 1.0, {11, 12}, torch::kCPU);
  const auto other = continue_prompts_on_device(learner.decoder(), prompts, 20, 1.0, {13, 12}, torch::kCPU);
  EXPECT_EQ(again[0].sampled, first[0].sampled);
  EXPECT_EQ(again[1].sampled, first[1].sampled);
  EXPECT_NE(first[1].sampled, first[0].sampled) << "the same prompt, another seed";
  EXPECT_NE(other[0].sampled, first[0].sampled) << "another seed, other samples";
  EXPECT_EQ(other[1].sampled, first[1].sampled) << "each prompt its own noise";
  EXPECT_EQ(other[0].greedy, first[0].greedy);
}

// A model whose next-token logits are always one fixed row: the samples' frequencies are
// its softmax at the temperature (10,000 draws: a standard error below 0.005 each).
TEST(TextSamplesOnDevice, SampleFrequenciesFollowTheSoftmax) {
  const auto row = torch::tensor({0.0, 1.0, 2.0, -1.0, 0.5}, torch::kFloat32);
  const auto fixed = [row](const torch::Tensor& ids) { return row.expand({ids.size(0), row.size(0)}).clone(); };
  const Decoder decoder{fixed, fixed, 100};
  const int prompts = 250, tokens = 40;
  std::vector<std::vector<int>> rows(prompts, std::vector<int>{1});
  std::vector<std::uint64_t> seeds;
  for (int i = 0; i < prompts; ++i) seeds.push_back(sample_seed(7, 0, i));
  for (const double temperature : {1.0, 2.0}) {
    const auto continued = continue_prompts_on_device(decoder, rows, tokens, temperature, seeds, torch::kCPU);
    std::vector<double> counts(5, 0.0);
    for (const auto& c : continued) {
      ASSERT_EQ(c.sampled.size(), std::size_t(tokens));
      for (const int token : c.sampled) counts.at(std::size_t(token)) += 1;
      for (const int token : c.greedy) EXPECT_EQ(token, 2);
    }
    const auto expected = torch::softmax(row.to(torch::kFloat64) / temperature, 0);
    for (std::size_t token = 0; token < counts.size(); ++token) {
      EXPECT_NEAR(counts[token] / (prompts * tokens), expected[std::int64_t(token)].item<double>(), 0.02)
          << "token " << token << " at temperature " << temperature;
    }
  }
}

// A model that diverges: its text ends at the first non-finite logits, as on the host.
TEST(TextSamplesOnDevice, TextEndsAtNonFiniteLogits) {
  auto calls = std::make_shared<int>(0);
  const auto logits = [calls](const torch::Tensor& ids) {
    auto out = torch::zeros({ids.size(0), 4});
    out.select(1, 1).fill_(1.0);
    if (++*calls > 3) out[0][0] = NAN;
    return out;
  };
  const Decoder decoder{logits, logits, 100};
  const auto on_device = continue_prompts_on_device(decoder, {{1}}, 8, 1.0, {1}, torch::kCPU);
  *calls = 0;
  const auto on_host = continue_prompts(decoder, {{1}}, 8, 1.0, {1}, torch::kCPU);
  EXPECT_EQ(on_device[0].greedy, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(on_device[0].greedy, on_host[0].greedy);
  EXPECT_EQ(on_device[0].sampled.size(), 3u);
}

// Issue 52: where no graph can be captured (here: no CUDA backend), the decoder's step
// still runs, eagerly, at the position it was given, and the state says why; the capture
// is not tried again at every token.
TEST(GraphedDecode, WithoutAGraphEveryStepRunsEagerlyAndSaysWhy) {
  std::vector<std::int64_t> positions;
  GraphedDecode decode([&](const torch::Tensor& ids, const torch::Tensor& position) {
    positions.push_back(position.item<std::int64_t>());
    return ids.to(torch::kFloat32) * 2;
  });
  const int cache = 0;
  const auto ids = torch::tensor({3, 4}, torch::kInt64).view({2, 1});
  EXPECT_TRUE(torch::equal(decode.next(ids, 5, &cache), ids.to(torch::kFloat32) * 2));
  EXPECT_EQ(decode.state(), "eager") << "the first step over a cache runs eagerly";
  for (std::int64_t p = 6; p < 9; ++p)
    EXPECT_TRUE(torch::equal(decode.next(ids, p, &cache), ids.to(torch::kFloat32) * 2));
  EXPECT_EQ(positions, (std::vector<std::int64_t>{5, 6, 7, 8}));
  EXPECT_NE(decode.state().find("CUDA"), std::string::npos) << decode.state();
}

}  // namespace
}  // namespace normlab::test
