// "What it writes" over a store holding two trained runs: their text side by side at an
// evaluation, shaded by the probability each gave the held-out text, and a typed prompt
// answered by both with their likeliest next tokens.
#include "ui/text_view.h"

#include <QApplication>
#include <QDir>
#include <QLineEdit>
#include <QPushButton>
#include <QTabBar>
#include <QTabWidget>
#include <QTest>
#include <gtest/gtest.h>

#include "lab/run_store.h"
#include "tests/lab/corpus_fixture.h"
#include "ui/context_use_chart.h"

#include "test_support.h"

namespace normlab::ui {
namespace {

class TextViewTest : public lab::test::CorpusFixture {
 protected:
  void SetUp() override {
    CorpusFixture::SetUp();
    for (const NormPlacement norm : {NormPlacement::Pre, NormPlacement::Post}) {
      TrainConfig config = lab::test::tiny_config(corpus_, 40);
      config.model.norm = norm;
      config.eval_interval = 20;
      const QString file = QDir(folder_.path()).filePath(QString::fromStdString(to_string(norm)) + ".json");
      ids_.push_back(store_.add(lab::test::train_keeping_weights(config, file), file));
    }
    view_ = std::make_unique<TextView>(store_);
    view_->resize(1000, 640);
    view_->show_runs(ids_[0], ids_[1]);
    view_->show();
    QApplication::processEvents();
  }

  lab::RunStore store_;
  std::vector<int> ids_;
  std::unique_ptr<TextView> view_;
};

TEST_F(TextViewTest, ShowsBothRunsTextAtTheChosenEvaluation) {
  const RunRecord& pre = store_.find(ids_[0])->record;
  ASSERT_EQ(pre.text.samples.size(), 3u);  // steps 0, 20 and 40
  view_->show_step(20);
  for (int panel = 0; panel < 2; ++panel) {
    const RunRecord& run = store_.find(ids_[panel])->record;
    const QString text = view_->text_of(panel);
    EXPECT_TRUE(text.contains(QStringLiteral("Step 20"))) << text.toStdString();
    EXPECT_TRUE(text.contains(QString::fromStdString(run.text.samples.at(1).greedy.at(0)).trimmed()));
    ASSERT_FALSE(run.text.references.empty());
    EXPECT_TRUE(text.contains(QString::fromStdString(run.text.references.at(0).at(1)).trimmed()));
  }
  view_->show_step(39);  // between evaluations: the one before
  EXPECT_TRUE(view_->text_of(0).contains(QStringLiteral("Step 20")));
}

// Both runs' context use drawn against the step, every evaluation; a click on it shows the
// text of the evaluation under the pointer.
TEST_F(TextViewTest, DrawsBothRunsContextUseAndAClickPicksItsStep) {
  ContextUseChart& chart = view_->context_use_chart();
  const auto curves = chart.curves();
  ASSERT_EQ(curves.size(), 2u);
  for (int panel = 0; panel < 2; ++panel) {
    const Series* series = store_.find(ids_[panel])->record.find_series("context_use");
    ASSERT_NE(series, nullptr);
    ASSERT_EQ(curves[panel].size(), qsizetype(series->steps.size()));
    EXPECT_EQ(curves[panel].back(), QPointF(series->steps.back(), series->values.back()));
  }
  ASSERT_TRUE(lab::test::wait_until([&] { return view_->text_of(0).contains(QStringLiteral("Step 40")); }, 30'000));
  const QRectF plot = chart.chart()->plotArea();  // steps 0 to 40
  const QPointF middle(plot.left() + plot.width() / 2 + 1, plot.center().y());
  QTest::mouseClick(chart.viewport(), Qt::LeftButton, {}, chart.mapFromScene(chart.chart()->mapToScene(middle)));
  EXPECT_TRUE(view_->text_of(0).contains(QStringLiteral("Step 20"))) << view_->text_of(0).toStdString();
}

TEST_F(TextViewTest, ATypedPromptIsAnsweredByBothRunsWithTheirLikeliestTokens) {
  // The prompt has a page of its own beside the held-out text: the user turns to it.
  auto* pages = view_->findChild<QTabWidget*>(QStringLiteral("textPages"));
  ASSERT_NE(pages, nullptr);
  EXPECT_FALSE(view_->showing_own_prompt()) << "the held-out text comes first";
  QTest::mouseClick(pages->tabBar(), Qt::LeftButton, {}, pages->tabBar()->tabRect(1).center());
  ASSERT_TRUE(view_->showing_own_prompt());
  auto* prompt = view_->findChild<QLineEdit*>();
  ASSERT_NE(prompt, nullptr);
  QTest::keyClicks(prompt, QStringLiteral("the little dog"));
  QTest::keyClick(prompt, Qt::Key_Return);
  ASSERT_TRUE(lab::test::wait_until(
      [&] { return view_->bar_tokens(0).size() == 10 && view_->bar_tokens(1).size() == 10; }, kTrainTimeoutMs));
  for (int panel = 0; panel < 2; ++panel) {
    EXPECT_TRUE(view_->answer_of(panel).contains(QStringLiteral("the little dog")));
  }
  EXPECT_NE(view_->bar_tokens(0), view_->bar_tokens(1));  // two models, two guesses
  // Asked from elsewhere (a test, a link), the answer's page is shown with it.
  pages->setCurrentIndex(0);
  view_->ask(QStringLiteral("and the"));
  EXPECT_TRUE(view_->showing_own_prompt());
}

}  // namespace
}  // namespace normlab::ui
