#pragma once
// How a run is named and described in text: one form for the command line and the window.
#include <functional>
#include <string>

namespace normlab {

// A run name made safe as a file name: ASCII letters, digits, '.' and '-' kept, any
// other byte '_'; "run" when nothing is left.
std::string file_stem(const std::string& name);

// A cell of a CSV file: in double quotes, any quote inside doubled. Run names hold
// spaces, maybe commas or quotes.
std::string csv_quoted(const std::string& text);

// "45 s", "3 min 05 s", "1 h 02 min"; "?" when unknown.
std::string duration_text(double seconds);

// The first of name(1), name(2), name(3)… that `taken` refuses not.
std::string first_free_name(const std::function<std::string(int n)>& name,
                            const std::function<bool(const std::string&)>& taken);

// Training speed as shown while a run trains: smoothed, so it is steady enough to read
// yet follows a real change within a few dozen steps.
class TokenRate {
 public:
  double add(double tokens_per_s);  // returns the smoothed rate
  double value() const { return rate_; }
  void reset() { rate_ = 0; }

 private:
  double rate_ = 0;
};

}  // namespace normlab
