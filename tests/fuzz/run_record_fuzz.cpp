// Fuzz target for the run-file reader. Any bytes must either read as a run or raise
// UserError (what the app and the CLI report); anything else is a finding. A run that
// was read must write back to JSON that reads again to the same text.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/runs/run_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::string written = normlab::to_json_text(normlab::from_json_text(text));
    if (normlab::to_json_text(normlab::from_json_text(written)) != written) std::abort();
  } catch (const normlab::UserError&) {
  }
  return 0;
}
