#include "core/data/dataset.h"

#include <cmath>
#include <numeric>
#include <set>

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

// Ids 0..n-1 with a vocabulary as large: every token says where it came from.
std::vector<int> positions(int n) {
  std::vector<int> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

std::vector<std::int64_t> values(const torch::Tensor& t) {
  auto flat = t.contiguous().view({-1});
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

constexpr int kTokens = 20'000;
constexpr int kContext = 16;
constexpr int kChunk = 200;

class DatasetTest : public ::testing::Test {
 protected:
  Dataset data_{positions(kTokens), kTokens, kContext, kChunk};
};

TEST_F(DatasetTest, HoldsOutAboutTenPercentDisjoint) {
  const double share = double(data_.heldout_tokens()) / kTokens;
  EXPECT_GT(share, 0.05);
  EXPECT_LT(share, 0.15);

  const auto train = values(data_.train_ids());
  const auto heldout = values(data_.heldout_ids());
  std::set<std::int64_t> all(train.begin(), train.end());
  for (auto id : heldout) EXPECT_TRUE(all.insert(id).second) << "token " << id << " in both sets";
  EXPECT_EQ(all.size(), std::size_t(kTokens));
}

TEST_F(DatasetTest, HeldOutComesFromThroughoutTheCorpus) {
  const auto heldout = values(data_.heldout_ids());
  const auto in_range = [&](std::int64_t lo, std::int64_t hi) {
    return std::count_if(heldout.begin(), heldout.end(), [&](auto id) { return id >= lo && id < hi; });
  };
  const int third = kTokens / 3;
  EXPECT_GT(in_range(0, third), 0);
  EXPECT_GT(in_range(third, 2 * third), 0);
  EXPECT_GT(in_range(2 * third, kTokens), 0);
  // Whole chunks, not scattered tokens: ids run consecutively inside each chunk.
  for (std::size_t i = 0; i + 1 < heldout.size(); ++i) {
    if ((i + 1) % kChunk != 0) {
      ASSERT_EQ(heldout[i + 1], heldout[i] + 1) << i;
    }
  }
}

TEST_F(DatasetTest, TrainBatchShapesAndShiftedTargets) {
  std::mt19937_64 rng(5);
  const Batch batch = data_.train_windows(data_.sample_starts(6, 1, rng)[0]);
  EXPECT_EQ(batch.inputs.sizes(), (std::vector<std::int64_t>{6, kContext}));
  EXPECT_EQ(batch.targets.sizes(), batch.inputs.sizes());
  EXPECT_EQ(batch.inputs.scalar_type(), torch::kInt64);
  EXPECT_EQ(batch.targets.scalar_type(), torch::kInt64);

  // Each row is a window of the training stream; targets are the same window one later.
  const auto train = values(data_.train_ids());
  const auto heldout = values(data_.heldout_ids());
  const std::set<std::int64_t> heldout_set(heldout.begin(), heldout.end());
  for (int row = 0; row < 6; ++row) {
    const auto inputs = values(batch.inputs[row]);
    const auto targets = values(batch.targets[row]);
    const auto start = std::find(train.begin(), train.end(), inputs[0]) - train.begin();
    ASSERT_LE(start + kContext + 1, std::int64_t(train.size()));
    for (int t = 0; t < kContext; ++t) {
      EXPECT_EQ(inputs[t], train[start + t]);
      EXPECT_EQ(targets[t], train[start + t + 1]);
      EXPECT_EQ(heldout_set.count(targets[t]), 0u);
    }
  }
}

TEST_F(DatasetTest, SameSeedSameBatches) {
  std::mt19937_64 a(42), b(42), c(43);
  for (int i = 0; i < 3; ++i) {
    const auto x = data_.sample_starts(4, 1, a), y = data_.sample_starts(4, 1, b), z = data_.sample_starts(4, 1, c);
    EXPECT_TRUE(torch::equal(x, y));
    EXPECT_FALSE(torch::equal(x, z));
  }
}

// The trainer draws a run's batches in chunks of steps; the chunk size must not change them.
TEST_F(DatasetTest, BatchesDrawnTogetherEqualBatchesDrawnOneByOne) {
  std::mt19937_64 together(7), one_by_one(7);
  const auto all = data_.sample_starts(3, 5, together);
  ASSERT_EQ(all.sizes(), (std::vector<std::int64_t>{5, 3}));
  for (int step = 0; step < 5; ++step) {
    EXPECT_TRUE(torch::equal(all[step], data_.sample_starts(3, 1, one_by_one)[0])) << step;
  }
}

TEST_F(DatasetTest, BatchesAreCutWhereTheIdsAre) {
  Dataset moved = data_;
  moved.to(torch::kCPU);  // the only device here; on a GPU the trainer moves them there
  std::mt19937_64 rng(3);
  const auto starts = moved.sample_starts(2, 1, rng)[0];
  EXPECT_EQ(moved.train_windows(starts).inputs.device(), moved.train_ids().device());
  EXPECT_TRUE(torch::equal(moved.train_windows(starts).inputs, data_.train_windows(starts).inputs));
}

TEST_F(DatasetTest, HeldOutBatchesAreFixedAndFromHeldOut) {
  const auto first = data_.heldout_batches(4, 5);
  const auto second = data_.heldout_batches(4, 5);
  ASSERT_EQ(first.size(), 5u);
  ASSERT_EQ(second.size(), 5u);
  const auto heldout = values(data_.heldout_ids());
  const std::set<std::int64_t> heldout_set(heldout.begin(), heldout.end());
  for (std::size_t b = 0; b < first.size(); ++b) {
    EXPECT_EQ(first[b].inputs.sizes(), (std::vector<std::int64_t>{4, kContext}));
    EXPECT_TRUE(torch::equal(first[b].inputs, second[b].inputs));
    EXPECT_TRUE(torch::equal(first[b].targets, second[b].targets));
    for (auto id : values(first[b].targets)) EXPECT_EQ(heldout_set.count(id), 1u);
  }
  // Spread over the whole held-out set: the first window starts at its start, the last
  // ends at its end.
  EXPECT_EQ(first.front().inputs[0][0].item<std::int64_t>(), heldout.front());
  EXPECT_EQ(first.back().targets[3][kContext - 1].item<std::int64_t>(), heldout.back());
}

TEST(DatasetBaseline, MatchesHandComputation) {
  // 40 ids in chunks of 4: the 10th chunk (ids[36..39]) is held out.
  std::vector<int> ids;
  for (int i = 0; i < 36; ++i) ids.push_back(i % 3 == 0 ? 0 : (i % 3 == 1 ? 1 : (i % 2 ? 2 : 0)));
  const std::vector<int> held = {0, 1, 4, 4};  // token 4 never occurs in training
  ids.insert(ids.end(), held.begin(), held.end());
  const int vocab = 6;
  const Dataset data(ids, vocab, /*context=*/2, /*chunk_tokens=*/4);
  ASSERT_EQ(values(data.heldout_ids()), std::vector<std::int64_t>(held.begin(), held.end()));

  std::vector<double> counts(vocab, 1.0);  // add-one smoothing
  for (int i = 0; i < 36; ++i) counts[ids[i]] += 1;
  const double total = 36 + vocab;
  auto nats = [&](int id) { return -std::log(counts[id] / total); };
  // Context 2: the two held-out windows start at 0 and 1, their targets {1, 4} and {4, 4};
  // the held-out token 0 is never a target, so it does not count.
  const double expected = (nats(1) + 3 * nats(4)) / 4;
  EXPECT_NEAR(data.unigram_loss(data.heldout_batches(/*batch_size=*/2, /*count=*/1)), expected, 1e-12);
  EXPECT_NEAR(data.unigram_loss(data.heldout_batches(1, 2)), expected, 1e-12) << "however the windows are batched";
}

TEST(DatasetErrors, TooShortIsUserError) {
  EXPECT_THAT(user_error([] { Dataset(positions(500), 500, 16); }), HasSubstr("too short"));
  // Long enough in total, but the held-out chunk cannot fill one context.
  EXPECT_THAT(user_error([] { Dataset(positions(9 * 100 + 10), 1000, 16, 100); }), HasSubstr("too short"));
}

}  // namespace
}  // namespace normlab::test
