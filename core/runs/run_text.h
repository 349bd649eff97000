#pragma once
// How a run is named and described in text: one form for the command line and the window.
#include <deque>
#include <functional>
#include <string>

namespace normlab {

struct RunRecord;

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

// Training speed as shown while a run trains: the tokens of the last few seconds of wall
// time over those seconds. A step's own rate is a moment's, and leaves out evaluations:
// under load it read several times what the run made, which is what this says.
class TokenRate {
 public:
  explicit TokenRate(double window_s = 5) : window_s_(window_s) {}
  // A step that ended `wall_s` seconds after training started, having trained `tokens`;
  // returns the rate.
  double add(double wall_s, double tokens);
  double value() const { return rate_; }
  void reset(double wall_s = 0);  // a run starts, or resumes with its clock at `wall_s`

 private:
  struct Sample {
    double wall_s, tokens;
  };
  double window_s_;
  std::deque<Sample> samples_{{0, 0}};  // the first is where the window starts: at first, training's (re)start
  double tokens_ = 0;                   // of the samples after the first
  double rate_ = 0;
};

// The time a run has left at the pace of the steps trained since it started or resumed: a
// resumed run's earlier steps may have run on a busier machine, or on another one.
class StepPace {
 public:
  // Training (re)starts after `step` steps, the run's clock at `wall_s`.
  explicit StepPace(int step = 0, double wall_s = 0) : step_(step), wall_s_(wall_s) {}
  // Where `run` (re)starts: after the last step it holds, or at 0 when it holds none.
  static StepPace of(const RunRecord& run);
  double start_wall_s() const { return wall_s_; }
  // After the step `step`, ended at `wall_s`; NaN before a step since the start.
  double seconds_per_step(int step, double wall_s) const;
  double seconds_left(int step, double wall_s, int steps) const;  // of `steps`

 private:
  int step_;
  double wall_s_;
};

}  // namespace normlab
