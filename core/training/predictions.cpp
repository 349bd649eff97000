#include "predictions.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>

#include "core/runs/run_title.h"
#include "core/runs/verdict.h"

#include "prediction_tally.h"

namespace normlab {

// Rows of positions at a time: a (rows, vocab) float64 block stays tens of MB however
// large the evaluation batch is.
constexpr std::int64_t kRowsPerBlock = 1024;

const std::vector<StatisticInfo>& prediction_statistics() {
  static const std::vector<StatisticInfo> table = {
      {"context_use", "Context use", "nats",
       "how much the next-token prediction depends on the context: 0 when the model predicts the same "
       "distribution whatever came before",
       false},
      {"frequency_mismatch", "Frequency mismatch", "nats",
       "how far the model's average prediction is from the tokens' training frequencies (the baseline's "
       "predictor): 0 when they agree",
       false},
  };
  return table;
}

std::vector<SeriesPoint> prediction_points(const PredictionStats& stats, int step) {
  const double values[] = {stats.context_use, stats.frequency_mismatch};
  std::vector<SeriesPoint> points;
  for (std::size_t i = 0; i < prediction_statistics().size(); ++i) {
    points.push_back({prediction_statistics()[i].name, 0, step, {values[i]}});
  }
  return points;
}

namespace {

// The value of `name` at `step`, when recorded there.
std::optional<double> value_at(const RunRecord& run, const std::string& name, int step) {
  const Series* series = run.find_series(name);
  if (!series) return std::nullopt;
  const auto at = std::find(series->steps.begin(), series->steps.end(), step);
  if (at == series->steps.end()) return std::nullopt;
  return series->at(std::size_t(at - series->steps.begin()));
}

const TextSample* sample_at(const RunRecord& run, int step) {
  for (const TextSample& sample : run.text.samples) {
    if (sample.step == step) return &sample;
  }
  return nullptr;
}

std::string one_line(std::string text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string(" \u21b5 ") : std::string(1, c);
  return out;
}

}  // namespace

std::string statistics_line(const RunRecord& run, int step) {
  std::string line;
  for (const StatisticInfo& s : prediction_statistics()) {
    const auto value = value_at(run, s.name, step);
    if (!value) continue;
    char number[32];
    std::snprintf(number, sizeof number, "%.3f", *value);
    std::string label = s.label;
    label[0] = char(std::tolower(static_cast<unsigned char>(label[0])));
    line += (line.empty() ? "" : " \u00b7 ") + label + " " + number + " " + s.unit;
  }
  return line;
}

std::string evaluation_text(const RunRecord& run, int step) {
  std::string text;
  const std::string statistics = statistics_line(run, step);
  if (!statistics.empty()) text += "  " + statistics + "\n";
  if (const TextSample* sample = sample_at(run, step)) {
    for (std::size_t i = 0; i < run.text.prompts.size(); ++i) {
      text += "  prompt " + std::to_string(i + 1) + ": " + one_line(run.text.prompts[i]) + "\n";
      text += "    greedy:  " + one_line(sample->greedy[i]) + "\n";
      text += "    sampled: " + one_line(sample->sampled[i]) + "\n";
    }
  }
  return text;
}

PredictionTally::PredictionTally(torch::Tensor unigram_log_probs)
    : log_u_(std::move(unigram_log_probs)),
      sum_q_(torch::zeros_like(log_u_)),
      sum_entropy_(torch::zeros({}, log_u_.options())) {}

void PredictionTally::add(const torch::Tensor& logits) {
  torch::NoGradGuard no_grad;
  const auto rows = logits.reshape({-1, logits.size(-1)});
  for (std::int64_t first = 0; first < rows.size(0); first += kRowsPerBlock) {
    const auto count = std::min(kRowsPerBlock, rows.size(0) - first);
    const auto log_q = torch::log_softmax(rows.narrow(0, first, count).to(torch::kFloat64), -1);
    const auto q = log_q.exp();
    sum_q_ += q.sum(0);
    // q log q is 0 where q underflows to 0, not NaN (0 · −inf).
    sum_entropy_ -= torch::where(q > 0, q * log_q, torch::zeros_like(q)).sum();
  }
  positions_ += rows.size(0);
}

PredictionStats PredictionTally::result() const {
  if (positions_ == 0) return {};
  const double n = double(positions_);
  const auto q_mean = (sum_q_ / n).to(torch::kCPU);
  const auto log_q_mean = torch::where(q_mean > 0, q_mean.log(), torch::zeros_like(q_mean));
  const double entropy_of_mean = -(q_mean * log_q_mean).sum().item<double>();
  const double mean_entropy = sum_entropy_.item<double>() / n;
  return {entropy_of_mean - mean_entropy, (q_mean * (log_q_mean - log_u_.to(torch::kCPU))).sum().item<double>()};
}

}  // namespace normlab
