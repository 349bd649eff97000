#pragma once
// SentencePiece BPE, trained once per corpus and vocabulary size, cached by content hash.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "corpus.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace normlab {

class Tokenizer {
 public:
  // Loads the cached model for this corpus and size, training it first if absent.
  static Tokenizer for_corpus(const Corpus& corpus, int vocab_size);
  static Tokenizer load(const std::filesystem::path& model_file);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  int vocab_size() const;
  std::vector<int> encode(const std::string& text) const;  // line by line
  std::string decode(const std::vector<int>& ids) const;
  // One token as it reads inside a text: its piece with SentencePiece's word mark as a space.
  std::string piece(int id) const;
  const std::filesystem::path& model_file() const { return model_file_; }
  bool was_trained() const { return was_trained_; }  // false when it came from the cache

 private:
  Tokenizer();
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::filesystem::path model_file_;
  bool was_trained_ = false;
};

// The corpus as token ids, cached beside the tokenizer model so later runs skip encoding.
std::vector<int> encode_corpus(const Corpus& corpus, const Tokenizer& tokenizer);
// Those ids when a run has cached them for this vocabulary size, without the tokenizer.
std::optional<std::vector<int>> cached_corpus_ids(const Corpus& corpus, int vocab_size);

}  // namespace normlab
