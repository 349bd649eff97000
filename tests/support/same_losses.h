#pragma once
// Whether a resumed run has the numbers of the same run uninterrupted: every step's
// training loss and every evaluation's held-out loss equal to the last bit, as far as the
// resumed run went (the whole way, where the caller also checks the counts).
#include <gtest/gtest.h>

#include "core/runs/run_record.h"

namespace normlab::test {

inline void expect_same_losses(const RunRecord& resumed, const RunRecord& whole) {
  ASSERT_LE(resumed.steps.size(), whole.steps.size());
  for (std::size_t i = 0; i < resumed.steps.size(); ++i) {
    ASSERT_EQ(resumed.steps[i].step, whole.steps[i].step);
    EXPECT_EQ(resumed.steps[i].train_loss, whole.steps[i].train_loss) << "step " << whole.steps[i].step;
  }
  ASSERT_LE(resumed.evals.size(), whole.evals.size());
  for (std::size_t i = 0; i < resumed.evals.size(); ++i) {
    ASSERT_EQ(resumed.evals[i].step, whole.evals[i].step);
    EXPECT_EQ(resumed.evals[i].val_loss, whole.evals[i].val_loss) << "evaluation at step " << whole.evals[i].step;
  }
}

}  // namespace normlab::test
