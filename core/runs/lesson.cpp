#include "lesson.h"

#include <nlohmann/json.hpp>

#include "core/system/user_error.h"

#include "lesson_text.h"

namespace normlab {

namespace {

using json = nlohmann::json;

// Version 1: scale, current, left, and per question its run's settings, whether it is the
// learner's own, the prediction and, once settled, the outcome, verdict, step, sentence and run.
constexpr int kLessonVersion = 1;

std::string lower_first(std::string text) {
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') text[0] = char(text[0] - 'A' + 'a');
  return text;
}

// "%1" in `pattern` replaced by `value`.
std::string filled(const char* pattern, const std::string& value) {
  std::string text = pattern;
  const std::size_t at = text.find("%1");
  return at == std::string::npos ? text : text.replace(at, 2, value);
}

template <typename T>
T required(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) throw UserError(where + " has no \u201c" + key + "\u201d");
  try {
    return object.at(key).get<T>();
  } catch (const json::exception&) {
    throw UserError(where + ": \u201c" + key + "\u201d is not what it should be");
  }
}

}  // namespace

const LessonOutcomeInfo& info(LessonOutcome outcome) { return kLessonOutcomes[std::size_t(outcome)]; }

LessonOutcome parse_outcome(const std::string& name) {
  for (const LessonOutcomeInfo& row : kLessonOutcomes) {
    if (name == row.name) return row.value;
  }
  throw UserError("an outcome is learns, stalls or diverges, not '" + name + "'");
}

const VerdictAnswer& answer_of(Verdict verdict) {
  for (const VerdictAnswer& row : kVerdictAnswers) {
    if (row.verdict == verdict) return row;
  }
  return kVerdictAnswers[0];  // every verdict has its row (lesson_test holds the table to kVerdicts)
}

std::optional<LessonOutcome> settled_outcome(Verdict verdict, RunStatus status) {
  const VerdictAnswer& row = answer_of(verdict);
  if (!row.answers) return std::nullopt;
  if (!row.settles_while_training && status != RunStatus::Done) return std::nullopt;
  return row.outcome;
}

LessonState new_lesson(const std::vector<TrainConfig>& course, const std::string& scale) {
  LessonState state;
  state.scale = scale;
  for (const TrainConfig& config : course) {
    LessonQuestion question;
    question.config = config;
    state.questions.push_back(question);
  }
  return state;
}

std::string settings_text(const TrainConfig& config) {
  std::string text = info(config.model.norm).label + design_options(config);
  if (config.model.layers != ModelConfig{}.layers) text += ", " + std::to_string(config.model.layers) + " layers";
  return text + ", lr " + format_lr(config.peak_lr) + ", " + std::to_string(config.warmup_steps) + "-step warmup";
}

std::string question_text(const TrainConfig& config) { return settings_text(config) + ": will it learn?"; }

std::string answer_text(const LessonQuestion& question) {
  if (!question.outcome) return {};
  const std::string past = info(*question.outcome).past;
  if (question.right()) return std::string(lesson_text::kRight) + " " + past + ".";
  std::string text = std::string(lesson_text::kWrong) + " " + past;
  if (question.prediction) {
    text += " (" + filled(lesson_text::kYouSaidAfter, lower_first(info(*question.prediction).choice)) + ")";
  }
  return text + ".";
}

LessonScore score(const LessonState& state) {
  LessonScore s;
  for (const LessonQuestion& q : state.questions) {
    if (!q.prediction) continue;
    ++s.predicted;
    if (q.outcome) ++s.answered;
    if (q.right()) ++s.right;
  }
  return s;
}

std::string score_text(const LessonScore& s) {
  std::string text = filled(lesson_text::kScore, std::to_string(s.right));
  const std::size_t at = text.find("%2");
  if (at != std::string::npos) text.replace(at, 2, std::to_string(s.answered));
  if (s.predicted > s.answered)
    text += " " + filled(lesson_text::kStillTraining, std::to_string(s.predicted - s.answered));
  return text;
}

std::string lesson_json_text(const LessonState& state) {
  json questions = json::array();
  for (const LessonQuestion& q : state.questions) {
    RunRecord settings;  // the settings as a run file writes them: the same schema, read back the same way
    settings.config = q.config;
    json row = {{"settings", json::parse(to_json_text(settings))}, {"further", q.further}};
    if (q.prediction) row["prediction"] = info(*q.prediction).name;
    if (q.outcome) {
      row["outcome"] = info(*q.outcome).name;
      row["verdict"] = q.verdict;
      row["verdict_step"] = q.verdict_step;
      row["sentence"] = q.sentence;
      row["run"] = q.run;
    }
    questions.push_back(row);
  }
  const json j = {{"version", kLessonVersion},
                  {"scale", state.scale},
                  {"current", state.current},
                  {"left", state.left},
                  {"questions", questions}};
  return j.dump(2) + "\n";
}

LessonState lesson_from_json_text(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& error) {
    throw UserError(std::string("the lesson's file is not JSON: ") + error.what());
  }
  const std::string where = "the lesson's file";
  const int version = required<int>(j, "version", where);
  if (version < 1 || version > kLessonVersion) {
    throw UserError(where + " is of version " + std::to_string(version) + ", which this NormLab cannot read");
  }
  LessonState state;
  state.scale = required<std::string>(j, "scale", where);
  const json questions = required<json>(j, "questions", where);
  if (!questions.is_array()) throw UserError(where + ": \u201cquestions\u201d is not a list");
  for (std::size_t i = 0; i < questions.size(); ++i) {
    const json& row = questions[i];
    const std::string at = where + ", question " + std::to_string(i + 1);
    LessonQuestion q;
    q.config = from_json_text(required<json>(row, "settings", at).dump()).config;
    q.further = required<bool>(row, "further", at);
    if (row.contains("prediction")) q.prediction = parse_outcome(required<std::string>(row, "prediction", at));
    if (row.contains("outcome")) {
      q.outcome = parse_outcome(required<std::string>(row, "outcome", at));
      q.verdict = required<std::string>(row, "verdict", at);
      q.verdict_step = required<int>(row, "verdict_step", at);
      q.sentence = required<std::string>(row, "sentence", at);
      q.run = required<std::string>(row, "run", at);
    }
    state.questions.push_back(std::move(q));
  }
  state.current = required<int>(j, "current", where);
  state.left = required<bool>(j, "left", where);
  if (state.current < 0 || state.current > int(state.questions.size())) {
    throw UserError(where + ": question " + std::to_string(state.current + 1) + " is not one of its questions");
  }
  return state;
}

}  // namespace normlab
