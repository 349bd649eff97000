#pragma once
// Shared by every core test: temp folders, a private cache, a synthetic corpus and a
// tiny run config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.h"

namespace normlab::test {

namespace fs = std::filesystem;

// A fresh folder, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "normlab-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::string> read_lines(const fs::path& path) {
  std::istringstream in(read_file(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The message of the UserError that `action` throws; a test failure when it throws none.
template <typename Action>
std::string user_error(Action&& action) {
  try {
    action();
  } catch (const UserError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return {};
}

// Every test gets its own NORMLAB_CACHE_DIR, so nothing touches ~/.cache/normlab.
class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("NORMLAB_CACHE_DIR")) saved_ = old;
    ::setenv("NORMLAB_CACHE_DIR", cache_dir().c_str(), 1);
  }
  void TearDown() override {
    if (saved_.empty()) ::unsetenv("NORMLAB_CACHE_DIR");
    else ::setenv("NORMLAB_CACHE_DIR", saved_.c_str(), 1);
  }

  fs::path cache_dir() const { return temp_ / "cache"; }
  fs::path corpus_file(const std::string& text, const std::string& name = "corpus.txt") const {
    const fs::path path = temp_ / name;
    write_file(path, text);
    return path;
  }

  TempDir temp_;

 private:
  std::string saved_;
};

// Deterministic pseudo-English (~90 KB): sentences from a small grammar over about 200
// words, where each subject prefers a few verbs and each verb a few objects, so a model
// can do clearly better than word frequencies. Own LCG: the same bytes on every platform.
inline std::string synthetic_corpus(std::size_t bytes = 90'000, std::uint64_t seed = 7) {
  static const std::vector<std::string> names = {
      "Anna", "Ben", "Clara", "David", "Eva", "Frank", "Grace", "Henry", "Iris", "Jack",
      "Kate", "Leo", "Mia", "Noah", "Olga", "Paul", "Rosa", "Sam", "Tina", "Victor"};
  static const std::vector<std::string> nouns = {
      "farmer", "teacher", "child", "doctor", "sailor", "baker", "king", "queen", "dog",
      "cat", "horse", "bird", "river", "mountain", "forest", "garden", "house", "village",
      "city", "road", "bridge", "tower", "boat", "ship", "letter", "book", "song", "story",
      "bread", "apple", "stone", "window", "door", "table", "lamp", "fire", "rain", "wind",
      "morning", "evening", "winter", "summer", "market", "church", "school", "field",
      "well", "mill", "coat", "hat"};
  static const std::vector<std::string> verbs = {
      "saw", "found", "carried", "painted", "opened", "closed", "watched", "followed",
      "built", "crossed", "visited", "remembered", "heard", "answered", "cleaned", "counted",
      "bought", "sold", "wrote", "read", "lifted", "dropped", "fixed", "broke", "loved",
      "feared", "praised", "named", "touched", "kept"};
  static const std::vector<std::string> adjectives = {
      "old", "young", "quiet", "loud", "green", "red", "dark", "bright", "small", "large",
      "cold", "warm", "tired", "happy", "brave", "gentle", "heavy", "empty", "broken",
      "golden", "narrow", "wide", "silent", "strange", "wooden"};
  static const std::vector<std::string> adverbs = {
      "slowly", "quickly", "carefully", "quietly", "gladly", "again", "often", "never",
      "always", "suddenly", "together", "alone"};
  static const std::vector<std::string> places = {
      "in the morning", "after the rain", "near the river", "behind the house",
      "under the bridge", "before the winter", "at the market", "on the road",
      "by the window", "across the field", "inside the tower", "beyond the forest"};

  std::uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  auto next = [&](std::size_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return std::size_t((state >> 33) % n);
  };
  auto noun_phrase = [&](std::size_t anchor) {
    std::string phrase = "the ";
    if (next(3) == 0) phrase += adjectives[(anchor + next(3)) % adjectives.size()] + " ";
    return phrase + nouns[anchor % nouns.size()];
  };

  std::string text, line;
  while (text.size() < bytes) {
    const bool named = next(2) == 0;
    const std::size_t subject = next(named ? names.size() : nouns.size());
    std::string sentence = named ? names[subject] : noun_phrase(subject);
    sentence[0] = char(std::toupper(static_cast<unsigned char>(sentence[0])));
    const std::size_t verb = (subject * 7 + next(3)) % verbs.size();
    if (next(4) == 0) sentence += " " + adverbs[(verb + next(2)) % adverbs.size()];
    sentence += " " + verbs[verb] + " " + noun_phrase(verb * 5 + next(4));
    if (next(3) == 0) sentence += " " + places[(subject + verb) % places.size()];
    sentence += next(8) == 0 ? "!" : ".";

    line += (line.empty() ? "" : " ") + sentence;
    if (line.size() > 160 || next(6) == 0) {
      text += line + "\n";
      line.clear();
    }
  }
  return text;
}

// A model and run small enough for a test: about 100 steps a second on one thread.
inline TrainConfig tiny_config(const fs::path& corpus) {
  TrainConfig c;
  c.threads = 1;
  c.model.layers = 2;
  c.model.d_model = 32;
  c.model.heads = 2;
  c.model.context = 32;
  c.model.vocab = 256;
  c.peak_lr = 3e-3;
  c.warmup_steps = 10;
  c.steps = 150;
  c.batch_size = 8;
  c.eval_interval = 50;
  c.eval_batches = 4;
  c.device = "cpu";
  c.corpus_path = corpus.string();
  return c;
}

}  // namespace normlab::test
