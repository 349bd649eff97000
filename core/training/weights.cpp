#include "weights.h"

#include <map>
#include <torch/torch.h>

#include "core/data/corpus.h"
#include "core/runs/config_fields.h"
#include "core/system/atomic_file.h"

#include "headed_file.h"
#include "weights_io.h"

namespace normlab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr FileKind kWeights{"normlab.weights", "weights file", kWeightsVersion};

WeightsHeader header_from(const json& j, const fs::path& path) {
  WeightsHeader h;
  try {
    h.config = config_from_text(j.at("config"), j.at("name").get<std::string>(), path);
    h.tokenizer_hash = j.at("tokenizer").get<std::string>();
    h.shape_hash = j.at("shape").get<std::string>();
    h.step = j.at("step").get<int>();
  } catch (const json::exception& error) {
    throw file_fault(path, std::string("damaged header (") + error.what() + ")");
  }
  return h;
}

// The model's tensors by name: parameters, then buffers.
std::map<std::string, torch::Tensor> named_tensors(Gpt& model) {
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& item : model->named_parameters()) tensors.emplace(item.key(), item.value());
  for (const auto& item : model->named_buffers()) tensors.emplace(item.key(), item.value());
  return tensors;
}

std::string shape_hash(Gpt& model) {
  std::string shape;
  for (const auto& [name, tensor] : named_tensors(model)) {
    shape += name + ":" + c10::toString(tensor.scalar_type());
    for (const auto size : tensor.sizes()) shape += " " + std::to_string(size);
    shape += "\n";
  }
  return content_hash(shape);
}

}  // namespace

fs::path weights_path(const fs::path& run_file) {
  fs::path path = run_file;
  return path.replace_extension(".weights");
}

WeightsHeader read_weights_header(const fs::path& path) {
  std::error_code error;
  if (!fs::exists(path, error)) {
    throw file_fault(path,
                     "no weights: the run kept none (it ended before its last step, or trained with "
                     "--final-weights drop)");
  }
  return header_from(read_file_header(kWeights, path), path);
}

bool keeps_weights(const RunRecord& run) {
  // A kept checkpoint holds the same weights.
  return run.status == RunStatus::Done && run.config.final_weights == "keep" && run.config.final_checkpoint != "keep";
}

torch::Tensor as_stored(const torch::Tensor& tensor) {
  const bool whole = tensor.storage_offset() == 0 && tensor.storage().nbytes() == tensor.nbytes();
  return whole ? tensor : tensor.clone(at::MemoryFormat::Contiguous);
}

std::string tokenizer_hash(const Tokenizer& tokenizer) { return content_hash(read_whole_file(tokenizer.model_file())); }

std::string weights_bytes(Gpt& model, const TrainConfig& config, const std::string& tokenizer_hash, int step) {
  torch::serialize::OutputArchive archive;
  for (const auto& [name, tensor] : named_tensors(model)) archive.write(name, as_stored(tensor.detach().cpu()));
  std::string payload;
  archive.save_to([&payload](const void* data, std::size_t size) {
    payload.append(static_cast<const char*>(data), size);
    return size;
  });
  const nlohmann::ordered_json fields = {{"name", config.name},
                                         {"config", config_as_text(config)},
                                         {"tokenizer", tokenizer_hash},
                                         {"shape", shape_hash(model)},
                                         {"step", step}};
  return headed_file_bytes(kWeights, fields, payload);
}

void load_weights(std::string_view bytes, const fs::path& path, const TrainConfig& config,
                  const std::string& tokenizer_hash, Gpt& model) {
  std::size_t line_bytes = 0;
  const json head = read_file_header(kWeights, bytes, bytes.size(), path, line_bytes);
  const WeightsHeader header = header_from(head, path);
  if (const ConfigField* field = first_difference(header.config, config)) {
    throw file_fault(path, "the weights of another experiment: its " + field->noun + " is '" +
                               field_text(*field, header.config) + "', the run's '" + field_text(*field, config) + "'");
  }
  if (header.tokenizer_hash != tokenizer_hash) {
    throw file_fault(path, "made with another tokenizer: the corpus, or its tokenizer, changed since");
  }
  if (header.shape_hash != shape_hash(model)) throw file_fault(path, "its tensors do not fit this model");
  const std::string_view payload = checked_payload(bytes, line_bytes, head, path);

  std::map<std::string, torch::Tensor> loaded;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(payload.data(), payload.size(), torch::Device(torch::kCPU));
    for (const auto& [name, live] : named_tensors(model)) {
      torch::Tensor tensor;
      archive.read(name, tensor);
      if (!tensor.sizes().equals(live.sizes()) || tensor.scalar_type() != live.scalar_type()) {
        throw file_fault(path, "its tensors do not fit this model");
      }
      loaded.emplace(name, tensor);
    }
  } catch (const c10::Error& error) {
    throw file_fault(path, "damaged: " + first_line(error.what_without_backtrace()));
  }
  torch::NoGradGuard no_grad;
  for (auto& [name, live] : named_tensors(model)) live.copy_(loaded.at(name));
}

}  // namespace normlab
