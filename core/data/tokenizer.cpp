#include "tokenizer.h"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <sstream>
#include <thread>

#include "core/system/atomic_file.h"
#include "core/system/paths.h"
#include "core/system/user_error.h"

namespace normlab {
namespace fs = std::filesystem;

namespace {

// SentencePiece skips longer sentences when it trains.
constexpr std::size_t kMaxSentenceBytes = 16384;

// Feeds SentencePiece the corpus line by line, straight from memory. A line too long for
// it goes in pieces, cut at a space, so a text that is one long line still trains.
class LineIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(const std::string& text) : text_(text) { Next(); }
  bool done() const override { return done_; }
  void Next() override {
    do {
      if (position_ >= text_.size()) {
        done_ = true;
        return;
      }
      auto end = text_.find('\n', position_);
      if (end == std::string::npos) end = text_.size();
      auto next = end + 1;
      if (end - position_ > kMaxSentenceBytes) {
        end = position_ + kMaxSentenceBytes;
        if (const auto space = text_.rfind(' ', end); space != std::string::npos && space > position_) {
          end = space;
        } else {
          while ((static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) --end;  // not mid-character
        }
        next = end;
      }
      line_.assign(text_, position_, end - position_);
      position_ = next;
    } while (line_.find_first_not_of(" \t\r") == std::string::npos);
  }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::string& text_;
  std::size_t position_ = 0;
  std::string line_;
  bool done_ = false;
};

fs::path tokenizer_dir() {
  auto dir = cache_dir() / "tokenizers";
  fs::create_directories(dir);
  return dir;
}

std::string cache_stem(const Corpus& corpus, int vocab_size) {
  return corpus.hash + "-bpe" + std::to_string(vocab_size);
}

}  // namespace

Tokenizer::Tokenizer() : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Tokenizer Tokenizer::load(const fs::path& model_file) {
  Tokenizer tokenizer;
  tokenizer.model_file_ = model_file;
  if (auto status = tokenizer.processor_->Load(model_file.string()); !status.ok()) {
    throw UserError("cannot load tokenizer " + model_file.string() + ": " + status.ToString());
  }
  return tokenizer;
}

Tokenizer Tokenizer::for_corpus(const Corpus& corpus, int vocab_size) {
  // Runs starting side by side on one corpus: the first trains the vocabulary, the others
  // wait and load it (SentencePiece's trainer keeps global state, too).
  static std::mutex one_at_a_time;
  std::lock_guard lock(one_at_a_time);
  const fs::path model_file = tokenizer_dir() / (cache_stem(corpus, vocab_size) + ".model");
  if (fs::exists(model_file)) return load(model_file);

  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::unordered_map<std::string, std::string> options{
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(vocab_size)},
      {"character_coverage", "1.0"},
      {"num_threads", std::to_string(threads)},
      {"max_sentence_length", std::to_string(kMaxSentenceBytes)},
      {"minloglevel", "2"},
  };
  LineIterator lines(corpus.text);
  std::string serialized;
  if (auto status = sentencepiece::SentencePieceTrainer::Train(options, &lines, &serialized); !status.ok()) {
    throw UserError("cannot train a " + std::to_string(vocab_size) + "-token BPE vocabulary on this corpus (" +
                    status.ToString() + "); try a smaller vocabulary or a longer text");
  }
  write_file_atomically(model_file, serialized);
  Tokenizer tokenizer = load(model_file);
  tokenizer.was_trained_ = true;
  return tokenizer;
}

int Tokenizer::vocab_size() const { return processor_->GetPieceSize(); }

std::vector<int> Tokenizer::encode(const std::string& text) const {
  std::vector<int> ids, line_ids;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    processor_->Encode(line, &line_ids).IgnoreError();
    ids.insert(ids.end(), line_ids.begin(), line_ids.end());
  }
  return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  std::string text;
  processor_->Decode(ids, &text).IgnoreError();
  return text;
}

std::string Tokenizer::piece(int id) const {
  std::string piece = processor_->IdToPiece(id);
  static const std::string kWordMark = "\xE2\x96\x81";  // U+2581, which SentencePiece puts before a word
  for (std::size_t at = piece.find(kWordMark); at != std::string::npos; at = piece.find(kWordMark, at + 1)) {
    piece.replace(at, kWordMark.size(), " ");
  }
  return piece;
}

std::optional<std::vector<int>> cached_corpus_ids(const Corpus& corpus, int vocab_size) {
  const fs::path ids_file = tokenizer_dir() / (cache_stem(corpus, vocab_size) + ".ids");
  std::ifstream in{ids_file, std::ios::binary};
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  std::vector<int> ids(std::size_t(in.tellg()) / sizeof(int));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(ids.data()), std::streamsize(ids.size() * sizeof(int)))) return std::nullopt;
  if (ids.empty() || !std::all_of(ids.begin(), ids.end(), [&](int id) { return id >= 0 && id < vocab_size; })) {
    return std::nullopt;
  }
  return ids;
}

std::vector<int> encode_corpus(const Corpus& corpus, const Tokenizer& tokenizer) {
  if (auto ids = cached_corpus_ids(corpus, tokenizer.vocab_size())) return std::move(*ids);
  const fs::path ids_file = tokenizer_dir() / (cache_stem(corpus, tokenizer.vocab_size()) + ".ids");
  auto ids = tokenizer.encode(corpus.text);
  write_file_atomically(ids_file, std::string(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(int)));
  return ids;
}

}  // namespace normlab
