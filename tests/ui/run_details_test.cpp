// The run table's details pane: what a run is, in words.
#include "ui/run_details.h"

#include <QTextDocumentFragment>
#include <gtest/gtest.h>

#include "lab/qstring.h"
#include "lab/run_store.h"
#include "ui/format.h"

#include "test_support.h"

namespace normlab::ui {
namespace {

QString details_text(const RunRecord& record) {
  lab::RunEntry run;
  run.record = record;
  run.verdict = judge(record);  // as the store judges every run it holds
  return QTextDocumentFragment::fromHtml(run_details_html(run)).toPlainText();
}

// Seen in the details: "Block rezero-norm". Each block by its placement's own name, its
// norm type when that is not LayerNorm, and no norm type for ReZero, which has no norm.
TEST(RunDetails, NameTheBlockAsThePlacementsDo) {
  RunRecord run = test::synthetic_run(NormPlacement::ReZero, 1e-3, 30, 100);
  run.config.model.norm_type = NormType::RmsNorm;
  EXPECT_TRUE(details_text(run).contains(QStringLiteral("Block\nReZero, x \u2190 x + \u03b1\u00b7f(x)")))
      << details_text(run).toStdString();
  run.config.model.norm = NormPlacement::DeepNorm;
  EXPECT_TRUE(details_text(run).contains(QStringLiteral("Block\nDeepNorm with RMSNorm, ")))
      << details_text(run).toStdString();
  run.config.model.norm = NormPlacement::Pre;
  run.config.model.norm_type = NormType::LayerNorm;
  EXPECT_TRUE(details_text(run).contains(QStringLiteral("Block\nPre-norm, "))) << details_text(run).toStdString();
}

// Issue 31: a run that ends lower in training loss can end higher in held-out loss, so the
// details say both where the held-out loss was last measured, and the gap between them.
TEST(RunDetails, GiveTheTrainingLossAndTheGapAtTheLastEvaluation) {
  RunRecord run = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 300, 100);
  run.steps.resize(250);  // trained on after its evaluation at step 200
  run.evals.resize(3);
  ASSERT_EQ(run.evals.back().step, 200);
  const QString text = details_text(run);
  const QString expected =
      QStringLiteral("Training\n%1 over steps 151–200, held-out %2 over the same steps; the gap %3")
          .arg(loss_text(run.final_train_loss()), loss_text(run.final_losses().heldout),
               loss_text(run.generalisation_gap()));
  EXPECT_TRUE(text.contains(expected)) << text.toStdString();

  run.evals.resize(1);  // only the evaluation before training: no training loss to give
  EXPECT_FALSE(details_text(run).contains(QStringLiteral("Training\n"))) << details_text(run).toStdString();
}

// A run says which build and CPU made it where its file keeps them, and a file from before
// they were kept shows no such row rather than an empty one.
TEST(RunDetails, SayWhichBuildAndCpuMadeTheRun) {
  RunRecord run = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 100);
  run.environment.device_name = "CPU, 1 thread";
  run.environment.engine = "10154e7";
  run.environment.cpu = "AMD EPYC";
  EXPECT_TRUE(details_text(run).contains(QStringLiteral("Built from\ncommit 10154e7, on AMD EPYC")))
      << details_text(run).toStdString();
  run.environment.engine.clear();
  run.environment.cpu.clear();
  EXPECT_FALSE(details_text(run).contains(QStringLiteral("Built from"))) << details_text(run).toStdString();
}

// Issue 48: under the run's name, what it is doing in one sentence, and where its evidence is.
TEST(RunDetails, SayWhatTheRunIsDoingInASentence) {
  RunRecord run = test::synthetic_run(NormPlacement::Post, 6e-3, 30, 600, 50);
  const RunVerdict verdict = judge(run);
  ASSERT_EQ(verdict.verdict, Verdict::OnBaseline);
  const QString text = details_text(run);
  EXPECT_TRUE(text.contains(QStringLiteral("\u25cf ") + lab::qstr(verdict.sentence))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("See the loss curves."))) << "no statistics recorded: one link";
  lab::RunEntry entry;
  entry.record = run;
  entry.verdict = verdict;
  EXPECT_TRUE(run_details_html(entry).contains(QStringLiteral("href='curves'")));
}

// Issue 48: two runs selected, a sentence says what differs in their settings and verdicts.
TEST(RunDetails, TwoRunsAreComparedInASentence) {
  lab::RunEntry pre, post;
  pre.record = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50);
  post.record = test::synthetic_run(NormPlacement::Post, 6e-3, 30, 600, 50);
  pre.verdict = judge(pre.record);
  post.verdict = judge(post.record);
  const QString text = QTextDocumentFragment::fromHtml(runs_difference_html({&pre, &post})).toPlainText();
  EXPECT_TRUE(text.startsWith(lab::qstr(compare_sentence(pre.record, post.record)))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("Only the norm placement differs. Pre-norm is below the baseline")))
      << text.toStdString();
  const QString verdicts = text.mid(text.indexOf(QStringLiteral("Verdict")));
  EXPECT_TRUE(verdicts.contains(QStringLiteral("learning")) && verdicts.contains(QStringLiteral("on the baseline")))
      << text.toStdString();
}

// Issue 49, item 8: "Add a note…" was found only by scrolling a 250-px details panel. It
// and Rename are on the first line, beside the run's name.
TEST(RunDetails, RenameAndTheNoteAreOnTheFirstLine) {
  const RunRecord run = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 300, 100);
  const QString first_line = details_text(run).section(QLatin1Char('\n'), 0, 0);
  EXPECT_TRUE(first_line.contains(QStringLiteral("Rename\u2026"))) << first_line.toStdString();
  EXPECT_TRUE(first_line.contains(QStringLiteral("Add a note\u2026"))) << first_line.toStdString();
}

}  // namespace
}  // namespace normlab::ui
