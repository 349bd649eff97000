#include "run_markdown.h"

#include <cmath>
#include <cstdio>

#include "core/runs/config_fields.h"
#include "core/runs/run_title.h"
#include "core/runs/verdict.h"

#include "predictions.h"

namespace normlab {

namespace {

std::string nats(double value) {
  if (!std::isfinite(value)) return "\u2014";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

// A table cell's text: its pipes escaped, its line breaks as spaces.
std::string cell(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += "\\|";
    else out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string settings_section(const RunRecord& run) {
  std::string md = "## Settings\n\n| setting | value |\n|---|---|\n";
  for (const ConfigField& field : config_fields()) {
    md += "| " + cell(field.label) + " | " + cell(shown_text(field, run.config)) + " |\n";
  }
  return md + "\n";
}

std::string losses_section(const RunRecord& run) {
  if (run.evals.empty()) return {};
  std::string md = "## Losses\n\n";
  if (std::isfinite(run.baseline_loss)) md += "Unigram baseline: " + nats(run.baseline_loss) + " nats.\n\n";
  md += "| step | held-out | training (mean of the " + std::to_string(RunRecord::kGapWindow) +
        " steps up to it) | gap |\n|---|---|---|---|\n";
  for (const EvalMetrics& e : run.evals) {
    const auto losses = run.losses_up_to(e.step);
    const bool trained = e.step > 0 && std::isfinite(losses.training);
    md += "| " + std::to_string(e.step) + " | " + nats(e.val_loss) + " | " +
          (trained ? nats(losses.training) : "\u2014") + " | " + (trained ? nats(losses.gap()) : "\u2014") + " |\n";
  }
  return md + "\n";
}

std::string text_section(const RunRecord& run) {
  if (run.text.prompts.empty() && run.text.samples.empty()) return {};
  // Fenced blocks keep the text as the model wrote it, line breaks and any Markdown signs.
  auto block = [](const std::string& text) { return "```text\n" + text + "\n```\n"; };
  std::string md = "## Text\n\n";
  for (std::size_t i = 0; i < run.text.prompts.size(); ++i) {
    md += "Prompt " + std::to_string(i + 1) + ":\n\n" + block(run.text.prompts[i]) + "\n";
  }
  for (const TextSample& sample : run.text.samples) {
    md += "### Step " + std::to_string(sample.step) + "\n\n";
    const std::string statistics = statistics_line(run, sample.step);
    if (!statistics.empty()) md += statistics + "\n\n";
    for (std::size_t i = 0; i < sample.greedy.size(); ++i) {
      md += "Prompt " + std::to_string(i + 1) + ", greedy:\n\n" + block(sample.greedy[i]) + "\n";
      md += "Prompt " + std::to_string(i + 1) + ", sampled:\n\n" + block(sample.sampled[i]) + "\n";
    }
  }
  return md;
}

}  // namespace

std::string run_markdown(const RunRecord& run) {
  const RunVerdict verdict = judge(run);
  std::string md = "# " + display_name(run.config) + "\n\n**" + info(verdict.verdict).label + "** (`" +
                   info(verdict.verdict).name + "`): " + verdict.sentence + "\n\n";
  if (!run.config.note.empty()) {
    std::string quoted = "> ";
    for (const char c : run.config.note) quoted += c == '\n' ? std::string("\n> ") : std::string(1, c);
    md += quoted + "\n\n";
  }
  return md + settings_section(run) + losses_section(run) + text_section(run);
}

}  // namespace normlab
