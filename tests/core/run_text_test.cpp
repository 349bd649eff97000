// Run names, durations and the speed readout: one form for the command line and the window.
#include "run_text.h"

#include <cmath>
#include <set>

#include "test_support.h"

namespace normlab::test {
namespace {

TEST(RunText, FileStemKeepsSafeAsciiOnly) {
  EXPECT_EQ(file_stem("post-norm lr 6e-3 warmup 30"), "post-norm_lr_6e-3_warmup_30");
  EXPECT_EQ(file_stem("tiny, run"), "tiny__run");
  EXPECT_EQ(file_stem("caf\u00e9/x"), "caf___x");  // two UTF-8 bytes, then the slash
  EXPECT_EQ(file_stem(""), "run");
}

TEST(RunText, DurationText) {
  EXPECT_EQ(duration_text(45.4), "45 s");
  EXPECT_EQ(duration_text(185), "3 min 05 s");
  EXPECT_EQ(duration_text(3720), "1 h 02 min");
  EXPECT_EQ(duration_text(-1), "?");
  EXPECT_EQ(duration_text(std::nan("")), "?");
}

TEST(RunText, FirstFreeName) {
  const std::set<std::string> taken = {"a", "a (2)"};
  auto named = [](int n) { return n == 1 ? std::string("a") : "a (" + std::to_string(n) + ")"; };
  EXPECT_EQ(first_free_name(named, [&](const std::string& s) { return taken.count(s) > 0; }), "a (3)");
  EXPECT_EQ(first_free_name(named, [](const std::string&) { return false; }), "a");
}

TEST(RunText, TokenRateStartsAtTheFirstSampleThenSmooths) {
  TokenRate rate;
  EXPECT_EQ(rate.add(1000), 1000);
  const double next = rate.add(2000);
  EXPECT_GT(next, 1000);
  EXPECT_LT(next, 1100);  // one fast step moves the readout a little
  for (int i = 0; i < 200; ++i) rate.add(2000);
  EXPECT_NEAR(rate.value(), 2000, 1);
}

}  // namespace
}  // namespace normlab::test
