#include "checkpoint.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "core/data/corpus.h"
#include "core/device/cuda_backend.h"
#include "core/runs/config_fields.h"
#include "core/system/atomic_file.h"

#include "headed_file.h"
#include "training_state.h"
#include "weights_io.h"

namespace normlab {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr FileKind kCheckpoint{"normlab.checkpoint", "checkpoint", kCheckpointVersion};

int steps_done(const RunRecord& run) { return run.steps.empty() ? 0 : run.steps.back().step; }

CheckpointHeader header_from(const json& j, const fs::path& path) {
  CheckpointHeader h;
  try {
    h.version = j.at("version").get<int>();
    h.libtorch_version = j.at("libtorch_version").get<std::string>();
    h.config = config_from_text(j.at("config"), j.at("name").get<std::string>(), path);
    h.data_fingerprint = j.at("data").get<std::string>();
    h.step = j.at("step").get<int>();
    h.payload_bytes = j.at("payload_bytes").get<std::uint64_t>();
    h.payload_hash = j.at("payload_hash").get<std::string>();
  } catch (const json::exception& error) {
    throw file_fault(path, std::string("damaged header (") + error.what() + ")");
  }
  return h;
}

void check_resumable(const CheckpointHeader& h, const TrainConfig& config, const fs::path& path) {
  if (h.libtorch_version != libtorch_version()) {
    throw file_fault(path, "written with LibTorch " + h.libtorch_version + ", and this NormLab runs LibTorch " +
                               libtorch_version() + ", whose arithmetic may differ: the run cannot go on exactly");
  }
  if (const ConfigField* field = first_difference(h.config, config)) {
    throw file_fault(path, "a checkpoint of another experiment: its " + field->noun + " is '" +
                               field_text(*field, h.config) + "', the run's '" + field_text(*field, config) + "'");
  }
}

}  // namespace

fs::path checkpoint_path(const fs::path& run_file) {
  fs::path path = run_file;
  return path.replace_extension(".ckpt");
}

CheckpointHeader read_checkpoint_header(const fs::path& path) {
  std::error_code error;
  if (!fs::exists(path, error)) {
    throw file_fault(path,
                     "no checkpoint: none was written while the run trained, or it was dropped when the run "
                     "ended");
  }
  return header_from(read_file_header(kCheckpoint, path), path);
}

CheckpointHeader resumable_checkpoint(const fs::path& path, const TrainConfig& config) {
  CheckpointHeader header = read_checkpoint_header(path);
  check_resumable(header, config, path);
  return header;
}

bool keeps_checkpoint(const RunRecord& run) {
  if (run.status == RunStatus::Diverged) return false;
  if (run.status == RunStatus::Done) return run.config.final_checkpoint == "keep";
  return true;  // stopped, or not ended: it can go on
}

std::string checkpoint_bytes(const TrainingState& state, const std::string& data_fingerprint) {
  torch::serialize::OutputArchive archive, tensors;
  const std::vector<torch::Tensor> live = state.learner.state();
  for (std::size_t i = 0; i < live.size(); ++i) tensors.write(std::to_string(i), as_stored(live[i]));
  archive.write("learner", tensors);
  std::ostringstream rng;
  rng << state.batch_rng;
  archive.write("batch_rng", c10::IValue(rng.str()));
  archive.write("batch_starts", state.batch_starts);
  archive.write("record", c10::IValue(to_json_text(state.run)));
  // A run file holds its series by name, alphabetically; the record's order, which the
  // CSV's columns follow, is kept beside it.
  json series_order = json::array();
  for (const Series& series : state.run.series) series_order.push_back(series.name);
  archive.write("series_order", c10::IValue(series_order.dump()));
  std::string payload;
  archive.save_to([&payload](const void* data, std::size_t size) {
    payload.append(static_cast<const char*>(data), size);
    return size;
  });

  const nlohmann::ordered_json fields = {{"libtorch_version", libtorch_version()},
                                         {"name", state.run.config.name},
                                         {"config", config_as_text(state.run.config)},
                                         {"data", data_fingerprint},
                                         {"step", steps_done(state.run)}};
  return headed_file_bytes(kCheckpoint, fields, payload);
}

void restore_checkpoint(const fs::path& path, const std::string& data_fingerprint, TrainingState& state) {
  // Checked again on the bytes that are loaded: the file may have been replaced since.
  const std::string bytes = read_whole_file(path);
  std::size_t line_bytes = 0;
  const json head = read_file_header(kCheckpoint, bytes, bytes.size(), path, line_bytes);
  const CheckpointHeader header = header_from(head, path);
  check_resumable(header, state.run.config, path);
  const std::string_view payload = checked_payload(bytes, line_bytes, head, path);
  if (header.data_fingerprint != data_fingerprint) {
    throw file_fault(path, "made from other training data: the corpus, or its tokenization, changed since");
  }

  std::string record_text, series_order;
  try {
    torch::serialize::InputArchive archive, tensors;
    archive.load_from(payload.data(), payload.size(), torch::Device(torch::kCPU));
    archive.read("learner", tensors);
    const std::vector<torch::Tensor> live = state.learner.state();
    torch::Tensor extra;
    if (tensors.try_read(std::to_string(live.size()), extra))
      throw file_fault(path, "its tensors do not fit this model");
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < live.size(); ++i) {
      torch::Tensor tensor;
      tensors.read(std::to_string(i), tensor);
      if (!tensor.sizes().equals(live[i].sizes()) || tensor.scalar_type() != live[i].scalar_type()) {
        throw file_fault(path, "its tensors do not fit this model");
      }
      live[i].copy_(tensor);
    }
    c10::IValue rng, record, order;
    archive.read("batch_rng", rng);
    std::istringstream rng_text(rng.toStringRef());
    if (!(rng_text >> state.batch_rng)) throw file_fault(path, "damaged: its batch sampler's state does not read back");
    torch::Tensor starts;
    archive.read("batch_starts", starts);
    state.batch_starts = starts;
    archive.read("record", record);
    record_text = record.toStringRef();
    archive.read("series_order", order);
    series_order = order.toStringRef();
  } catch (const c10::Error& error) {
    throw file_fault(path, "damaged: " + first_line(error.what_without_backtrace()));
  }
  RunRecord saved;
  std::vector<Series> series;
  try {
    saved = from_json_text(record_text);
    for (const json& listed : json::parse(series_order)) {
      const std::string name = listed.get<std::string>();
      const auto found =
          std::find_if(saved.series.begin(), saved.series.end(), [&](const Series& s) { return s.name == name; });
      if (found == saved.series.end()) throw UserError("series '" + name + "' is missing");
      series.push_back(std::move(*found));
    }
    if (series.size() != saved.series.size()) throw UserError("its series are not the ones listed");
  } catch (const std::exception& error) {  // UserError, or json's for a damaged list
    throw file_fault(path, std::string("damaged record: ") + error.what());
  }
  if (int(saved.steps.size()) != header.step || steps_done(saved) != header.step) {
    throw file_fault(path, "damaged: its record does not end at its step");
  }
  state.run.steps = std::move(saved.steps);
  state.run.evals = std::move(saved.evals);
  state.run.series = std::move(series);
  // The prompts are the corpus's, set with the run; a checkpoint from before the text has none.
  state.run.text.samples = std::move(saved.text.samples);
}

std::string data_fingerprint(const Dataset& data) {
  auto hash = [](const torch::Tensor& ids) {
    return content_hash(std::string_view(static_cast<const char*>(ids.data_ptr()), ids.nbytes()));
  };
  return hash(data.train_ids()) + "/" + hash(data.heldout_ids());
}

}  // namespace normlab
