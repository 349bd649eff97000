#include "bookshelf.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_set>

#include "core/system/user_error.h"

namespace normlab::bookshelf {
namespace fs = std::filesystem;

namespace {

using Kind = Source::Kind;

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string trimmed(const std::string& s) {
  std::size_t begin = 0, end = s.size();
  while (begin < end && space(s[begin])) ++begin;
  while (end > begin && space(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

// Runs of spaces as one, no space before closing punctuation, none at either end.
std::string tidy_line(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (char c : line) {
    if (c == '\t' || c == '\r') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    if ((c == '.' || c == ',' || c == ';' || c == ':' || c == '?' || c == '!' || c == ')') && !out.empty() &&
        out.back() == ' ') {
      out.pop_back();
    }
    out += c;
  }
  return trimmed(out);
}

// Every line tidied, blank lines dropped.
std::string tidy_lines(const std::string& text) {
  std::string out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = tidy_line(text.substr(begin, end - begin));
    if (!line.empty()) out += line + '\n';
    begin = end + 1;
  }
  return out;
}

// The output of `command`, line by line.
void for_each_output_line(const std::string& command, const std::function<void(const std::string&)>& each) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw UserError("cannot run " + command);
  std::string line;
  char buffer[1 << 16];
  while (std::fgets(buffer, sizeof buffer, pipe.get())) {
    line += buffer;
    if (line.back() != '\n') continue;
    line.pop_back();
    each(line);
    line.clear();
  }
  if (!line.empty()) each(line);
  if (pclose(pipe.release()) != 0) throw UserError("`" + command + "` failed");
}

std::string command_output(const std::string& command) {
  std::string text;
  for_each_output_line(command, [&](const std::string& line) { text += line + '\n'; });
  return text;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// A paragraph's lines as one line, unless it is laid out in columns (a table) or is verse:
// then its lines stay, each tidied.
std::string join_paragraph(const std::vector<std::string>& lines) {
  bool columns = false;
  for (const std::string& line : lines) {
    // Two spaces inside a line lay out columns, but not after a sentence's end.
    const std::string inner = trimmed(line);
    for (std::size_t at = inner.find("  "); at != std::string::npos && !columns; at = inner.find("  ", at + 1)) {
      columns = at > 0 && std::string(".?!:;)\"'").find(inner[at - 1]) == std::string::npos;
    }
  }
  // Verse: short lines that each start with a capital, as a poem quoted in a definition.
  const auto verse_line = [](const std::string& line) {
    const std::string t = trimmed(line);
    return t.size() <= 60 && !t.empty() && ((t[0] >= 'A' && t[0] <= 'Z') || t[0] == '"' || t[0] == '\'');
  };
  columns |= lines.size() >= 2 && std::all_of(lines.begin() + 1, lines.end(), verse_line) && verse_line(lines[0]);
  std::string out;
  for (const std::string& line : lines) out += trimmed(line) + (columns ? "\n" : " ");
  return columns ? tidy_lines(out) : tidy_line(out) + "\n";
}

// `{Jury}` -> `Jury`: dictd's cross references.
std::string without_braces(std::string text) {
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == '{' || c == '}'; }), text.end());
  return text;
}

// GCIDE's letters and signs written as [name].
const std::map<std::string, std::string>& gcide_entities() {
  static const std::map<std::string, std::string> names{
      {"ae", "æ"},     {"AE", "Æ"},       {"oe", "œ"},       {"OE", "Œ"},     {"eth", "ð"},      {"thorn", "þ"},
      {"yogh", "ȝ"},   {"ng", "ŋ"},       {"deg", "°"},      {"sect", "§"},   {"para", "¶"},     {"pounds", "£"},
      {"dagger", "†"}, {"dag", "†"},      {"times", "×"},    {"divby", "÷"},  {"middot", "·"},   {"flat", "♭"},
      {"sharp", "♯"},  {"natural", "♮"},  {"prime", "′"},    {"bprime", "″"}, {"min", "′"},      {"sec", "″"},
      {"ldqo", "“"},   {"rdqo", "”"},     {"rsquo", "’"},    {"nbsp", " "},   {"rarr", "→"},     {"th", "th"},
      {"alpha", "α"},  {"beta", "β"},     {"gamma", "γ"},    {"delta", "δ"},  {"epsilon", "ε"},  {"zeta", "ζ"},
      {"eta", "η"},    {"theta", "θ"},    {"iota", "ι"},     {"kappa", "κ"},  {"lambda", "λ"},   {"mu", "μ"},
      {"nu", "ν"},     {"xi", "ξ"},       {"omicron", "ο"},  {"pi", "π"},     {"rho", "ρ"},      {"sigma", "σ"},
      {"sigmat", "ς"}, {"tau", "τ"},      {"upsilon", "υ"},  {"phi", "φ"},    {"chi", "χ"},      {"psi", "ψ"},
      {"omega", "ω"},  {"digamma", "ϝ"},  {"root", ""},      {"schwa", "ə"},  {"imac", "i"},     {"amac", "a"},
      {"emac", "e"},   {"omac", "o"},     {"umac", "u"},     {"aum", "a"},    {"add", "a"},      {"asl", "a"},
      {"udd", "u"},    {"dsdot", "d"},    {"lsdot", "l"},    {"mdot", "m"},   {"zdot", "z"},     {"tsdo", "t"},
      {"ccaron", "č"}, {"cacute", "ć"},   {"filig", "fi"},   {"fllig", "fl"}, {"ffllig", "ffl"}, {"break", ""},
      {"hand", "☞"},   {"asterism", "⁂"}, {"cuberoot", "∛"}, {"nabla", "∇"},  {"mtil", "m"},     {"ncir", "n"},
  };
  return names;
}

bool accent_mark(char c) {
  return c == '^' || c == '=' || c == '~' || c == '`' || c == '\'' || c == '"' || c == '.' || c == ',' || c == '-' ||
         c == '*';
}
bool ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// What `[inner]` stands for in GCIDE, or false when it is ordinary bracketed text.
bool gcide_bracket(const std::string& inner, std::string& out) {
  if (inner.empty()) return out.clear(), true;
  if (auto it = gcide_entities().find(inner); it != gcide_entities().end()) return out = it->second, true;
  // A letter with its accent written beside it: [a^], [=e], ['e], [oo^], [.a], ["e].
  std::string letters, marks;
  for (char c : inner) (ascii_letter(c) ? letters : marks) += c;
  if (!letters.empty() && letters.size() <= 2 && !marks.empty() && marks.size() <= 2 &&
      std::all_of(marks.begin(), marks.end(), accent_mark)) {
    return out = letters, true;
  }
  // A sense number after a word (adenoids[2]), or a fraction.
  if (std::all_of(inner.begin(), inner.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      inner.rfind("frac", 0) == 0) {
    return out.clear(), true;
  }
  return false;
}

// Lines that only say where an entry came from: [1913 Webster], [PJC], [WordNet 1.5].
bool gcide_source_line(const std::string& line) {
  const std::string t = trimmed(line);
  if (t.size() < 3 || t.front() != '[' || t.back() != ']') return false;
  return t.find("Webster") != std::string::npos || t.find("WordNet") != std::string::npos ||
         t.find("PJC") != std::string::npos || t.find("Century") != std::string::npos ||
         t.find("RN") != std::string::npos || t.find("Source") != std::string::npos;
}

void append_entity(const std::string& name, std::string& out) {
  static const std::map<std::string, std::string> xml{{"amp", "&"},   {"lt", "<"},   {"gt", ">"},
                                                      {"quot", "\""}, {"apos", "'"}, {"nbsp", " "}};
  if (auto it = xml.find(name); it != xml.end()) {
    out += it->second;
    return;
  }
  if (name.size() > 1 && name[0] == '#') {
    unsigned long code = 0;
    try {
      code = name[1] == 'x' ? std::stoul(name.substr(2), nullptr, 16) : std::stoul(name.substr(1));
    } catch (...) {
      return;
    }
    if (code < 0x80) out += char(code);
    else if (code < 0x800) out += {char(0xC0 | (code >> 6)), char(0x80 | (code & 0x3F))};
    else if (code < 0x10000)
      out += {char(0xE0 | (code >> 12)), char(0x80 | ((code >> 6) & 0x3F)), char(0x80 | (code & 0x3F))};
  }
}

// The tag's name without '/', lower-case: "div" for <div sID="x"/>, "note" for </note>.
std::string tag_name(const std::string& tag) {
  std::size_t begin = tag[1] == '/' ? 2 : 1, end = begin;
  while (end < tag.size() && (ascii_letter(tag[end]) || tag[end] == ':')) ++end;
  std::string name = tag.substr(begin, end - begin);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return name;
}

// A word respelt to show its syllables and stress, Ar`gil*lit"ic: the word, Argillitic.
bool respelling_sign(char c) { return c == '*' || c == '`'; }

// GCIDE's pronunciations: \Ab*jure"\ after a headword, (a*bast") respellings, and words
// written with their stress marks.
std::string without_pronunciations(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      const std::size_t close = text.find('\\', i + 1);
      if (close != std::string::npos && close - i <= 120) {
        i = close;
        if (!out.empty() && out.back() != ' ' && i + 1 < text.size() && ascii_letter(text[i + 1])) out += ' ';
        continue;
      }
    }
    if (c == '(') {
      const std::size_t close = text.find(')', i);
      if (close != std::string::npos && close - i <= 80 && text.find('(', i + 1) > close) {
        const std::string inner = text.substr(i + 1, close - i - 1);
        const bool one_word = inner.find_first_of(" \n") == std::string::npos;
        if (inner.find_first_of("*`") != std::string::npos ||
            (one_word && inner.find_first_of("\"[") != std::string::npos)) {
          i = close;
          while (!out.empty() && out.back() == ' ') out.pop_back();
          continue;
        }
      }
    }
    out += c;
  }
  // Stress and syllable marks left inside words.
  std::string words;
  words.reserve(out.size());
  for (std::size_t begin = 0; begin < out.size();) {
    std::size_t end = begin;
    while (end < out.size() && !space(out[end])) ++end;
    std::string word = out.substr(begin, end - begin);
    bool marked = false;
    for (std::size_t k = 1; k + 1 < word.size(); ++k)
      marked |= respelling_sign(word[k]) && ascii_letter(word[k - 1]) && ascii_letter(word[k + 1]);
    if (marked) {
      std::string plain;
      for (std::size_t k = 0; k < word.size(); ++k) {
        const bool after_letter = k > 0 && ascii_letter(word[k - 1]);
        if (respelling_sign(word[k]) || (word[k] == '"' && after_letter)) continue;
        plain += word[k];
      }
      word = plain;
    }
    words += word;
    while (end < out.size() && space(out[end])) words += out[end++];
    begin = end;
  }
  return words;
}

// The length of the valid UTF-8 sequence at `i`, or 0.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80                                   ? 1
                        : (c & 0xE0) == 0xC2 || (c & 0xE0) == 0xC0 ? 2
                        : (c & 0xF0) == 0xE0                       ? 3
                        : (c & 0xF8) == 0xF0                       ? 4
                                                                   : 0;
  if (n == 0 || (n == 2 && c < 0xC2) || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

// A stray byte of another encoding as the character it stands for there: Windows-1252's
// quotes and dashes, else Latin-1. A few entries of GCIDE hold them ("market\x92s").
std::string as_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (const std::size_t n = utf8_length(s, i)) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    const auto c = static_cast<unsigned char>(s[i++]);
    static const std::map<unsigned char, std::string> windows{{0x91, "‘"}, {0x92, "’"}, {0x93, "“"}, {0x94, "”"},
                                                              {0x96, "–"}, {0x97, "—"}, {0x85, "…"}};
    if (auto it = windows.find(c); it != windows.end()) out += it->second;
    else if (c >= 0xA0) out += {char(0xC0 | (c >> 6)), char(0x80 | (c & 0x3F))};
  }
  return out;
}

}  // namespace

const std::vector<Source>& sources() {
  static const std::vector<Source> all{
      {"GNU Collaborative International Dictionary of English (Webster 1913 and WordNet)",
       "dict-gcide",
       "GPL-2+",
       Kind::Dict,
       "/usr/share/dictd/gcide.dict.dz",
       {}},
      {"C. H. Spurgeon, The Treasury of David", "sword-comm-tdavid", "public domain", Kind::Sword, "TDavid", {}},
      {"Matthew Henry's Concise Commentary", "sword-comm-mhcc", "public domain", Kind::Sword, "MHCC", {}},
      {"World English Bible", "sword-text-web", "public domain", Kind::Sword, "engWEB2015eb", {}},
      {"Scofield Reference Notes (1917)", "sword-comm-scofield", "public domain", Kind::Sword, "Scofield", {}},
      {"Free On-line Dictionary of Computing",
       "dict-foldoc",
       "GFDL-1.1+",
       Kind::Dict,
       "/usr/share/dictd/foldoc.dict.dz",
       {}},
      {"The Jargon File", "dict-jargon", "public domain", Kind::Dict, "/usr/share/dictd/jargon.dict.dz", {}},
      {"Ambrose Bierce, The Devil's Dictionary",
       "dict-devil",
       "public domain",
       Kind::Dict,
       "/usr/share/dictd/devil.dict.dz",
       {}},
      {"Fortune cookies",
       "fortunes",
       "BSD-4-clause-UC and the files' own notices",
       Kind::Fortunes,
       "/usr/share/games/fortunes",
       {"computers", "cookie", "debian",     "definitions", "disclaimer",    "drugs",   "education",   "ethnic",
        "food",      "goedel", "humorists",  "kids",        "knghtbrd",      "law",     "linux",       "linuxcookie",
        "love",      "magic",  "medicine",   "men-women",   "miscellaneous", "news",    "paradoxum",   "people",
        "perl",      "pets",   "platitudes", "politics",    "pratchett",     "science", "songs-poems", "sports",
        "startrek",  "tao",    "wisdom",     "work",        "zippy"}},
      {"Fortune cookies (the small set)",
       "fortunes-min",
       "BSD-4-clause-UC",
       Kind::Fortunes,
       "/usr/share/games/fortunes",
       {"fortunes", "literature", "riddles"}},
  };
  return all;
}

std::vector<std::string> missing_packages() {
  std::vector<std::string> missing;
  const auto need = [&](const std::string& package) {
    if (std::find(missing.begin(), missing.end(), package) == missing.end()) missing.push_back(package);
  };
  for (const Source& s : sources()) {
    std::string lower = s.location;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    const fs::path mods = "/usr/share/sword/mods.d";
    const bool there = s.kind == Kind::Dict ? fs::exists(s.location)
                       : s.kind == Kind::Sword
                           ? fs::exists(mods / (lower + ".conf")) || fs::exists(mods / (s.location + ".conf"))
                           : fs::exists(fs::path(s.location) / s.files.front());
    if (!there) need(s.package);
  }
  const char* path = std::getenv("PATH");
  bool mod2imp = false;
  for (std::string dirs = path ? path : "/usr/bin"; !dirs.empty();) {
    const std::size_t colon = dirs.find(':');
    mod2imp |= fs::exists(fs::path(dirs.substr(0, colon)) / "mod2imp");
    dirs = colon == std::string::npos ? "" : dirs.substr(colon + 1);
  }
  if (!mod2imp) need("libsword-utils");
  return missing;
}

std::string clean_gcide(std::string text) {
  text = without_pronunciations(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '[') {
      const std::size_t close = text.find(']', i);
      const std::size_t nested = text.find('[', i + 1);
      // Where an entry's text came from, inside a line too: [1913 Webster], [WordNet 1.5 +PJC].
      if (close != std::string::npos && (nested == std::string::npos || nested > close) && close - i <= 40) {
        const std::string inner = text.substr(i + 1, close - i - 1);
        if (inner.find("1913 Webster") != std::string::npos || inner.find("Webster 1913") != std::string::npos ||
            inner.rfind("WordNet 1.", 0) == 0 || inner == "PJC") {
          i = close + 1;
          continue;
        }
      }
      if (close != std::string::npos && (nested == std::string::npos || nested > close) && close - i <= 12) {
        std::string replacement;
        const std::string inner = text.substr(i + 1, close - i - 1);
        if (gcide_bracket(inner, replacement)) {
          out += replacement;
          i = close + 1;
          // "[root]205": the number of a root in Webster's list.
          if (inner == "root")
            while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
          continue;
        }
      }
    }
    out += c;
    ++i;
  }
  // Accents written after a letter in transliterations, cholh`.
  out.erase(std::remove(out.begin(), out.end(), '`'), out.end());
  return tidy_lines(without_braces(out));
}

std::vector<std::string> dict_documents(const std::string& dict_text, bool gcide) {
  std::vector<std::string> documents;
  std::string headword, document;
  std::vector<std::string> paragraph;
  bool skip = false;
  const auto end_paragraph = [&] {
    if (!paragraph.empty() && !skip) document += join_paragraph(paragraph);
    paragraph.clear();
  };
  const auto end_document = [&] {
    end_paragraph();
    // GCIDE's notices at the start of each letter's file, framed in rows of asterisks.
    skip |= gcide && document.find("* * * * *") != std::string::npos;
    if (!skip && !document.empty()) documents.push_back(gcide ? clean_gcide(document) : without_braces(document));
    document.clear();
  };
  std::size_t begin = 0;
  bool after_blank = true;
  while (begin < dict_text.size()) {
    std::size_t end = dict_text.find('\n', begin);
    if (end == std::string::npos) end = dict_text.size();
    std::string line = dict_text.substr(begin, end - begin);
    begin = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const bool first_after_blank = after_blank;
    after_blank = trimmed(line).empty();
    if (after_blank) {
      end_paragraph();
      continue;
    }
    // A headword at the start of a line after a blank one starts an entry (the Devil's
    // Dictionary goes on at the start of lines too), unless GCIDE's pronunciation of the
    // last one goes on.
    const auto backslashes = [&] {
      std::size_t n = 0;
      for (const std::string& l : paragraph) n += std::count(l.begin(), l.end(), '\\');
      return n;
    };
    if (!space(line[0]) && first_after_blank && !(gcide && backslashes() % 2 == 1)) {
      end_document();
      skip = line.rfind("00-database", 0) == 0 || line.rfind("00database", 0) == 0;
      paragraph.push_back(line);
      continue;
    }
    if (gcide && gcide_source_line(line)) continue;
    const std::string t = trimmed(line);
    // A numbered sense, "1. To renounce", starts a paragraph of its own.
    const std::size_t digits = t.find_first_not_of("0123456789");
    if (digits > 0 && digits != std::string::npos && t.compare(digits, 2, ". ") == 0) end_paragraph();
    // FOLDOC's dates of last change, "(2007-07-16)".
    if (t.size() == 12 && t.front() == '(' && t.back() == ')' && t[5] == '-' && t[8] == '-') continue;
    paragraph.push_back(line);
  }
  end_document();
  // FOLDOC's subject tags, "<humour>", "<programming, humour>", lead a definition: not prose.
  if (!gcide) {
    const auto tag_text = [](char c) { return (c >= 'a' && c <= 'z') || c == ',' || c == ' ' || c == '-'; };
    for (std::string& d : documents) {
      for (std::size_t open = d.find('<'); open != std::string::npos; open = d.find('<', open)) {
        const std::size_t close = d.find('>', open);
        if (close == std::string::npos || close - open > 60 || close == open + 1 || !ascii_letter(d[open + 1]) ||
            !std::all_of(d.begin() + std::ptrdiff_t(open) + 1, d.begin() + std::ptrdiff_t(close), tag_text)) {
          ++open;
          continue;
        }
        d.erase(open, close - open + 1);
      }
      d = tidy_lines(d);
    }
  }
  return documents;
}

std::string markup_to_text(const std::string& entry) {
  std::string out;
  out.reserve(entry.size());
  int in_note = 0;
  for (std::size_t i = 0; i < entry.size();) {
    const char c = entry[i];
    if (c == '<') {
      const std::size_t close = entry.find('>', i);
      if (close == std::string::npos) break;
      const std::string tag = entry.substr(i, close - i + 1);
      const std::string name = tag_name(tag);
      const bool closing = tag[1] == '/', empty = tag[tag.size() - 2] == '/';
      i = close + 1;
      if (name == "note" || name == "rf" || name == "scripref") {  // footnotes, and ThML's references to verses
        if (!empty) in_note += closing ? -1 : 1;
        in_note = std::max(in_note, 0);
        out += ' ';
      } else if (in_note == 0) {
        if (name == "div" || name == "p" || name == "lb" || name == "l" || name == "lg" || name == "item" ||
            name == "title" || name == "br" || name == "row" || name == "list" || name == "chapter") {
          out += '\n';
        } else if (name == "cell") {
          out += ' ';
        }
      }
      continue;
    }
    if (in_note > 0) {
      ++i;
      continue;
    }
    if (c == '&') {
      const std::size_t semi = entry.find(';', i);
      if (semi != std::string::npos && semi - i <= 8) {
        append_entity(entry.substr(i + 1, semi - i - 1), out);
        i = semi + 1;
        continue;
      }
    }
    out += c;
    ++i;
  }
  return tidy_lines(out);
}

namespace {

// mod2imp's export line by line: "$$$Genesis 4:1" keys, each followed by its entry's markup.
class SwordReader {
 public:
  explicit SwordReader(bool bible) : bible_(bible) {}
  void line(const std::string& line) {
    if (line.rfind("$$$", 0) != 0) {
      entry_ += line;
      entry_ += '\n';
      return;
    }
    add_entry();
    // A Bible's documents are its chapters, a commentary's its notes on one verse.
    const std::string key = line.substr(3);
    const std::size_t colon = key.rfind(':');
    const std::string chapter = colon == std::string::npos ? key : key.substr(0, colon);
    if (!bible_ || chapter != chapter_) end_document();
    chapter_ = chapter;
  }
  std::vector<std::string> finish() {
    add_entry();
    end_document();
    return std::move(documents_);
  }

 private:
  void add_entry() {
    const std::string text = markup_to_text(entry_);
    entry_.clear();
    for (std::size_t begin = 0; begin < text.size();) {
      const std::size_t end = text.find('\n', begin);
      const std::string line = text.substr(begin, end - begin + 1);
      begin = end + 1;
      // The MHCC repeats a chapter's notes at each of its verses: each paragraph once.
      if (bible_ || seen_.insert(std::hash<std::string>{}(line)).second) document_ += line;
    }
  }
  void end_document() {
    if (!document_.empty()) documents_.push_back(std::move(document_));
    document_.clear();
  }

  bool bible_;
  std::string entry_, document_, chapter_;
  std::unordered_set<std::size_t> seen_;
  std::vector<std::string> documents_;
};

}  // namespace

std::vector<std::string> sword_documents(const std::string& imp_text, bool bible) {
  SwordReader reader(bible);
  for (std::size_t begin = 0; begin < imp_text.size();) {
    std::size_t end = imp_text.find('\n', begin);
    if (end == std::string::npos) end = imp_text.size();
    reader.line(imp_text.substr(begin, end - begin));
    begin = end + 1;
  }
  return reader.finish();
}

std::vector<std::string> fortune_documents(const std::string& fortune_file) {
  std::vector<std::string> documents;
  std::string document;
  std::size_t begin = 0;
  while (begin < fortune_file.size()) {
    std::size_t end = fortune_file.find('\n', begin);
    if (end == std::string::npos) end = fortune_file.size();
    std::string line = fortune_file.substr(begin, end - begin);
    begin = end + 1;
    if (line == "%" || line == "%%") {
      if (const std::string t = tidy_lines(document); !t.empty()) documents.push_back(t);
      document.clear();
      continue;
    }
    // Overstruck letters, "_\bw" (underlined w): the letter alone.
    for (std::size_t at = line.find('\b'); at != std::string::npos; at = line.find('\b', at)) {
      if (at == 0) line.erase(0, 1);
      else line.erase(at - 1, 2), --at;
    }
    line.erase(std::remove_if(line.begin(), line.end(),
                              [](char ch) { return static_cast<unsigned char>(ch) < 0x20 && ch != '\t'; }),
               line.end());
    document += line + '\n';
  }
  if (const std::string t = tidy_lines(document); !t.empty()) documents.push_back(t);
  return documents;
}

std::vector<std::string> read_source(const Source& source) {
  switch (source.kind) {
    case Kind::Dict:
      return dict_documents(command_output("gzip -dc " + quoted(source.location)), source.package == "dict-gcide");
    case Kind::Sword: {
      // Streamed: the MHCC's export is about 400 MB, its notes repeated at every verse.
      SwordReader reader(source.package.rfind("sword-text-", 0) == 0);
      for_each_output_line("mod2imp " + quoted(source.location) + " 2>/dev/null",
                           [&](const std::string& line) { reader.line(line); });
      return reader.finish();
    }
    case Kind::Fortunes: {
      std::vector<std::string> documents;
      for (const std::string& file : source.files) {
        for (std::string& d : fortune_documents(command_output("cat " + quoted(source.location + "/" + file)))) {
          documents.push_back(std::move(d));
        }
      }
      return documents;
    }
  }
  return {};
}

std::vector<std::pair<std::size_t, std::size_t>> interleave(const std::vector<std::vector<std::size_t>>& sizes) {
  const std::size_t n = sizes.size();
  std::vector<double> total(n, 0), laid(n, 0);
  std::vector<std::size_t> next(n, 0);
  std::size_t count = 0;
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t size : sizes[s]) total[s] += double(std::max<std::size_t>(size, 1));
    count += sizes[s].size();
  }
  std::vector<std::pair<std::size_t, std::size_t>> order;
  order.reserve(count);
  while (order.size() < count) {
    // The source furthest behind its share once its next document's middle is laid out.
    std::size_t best = n;
    double best_progress = 0;
    for (std::size_t s = 0; s < n; ++s) {
      if (next[s] >= sizes[s].size()) continue;
      const double progress = (laid[s] + double(std::max<std::size_t>(sizes[s][next[s]], 1)) / 2) / total[s];
      if (best == n || progress < best_progress) best = s, best_progress = progress;
    }
    laid[best] += double(std::max<std::size_t>(sizes[best][next[best]], 1));
    order.emplace_back(best, next[best]++);
  }
  return order;
}

std::vector<std::string> in_pieces(std::vector<std::string> documents, std::size_t most) {
  std::vector<std::string> pieces;
  for (std::string& d : documents) {
    if (d.size() <= most) {
      pieces.push_back(std::move(d));
      continue;
    }
    // Cut after the last line that ends within `most` bytes, or at the line's end when one
    // line is longer.
    for (std::size_t begin = 0; begin < d.size();) {
      std::size_t end = begin + most >= d.size() ? d.size() : d.rfind('\n', begin + most - 1);
      if (end == std::string::npos || end < begin) end = d.find('\n', begin);
      end = end == std::string::npos ? d.size() : std::min(d.size(), end + 1);
      pieces.push_back(d.substr(begin, end - begin));
      begin = end;
    }
  }
  return pieces;
}

std::string build(const std::function<void(const std::string&)>& tell) {
  std::vector<std::vector<std::string>> documents;
  std::vector<std::vector<std::size_t>> sizes;
  for (const Source& source : sources()) {
    if (tell) tell("Reading " + source.title + " (" + source.package + ")");
    documents.push_back(in_pieces(read_source(source), kMostPieceBytes));
    for (std::string& d : documents.back()) d = as_utf8(d);
    if (documents.back().empty()) throw UserError("the package " + source.package + " gave no text");
    sizes.emplace_back();
    for (const std::string& d : documents.back()) sizes.back().push_back(d.size());
  }
  std::size_t bytes = 0;
  for (const auto& s : sizes)
    for (std::size_t size : s) bytes += size + 1;
  std::string text;
  text.reserve(bytes);
  for (const auto& [source, document] : interleave(sizes)) (text += documents[source][document]) += '\n';
  return text;
}

}  // namespace normlab::bookshelf
