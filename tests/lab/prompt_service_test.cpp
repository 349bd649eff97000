// Runs continuing prompts off the caller's thread (lab/prompt_service.h): answers, refusals,
// and a run that trains meanwhile keeps its numbers to the last digit.
#include "lab/prompt_service.h"

#include <QDir>
#include <atomic>
#include <gtest/gtest.h>
#include <thread>

#include "core/training/trainer.h"
#include "lab/lab.h"
#include "lab/run_archive.h"
#include "tests/support/same_losses.h"

#include "corpus_fixture.h"

namespace normlab::lab::test {
namespace {

class PromptServiceTest : public CorpusFixture {
 protected:
  void SetUp() override {
    CorpusFixture::SetUp();
    file_ = QDir(folder_.path()).filePath(QStringLiteral("pre.json"));
    run_ = train_keeping_weights(tiny_config(corpus_, 40), file_);
  }

  SampleRequest request(const std::string& prompt) {
    SampleRequest r;
    r.prompt = prompt;
    r.tokens = 12;
    r.temperature = 0;
    r.top = 10;
    return r;
  }

  QString file_;
  RunRecord run_;
  PromptService service_;
  std::vector<std::pair<int, Sample>> answered_;
  std::vector<std::pair<int, QString>> refused_;

 public:
  PromptServiceTest() {
    QObject::connect(&service_, &PromptService::answered,
                     [this](int id, const Sample& sample) { answered_.emplace_back(id, sample); });
    QObject::connect(&service_, &PromptService::refused,
                     [this](int id, const QString& why) { refused_.emplace_back(id, why); });
  }
};

TEST_F(PromptServiceTest, AnswersWithTheTopTokensAndRefusesWhatItCannot) {
  service_.ask(7, run_, file_, request("the cat"));
  service_.ask(8, run_, file_, request(""));
  service_.ask(9, run_, QDir(folder_.path()).filePath(QStringLiteral("none.json")), request("the"));
  ASSERT_TRUE(wait_until([&] { return answered_.size() + refused_.size() == 3; }, kTrainTimeoutMs));
  ASSERT_EQ(answered_.size(), 1u);
  EXPECT_EQ(answered_[0].first, 7);
  EXPECT_EQ(answered_[0].second.top.size(), 10u);
  EXPECT_FALSE(answered_[0].second.continuation.empty());
  ASSERT_EQ(refused_.size(), 2u);
  EXPECT_EQ(refused_[0].first, 8);
  EXPECT_TRUE(refused_[0].second.contains(QStringLiteral("no tokens"))) << refused_[0].second.toStdString();
  EXPECT_EQ(refused_[1].first, 9);
  EXPECT_TRUE(refused_[1].second.contains(QStringLiteral("no weights"))) << refused_[1].second.toStdString();
}

// An imported run brings its weights into the runs folder, so it answers prompts there too.
TEST_F(PromptServiceTest, AnImportedRunBringsItsWeights) {
  Lab lab(QDir(folder_.path()).filePath(QStringLiteral("lab-runs")));
  ASSERT_EQ(lab.import_runs({file_}).added, 1);
  const RunEntry& imported = lab.store().runs().back();
  ASSERT_TRUE(QFile::exists(RunArchive::weights_of(imported.file)));
  service_.ask(3, imported.record, imported.file, request("the cat"));
  ASSERT_TRUE(wait_until([&] { return answered_.size() + refused_.size() == 1; }, kTrainTimeoutMs));
  ASSERT_EQ(answered_.size(), 1u) << refused_.front().second.toStdString();
  lab.shutdown();
}

// Prompts answered over and over while another run trains on its own thread: the training
// run's every loss is the one it has alone.
TEST_F(PromptServiceTest, ARunTrainingMeanwhileKeepsItsNumbers) {
  TrainConfig config = tiny_config(corpus_, 60);
  config.seed = 99;
  const RunRecord alone = train(config);

  std::atomic<bool> done{false};
  RunRecord beside;
  std::thread training([&] {
    beside = train(config);
    done = true;
  });
  int asked = 0;
  while (!done) {
    if (int(answered_.size()) == asked) {
      service_.ask(1, run_, file_, request(asked % 2 ? "and the" : "a dog ran"));
      ++asked;
    }
    wait_until([&] { return int(answered_.size()) == asked || done; }, kTrainTimeoutMs);
  }
  training.join();
  EXPECT_GT(answered_.size(), 0u);
  normlab::test::expect_same_losses(beside, alone);
}

}  // namespace
}  // namespace normlab::lab::test
