// Fuzz target for the weights reader (load_weights, core/training/weights_io.h). Any bytes
// must load into the model or raise UserError (what the window and the command line
// report); anything else is a finding, and a refused load leaves the model untouched.
// The payload's checksum refuses nearly every changed byte of a whole file before
// LibTorch reads it, so the first byte chooses what the rest is:
//   even: a whole weights file, header and payload;
//   odd:  a payload only, framed here with the header of a good file and its own size and
//         checksum, so that LibTorch's archive reader meets the damage (a file made to
//         look whole, as a file written by someone else could be).
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <torch/torch.h>

#include "core/data/corpus.h"
#include "core/runs/config.h"
#include "core/training/weights_io.h"

namespace {

using namespace normlab;

// The smallest model the reader can meet: its payload is a few kB, within libFuzzer's reach.
TrainConfig fuzz_config() {
  TrainConfig c;
  c.name = "fuzz";
  c.model.layers = 1;
  c.model.d_model = 8;
  c.model.heads = 1;
  c.model.context = 8;
  c.model.vocab = 16;
  c.device = "cpu";
  return c;
}

struct Target {
  TrainConfig config = fuzz_config();
  Gpt model{config.model};
  torch::Tensor original = flat(model);
  std::string good = weights_bytes(model, config, "tokenizer-hash", 1);
  nlohmann::json header = nlohmann::json::parse(good.substr(0, good.find('\n')));

  static torch::Tensor flat(Gpt& m) {
    std::vector<torch::Tensor> all;
    for (const auto& p : m->parameters()) all.push_back(p.detach().flatten().clone());
    return torch::cat(all);
  }

  std::string framed(std::string_view payload) const {
    nlohmann::json h = header;
    h["payload_bytes"] = payload.size();
    h["payload_hash"] = content_hash(payload);
    return h.dump() + '\n' + std::string(payload);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Target target;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string bytes = data[0] % 2 == 0 ? std::string(rest) : target.framed(rest);
  Gpt model(target.config.model);
  const torch::Tensor before = Target::flat(model);
  try {
    load_weights(bytes, "fuzz.weights", target.config, "tokenizer-hash", model);
  } catch (const UserError&) {
    if (!torch::equal(Target::flat(model), before)) std::abort();  // a refusal changed the model
  }
  return 0;
}
