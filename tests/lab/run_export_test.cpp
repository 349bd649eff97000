// The window's three exports, written by the lab without a widget: JSON files with names
// of their own, one CSV table, the text as Markdown, and each one's failure as one line.
#include "lab/run_export.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include "core/runs/run_record.h"
#include "lab/run_store.h"

#include "test_support.h"

namespace normlab::lab {
namespace {

class RunExportTest : public ::testing::Test {
 protected:
  QTemporaryDir folder_;
  RunStore store_;
  QString path(const char* name) const { return QDir(folder_.path()).filePath(QString::fromUtf8(name)); }
};

TEST(RunExportNames, RepeatedNamesGetAStemOfTheirOwn) {
  EXPECT_EQ(unique_stems({"pre-norm lr 1e-3", "post", "pre-norm lr 1e-3", "pre-norm lr 1e-3"}),
            (std::vector<std::string>{"pre-norm_lr_1e-3", "post", "pre-norm_lr_1e-3-2", "pre-norm_lr_1e-3-3"}));
  EXPECT_TRUE(unique_stems({}).empty());
}

TEST_F(RunExportTest, OneRunToAFileSeveralIntoAFolderNoneOverwritten) {
  const RunRecord pre = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 200, 50);
  const int first = store_.add(pre, {}), second = store_.add(pre, {});
  const int post = store_.add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 200, 50), {});

  const Exported one = export_runs(store_, {post}, RunExport::Json, path("one.json"));
  EXPECT_EQ(one.error, QString());
  EXPECT_EQ(one.runs, 1);
  EXPECT_EQ(read_json(path("one.json").toStdString()).config.model.norm, NormPlacement::Post);

  const Exported three = export_runs(store_, {first, second, post}, RunExport::Json, folder_.path());
  EXPECT_EQ(three.runs, 3);
  EXPECT_EQ(three.done, QStringLiteral("Exported 3 run(s) to %1").arg(folder_.path()));
  EXPECT_EQ(read_json(path("pre-norm_lr_6e-3_warmup_30.json").toStdString()).steps.size(), 200u);
  EXPECT_EQ(read_json(path("pre-norm_lr_6e-3_warmup_30-2.json").toStdString()).steps.size(), 200u)
      << "two runs of one name both exported";
  EXPECT_TRUE(QFile::exists(path("post-norm_lr_6e-3_warmup_30.json")));
}

TEST_F(RunExportTest, EveryRunInOneCsvTable) {
  const int pre = store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 200, 50), {});
  const int post = store_.add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 200, 50), {});
  const Exported exported = export_runs(store_, {pre, post, 9999}, RunExport::Csv, path("runs.csv"));
  EXPECT_EQ(exported.runs, 2) << "a run no longer in the store is left out";
  QFile file(path("runs.csv"));
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_EQ(file.readAll().count('\n'), 1 + 2 * 201);  // a header, then steps 0 (evaluated) to 200 of each
}

TEST_F(RunExportTest, RunsAsMarkdownAndTheFailureInOneLine) {
  RunRecord run = test::synthetic_run(NormPlacement::Post, 6e-3, 30, 200, 100);
  run.text.prompts = {"In the beginning"};
  run.text.samples = {{100, {",,,,"}, {"the and of"}, {}}, {200, {", , ,"}, {"of the LORD"}, {}}};
  const int id = store_.add(run, {});
  const Exported exported = export_runs(store_, {id}, RunExport::Markdown, path("text.md"));
  EXPECT_EQ(exported.done, QStringLiteral("Exported 1 run(s) as Markdown to %1").arg(path("text.md")));
  QFile file(path("text.md"));
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_EQ(QString::fromUtf8(file.readAll()).count(QStringLiteral("\n### Step ")), 2);

  const Exported refused = export_runs(store_, {id}, RunExport::Markdown, folder_.path());
  EXPECT_EQ(refused.runs, 0);
  EXPECT_FALSE(refused.error.isEmpty()) << "a folder is not a file to write";
  EXPECT_FALSE(refused.error.contains(QLatin1Char('\n'))) << refused.error.toStdString();
}

TEST_F(RunExportTest, EachFormatSaysWhyItCouldNotWrite) {
  const int id = store_.add(test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 100, 50), {});
  QFile blocker(path("a-file"));  // a folder cannot be made where a file is
  ASSERT_TRUE(blocker.open(QIODevice::WriteOnly));
  blocker.close();
  const QString nowhere = path("a-file/x");
  for (const RunExport format : {RunExport::Json, RunExport::Csv, RunExport::Markdown}) {
    const Exported exported = export_runs(store_, {id}, format, nowhere);
    EXPECT_EQ(exported.runs, 0);
    EXPECT_TRUE(exported.error.contains(QStringLiteral("a-file"))) << exported.error.toStdString();
  }
  EXPECT_FALSE(export_runs(store_, {4242}, RunExport::Csv, path("x.csv")).error.isEmpty()) << "no run to export";
}

}  // namespace
}  // namespace normlab::lab
