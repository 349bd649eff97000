#include "run_text.h"

#include <cmath>
#include <cstdio>

#include "run_record.h"

namespace normlab {

std::string file_stem(const std::string& name) {
  std::string stem;
  for (const char ch : name) {
    const unsigned char byte = static_cast<unsigned char>(ch);
    const bool keep = (byte < 128 && std::isalnum(byte)) || ch == '.' || ch == '-';
    stem += keep ? ch : '_';
  }
  return stem.empty() ? "run" : stem;
}

std::string csv_quoted(const std::string& text) {
  std::string cell = "\"";
  for (const char ch : text) cell += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return cell + "\"";
}

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char text[40];
  if (s >= 3600) std::snprintf(text, sizeof text, "%ld h %02ld min", s / 3600, s / 60 % 60);
  else if (s >= 60) std::snprintf(text, sizeof text, "%ld min %02ld s", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%ld s", s);
  return text;
}

std::string first_free_name(const std::function<std::string(int n)>& name,
                            const std::function<bool(const std::string&)>& taken) {
  std::string candidate = name(1);
  for (int n = 2; taken(candidate); ++n) candidate = name(n);
  return candidate;
}

double TokenRate::add(double wall_s, double tokens) {
  samples_.push_back({wall_s, tokens});
  tokens_ += tokens;
  // The window starts at the latest step that ended at least window_s_ ago.
  while (samples_.size() > 2 && samples_[1].wall_s <= wall_s - window_s_) {
    samples_.pop_front();
    tokens_ -= samples_.front().tokens;
  }
  const double seconds = wall_s - samples_.front().wall_s;
  if (seconds > 0) rate_ = tokens_ / seconds;
  return rate_;
}

void TokenRate::reset(double wall_s) {
  samples_ = {{wall_s, 0}};
  tokens_ = 0;
  rate_ = 0;
}

StepPace StepPace::of(const RunRecord& run) {
  return run.steps.empty() ? StepPace() : StepPace(run.steps.back().step, run.steps.back().wall_s);
}

double StepPace::seconds_per_step(int step, double wall_s) const {
  return step > step_ ? (wall_s - wall_s_) / (step - step_) : std::nan("");
}

double StepPace::seconds_left(int step, double wall_s, int steps) const {
  return seconds_per_step(step, wall_s) * (steps - step);
}

}  // namespace normlab
