#pragma once
// Corpora chosen by name: the King James Bible (the default) and the bookshelf, each built
// once from Debian packages into the cache. A run's corpus setting holds a name, a file's
// path, or nothing (the default). What `normlab-cli corpora` and the window list.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "corpus.h"

namespace normlab {

using Tell = std::function<void(const std::string&)>;

struct NamedCorpus {
  std::string name;                   // on the command line, in run files and titles: "bookshelf"
  std::string title;                  // "King James Bible"
  std::string about;                  // one line: what the text is
  std::vector<std::string> packages;  // the Debian packages it is built from
  std::string building;               // said as the build starts: what it does and how long it takes
  std::function<std::vector<std::string>()> missing_packages;
  std::function<std::string(const Tell&)> build;  // the text; UserError when it cannot be made
};

inline const std::string kDefaultCorpus = "kjv";  // as core/runs/config.h says it

const std::vector<NamedCorpus>& named_corpora();
const NamedCorpus* find_named_corpus(const std::string& name);
// "kjv, bookshelf"
std::string corpus_names();

// Where the built text lives: cache_dir()/corpus/NAME.txt.
std::filesystem::path corpus_cache_file(const NamedCorpus& corpus);
bool is_built(const NamedCorpus& corpus);
// The cached text, built first when absent: `tell` hears what it does. A build that fails
// half-way leaves no file (it is written whole or not at all). UserError naming the
// packages to install (and the command) when some are missing.
Corpus load_named_corpus(const NamedCorpus& corpus, const Tell& tell = {});

// A run's choice: "" or a corpus's name is that corpus, anything else a file's path.
Corpus load_chosen_corpus(const std::string& choice, const Tell& tell = {});
// The corpus's name as run files and titles say it: the name ("kjv" for ""), or the file's name.
std::string corpus_name(const std::string& choice);
bool is_default_corpus(const std::string& choice);
// UserError, one line, for a choice that is neither a corpus's name nor a path to a file
// that exists: what the names are, and how to give a file.
void check_corpus_choice(const std::string& choice);

// What a listing shows of a built corpus; tokens and baseline once a run (or
// `normlab-cli corpora --build`) has tokenized it with this vocabulary.
struct CorpusFacts {
  std::uintmax_t bytes = 0;
  std::optional<std::size_t> tokens, train_tokens;
  std::optional<double> baseline;  // unigram held-out loss over the whole held-out split, nats
  std::string hash;
};
// Empty when the corpus is not built.
std::optional<CorpusFacts> corpus_facts(const NamedCorpus& corpus, int vocab_size);

}  // namespace normlab
