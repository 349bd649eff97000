#pragma once
// The text a model trains on: a UTF-8 file, or a corpus built from Debian's packages (corpora.h).
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace normlab {

inline constexpr std::size_t kMinCorpusBytes = 20000;
// Training's peak memory grows by about 15 bytes per corpus byte (the text, SentencePiece's
// copy, token ids, tensors; measured with a 256-token vocabulary): 256 MiB needs ~4 GB.
// Larger files are refused before they are read.
inline constexpr std::uintmax_t kMaxCorpusBytes = std::uintmax_t(256) << 20;

struct Corpus {
  std::filesystem::path path;  // where the text lives (the cache for the default corpus)
  std::string text;
  std::string hash;  // hex content hash, the key of every derived cache
};

// Throws UserError saying which check failed: missing, not a regular file, too large, empty,
// UTF-16/32, binary, invalid UTF-8, too short. A UTF-8 byte-order mark is dropped.
Corpus load_corpus(const std::filesystem::path& path);
// The King James text, generated once with `bible` into the cache (corpora.h names the others).
Corpus load_default_corpus();
// Validates text that did not come from a file; `origin` names it in messages.
void check_corpus_text(const std::string& text, const std::string& origin);

std::string content_hash(std::string_view bytes);

}  // namespace normlab
