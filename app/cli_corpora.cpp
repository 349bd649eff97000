// normlab-cli corpora: the corpora a run can name, each with its size, tokens and unigram
// baseline once built; --build makes one (its text, tokenizer and token ids) and says how
// long each step took.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "core/data/corpora.h"
#include "core/data/tokenizer.h"
#include "core/system/user_error.h"

#include "cli_run.h"

namespace normlab::cli {
namespace {

std::string count_text(std::uintmax_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void build(const NamedCorpus& named, int vocab) {
  const auto tell = [](const std::string& what) { std::printf("%s\n", what.c_str()), std::fflush(stdout); };
  auto start = std::chrono::steady_clock::now();
  const Corpus corpus = load_named_corpus(named, tell);
  std::printf("Corpus %s: %s bytes in the cache, %s (%.1f s)\n", named.name.c_str(),
              count_text(corpus.text.size()).c_str(), corpus.path.c_str(), seconds_since(start));
  std::printf("Preparing its %d-token BPE tokenizer (trained once, then cached)\n", vocab), std::fflush(stdout);
  start = std::chrono::steady_clock::now();
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus, vocab);
  std::printf("Tokenizer %s in %.1f s: %s\n", tokenizer.was_trained() ? "trained" : "from the cache",
              seconds_since(start), tokenizer.model_file().c_str());
  start = std::chrono::steady_clock::now();
  const std::vector<int> ids = encode_corpus(corpus, tokenizer);
  std::printf("Tokenized: %s tokens (%.1f s)\n", count_text(ids.size()).c_str(), seconds_since(start));
}

}  // namespace

CLI::App* add_corpora_command(CLI::App& app, Options& options) {
  CLI::App* corpora =
      app.add_subcommand("corpora", "list the corpora a run can name with --corpus: size, tokens, baseline, built");
  corpora
      ->add_option("--build", options.corpus_to_build,
                   "build this corpus now: its text from Debian's packages, its tokenizer and its token ids, each "
                   "step timed (otherwise the first run on it builds them)")
      ->type_name("NAME");
  corpora
      ->add_option("--packages", options.corpus_packages,
                   "print the Debian packages this corpus is built from, on one line (for apt-get install)")
      ->type_name("NAME")
      ->excludes("--build");
  corpora->add_option("--vocab", options.corpus_vocab, "the tokenizer's vocabulary the tokens are counted with")
      ->check(CLI::Range(256, 65536))
      ->capture_default_str();
  return corpora;
}

int run_corpora(const Options& options) {
  if (!options.corpus_packages.empty()) {
    const NamedCorpus* named = find_named_corpus(options.corpus_packages);
    if (!named) {
      throw UserError("no corpus is named '" + options.corpus_packages + "': the corpora are " + corpus_names());
    }
    std::string line;
    for (const std::string& package : named->packages) line += (line.empty() ? "" : " ") + package;
    std::printf("%s\n", line.c_str());
    return 0;
  }
  if (!options.corpus_to_build.empty()) {
    const NamedCorpus* named = find_named_corpus(options.corpus_to_build);
    if (!named) {
      throw UserError("no corpus is named '" + options.corpus_to_build + "': the corpora are " + corpus_names());
    }
    build(*named, options.corpus_vocab);
    std::printf("\n");
  }
  std::printf("%-10s %-6s %13s %12s %12s %9s  %s\n", "NAME", "BUILT", "BYTES", "TOKENS", "TRAINING", "BASELINE",
              "WHAT");
  std::vector<const NamedCorpus*> unbuilt;
  for (const NamedCorpus& named : named_corpora()) {
    const auto facts = corpus_facts(named, options.corpus_vocab);
    const std::string bytes = facts ? count_text(facts->bytes) : "-";
    const std::string tokens = facts && facts->tokens ? count_text(*facts->tokens) : "-";
    const std::string training = facts && facts->train_tokens ? count_text(*facts->train_tokens) : "-";
    char baseline[32] = "-";
    if (facts && facts->baseline) std::snprintf(baseline, sizeof baseline, "%.3f", *facts->baseline);
    std::printf("%-10s %-6s %13s %12s %12s %9s  %s\n", named.name.c_str(), facts ? "yes" : "no", bytes.c_str(),
                tokens.c_str(), training.c_str(), baseline, named.about.c_str());
    if (!facts || !facts->tokens) unbuilt.push_back(&named);
  }
  std::printf("\nTokens with the %d-token BPE vocabulary; baseline: the unigram held-out loss in nats.\n",
              options.corpus_vocab);
  for (const NamedCorpus* named : unbuilt) {
    std::string line = "normlab-cli corpora --build " + named->name;
    if (const auto missing = named->missing_packages(); !missing.empty()) {
      line = "sudo apt-get install";
      for (const std::string& p : missing) line += " " + p;
      line += " && normlab-cli corpora --build " + named->name;
    }
    std::printf("%s: built by its first run, or now: %s\n", named->name.c_str(), line.c_str());
  }
  return 0;
}

}  // namespace normlab::cli
