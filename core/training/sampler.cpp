#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <torch/torch.h>

#include "core/data/corpus.h"
#include "core/data/dataset.h"
#include "core/data/tokenizer.h"
#include "core/runs/config_fields.h"

#include "checkpoint.h"
#include "learner.h"
#include "text_samples.h"
#include "training_state.h"

namespace normlab {

Sample sample_run(const RunRecord& run, const std::filesystem::path& checkpoint, const SampleRequest& request) {
  if (request.tokens < 1 || request.tokens > 4096) throw UserError("--tokens must be between 1 and 4096");
  if (!(request.temperature >= 0) || request.temperature > 100) {
    throw UserError("--temperature must be between 0 (greedy) and 100");
  }
  if (request.top < 0 || request.top > 1000) throw UserError("--top must be between 0 and 1000");
  TrainConfig config = run.config;
  config.device = "cpu";
  if (std::error_code error; !std::filesystem::exists(checkpoint, error)) {
    throw UserError(run.config.name + " has no weights to continue text with: " + checkpoint.string() +
                    " is absent (a done run keeps it when trained with --final-checkpoint keep)");
  }
  const CheckpointHeader header = read_checkpoint_header(checkpoint);
  if (!same_experiment(header.config, config)) {
    throw UserError(checkpoint.string() + " is not this run's: it holds another experiment's weights");
  }
  const Corpus corpus = load_corpus_or_default(config.corpus_path);
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus, config.model.vocab);
  const Dataset data(encode_corpus(corpus, tokenizer), tokenizer.vocab_size(), config.model.context);

  Learner learner(config, tokenizer.vocab_size(), torch::kCPU);
  std::mt19937_64 batch_rng;
  torch::Tensor batch_starts;
  RunRecord restored = run;
  TrainingState state{learner, batch_rng, batch_starts, restored};
  restore_checkpoint(checkpoint, data_fingerprint(data), state);  // refuses other data or shapes

  std::vector<int> prompt = tokenizer.encode(request.prompt);
  if (prompt.empty()) throw UserError("the prompt has no tokens: give it some text");
  const auto context = std::size_t(config.model.context);
  if (prompt.size() > context) prompt.erase(prompt.begin(), prompt.end() - std::ptrdiff_t(context));

  Sample sample;
  sample.prompt_tokens = int(prompt.size());
  const Decoder decoder = learner.decoder();
  const bool greedy = request.temperature == 0;
  const auto continued = continue_prompts(decoder, {prompt}, request.tokens, greedy ? 1.0 : request.temperature,
                                          {request.seed}, torch::kCPU);
  sample.continuation = tokenizer.decode(greedy ? continued[0].greedy : continued[0].sampled);

  if (request.top > 0) {
    const auto ids = torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end())).unsqueeze(0);
    const auto model = torch::softmax(decoder.start(ids).to(torch::kFloat64), -1)[0];
    const auto unigram = data.unigram_log_probs().exp();
    const auto best = model.topk(std::min<std::int64_t>(request.top, model.numel()));
    for (std::int64_t i = 0; i < std::get<1>(best).numel(); ++i) {
      const int id = int(std::get<1>(best)[i].item<std::int64_t>());
      sample.top.push_back({tokenizer.decode({id}), std::get<0>(best)[i].item<double>(), unigram[id].item<double>()});
    }
  }
  return sample;
}

}  // namespace normlab
