// Each input the fuzzer (or its review) found in the run-file reader, kept in
// tests/fuzz/regressions/: it must be refused with a UserError that says why.
#include "core/runs/run_record.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

const fs::path kRegressions = fs::path(NORMLAB_SOURCE_DIR) / "tests" / "fuzz" / "regressions";

std::string read_error_of(const std::string& file) {
  const std::string text = read_file(kRegressions / file);
  EXPECT_FALSE(text.empty()) << file;
  return user_error([&] { from_json_text(text); });
}

// 1e999 made nlohmann throw out_of_range, which is not a parse_error: it escaped the reader.
TEST(FuzzFindings, NumberTooLargeForDouble) {
  EXPECT_THAT(read_error_of("number-overflow.json"), HasSubstr("not valid JSON"));
}

// A null or 1e10 step number was converted to int: undefined behaviour.
TEST(FuzzFindings, StepNumberNotAWholeInt) {
  EXPECT_THAT(read_error_of("step-not-a-whole-number.json"), HasSubstr("'steps.step' must hold whole step numbers"));
}

// 4294967298 layers wrapped to 2, a valid-looking run with the wrong model.
TEST(FuzzFindings, IntegerOutOfRangeIsRefused) {
  EXPECT_THAT(read_error_of("layers-wraps-around.json"), HasSubstr("'config.layers' must be an integer from"));
}

// Every kept input is one of the cases above, so none is replayed without an assertion.
TEST(FuzzFindings, EveryRegressionInputIsChecked) {
  EXPECT_EQ(std::distance(fs::directory_iterator(kRegressions), fs::directory_iterator()), 3);
}

}  // namespace
}  // namespace normlab::test
