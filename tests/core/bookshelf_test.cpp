// The bookshelf's cleaning, one format at a time, on small excerpts written as the Debian
// packages have them; its interleaving; and that every source, the small ones too, is held
// out and evaluated in proportion to its size. None needs the packages installed.
#include "core/data/bookshelf.h"

#include <csignal>
#include <numeric>
#include <sys/resource.h>

#include "core/data/corpora.h"
#include "core/data/dataset.h"
#include "core/runs/config.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Bookshelf, GcideEntriesLoseTheirMarkup) {
  const std::string dict =
      "00-database-info\n     This file was converted from the original database\n\n"
      "Abjure \\Ab*jure\"\\, v. t. [imp. & p. p. {Abjured}; p. pr. & vb.\n"
      "   n. {Abjuring}.] [L. abjurare to deny upon oath. See\n   {Jury}.]\n"
      "   1. To renounce upon oath; to forswear; as, to abjure\n      allegiance. \"Magic I here abjure.\" --Shak.\n"
      "      [1913 Webster]\n\n"
      "Acre \\A\"cre\\ ([=a]\"k[~e]r), n. [OE. aker; AS. [ae]cer; Sw. [*a]ker.]\n"
      "   A piece of land. -- Ar`gil*lit\"ic, a.\n   [1913 Webster]\n\n"
      "Adjusting plane, Adjusting surface \\Adjusting\n"
      "surface\\ (Aeronautics) A small plane, at 90[deg]. [1913 Webster +PJC]\n   [Webster 1913 Suppl.]\n";
  const auto entries = bookshelf::dict_documents(dict, /*gcide=*/true);
  ASSERT_EQ(entries.size(), 3u);  // the database's own notice is not an entry
  EXPECT_EQ(entries[0],
            "Abjure, v. t. [imp. & p. p. Abjured; p. pr. & vb. n. Abjuring.] [L. abjurare to deny upon oath. "
            "See Jury.]\n1. To renounce upon oath; to forswear; as, to abjure allegiance. \"Magic I here abjure.\" "
            "--Shak.\n");
  EXPECT_EQ(entries[1], "Acre, n. [OE. aker; AS. æcer; Sw. aker.] A piece of land. -- Argillitic, a.\n");
  EXPECT_EQ(entries[2], "Adjusting plane, Adjusting surface (Aeronautics) A small plane, at 90°.\n");
}

TEST(Bookshelf, DictdEntriesKeepTheirTablesAndDropTags) {
  const std::string foldoc =
      "Aiken code\n\n   <code> An unweighted {binary\n   coded decimal} code.\n\n"
      "    D  BCD  Aiken\n    0  0000  0000\n\n   (2007-07-16)\n\n"
      "AI koan\n\n   <programming, humour> One of a series of {pastiches}, a < b.\n";
  EXPECT_THAT(bookshelf::dict_documents(foldoc, /*gcide=*/false),
              ElementsAre("Aiken code\nAn unweighted binary coded decimal code.\nD BCD Aiken\n0 0000 0000\n",
                          "AI koan\nOne of a series of pastiches, a < b.\n"));
  // The Devil's Dictionary goes on at the start of its lines: an entry ends at a blank line.
  const std::string devil =
      "GRACES, n.  Three beautiful goddesses,\nwho attended upon Venus.  (Lev. 7.)  They ate\nnothing.\n\n"
      "GRAMMAR, n.  A system.\n\n    When I was young the world was fair\n    And amiable and sunny.\n";
  EXPECT_THAT(
      bookshelf::dict_documents(devil, /*gcide=*/false),
      ElementsAre("GRACES, n. Three beautiful goddesses, who attended upon Venus. (Lev. 7.) They ate nothing.\n",
                  "GRAMMAR, n. A system.\nWhen I was young the world was fair\nAnd amiable and sunny.\n"));
}

TEST(Bookshelf, SwordEntriesAsPlainText) {
  const std::string bible =
      "$$$Genesis 4:1\n<w lemma=\"strong:H3045\">knew</w><note placement=\"foot\"><reference>4:1 </reference>"
      "or, lay with</note><w lemma=\"strong:H2332\">Eve</w> his wife &amp; <q>conceived</q>,<note>or</note>"
      "and gave birth.\n$$$Genesis 4:2\nAgain she gave birth.\n$$$Exodus 1:1\n<title>The sons</title>Now these "
      "are the names.\n";
  EXPECT_THAT(bookshelf::sword_documents(bible, /*bible=*/true),
              ElementsAre("knew Eve his wife & conceived, and gave birth.\nAgain she gave birth.\n",
                          "The sons\nNow these are the names.\n"));

  // The MHCC repeats a chapter's notes at every verse: each paragraph is kept once.
  const std::string commentary =
      "$$$Genesis 1:1\n<div sID=\"a\" type=\"x-p\"/><hi type=\"bold\">Verses 1-2</hi><div eID=\"a\"/> God made "
      "all.\n$$$Genesis 1:2\n<div sID=\"b\" type=\"x-p\"/><hi type=\"bold\">Verses 1-2</hi><div eID=\"b\"/> God "
      "made all.\n$$$Genesis 1:3\nLight.\n";
  EXPECT_THAT(bookshelf::sword_documents(commentary, /*bible=*/false),
              ElementsAre("Verses 1-2\nGod made all.\n", "Light.\n"));
}

TEST(Bookshelf, FortunesOneByOne) {
  const std::string file = "Some _\bw_\bo_\br_\bd_\bs.\n\t-- Anon\n%\n\n%\nA second\none.\n%\n";
  EXPECT_THAT(bookshelf::fortune_documents(file), ElementsAre("Some words.\n-- Anon\n", "A second\none.\n"));
}

TEST(Bookshelf, LongDocumentsInPiecesAtLineEnds) {
  const std::string line(30, 'x');
  std::string long_one;
  for (int i = 0; i < 10; ++i) long_one += line + "\n";  // 310 bytes
  const auto pieces = bookshelf::in_pieces({"short\n", long_one}, 100);
  ASSERT_EQ(pieces.size(), 5u);
  EXPECT_EQ(pieces[0], "short\n");
  std::string joined;
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    EXPECT_LE(pieces[i].size(), 100u);
    EXPECT_EQ(pieces[i].back(), '\n');
    joined += pieces[i];
  }
  EXPECT_EQ(joined, long_one);
}

TEST(Bookshelf, InterleavesInProportionAtEveryPrefix) {
  const std::vector<std::vector<std::size_t>> sizes{
      std::vector<std::size_t>(900, 100), {50, 70, 30, 50}, std::vector<std::size_t>(30, 400)};
  const auto order = bookshelf::interleave(sizes);
  ASSERT_EQ(order.size(), 934u);
  std::vector<double> total(3), laid(3);
  for (std::size_t s = 0; s < 3; ++s) total[s] = double(std::accumulate(sizes[s].begin(), sizes[s].end(), 0ul));
  std::vector<std::size_t> next(3);
  double all = std::accumulate(total.begin(), total.end(), 0.0), so_far = 0;
  const auto largest = [&](std::size_t s) { return double(*std::max_element(sizes[s].begin(), sizes[s].end())); };
  const double largest_of_all = std::max({largest(0), largest(1), largest(2)});
  for (const auto& [source, document] : order) {
    EXPECT_EQ(document, next[source]++);  // each source's documents in their order
    laid[source] += double(sizes[source][document]);
    so_far += double(sizes[source][document]);
    for (std::size_t s = 0; s < 3; ++s) {
      // Its share of what is laid out so far, to within one of its documents and the one
      // document of another source laid out last.
      EXPECT_NEAR(laid[s], so_far * total[s] / all, largest(s) + largest_of_all);
    }
  }
}

// Token ids that say their source: a document of source s is `size` ids equal to s.
std::vector<int> laid_out(const std::vector<std::vector<std::size_t>>& sizes,
                          const std::vector<std::pair<std::size_t, std::size_t>>& order) {
  std::vector<int> ids;
  for (const auto& [source, document] : order) ids.insert(ids.end(), sizes[source][document], int(source));
  return ids;
}

std::vector<double> tally(const torch::Tensor& ids, int sources) {
  const auto counts = torch::bincount(ids.reshape({-1}), {}, sources).to(torch::kFloat64);
  return {counts.data_ptr<double>(), counts.data_ptr<double>() + sources};
}

// The dataset's rule (every 10th 2048-token chunk held out, evaluations at evenly spaced
// held-out windows) on the bookshelf's layout: a source as large as the dictionary, one of
// a few hundred documents and one a thousandth of the text each come out in proportion.
TEST(Bookshelf, EverySourceHeldOutAndEvaluatedInProportion) {
  std::vector<std::vector<std::size_t>> sizes(3);
  std::uint64_t state = 7;
  const auto next_size = [&](std::size_t low, std::size_t spread) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return low + std::size_t((state >> 33) % spread);
  };
  for (int d = 0; d < 3000; ++d) sizes[0].push_back(next_size(100, 400));  // ~900k tokens
  for (int d = 0; d < 300; ++d) sizes[1].push_back(next_size(100, 200));   // ~60k
  for (int d = 0; d < 30; ++d) sizes[2].push_back(next_size(20, 40));      // ~1.2k, 0.13 %
  std::vector<double> share(3);
  double all = 0;
  for (std::size_t s = 0; s < 3; ++s) all += share[s] = double(std::accumulate(sizes[s].begin(), sizes[s].end(), 0ul));
  for (double& s : share) s /= all;

  const int context = 128, batch = 32, batches = 20;  // the course's evaluation at full scale
  const Dataset data(laid_out(sizes, bookshelf::interleave(sizes)), 3, context);
  const std::vector<double> held_out = tally(data.heldout_ids(), 3);
  std::vector<torch::Tensor> targets;
  for (const Batch& b : data.heldout_batches(batch, batches)) targets.push_back(b.targets);
  const std::vector<double> evaluated = tally(torch::cat(targets), 3);
  const double held_total = double(data.heldout_tokens()), evaluated_total = double(batch) * batches * context;
  for (std::size_t s = 0; s < 3; ++s) {
    // Within 10 % of its share, give or take two of its largest documents.
    const double largest = double(*std::max_element(sizes[s].begin(), sizes[s].end()));
    const double room = 0.1 * share[s] + 2 * largest / held_total;
    SCOPED_TRACE("source " + std::to_string(s));
    EXPECT_GT(held_out[s], 0);
    EXPECT_GT(evaluated[s], 0);
    EXPECT_NEAR(held_out[s] / held_total, share[s], room);
    EXPECT_NEAR(evaluated[s] / evaluated_total, share[s], room);
  }

  // Laid end to end instead, the small source falls in one training stretch: never held out.
  std::vector<std::pair<std::size_t, std::size_t>> end_to_end;
  for (std::size_t s = 0; s < 3; ++s)
    for (std::size_t d = 0; d < sizes[s].size(); ++d) end_to_end.emplace_back(s, d);
  const Dataset concatenated(laid_out(sizes, end_to_end), 3, context);
  EXPECT_EQ(tally(concatenated.heldout_ids(), 3)[2], 0);
}

class CorporaTest : public CacheTest {};

TEST_F(CorporaTest, ChosenByNameOrFile) {
  EXPECT_EQ(kDefaultCorpus, kDefaultCorpusName);  // the run's default is the corpora's
  ASSERT_NE(find_named_corpus("kjv"), nullptr);
  ASSERT_NE(find_named_corpus("bookshelf"), nullptr);
  EXPECT_EQ(find_named_corpus("Bookshelf"), nullptr);
  EXPECT_EQ(corpus_name(""), "kjv");
  EXPECT_EQ(corpus_name("bookshelf"), "bookshelf");
  EXPECT_EQ(corpus_name("/some/where/notes.txt"), "notes.txt");
  EXPECT_TRUE(is_default_corpus(""));
  EXPECT_TRUE(is_default_corpus("kjv"));
  EXPECT_FALSE(is_default_corpus("bookshelf"));

  EXPECT_NO_THROW(check_corpus_choice("bookshelf"));
  EXPECT_NO_THROW(check_corpus_choice(corpus_file(synthetic_corpus()).string()));
  const std::string misspelt = user_error([] { check_corpus_choice("bookshef"); });
  EXPECT_THAT(misspelt, HasSubstr("no corpus is named 'bookshef'"));
  EXPECT_THAT(misspelt, HasSubstr("kjv, bookshelf"));
  EXPECT_THAT(misspelt, Not(HasSubstr("\n")));
  EXPECT_THAT(user_error([] { check_corpus_choice("texts/missing.txt"); }), HasSubstr("does not exist"));
  EXPECT_THAT(user_error([] { load_chosen_corpus("bookshef"); }), HasSubstr("no corpus is named"));
  // A file is read as a file, named by its path.
  const Corpus file = load_chosen_corpus(corpus_file(synthetic_corpus()).string());
  EXPECT_EQ(file.text, synthetic_corpus());
}

// A corpus whose packages are missing says what to install; one whose build fails leaves
// nothing behind; one built is cached and read from there.
TEST_F(CorporaTest, BuiltOnceIntoTheCache) {
  NamedCorpus corpus{"test-shelf", "Test shelf", "a test", {"dict-foo"}, "Building the test shelf", {}, {}};
  corpus.missing_packages = [] { return std::vector<std::string>{"dict-foo", "sword-bar"}; };
  int builds = 0;
  corpus.build = [&](const Tell&) {
    ++builds;
    return synthetic_corpus();
  };
  const std::string message = user_error([&] { load_named_corpus(corpus); });
  EXPECT_THAT(message, HasSubstr("dict-foo, sword-bar"));
  EXPECT_THAT(message, HasSubstr("sudo apt-get install dict-foo sword-bar"));
  EXPECT_EQ(builds, 0);

  corpus.missing_packages = [] { return std::vector<std::string>{}; };
  corpus.build = [&](const Tell& tell) -> std::string {
    tell("Reading half");
    throw UserError("the package dict-foo gave no text");
  };
  EXPECT_THAT(user_error([&] { load_named_corpus(corpus); }), HasSubstr("gave no text"));
  EXPECT_FALSE(is_built(corpus));
  EXPECT_FALSE(fs::exists(corpus_cache_file(corpus)));
  EXPECT_FALSE(corpus_facts(corpus, 256).has_value());

  corpus.build = [&](const Tell&) {
    ++builds;
    return synthetic_corpus();
  };
  std::vector<std::string> told;
  const Corpus built = load_named_corpus(corpus, [&](const std::string& what) { told.push_back(what); });
  EXPECT_EQ(built.text, synthetic_corpus());
  EXPECT_EQ(built.path, cache_dir() / "corpus" / "test-shelf.txt");
  ASSERT_FALSE(told.empty());
  EXPECT_EQ(told.front(), "Building the test shelf");
  EXPECT_THAT(told.back(), HasSubstr("Built the test-shelf corpus"));
  const Corpus again = load_named_corpus(corpus);
  EXPECT_EQ(again.hash, built.hash);
  EXPECT_EQ(builds, 1);
  const auto facts = corpus_facts(corpus, 256);
  ASSERT_TRUE(facts.has_value());
  EXPECT_EQ(facts->bytes, synthetic_corpus().size());
  EXPECT_EQ(facts->hash, content_hash(synthetic_corpus()));
  EXPECT_FALSE(facts->tokens.has_value());  // not tokenized yet
}

// A disk that fills while the built text is written: the build fails with the system's
// reason and leaves neither the corpus nor a temp file, so no run ever reads half a
// corpus; once there is room, the next run builds it whole. Files are capped with
// RLIMIT_FSIZE, which fails a write part way as a full disk does, as root too.
TEST_F(CorporaTest, AFullDiskWhileBuildingLeavesNothingBehind) {
  NamedCorpus corpus{"test-shelf", "Test shelf", "a test", {}, "Building the test shelf", {}, {}};
  corpus.missing_packages = [] { return std::vector<std::string>{}; };
  corpus.build = [](const Tell&) { return synthetic_corpus(); };  // 90 KB, over the cap
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit capped = saved;
  capped.rlim_cur = 16 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &capped), 0);
  const std::string message = user_error([&] { load_named_corpus(corpus); });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);

  EXPECT_THAT(message, HasSubstr(corpus_cache_file(corpus).string()));
  EXPECT_THAT(message, HasSubstr("File too large"));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  EXPECT_FALSE(is_built(corpus));
  const fs::path folder = corpus_cache_file(corpus).parent_path();
  if (fs::exists(folder)) {
    EXPECT_TRUE(fs::is_empty(folder)) << "a half-written file was left in " << folder;
  }

  const Corpus built = load_named_corpus(corpus);
  EXPECT_EQ(built.text, synthetic_corpus());
  EXPECT_TRUE(is_built(corpus));
}

TEST(Bookshelf, UnigramBaselineOverTheHeldOutSplit) {
  // Training chunks of token 0 only, held-out chunks of token 1 only: the held-out tokens
  // have an add-one count of 1 among (training tokens + vocabulary).
  std::vector<int> ids;
  for (int chunk = 0; chunk < 20; ++chunk) ids.insert(ids.end(), 100, is_heldout_chunk(std::size_t(chunk)) ? 1 : 0);
  EXPECT_NEAR(unigram_baseline(ids, 4, 100), -std::log(1.0 / (1800.0 + 4.0)), 1e-12);
}

}  // namespace
}  // namespace normlab::test
