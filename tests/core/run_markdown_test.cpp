// A run as one Markdown document (core/training/run_markdown.h).
#include "core/training/run_markdown.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/runs/config_fields.h"
#include "core/runs/run_title.h"
#include "core/runs/verdict.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

RunRecord learning_run() {
  RunRecord run;
  run.config.name = "r";
  run.status = RunStatus::Done;
  run.baseline_loss = 6.13;
  run.evals = {{0, 0, 9.1}, {50, 5, 6.5}, {100, 10, 5.2}};
  for (int step = 1; step <= 100; ++step) {
    StepMetrics s;
    s.step = step;
    s.train_loss = 9.0 - 0.04 * step;
    run.steps.push_back(s);
  }
  return run;
}

// Issue 48: the document opens with what the run is doing, in words.
TEST(RunMarkdown, OpensWithTheRunsVerdict) {
  const RunRecord run = learning_run();
  const RunVerdict verdict = judge(run);
  ASSERT_EQ(verdict.verdict, Verdict::Learning);
  const std::string markdown = run_markdown(run);
  EXPECT_EQ(markdown.substr(0, markdown.find("## Settings")),
            "# " + display_name(run.config) + "\n\n**learning** (`learning`): " + verdict.sentence + "\n\n");
}

// Issue 49, item 8: it held the text only. Now the note, every setting as the settings panel
// says it, and the losses at each evaluation, training and gap over the same steps.
TEST(RunMarkdown, HoldsTheNoteSettingsAndLossesBesideTheText) {
  RunRecord run = learning_run();
  run.config.note = "second try\nwith | a pipe";
  run.config.peak_lr = 6e-3;
  run.text.prompts = {"In the beginning"};
  run.text.samples = {{100, {"the LORD"}, {"and the"}, {}}};
  const std::string md = run_markdown(run);
  EXPECT_THAT(md, HasSubstr("> second try\n> with | a pipe\n\n"));
  for (const ConfigField& field : config_fields()) {
    EXPECT_THAT(md, HasSubstr("| " + field.label + " | ")) << field.key;
  }
  EXPECT_THAT(md, HasSubstr(" | 6e-3 |")) << "the rate as the rest of NormLab writes it";
  EXPECT_THAT(md, HasSubstr("Unigram baseline: 6.130 nats."));
  const auto losses = run.losses_up_to(100);
  char row[128];
  std::snprintf(row, sizeof row, "| 100 | 5.200 | %.3f | %.3f |", losses.training, losses.gap());
  EXPECT_THAT(md, HasSubstr(row));
  EXPECT_THAT(md, HasSubstr("| 0 | 9.100 | \u2014 | \u2014 |")) << "no training before step 0";
  // The text after the numbers, as before.
  EXPECT_LT(md.find("## Losses"), md.find("## Text"));
  EXPECT_THAT(md, HasSubstr("### Step 100\n\n"));
  EXPECT_THAT(md, HasSubstr("```text\nthe LORD\n```"));
}

TEST(RunMarkdown, ARunWithoutEvaluationsOrTextHasNeitherSection) {
  RunRecord run;
  run.config.name = "queued";
  run.status = RunStatus::Queued;
  const std::string md = run_markdown(run);
  EXPECT_THAT(md, HasSubstr("## Settings"));
  EXPECT_EQ(md.find("## Losses"), std::string::npos);
  EXPECT_EQ(md.find("## Text"), std::string::npos);
}

}  // namespace
}  // namespace normlab::test
