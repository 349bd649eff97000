// Replays fuzz inputs through the fuzz target without libFuzzer, so the normal (gcc) test
// suite runs them: every file in the folders given, each also cut short and with bytes
// flipped (fixed positions), which is how most reader bugs show. Fails on no input.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void run(const std::string& bytes) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

// The input itself, 32 prefixes and 32 single-byte changes spread over it.
int replay(const std::string& bytes) {
  run(bytes);
  constexpr std::size_t kVariants = 32;
  for (std::size_t k = 0; k < kVariants && !bytes.empty(); ++k) {
    const std::size_t at = bytes.size() * k / kVariants;
    run(bytes.substr(0, at));
    std::string changed = bytes;
    changed[at] = static_cast<char>(changed[at] ^ (1 << (k % 8)));
    run(changed);
  }
  return 1 + 2 * int(kVariants);
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  int files = 0, runs = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& entry : fs::directory_iterator(argv[i])) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      runs += replay({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
      ++files;
    }
  }
  std::printf("replayed %d inputs (%d runs of the fuzz target)\n", files, runs);
  return files > 0 ? 0 : 1;
}
