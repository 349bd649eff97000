#include "core/data/corpus.h"

#include <sys/stat.h>

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
  const std::string message = user_error([&] { load_corpus(corpus_file(with_bytes_at(12345, "caf\xe9 "))); });
  EXPECT_THAT(message, HasSubstr("UTF-8"));
  EXPECT_THAT(message, HasSubstr("offset 12348"));

  const std::string truncated = synthetic_corpus(30'000) + "\xe2\x82";  // "€" missing its last byte
  EXPECT_THAT(user_error([&] { check_corpus_text(truncated, "test"); }),
              HasSubstr("offset " + std::to_string(truncated.size() - 2)));
}

TEST_F(CorpusTest, RejectsOverlongAndSurrogateEncodings) {
  const std::vector<std::string> bad = {
      "\xc0\xaf",              // '/' in two bytes
      "\xe0\x80\xaf",          // '/' in three bytes
      "\xf0\x80\x80\xaf",      // '/' in four bytes
      "\xed\xa0\x80",          // U+D800, a surrogate
      "\xf4\x90\x80\x80",      // above U+10FFFF
      "\x80",                  // lone continuation byte
      "\xf8\x88\x80\x80\x80",  // five-byte form
  };
  for (const auto& bytes : bad) {
    EXPECT_THAT(user_error([&] { check_corpus_text(with_bytes_at(500, bytes), "test"); }), HasSubstr("offset 500"))
        << "bytes of length " << bytes.size();
  }
}

TEST_F(CorpusTest, AcceptsMultiByteUtf8) {
  // 2-, 3- and 4-byte characters, including the largest code point.
  const std::string text =
      with_bytes_at(1000, "caf\xc3\xa9 \xe2\x82\xac \xe4\xb8\xad \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
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

TEST_F(CorpusTest, Utf8ByteOrderMarkIsDropped) {
  const std::string text = synthetic_corpus();
  const Corpus corpus = load_corpus(corpus_file("\xEF\xBB\xBF" + text));
  EXPECT_EQ(corpus.text, text);
  EXPECT_EQ(corpus.hash, content_hash(text));  // the same cache as without the mark
}

// `text` (ASCII) as UTF-16: each byte paired with a NUL, before or after it.
std::string utf16(const std::string& text, bool little_endian) {
  std::string wide;
  for (char c : text) wide += little_endian ? std::string{c, '\0'} : std::string{'\0', c};
  return wide;
}

TEST_F(CorpusTest, Utf16AndUtf32AreRefusedWithTheReason) {
  const std::string text = synthetic_corpus(30'000);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\xFF\xFE" + utf16(text, true), "UTF-16 (little-endian)"},
      {"\xFE\xFF" + utf16(text, false), "UTF-16 (big-endian)"},
      {utf16(text, true), "UTF-16 (little-endian, no byte-order mark)"},
      {utf16(text, false), "UTF-16 (big-endian, no byte-order mark)"},
      {std::string("\xFF\xFE\0\0", 4) + utf16(utf16(text, true), true), "UTF-32 (little-endian)"},
      {std::string("\0\0\xFE\xFF", 4) + utf16(utf16(text, false), false), "UTF-32 (big-endian)"},
  };
  for (const auto& [bytes, encoding] : cases) {
    const fs::path path = corpus_file(bytes, "wide.txt");
    const std::string message = user_error([&] { load_corpus(path); });
    EXPECT_THAT(message, HasSubstr(path.string() + " is " + encoding + " text"));
    EXPECT_THAT(message, HasSubstr("iconv -f " + encoding.substr(0, 6) + " -t UTF-8"));
  }
}

TEST_F(CorpusTest, Latin1NamesTheByteAndItsOffset) {
  std::string latin1 = synthetic_corpus(30'000);
  latin1.replace(20'000, 5, "na\xEFve");  // "naïve" in ISO 8859-1
  const std::string message = user_error([&] { load_corpus(corpus_file(latin1)); });
  EXPECT_THAT(message, HasSubstr("not valid UTF-8 (first bad byte 0xEF at offset 20002)"));
  EXPECT_THAT(message, HasSubstr("iconv -f LATIN1 -t UTF-8"));
}

TEST_F(CorpusTest, PipeIsRefusedWithoutReading) {
  const fs::path fifo = temp_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // opening it to read would block for ever
  EXPECT_THAT(user_error([&] { load_corpus(fifo); }), HasSubstr("is not a regular file"));
}

// Sparse files: the sizes are real, the disk holds nothing, and nothing is read.
TEST_F(CorpusTest, FileOverTheSizeLimitIsRefusedBeforeReading) {
  const fs::path huge = corpus_file("", "huge.txt");
  fs::resize_file(huge, std::uintmax_t(1) << 30);
  EXPECT_THAT(user_error([&] { load_corpus(huge); }), HasSubstr(huge.string() + " is 1024 MiB; the limit is 256 MiB"));

  fs::resize_file(huge, kMaxCorpusBytes + 1);
  EXPECT_THAT(user_error([&] { load_corpus(huge); }), HasSubstr("is 257 MiB; the limit is 256 MiB"));
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
