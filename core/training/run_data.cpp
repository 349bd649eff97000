#include "run_data.h"

#include "core/data/corpora.h"

namespace normlab {

RunData prepare_run_data(const TrainConfig& config, const std::function<void(const std::string&)>& stage) {
  auto tell = [&](const std::string& what) {
    if (stage) stage(what);
  };
  tell("Reading the corpus");
  Corpus corpus = load_chosen_corpus(config.corpus_path, stage);
  tell("Preparing the " + std::to_string(config.model.vocab) +
       "-token BPE tokenizer (trained once per corpus, then cached)");
  Tokenizer tokenizer = Tokenizer::for_corpus(corpus, config.model.vocab);
  tell("Tokenizing the corpus");
  Dataset data(encode_corpus(corpus, tokenizer), tokenizer.vocab_size(), config.model.context);
  return {std::move(corpus), std::move(tokenizer), std::move(data)};
}

}  // namespace normlab
