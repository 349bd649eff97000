#include "corpus.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "core/system/atomic_file.h"
#include "core/system/paths.h"
#include "core/system/user_error.h"

#include "corpora.h"

namespace normlab {
namespace fs = std::filesystem;

namespace {

// Offset of the first byte that breaks UTF-8, or npos when the text is valid.
std::size_t first_invalid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int extra;
    std::uint32_t min;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      min = 0x10000;
    } else return i;
    if (i + extra >= s.size()) return i;  // truncated sequence
    std::uint32_t code = c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const auto cont = static_cast<unsigned char>(s[i + k]);
      if ((cont & 0xC0) != 0x80) return i;
      code = (code << 6) | (cont & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return i;
    i += extra + 1;
  }
  return std::string::npos;
}

// Read at the size the file had when checked, into one buffer (no second copy).
std::string read_all(const fs::path& path, std::uintmax_t size) {
  std::ifstream in(path, std::ios::binary);
  std::string text(size, '\0');
  if (!in || !in.read(text.data(), std::streamsize(size))) {
    throw UserError("cannot read corpus " + path.string());
  }
  return text;
}

// "UTF-16 (little-endian)" when the text starts with a UTF-16 or UTF-32 byte-order mark, or
// looks like UTF-16 without one (every other byte NUL); empty otherwise.
std::string wide_encoding(const std::string& text) {
  const auto starts = [&](const char* bom, std::size_t n) { return text.compare(0, n, bom, n) == 0; };
  if (starts("\xFF\xFE\0\0", 4)) return "UTF-32 (little-endian)";
  if (starts("\0\0\xFE\xFF", 4)) return "UTF-32 (big-endian)";
  if (starts("\xFF\xFE", 2)) return "UTF-16 (little-endian)";
  if (starts("\xFE\xFF", 2)) return "UTF-16 (big-endian)";
  std::size_t nul_at[2] = {0, 0};
  const std::size_t probe = std::min<std::size_t>(text.size(), 4096);
  for (std::size_t i = 0; i < probe; ++i) nul_at[i % 2] += text[i] == '\0';
  // Latin-script UTF-16 has a NUL in most high bytes and almost none in the low ones.
  const auto mostly = [&](std::size_t nuls) { return nuls * 5 > probe * 2; };  // > 80 % of its half
  const auto rarely = [&](std::size_t nuls) { return nuls * 40 < probe; };     // < 5 % of its half
  if (probe >= 64 && mostly(nul_at[1]) && rarely(nul_at[0])) return "UTF-16 (little-endian, no byte-order mark)";
  if (probe >= 64 && mostly(nul_at[0]) && rarely(nul_at[1])) return "UTF-16 (big-endian, no byte-order mark)";
  return {};
}

}  // namespace

std::string content_hash(std::string_view bytes) {
  // FNV-1a, 64 bit, with the length: a cache key, not a security boundary.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  char text[40];
  std::snprintf(text, sizeof text, "%016llx-%zx", static_cast<unsigned long long>(h), bytes.size());
  return text;
}

void check_corpus_text(const std::string& text, const std::string& origin) {
  if (text.empty()) throw UserError("corpus " + origin + " is empty");
  if (const std::string encoding = wide_encoding(text); !encoding.empty()) {
    throw UserError("corpus " + origin + " is " + encoding + " text; NormLab reads UTF-8: " +
                    "convert it, e.g. with iconv -f " + encoding.substr(0, 6) + " -t UTF-8");
  }
  const auto probe = text.substr(0, 1 << 16);
  std::size_t control = 0;
  for (unsigned char c : probe) control += (c < 0x20 && c != '\n' && c != '\r' && c != '\t');
  if (text.find('\0') != std::string::npos || control * 100 > probe.size()) {
    throw UserError("corpus " + origin + " looks binary (it holds NUL or control bytes); " +
                    "give a plain UTF-8 text file");
  }
  if (auto bad = first_invalid_utf8(text); bad != std::string::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[bad]));
    throw UserError("corpus " + origin + " is not valid UTF-8 (first bad byte " + byte + " at offset " +
                    std::to_string(bad) + "); if it is Latin-1, convert it with iconv -f LATIN1 -t UTF-8");
  }
  if (text.size() < kMinCorpusBytes) {
    throw UserError("corpus " + origin + " is too short: " + std::to_string(text.size()) + " bytes, at least " +
                    std::to_string(kMinCorpusBytes) + " are needed to train a tokenizer and hold out 10 %");
  }
}

Corpus load_corpus(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) throw UserError("corpus " + path.string() + " does not exist");
  if (fs::is_directory(status)) throw UserError("corpus " + path.string() + " is a folder, not a text file");
  // A device or pipe could be endless (/dev/zero) and has no size to check.
  if (!fs::is_regular_file(status)) throw UserError("corpus " + path.string() + " is not a regular file");
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) throw UserError("cannot read corpus " + path.string() + " (" + error.message() + ")");
  if (size > kMaxCorpusBytes) {
    const std::uintmax_t mib = (size + (1 << 20) - 1) >> 20;  // rounded up: never "256 MiB; the limit is 256"
    throw UserError("corpus " + path.string() + " is " + std::to_string(mib) + " MiB; the limit is " +
                    std::to_string(kMaxCorpusBytes >> 20) + " MiB (training needs about 15 bytes " +
                    "of memory per byte of text): train on a part of it");
  }
  Corpus corpus{path, read_all(path, size), {}};
  // A UTF-8 byte-order mark is not text: it would become a token of its own.
  if (corpus.text.compare(0, 3, "\xEF\xBB\xBF") == 0) corpus.text.erase(0, 3);
  check_corpus_text(corpus.text, path.string());
  corpus.hash = content_hash(corpus.text);
  return corpus;
}

Corpus load_default_corpus() { return load_chosen_corpus({}); }

}  // namespace normlab
