#include "corpora.h"

#include <chrono>
#include <cstdio>
#include <mutex>

#include "core/system/atomic_file.h"
#include "core/system/paths.h"
#include "core/system/user_error.h"

#include "bookshelf.h"
#include "split.h"
#include "tokenizer.h"

namespace normlab {
namespace fs = std::filesystem;

namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  for (std::string dirs = path ? path : "/usr/bin"; !dirs.empty();) {
    const std::size_t colon = dirs.find(':');
    if (fs::exists(fs::path(dirs.substr(0, colon)) / program)) return true;
    dirs = colon == std::string::npos ? "" : dirs.substr(colon + 1);
  }
  return false;
}

// The whole Bible, Genesis to Revelation, as the `bible` program (bible-kjv) prints it.
std::string king_james_text(const Tell&) {
  FILE* pipe = popen("bible gen1:1-rev22:21 2>/dev/null", "r");
  if (!pipe) throw UserError("cannot run `bible`; install Debian's bible-kjv or pass --corpus");
  std::string text;
  char buffer[1 << 16];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
  if (pclose(pipe) != 0 || text.size() < kMinCorpusBytes) {
    throw UserError(
        "the `bible` program (Debian's bible-kjv) is missing or printed nothing; "
        "install it or pass --corpus FILE");
  }
  return text;
}

std::vector<std::string> bookshelf_packages() {
  std::vector<std::string> packages{"libsword-utils"};
  for (const auto& source : bookshelf::sources()) packages.push_back(source.package);
  return packages;
}

std::string joined(const std::vector<std::string>& words, const std::string& between) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : between) + w;
  return out;
}

}  // namespace

const std::vector<NamedCorpus>& named_corpora() {
  static const std::vector<NamedCorpus> all{
      {kDefaultCorpus,
       "King James Bible",
       "the King James Bible, Genesis to Revelation (4.3 MB)",
       {"bible-kjv"},
       "Writing the King James Bible into the cache with `bible` (once, a few seconds)",
       [] { return on_path("bible") ? std::vector<std::string>{} : std::vector<std::string>{"bible-kjv"}; },
       king_james_text},
      {"bookshelf", "Bookshelf",
       "English from Debian's packages: Webster 1913, Spurgeon, Matthew Henry, the World English Bible, "
       "Scofield, FOLDOC, the Jargon File, the Devil's Dictionary, fortunes (59 MB)",
       bookshelf_packages(),
       "Building the bookshelf corpus from Debian's packages into the cache (once: about 10 s on two cores, "
       "then its tokenizer about 40 s and its tokens about 20 s)",
       bookshelf::missing_packages, [](const Tell& tell) { return bookshelf::build(tell); }},
  };
  return all;
}

const NamedCorpus* find_named_corpus(const std::string& name) {
  for (const NamedCorpus& c : named_corpora())
    if (c.name == name) return &c;
  return nullptr;
}

std::string corpus_names() {
  std::vector<std::string> names;
  for (const NamedCorpus& c : named_corpora()) names.push_back(c.name);
  return joined(names, ", ");
}

fs::path corpus_cache_file(const NamedCorpus& corpus) { return cache_dir() / "corpus" / (corpus.name + ".txt"); }

bool is_built(const NamedCorpus& corpus) { return fs::exists(corpus_cache_file(corpus)); }

Corpus load_named_corpus(const NamedCorpus& corpus, const Tell& tell) {
  const fs::path path = corpus_cache_file(corpus);
  // Runs starting side by side: one builds the cache (a thread's temp file is its process's).
  static std::mutex one_at_a_time;
  std::unique_lock lock(one_at_a_time);
  if (!fs::exists(path)) {
    if (const auto missing = corpus.missing_packages(); !missing.empty()) {
      throw UserError("the " + corpus.name + " corpus is built from Debian packages that are not installed: " +
                      joined(missing, ", ") + "; install them with: sudo apt-get install " + joined(missing, " "));
    }
    if (tell) tell(corpus.building);
    const auto start = std::chrono::steady_clock::now();
    const std::string text = corpus.build([&](const std::string& what) {
      if (tell) tell(what);
    });
    check_corpus_text(text, corpus.name);
    write_file_atomically(path, text);  // whole or not at all: a failed build leaves nothing
    if (tell) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      char done[160];
      std::snprintf(done, sizeof done, "Built the %s corpus: %.1f MB in %.0f s", corpus.name.c_str(),
                    double(text.size()) / 1e6, seconds);
      tell(done);
    }
  }
  lock.unlock();
  return load_corpus(path);
}

bool is_default_corpus(const std::string& choice) { return choice.empty() || choice == kDefaultCorpus; }

std::string corpus_name(const std::string& choice) {
  if (choice.empty()) return kDefaultCorpus;
  if (find_named_corpus(choice)) return choice;
  return fs::path(choice).filename().string();
}

void check_corpus_choice(const std::string& choice) {
  if (choice.empty() || find_named_corpus(choice)) return;
  std::error_code error;
  if (fs::exists(choice, error)) return;  // a file: load_corpus says what is wrong with it
  // A word without a folder or an extension was meant as a name.
  if (choice.find('/') == std::string::npos && choice.find('.') == std::string::npos) {
    throw UserError("no corpus is named '" + choice + "': the corpora are " + corpus_names() +
                    " (normlab-cli corpora lists them), or give a text file's path");
  }
  throw UserError("corpus " + choice + " does not exist (the corpora by name: " + corpus_names() + ")");
}

Corpus load_chosen_corpus(const std::string& choice, const Tell& tell) {
  if (choice.empty()) return load_named_corpus(*find_named_corpus(kDefaultCorpus), tell);
  if (const NamedCorpus* named = find_named_corpus(choice)) return load_named_corpus(*named, tell);
  check_corpus_choice(choice);
  return load_corpus(choice);
}

std::optional<CorpusFacts> corpus_facts(const NamedCorpus& named, int vocab_size) {
  if (!is_built(named)) return std::nullopt;
  const Corpus corpus = load_corpus(corpus_cache_file(named));
  CorpusFacts facts;
  facts.bytes = corpus.text.size();
  facts.hash = corpus.hash;
  if (auto ids = cached_corpus_ids(corpus, vocab_size)) {
    facts.tokens = ids->size();
    std::size_t held_out = 0;
    for (std::size_t chunk = 0; chunk * kChunkTokens < ids->size(); ++chunk) {
      if (is_heldout_chunk(chunk)) held_out += std::min<std::size_t>(kChunkTokens, ids->size() - chunk * kChunkTokens);
    }
    facts.train_tokens = ids->size() - held_out;
    facts.baseline = unigram_baseline(*ids, vocab_size);
  }
  return facts;
}

}  // namespace normlab
