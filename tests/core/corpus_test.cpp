#include "corpus.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

class CorpusTest : public CacheTest {};

// A valid corpus with `bad` spliced in at `offset`.
std::string with_bytes_at(std::size_t offset, const std::string& bad) {
  std::string text = synthetic_corpus(30'000);
  return text.substr(0, offset) + bad + text.substr(offset);
}

TEST_F(CorpusTest, LoadsValidText) {
  const std::string text = synthetic_corpus();
  const Corpus corpus = load_corpus(corpus_file(text));
  EXPECT_EQ(corpus.text, text);
  EXPECT_EQ(corpus.hash, content_hash(text));
  EXPECT_EQ(corpus.path, temp_ / "corpus.txt");
}

TEST_F(CorpusTest, MissingFileOrFolder) {
  EXPECT_THAT(user_error([&] { load_corpus(temp_ / "nope.txt"); }), HasSubstr("does not exist"));
  EXPECT_THAT(user_error([&] { load_corpus(temp_.path()); }), HasSubstr("folder"));
}

TEST_F(CorpusTest, Empty) {
  const fs::path path = corpus_file("", "my-notes.txt");
  const std::string message = user_error([&] { load_corpus(path); });
  EXPECT_THAT(message, HasSubstr("empty"));
  EXPECT_THAT(message, HasSubstr(path.string()));
}

TEST_F(CorpusTest, Binary) {
  const std::string text = with_bytes_at(100, std::string("\0\0\x01\x02", 4));
  EXPECT_THAT(user_error([&] { load_corpus(corpus_file(text)); }), HasSubstr("binary"));

  // No NUL, but control bytes throughout, as in many binary formats.
  std::string controls = synthetic_corpus(30'000);
  for (std::size_t i = 0; i < controls.size(); i += 50) controls[i] = '\x1b';
  EXPECT_THAT(user_error([&] { check_corpus_text(controls, "test"); }), HasSubstr("binary"));

  // Tabs and Windows line ends are text.
  std::string windows = synthetic_corpus(30'000);
  for (std::size_t at = 0; (at = windows.find('\n', at)) != std::string::npos; at += 2) windows.insert(at, "\r");
  EXPECT_NO_THROW(check_corpus_text(windows + "\tend\r\n", "test"));
}

TEST_F(CorpusTest, InvalidUtf8NamesOffset) {
  const std::string message =
      user_error([&] { load_corpus(corpus_file(with_bytes_at(12345, "caf\xe9 "))); });
  EXPECT_THAT(message, HasSubstr("UTF-8"));
  EXPECT_THAT(message, HasSubstr("offset 12348"));

  const std::string truncated = synthetic_corpus(30'000) + "\xe2\x82";  // "€" missing its last byte
  EXPECT_THAT(user_error([&] { check_corpus_text(truncated, "test"); }),
              HasSubstr("offset " + std::to_string(truncated.size() - 2)));
}

TEST_F(CorpusTest, RejectsOverlongAndSurrogateEncodings) {
  const std::vector<std::string> bad = {
      "\xc0\xaf",          // '/' in two bytes
      "\xe0\x80\xaf",      // '/' in three bytes
      "\xf0\x80\x80\xaf",  // '/' in four bytes
      "\xed\xa0\x80",      // U+D800, a surrogate
      "\xf4\x90\x80\x80",  // above U+10FFFF
      "\x80",              // lone continuation byte
      "\xf8\x88\x80\x80\x80",  // five-byte form
  };
  for (const auto& bytes : bad) {
    EXPECT_THAT(user_error([&] { check_corpus_text(with_bytes_at(500, bytes), "test"); }),
                HasSubstr("offset 500"))
        << "bytes of length " << bytes.size();
  }
}

TEST_F(CorpusTest, AcceptsMultiByteUtf8) {
  // 2-, 3- and 4-byte characters, including the largest code point.
  const std::string text = with_bytes_at(1000, "caf\xc3\xa9 \xe2\x82\xac \xe4\xb8\xad \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
  EXPECT_NO_THROW(check_corpus_text(text, "test"));
  EXPECT_EQ(load_corpus(corpus_file(text)).text, text);
}

TEST_F(CorpusTest, TooShort) {
  const std::string text = synthetic_corpus(kMinCorpusBytes).substr(0, kMinCorpusBytes - 1);
  const std::string message = user_error([&] { load_corpus(corpus_file(text)); });
  EXPECT_THAT(message, HasSubstr("too short"));
  EXPECT_THAT(message, HasSubstr(std::to_string(kMinCorpusBytes - 1) + " bytes"));
  EXPECT_NO_THROW(check_corpus_text(synthetic_corpus(kMinCorpusBytes).substr(0, kMinCorpusBytes), "test"));
}

TEST(ContentHash, StableAndContentSensitive) {
  const std::string text = synthetic_corpus(30'000);
  EXPECT_EQ(content_hash(text), content_hash(std::string(text)));
  std::string changed = text;
  changed[text.size() / 2] ^= 1;
  EXPECT_NE(content_hash(changed), content_hash(text));
  EXPECT_NE(content_hash(text + " "), content_hash(text));
  EXPECT_NE(content_hash(""), content_hash(std::string(1, '\0')));
}

// The one test that runs `bible` (setup installs bible-kjv); its output goes to the
// test's own cache, and the second call must come from there.
TEST_F(CorpusTest, DefaultCorpusIsKingJamesCachedOnce) {
  const Corpus first = load_default_corpus();
  EXPECT_EQ(first.path, cache_dir() / "corpus" / "kjv.txt");
  EXPECT_TRUE(fs::exists(first.path));
  EXPECT_GT(first.text.size(), 4'000'000u);
  EXPECT_THAT(first.text, HasSubstr("In the beginning God created the heaven and the earth."));

  write_file(first.path, synthetic_corpus());  // proves the next load reads the cache
  const Corpus second = load_default_corpus();
  EXPECT_EQ(second.text, synthetic_corpus());
}

}  // namespace
}  // namespace normlab::test
