#pragma once
// What the lab's and the window's tests that train share: a temporary folder holding the
// made-up corpus, and how long they wait for training before they fail.
#include <QString>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include "test_support.h"

namespace normlab::lab::test {

class CorpusFixture : public ::testing::Test {
 protected:
  static constexpr int kTrainTimeoutMs = 180'000;  // tokenizer training included, on a busy machine

  void SetUp() override {
    ASSERT_TRUE(folder_.isValid());
    corpus_ = write_synthetic_corpus(folder_.path());
  }

  QTemporaryDir folder_;
  QString corpus_;
};

}  // namespace normlab::lab::test
