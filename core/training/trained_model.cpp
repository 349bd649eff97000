#include "trained_model.h"

#include <algorithm>
#include <random>
#include <torch/torch.h>

#include "core/system/atomic_file.h"

#include "checkpoint.h"
#include "headed_file.h"
#include "learner.h"
#include "run_data.h"
#include "text_samples.h"
#include "training_state.h"
#include "weights.h"
#include "weights_io.h"

namespace normlab {
namespace fs = std::filesystem;

namespace {

TrainConfig on_the_cpu(TrainConfig config) {
  config.device = "cpu";
  return config;
}

// RUN.weights, else RUN.ckpt; UserError when neither is there.
fs::path weights_source(const RunRecord& run, const fs::path& run_file) {
  std::error_code error;
  for (const fs::path& path : {weights_path(run_file), checkpoint_path(run_file)}) {
    if (fs::exists(path, error)) return path;
  }
  throw UserError(run.config.name + " has no weights to continue text with: neither " +
                  weights_path(run_file).filename().string() + " nor " + checkpoint_path(run_file).filename().string() +
                  " is beside its run file (a done run keeps its weights unless trained with --final-weights drop, a "
                  "stopped one its checkpoint)");
}

}  // namespace

struct TrainedModel::Parts {
  Parts(const RunRecord& run, const fs::path& run_file, const std::function<void(const std::string&)>& stage)
      : config(on_the_cpu(run.config)),
        source(weights_source(run, run_file)),
        run_data(prepare_run_data(config, stage)),
        learner(config, run_data.tokenizer.vocab_size(), torch::kCPU),
        unigram(run_data.data.unigram_log_probs().exp()) {
    if (stage) stage("Loading the weights");
    if (source.extension() == ".weights") {
      load_weights(read_whole_file(source), source, config, tokenizer_hash(run_data.tokenizer), learner.model());
    } else {
      std::mt19937_64 batch_rng;
      torch::Tensor batch_starts;
      RunRecord restored = run;
      restored.config = config;
      TrainingState state{learner, batch_rng, batch_starts, restored};
      // Refuses another experiment, other data or shapes.
      restore_checkpoint(source, data_fingerprint(run_data.data), state);
    }
  }

  const TrainConfig config;
  const fs::path source;
  const RunData run_data;
  Learner learner;
  const torch::Tensor unigram;  // the training frequencies, add-one smoothed, as the baseline's
};

void check_request(const SampleRequest& request) {
  if (request.tokens < 1 || request.tokens > 4096) throw UserError("--tokens must be between 1 and 4096");
  if (!(request.temperature >= 0) || request.temperature > 100) {
    throw UserError("--temperature must be between 0 (greedy) and 100");
  }
  if (request.top < 0 || request.top > 1000) throw UserError("--top must be between 0 and 1000");
}

TrainedModel::TrainedModel(const RunRecord& run, const fs::path& run_file,
                           const std::function<void(const std::string&)>& stage)
    : parts_(std::make_unique<Parts>(run, run_file, stage)) {}

TrainedModel::~TrainedModel() = default;

const fs::path& TrainedModel::weights_file() const { return parts_->source; }

Sample TrainedModel::sample(const SampleRequest& request) const {
  check_request(request);
  const Tokenizer& tokenizer = parts_->run_data.tokenizer;
  std::vector<int> prompt = tokenizer.encode(request.prompt);
  if (prompt.empty()) throw UserError("the prompt has no tokens: give it some text");
  const auto context = std::size_t(parts_->config.model.context);
  if (prompt.size() > context) prompt.erase(prompt.begin(), prompt.end() - std::ptrdiff_t(context));

  Sample sample;
  sample.prompt_tokens = int(prompt.size());
  const Decoder decoder = parts_->learner.decoder();
  const bool greedy = request.temperature == 0;
  const auto continued = continue_prompts(decoder, {prompt}, request.tokens, greedy ? 1.0 : request.temperature,
                                          {request.seed}, torch::kCPU);
  sample.continuation = tokenizer.decode(greedy ? continued[0].greedy : continued[0].sampled);

  if (request.top > 0) {
    const auto ids = torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end())).unsqueeze(0);
    const auto model = torch::softmax(decoder.start(ids).to(torch::kFloat64), -1)[0];
    const auto best = model.topk(std::min<std::int64_t>(request.top, model.numel()));
    for (std::int64_t i = 0; i < std::get<1>(best).numel(); ++i) {
      const int id = int(std::get<1>(best)[i].item<std::int64_t>());
      sample.top.push_back(
          {tokenizer.decode({id}), std::get<0>(best)[i].item<double>(), parts_->unigram[id].item<double>()});
    }
  }
  return sample;
}

}  // namespace normlab
