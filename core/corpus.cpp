#include "corpus.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "atomic_file.h"
#include "config.h"
#include "paths.h"

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
    if (c < 0x80) { ++i; continue; }
    else if ((c & 0xE0) == 0xC0) { extra = 1; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { extra = 2; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { extra = 3; min = 0x10000; }
    else return i;
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

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open corpus " + path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

std::string content_hash(const std::string& bytes) {
  // FNV-1a, 64 bit, with the length: a cache key, not a security boundary.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  char text[40];
  std::snprintf(text, sizeof text, "%016llx-%zx", static_cast<unsigned long long>(h), bytes.size());
  return text;
}

void check_corpus_text(const std::string& text, const std::string& origin) {
  if (text.empty()) throw UserError("corpus " + origin + " is empty");
  const auto probe = text.substr(0, 1 << 16);
  std::size_t control = 0;
  for (unsigned char c : probe) control += (c < 0x20 && c != '\n' && c != '\r' && c != '\t');
  if (text.find('\0') != std::string::npos || control * 100 > probe.size()) {
    throw UserError("corpus " + origin + " looks binary (it holds NUL or control bytes); " +
                    "give a plain UTF-8 text file");
  }
  if (auto bad = first_invalid_utf8(text); bad != std::string::npos) {
    throw UserError("corpus " + origin + " is not valid UTF-8 (first bad byte at offset " +
                    std::to_string(bad) + "); convert it, e.g. with iconv -t UTF-8");
  }
  if (text.size() < kMinCorpusBytes) {
    throw UserError("corpus " + origin + " is too short: " + std::to_string(text.size()) +
                    " bytes, at least " + std::to_string(kMinCorpusBytes) +
                    " are needed to train a tokenizer and hold out 10 %");
  }
}

Corpus load_corpus(const fs::path& path) {
  std::error_code error;
  if (!fs::exists(path, error)) throw UserError("corpus " + path.string() + " does not exist");
  if (fs::is_directory(path, error)) throw UserError("corpus " + path.string() + " is a folder, not a text file");
  Corpus corpus{path, read_all(path), {}};
  check_corpus_text(corpus.text, path.string());
  corpus.hash = content_hash(corpus.text);
  return corpus;
}

Corpus load_default_corpus() {
  const fs::path path = cache_dir() / "corpus" / "kjv.txt";
  if (!fs::exists(path)) {
    // The whole Bible, Genesis to Revelation, as the `bible` program (bible-kjv) prints it.
    FILE* pipe = popen("bible gen1:1-rev22:21 2>/dev/null", "r");
    if (!pipe) throw UserError("cannot run `bible`; install Debian's bible-kjv or pass --corpus");
    std::string text;
    char buffer[1 << 16];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
    if (pclose(pipe) != 0 || text.size() < kMinCorpusBytes) {
      throw UserError("the `bible` program (Debian's bible-kjv) is missing or printed nothing; "
                      "install it or pass --corpus FILE");
    }
    write_file_atomically(path, text);
  }
  return load_corpus(path);
}

}  // namespace normlab
