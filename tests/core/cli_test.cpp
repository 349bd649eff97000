// Runs the normlab-cli binary (NORMLAB_CLI, set by CMake) as a user would.
#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "trainer.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

class CliTest : public CacheTest {
 protected:
  // Exit status of `normlab-cli args`, run in the temp folder; output in out_ and err_.
  int run(const std::string& args) {
    const std::string command = "cd '" + temp_.path().string() + "' && '" NORMLAB_CLI "' " + args +
                                " > stdout.txt 2> stderr.txt";
    const int status = std::system(command.c_str());
    out_ = read_file(temp_ / "stdout.txt");
    err_ = read_file(temp_ / "stderr.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string out_, err_;
};

TEST_F(CliTest, TrainWritesRunFiles) {
  const fs::path corpus = corpus_file(synthetic_corpus());
  ASSERT_EQ(run("train --corpus corpus.txt --device cpu --threads 1 --layers 2 --d-model 32 --heads 2 "
                "--context 16 --batch 4 --vocab 256 --steps 12 --warmup 3 --eval-interval 5 "
                "--eval-batches 2 --lr 3e-3 --name 'tiny, run' --out runs"),
            0)
      << out_ << err_;
  EXPECT_EQ(err_, "");
  EXPECT_THAT(out_, HasSubstr("step 12/12"));
  EXPECT_THAT(out_, HasSubstr("baseline"));

  const fs::path json_file = temp_ / "runs" / "tiny__run.json";
  ASSERT_TRUE(fs::exists(json_file)) << out_;
  const auto j = nlohmann::json::parse(read_file(json_file));
  EXPECT_EQ(j["schema"], "normlab.run");
  EXPECT_EQ(j["name"], "tiny, run");
  EXPECT_EQ(j["status"], "done");
  EXPECT_EQ(j["config"]["layers"], 2);
  EXPECT_EQ(j["steps"]["step"].size(), 12u);
  EXPECT_EQ(j["evals"]["step"], nlohmann::json({0, 5, 10, 12}));

  const auto csv = read_lines(temp_ / "runs" / "tiny__run.csv");
  ASSERT_EQ(csv.size(), 13u);
  EXPECT_EQ(csv[0], "run,step,wall_s,lr,train_loss,val_loss");
  EXPECT_EQ(csv[12].rfind("\"tiny, run\",12,", 0), 0u) << csv[12];

  // Only the run files; no temp files left next to them.
  EXPECT_EQ(std::distance(fs::directory_iterator(temp_ / "runs"), fs::directory_iterator()), 2);
  // The tokenizer went to this test's cache.
  EXPECT_FALSE(fs::is_empty(cache_dir() / "tokenizers"));
}

// A sweep trains each point, writes its files, the summary CSV and chart, and a second
// sweep over more values reads back the runs the first one finished.
TEST_F(CliTest, SweepWritesEveryRunAndASummary) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "--corpus corpus.txt --device cpu --threads 1 --d-model 32 --heads 2 --context 16 --batch 4 --vocab 256 "
      "--steps 8 --warmup 2 --eval-interval 4 --eval-batches 2 --out runs ";
  ASSERT_EQ(run("sweep --vary layers --values 1,2 --placements pre,deepnorm " + tiny), 0) << out_ << err_;
  EXPECT_EQ(err_, "");
  EXPECT_THAT(out_, HasSubstr("[4/4]"));
  const auto summary = read_lines(temp_ / "runs" / "layers-sweep.csv");
  ASSERT_EQ(summary.size(), 5u);
  EXPECT_EQ(summary[0], "layers,placement,seed,final_val_loss,best_val_loss,baseline_loss,outcome,run");
  EXPECT_EQ(summary[1].rfind("1,pre,1337,", 0), 0u) << summary[1];
  EXPECT_THAT(summary[2], HasSubstr(",\"deepnorm lr 1e-3 warmup 2 layers 1\""));
  EXPECT_TRUE(fs::exists(temp_ / "runs" / "deepnorm_lr_1e-3_warmup_2_layers_2.json"));
  EXPECT_EQ(read_file(temp_ / "runs" / "layers-sweep.svg").rfind("<svg", 0), 0u);

  ASSERT_EQ(run("sweep --vary layers --values 2,3 --placements pre " + tiny), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("[1/2]  pre-norm lr 1e-3 warmup 2 layers 2: done before with the same settings"));
  EXPECT_THAT(out_, HasSubstr("[2/2]  pre-norm lr 1e-3 warmup 2 layers 3 on CPU"));
}

TEST_F(CliTest, DeviceCuda) {
  corpus_file("", "empty.txt");
  const int status = run("train --device cuda --corpus empty.txt");
  EXPECT_EQ(status, 2);
  // Without a GPU the device is refused first; with one, training reaches the corpus.
  EXPECT_THAT(err_, HasSubstr(describe_device("auto").device == "cuda" ? "empty" : "cuda"));
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
}

}  // namespace
}  // namespace normlab::test
