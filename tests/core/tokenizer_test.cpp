#include "core/data/tokenizer.h"

#include <algorithm>

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

class TokenizerTest : public CacheTest {
 protected:
  Corpus corpus_ = load_corpus(corpus_file(synthetic_corpus()));
};

TEST_F(TokenizerTest, TrainsWithRequestedVocabulary) {
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus_, 300);
  EXPECT_TRUE(tokenizer.was_trained());
  EXPECT_EQ(tokenizer.vocab_size(), 300);
  EXPECT_TRUE(fs::exists(tokenizer.model_file()));
  EXPECT_EQ(tokenizer.model_file().parent_path(), cache_dir() / "tokenizers");
  EXPECT_THAT(tokenizer.model_file().filename().string(), HasSubstr(corpus_.hash));
}

TEST_F(TokenizerTest, CachedByContentAndSize) {
  const Tokenizer first = Tokenizer::for_corpus(corpus_, 256);
  const auto written = fs::last_write_time(first.model_file());
  const Tokenizer second = Tokenizer::for_corpus(corpus_, 256);
  EXPECT_FALSE(second.was_trained());
  EXPECT_EQ(second.model_file(), first.model_file());
  EXPECT_EQ(fs::last_write_time(second.model_file()), written);
  EXPECT_EQ(second.encode("The old farmer saw the dog."), first.encode("The old farmer saw the dog."));

  const Tokenizer& base = first;
  const Tokenizer bigger = Tokenizer::for_corpus(corpus_, 320);
  EXPECT_TRUE(bigger.was_trained());
  EXPECT_NE(bigger.model_file(), base.model_file());

  const Corpus other = load_corpus(corpus_file(synthetic_corpus(90'000, 99), "other.txt"));
  const Tokenizer changed = Tokenizer::for_corpus(other, 256);
  EXPECT_TRUE(changed.was_trained());
  EXPECT_NE(changed.model_file(), base.model_file());
}

TEST_F(TokenizerTest, RoundTripsALine) {
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus_, 256);
  const std::string line = "Grace carefully painted the golden tower near the river!";
  const std::vector<int> ids = tokenizer.encode(line);
  ASSERT_FALSE(ids.empty());
  for (int id : ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, tokenizer.vocab_size());
  }
  EXPECT_EQ(tokenizer.decode(ids), line);
}

// A corpus that is one line, far longer than SentencePiece trains on, still gives a
// tokenizer that has learnt from all of it and encodes the line whole.
TEST_F(TokenizerTest, CorpusOfOneVeryLongLine) {
  std::string one_line = synthetic_corpus(200'000);
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  const Corpus corpus = load_corpus(corpus_file(one_line, "one-line.txt"));
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus, 256);
  EXPECT_EQ(tokenizer.vocab_size(), 256);
  const std::vector<int> ids = encode_corpus(corpus, tokenizer);
  EXPECT_GT(ids.size(), one_line.size() / 8);  // merges learnt: fewer tokens than bytes
  EXPECT_LT(ids.size(), one_line.size() / 2);
  EXPECT_EQ(tokenizer.decode(ids), one_line.substr(0, one_line.find_last_not_of(' ') + 1));
}

TEST_F(TokenizerTest, Load) {
  const Tokenizer trained = Tokenizer::for_corpus(corpus_, 256);
  const Tokenizer loaded = Tokenizer::load(trained.model_file());
  EXPECT_EQ(loaded.vocab_size(), 256);
  EXPECT_EQ(loaded.encode("Kate kept the lamp."), trained.encode("Kate kept the lamp."));
  EXPECT_THAT(user_error([&] { Tokenizer::load(temp_ / "none.model"); }), HasSubstr("none.model"));
}

TEST_F(TokenizerTest, EncodeCorpusIsCached) {
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus_, 256);
  const std::vector<int> ids = encode_corpus(corpus_, tokenizer);
  EXPECT_EQ(ids, tokenizer.encode(corpus_.text));
  EXPECT_GT(ids.size(), 20'000u);

  // Replace the cached ids with other valid ids: a second call must return those.
  std::vector<fs::path> id_files;
  for (const auto& entry : fs::directory_iterator(cache_dir() / "tokenizers")) {
    if (entry.path().extension() == ".ids") id_files.push_back(entry.path());
  }
  ASSERT_EQ(id_files.size(), 1u);
  const std::vector<int> marker = {1, 2, 3, 4, 5};
  write_file(id_files[0], std::string(reinterpret_cast<const char*>(marker.data()), marker.size() * sizeof(int)));
  EXPECT_EQ(encode_corpus(corpus_, tokenizer), marker);

  // Ids outside the vocabulary mean a corrupt cache: encoded again.
  write_file(id_files[0], std::string(8, '\xff'));
  EXPECT_EQ(encode_corpus(corpus_, tokenizer), ids);
}

TEST_F(TokenizerTest, VocabularyTooLargeForCorpusIsUserError) {
  const Corpus tiny = load_corpus(corpus_file(synthetic_corpus(kMinCorpusBytes), "tiny.txt"));
  EXPECT_THAT(user_error([&] { Tokenizer::for_corpus(tiny, 8192); }), HasSubstr("vocabulary"));
  EXPECT_FALSE(fs::exists(cache_dir() / "tokenizers" / (tiny.hash + "-bpe8192.model")));
}

}  // namespace
}  // namespace normlab::test
