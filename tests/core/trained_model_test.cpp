// A trained run continuing text from the weights beside its run file
// (core/training/trained_model.h): its final weights or its checkpoint, and the files it
// refuses.
#include "core/training/trained_model.h"

#include "core/system/atomic_file.h"
#include "core/training/checkpoint.h"
#include "core/training/learner.h"
#include "core/training/trainer.h"
#include "core/training/weights.h"
#include "core/training/weights_io.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

class TrainedModelTest : public CacheTest {
 protected:
  // Trains config_ to the end, keeping its final weights beside run_file_ as the config says.
  RunRecord train_keeping_weights() {
    TrainCallbacks callbacks;
    callbacks.on_checkpoint_due = [this](const std::string& bytes) { write_file_atomically(checkpoint_, bytes); };
    callbacks.on_weights_due = [this](const std::string& bytes) { write_file_atomically(weights_, bytes); };
    return train(config_, callbacks);
  }

  Sample sample(const RunRecord& run, const SampleRequest& request) {
    return TrainedModel(run, run_file_).sample(request);
  }

  TrainConfig config_ = [this] {
    TrainConfig c = tiny_config(corpus_file(synthetic_corpus()));
    c.steps = 60;
    c.eval_interval = 30;
    return c;
  }();
  fs::path run_file_ = temp_ / "run.json";
  fs::path checkpoint_ = checkpoint_path(run_file_);
  fs::path weights_ = weights_path(run_file_);
};

TEST_F(TrainedModelTest, ADoneRunKeepsItsWeightsAndNoCheckpoint) {
  const RunRecord run = train_keeping_weights();
  EXPECT_TRUE(fs::exists(weights_));
  EXPECT_FALSE(fs::exists(checkpoint_));
  EXPECT_EQ(read_weights_header(weights_).step, config_.steps);
  EXPECT_EQ(TrainedModel(run, run_file_).weights_file(), weights_);
}

TEST_F(TrainedModelTest, ContinuesTheTextTheSameWayForASeed) {
  const RunRecord run = train_keeping_weights();
  SampleRequest request;
  request.prompt = run.text.prompts.at(0);
  request.tokens = 20;
  request.seed = 3;
  request.top = 5;
  const Sample first = sample(run, request);
  EXPECT_FALSE(first.continuation.empty());
  EXPECT_GT(first.prompt_tokens, 0);
  EXPECT_EQ(sample(run, request).continuation, first.continuation);
  ASSERT_EQ(first.top.size(), 5u);
  for (std::size_t i = 1; i < first.top.size(); ++i) EXPECT_GE(first.top[i - 1].model, first.top[i].model);
  for (const NextToken& t : first.top) EXPECT_GT(t.unigram, 0);
  request.seed = 4;
  EXPECT_NE(sample(run, request).continuation, first.continuation);
}

// Greedy, from the run's own last prompt: what the run wrote at its last evaluation, from
// its weights file and from a kept checkpoint alike.
TEST_F(TrainedModelTest, GreedyRepeatsTheRunsOwnLastText) {
  SampleRequest request;
  request.tokens = 40;
  request.temperature = 0;
  const RunRecord run = train_keeping_weights();
  request.prompt = run.text.prompts.at(1);
  EXPECT_EQ(sample(run, request).continuation, run.text.samples.back().greedy.at(1));
  fs::remove(weights_);
  config_.final_checkpoint = "keep";
  const RunRecord kept = train_keeping_weights();
  ASSERT_FALSE(fs::exists(weights_));
  EXPECT_EQ(TrainedModel(kept, run_file_).weights_file(), checkpoint_);
  EXPECT_EQ(sample(kept, request).continuation, run.text.samples.back().greedy.at(1));
}

TEST_F(TrainedModelTest, RefusesWhatItCannotContinueWith) {
  const RunRecord run = train_keeping_weights();
  SampleRequest request;
  request.prompt = "and";
  EXPECT_THAT(user_error([&] { TrainedModel(run, temp_ / "none.json"); }), HasSubstr("no weights"));
  request.prompt = "";
  EXPECT_THAT(user_error([&] { sample(run, request); }), HasSubstr("no tokens"));
  request.prompt = "and";
  RunRecord other = run;
  other.config.model.layers = 3;
  EXPECT_THAT(user_error([&] { TrainedModel(other, run_file_); }), HasSubstr("another experiment"));
  std::string bytes = read_file(weights_);
  bytes.resize(bytes.size() / 2);
  write_file(weights_, bytes);
  EXPECT_THAT(user_error([&] { TrainedModel(run, run_file_); }), HasSubstr("run.weights: truncated"));
}

// Damage, each refused with the file named: a byte changed in the header's frame or
// anywhere in the payload, the file cut anywhere, bytes added; never a crash.
TEST_F(TrainedModelTest, RefusesADamagedWeightsFile) {
  const RunRecord run = train_keeping_weights();
  const std::string good = read_file(weights_);
  const std::size_t header = good.find('\n');
  std::vector<std::string> damaged;
  for (std::size_t at : {std::size_t(0), std::size_t(3), header - 1, header, header + 1, header + 200, good.size() / 2,
                         good.size() - 1}) {
    std::string flipped = good;
    flipped[at] = char(flipped[at] ^ 0x20);
    damaged.push_back(flipped);
    damaged.push_back(good.substr(0, at));
  }
  damaged.push_back(good + "x");
  for (const std::string& bytes : damaged) {
    write_file(weights_, bytes);
    EXPECT_THAT(user_error([&] { TrainedModel(run, run_file_); }), HasSubstr("run.weights"));
  }
  write_file(weights_, good);
  EXPECT_NO_THROW(TrainedModel(run, run_file_));
}

TEST_F(TrainedModelTest, RefusesWeightsOfAnotherTokenizer) {
  const RunRecord run = train_keeping_weights();
  std::string bytes = read_file(weights_);
  const std::size_t at = bytes.find("\"tokenizer\":\"") + 13;
  bytes[at] = bytes[at] == '0' ? '1' : '0';
  write_file(weights_, bytes);
  EXPECT_THAT(user_error([&] { TrainedModel(run, run_file_); }), HasSubstr("another tokenizer"));
}

// The weights reader over damaged bytes, without a corpus: every byte of the header flipped
// in turn, payload bytes flipped and the file cut at spread-out places. Each is refused
// with the file named, or, where the flip fell on a byte nothing depends on (the run's
// name), loads the very same weights; never a crash, never other weights.
TEST(WeightsFile, EveryDamageIsRefusedOrHarmless) {
  TrainConfig config = tiny_config("");
  config.model.vocab = 64;
  Learner learner(config, 64, torch::kCPU);
  Gpt& model = learner.model();
  const std::string good = weights_bytes(model, config, "tokenizer-hash", 7);
  const auto original = torch::cat([&] {
    std::vector<torch::Tensor> flat;
    for (const auto& p : model->parameters()) flat.push_back(p.detach().flatten().clone());
    return flat;
  }());
  Learner other(config, 64, torch::kCPU);
  auto try_load = [&](const std::string& bytes) -> std::string {
    try {
      load_weights(bytes, "fuzz.weights", config, "tokenizer-hash", other.model());
      return "";
    } catch (const UserError& error) {
      return error.what();
    }
  };
  ASSERT_EQ(try_load(good), "");
  const std::size_t header = good.find('\n');
  int refused = 0, harmless = 0;
  for (std::size_t at = 0; at < good.size(); at += at <= header ? 1 : 997) {
    for (const bool cut : {false, true}) {
      if (cut && at % 7 != 0) continue;
      std::string bytes = cut ? good.substr(0, at) : good;
      if (!cut) bytes[at] = char(bytes[at] ^ 0x01);
      const std::string why = try_load(bytes);
      if (!why.empty()) {
        EXPECT_THAT(why, HasSubstr("fuzz.weights")) << at;
        ++refused;
        continue;
      }
      ++harmless;
      EXPECT_FALSE(cut) << "a cut file loaded, at " << at;
      EXPECT_LT(at, header) << "a changed payload byte loaded, at " << at;
      std::vector<torch::Tensor> flat;
      for (const auto& p : other.model()->parameters()) flat.push_back(p.detach().flatten());
      EXPECT_TRUE(torch::equal(torch::cat(flat), original)) << at;
    }
  }
  EXPECT_GT(refused, int(header));
  RecordProperty("refused", refused);
  RecordProperty("harmless", harmless);
}

}  // namespace
}  // namespace normlab::test
