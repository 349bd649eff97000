// The run table's details pane: what a run is, in words.
#include "ui/run_details.h"

#include <QTextDocumentFragment>
#include <gtest/gtest.h>

#include "lab/run_store.h"

#include "test_support.h"

namespace normlab::ui {
namespace {

QString details_text(const RunRecord& record) {
  lab::RunEntry run;
  run.record = record;
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

}  // namespace
}  // namespace normlab::ui
