// A trained run continuing text from its checkpoint (core/training/sampler.h), and the
// checkpoints it refuses.
#include "core/training/sampler.h"

#include "core/system/atomic_file.h"
#include "core/training/checkpoint.h"
#include "core/training/trainer.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

class SamplerTest : public CacheTest {
 protected:
  // Trains config_ to the end, keeping its final weights in checkpoint_.
  RunRecord train_keeping_weights() {
    config_.final_checkpoint = "keep";
    TrainCallbacks callbacks;
    callbacks.on_checkpoint_due = [this](const std::string& bytes) { write_file_atomically(checkpoint_, bytes); };
    return train(config_, callbacks);
  }

  TrainConfig config_ = [this] {
    TrainConfig c = tiny_config(corpus_file(synthetic_corpus()));
    c.steps = 60;
    c.eval_interval = 30;
    return c;
  }();
  fs::path checkpoint_ = temp_ / "run.ckpt";
};

TEST_F(SamplerTest, ContinuesTheTextTheSameWayForASeed) {
  const RunRecord run = train_keeping_weights();
  SampleRequest request;
  request.prompt = run.text.prompts.at(0);
  request.tokens = 20;
  request.seed = 3;
  request.top = 5;
  const Sample first = sample_run(run, checkpoint_, request);
  EXPECT_FALSE(first.continuation.empty());
  EXPECT_GT(first.prompt_tokens, 0);
  EXPECT_EQ(sample_run(run, checkpoint_, request).continuation, first.continuation);
  ASSERT_EQ(first.top.size(), 5u);
  for (std::size_t i = 1; i < first.top.size(); ++i) EXPECT_GE(first.top[i - 1].model, first.top[i].model);
  for (const NextToken& t : first.top) EXPECT_GT(t.unigram, 0);
  request.seed = 4;
  EXPECT_NE(sample_run(run, checkpoint_, request).continuation, first.continuation);
}

// Greedy, from the run's own last prompt: what the run wrote at its last evaluation.
TEST_F(SamplerTest, GreedyRepeatsTheRunsOwnLastText) {
  const RunRecord run = train_keeping_weights();
  SampleRequest request;
  request.prompt = run.text.prompts.at(1);
  request.tokens = 40;
  request.temperature = 0;
  const Sample sample = sample_run(run, checkpoint_, request);
  EXPECT_EQ(sample.continuation, run.text.samples.back().greedy.at(1));
}

TEST_F(SamplerTest, RefusesWhatItCannotContinueWith) {
  const RunRecord run = train_keeping_weights();
  SampleRequest request;
  request.prompt = "and";
  EXPECT_THAT(user_error([&] { sample_run(run, temp_ / "none.ckpt", request); }), HasSubstr("no weights"));
  request.prompt = "";
  EXPECT_THAT(user_error([&] { sample_run(run, checkpoint_, request); }), HasSubstr("no tokens"));
  request.prompt = "and";
  RunRecord other = run;
  other.config.model.layers = 3;
  EXPECT_THAT(user_error([&] { sample_run(other, checkpoint_, request); }), HasSubstr("another experiment"));
  std::string bytes = read_file(checkpoint_);
  bytes.resize(bytes.size() / 2);
  write_file(checkpoint_, bytes);
  EXPECT_THAT(user_error([&] { sample_run(run, checkpoint_, request); }), HasSubstr("run.ckpt"));
}

}  // namespace
}  // namespace normlab::test
