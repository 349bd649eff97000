#pragma once
// The bookshelf corpus: English prose from Debian packages (a dictionary, Bible
// commentaries, a Bible, computing lexicons, fortunes), read from where the packages put
// it, cleaned of its markup and interleaved document by document, so that every stretch
// of the text, the held-out tenth included, holds each source in proportion to its size.
// Built once into the cache by load_named_corpus (corpora.h); docs/corpora.md says why
// these sources, their licences and how each is cleaned.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace normlab::bookshelf {

// One source: what the text is, the Debian package that ships it, its licence and where
// on disk the package puts it (a dictd file, a SWORD module read with mod2imp, or a folder
// of fortune files).
struct Source {
  enum class Kind { Dict, Sword, Fortunes };
  std::string title;
  std::string package;
  std::string licence;
  Kind kind;
  std::string location;            // the .dict.dz file, the SWORD module's name, the fortunes folder
  std::vector<std::string> files;  // fortunes: the files read from `location`
};
const std::vector<Source>& sources();

// Every package the bookshelf needs that is not installed (judged by the files it ships).
std::vector<std::string> missing_packages();

// One source's documents, cleaned: dictionary entries, commentary notes, Bible chapters,
// fortunes. UserError when a package's file cannot be read.
std::vector<std::string> read_source(const Source& source);

// The cleaning, one function per format; each takes the package's text and gives documents.
std::vector<std::string> dict_documents(const std::string& dict_text, bool gcide);
std::vector<std::string> sword_documents(const std::string& imp_text, bool bible);
std::vector<std::string> fortune_documents(const std::string& fortune_file);
// GCIDE's own markup in one line: pronunciations, {cross references}, [ae]-style letters.
std::string clean_gcide(std::string text);
// An OSIS or ThML entry as plain text: notes dropped, paragraphs as line breaks, entities decoded.
std::string markup_to_text(const std::string& entry);

// The order to lay documents of several sources out in: (source, document) pairs, each
// source's documents in their order, the sources merged so that after any prefix each
// source's share of the bytes laid out is its share of the whole, to within a document.
std::vector<std::pair<std::size_t, std::size_t>> interleave(const std::vector<std::vector<std::size_t>>& sizes);

// Documents longer than `most` bytes cut at line ends into pieces of at most that (a line
// longer than `most` is a piece of its own), so that a long commentary on one psalm is
// spread over the text like the dictionary's entries.
std::vector<std::string> in_pieces(std::vector<std::string> documents, std::size_t most);
inline constexpr std::size_t kMostPieceBytes = 8192;

// The whole corpus text, documents separated by a blank line; `tell` hears each source as it is read.
std::string build(const std::function<void(const std::string&)>& tell = {});

}  // namespace normlab::bookshelf
