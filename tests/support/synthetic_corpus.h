#pragma once
// Shared by the engine's and the window's tests: a corpus any machine generates alike.
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace normlab::test {

// Deterministic pseudo-English (~90 KB): sentences from a small grammar over about 200
// words, where each subject prefers a few verbs and each verb a few objects, so a model
// can do clearly better than word frequencies. Own LCG: the same bytes on every platform.
inline std::string synthetic_corpus(std::size_t bytes = 90'000, std::uint64_t seed = 7) {
  static const std::vector<std::string> names = {"Anna",  "Ben",  "Clara", "David", "Eva",  "Frank", "Grace",
                                                 "Henry", "Iris", "Jack",  "Kate",  "Leo",  "Mia",   "Noah",
                                                 "Olga",  "Paul", "Rosa",  "Sam",   "Tina", "Victor"};
  static const std::vector<std::string> nouns = {
      "farmer", "teacher", "child",  "doctor",   "sailor", "baker",  "king",  "queen",   "dog",     "cat",
      "horse",  "bird",    "river",  "mountain", "forest", "garden", "house", "village", "city",    "road",
      "bridge", "tower",   "boat",   "ship",     "letter", "book",   "song",  "story",   "bread",   "apple",
      "stone",  "window",  "door",   "table",    "lamp",   "fire",   "rain",  "wind",    "morning", "evening",
      "winter", "summer",  "market", "church",   "school", "field",  "well",  "mill",    "coat",    "hat"};
  static const std::vector<std::string> verbs = {
      "saw",     "found",      "carried", "painted",  "opened",  "closed",  "watched", "followed", "built",   "crossed",
      "visited", "remembered", "heard",   "answered", "cleaned", "counted", "bought",  "sold",     "wrote",   "read",
      "lifted",  "dropped",    "fixed",   "broke",    "loved",   "feared",  "praised", "named",    "touched", "kept"};
  static const std::vector<std::string> adjectives = {
      "old",    "young",  "quiet",  "loud",  "green",  "red",     "dark",   "bright", "small",
      "large",  "cold",   "warm",   "tired", "happy",  "brave",   "gentle", "heavy",  "empty",
      "broken", "golden", "narrow", "wide",  "silent", "strange", "wooden"};
  static const std::vector<std::string> adverbs = {"slowly", "quickly", "carefully", "quietly",  "gladly",   "again",
                                                   "often",  "never",   "always",    "suddenly", "together", "alone"};
  static const std::vector<std::string> places = {"in the morning",   "after the rain",   "near the river",
                                                  "behind the house", "under the bridge", "before the winter",
                                                  "at the market",    "on the road",      "by the window",
                                                  "across the field", "inside the tower", "beyond the forest"};

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

}  // namespace normlab::test
