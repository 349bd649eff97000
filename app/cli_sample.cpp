// normlab-cli sample: a trained run continues any text, with its next-token guesses beside
// the unigram's.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "core/training/trained_model.h"

#include "cli_run.h"

namespace normlab::cli {

namespace {

// "\n" and other control bytes as the terminal would not show them.
std::string visible(const std::string& token) {
  std::string out;
  for (const char c : token) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out;
}

}  // namespace

CLI::App* add_sample_command(CLI::App& app, Options& options) {
  CLI::App* sample = app.add_subcommand(
      "sample", "continue a text with a trained run's weights (beside its run file: RUN.weights, else RUN.ckpt)");
  sample
      ->add_option("run", options.sample_run,
                   "the run's file; a done run (unless trained with --final-weights drop) or a stopped one")
      ->required()
      ->type_name("RUN.json");
  sample->add_option("--prompt", options.sample.prompt, "the text to continue")->required();
  sample->add_option("--tokens", options.sample.tokens, "tokens to write")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  sample
      ->add_option("--temperature", options.sample.temperature, "0: the likeliest token each time; higher: more varied")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  sample->add_option("--seed", options.sample.seed, "seeds the sampling")->capture_default_str();
  sample
      ->add_option("--top", options.sample.top,
                   "also print the model's likeliest next tokens after the prompt, this many")
      ->check(CLI::Range(0, 1000));
  return sample;
}

int run_sample(const Options& options) {
  const std::filesystem::path file = options.sample_run;
  const RunRecord run = read_json(file);
  check_request(options.sample);  // before the corpus is read
  const Sample sample = TrainedModel(run, file).sample(options.sample);
  std::printf("%s%s\n", options.sample.prompt.c_str(), sample.continuation.c_str());
  if (!sample.top.empty()) {
    std::printf("\nnext token after the prompt (%d tokens seen)  %-8s %s\n", sample.prompt_tokens, "model", "unigram");
    for (const NextToken& t : sample.top) {
      std::printf("  %-40s  %7.4f  %7.4f\n", ("'" + visible(t.text) + "'").c_str(), t.model, t.unigram);
    }
  }
  return 0;
}

}  // namespace normlab::cli
