#include "learner.h"

#include <ATen/autocast_mode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <memory>
#include <mutex>
#include <optional>

#include "core/device/cuda_backend.h"
#include "core/model/causal_attention.h"
#include "core/model/linear.h"
#include "core/model/output_loss.h"
#include "core/model/tile_products.h"

#include "layer_recorder.h"
#include "matmul_choice.h"

namespace normlab {

namespace {

// Seeds torch first, so the same seed gives the same initial weights. They are drawn from
// LibTorch's one global generator, so runs side by side build their models one at a time.
Gpt build_model(const TrainConfig& config, int vocab_size, torch::Device device) {
  static std::mutex one_at_a_time;
  std::unique_lock lock(one_at_a_time);
  torch::manual_seed(config.seed);
  ModelConfig model_config = config.model;
  model_config.vocab = vocab_size;
  Gpt model(model_config);
  lock.unlock();
  model->to(device);
  return model;
}

std::vector<torch::Tensor> parameters_where(Gpt& model, bool matrices) {
  std::vector<torch::Tensor> chosen;
  for (auto& p : model->parameters()) {
    if ((p.dim() >= 2) == matrices) chosen.push_back(p);
  }
  return chosen;
}

// The forward pass under bf16 autocast when asked: matmuls in bf16, softmax, norms and
// the loss in fp32, by torch's autocast lists. The state is per thread, so other runs'
// threads are untouched; backward and the optimiser step stay outside, in fp32.
class AutocastScope {
 public:
  AutocastScope(bool enabled, c10::DeviceType device) : enabled_(enabled), device_(device) {
    if (!enabled_) return;
    previous_dtype_ = at::autocast::get_autocast_dtype(device_);
    at::autocast::set_autocast_dtype(device_, at::kBFloat16);
    at::autocast::set_autocast_enabled(device_, true);
  }
  ~AutocastScope() {
    if (!enabled_) return;
    at::autocast::set_autocast_enabled(device_, false);
    at::autocast::set_autocast_dtype(device_, previous_dtype_);
    at::autocast::clear_cache();  // the bf16 copies of the weights, stale after the update
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
  c10::DeviceType device_;
  at::ScalarType previous_dtype_ = at::kFloat;
};

AdamWSettings with_decay(double weight_decay) {
  AdamWSettings settings;
  settings.weight_decay = weight_decay;
  return settings;
}

}  // namespace

int batch_slices(const TrainConfig& config, int threads) {
  if (config.cpu_parallel != "batch") return 1;
  for (int slices = std::min(threads, config.batch_size); slices > 1; --slices) {
    if (config.batch_size % slices == 0) return slices;
  }
  return 1;
}

Batch to_device(const Batch& batch, torch::Device device) {
  return {batch.inputs.to(device), batch.targets.to(device)};
}

torch::Device prepare_device(const TrainConfig& config, Environment& environment) {
  std::string precision = "fp32";
  if (environment.device == "cuda") {
    // TF32 (a 10-bit mantissa inside fp32 matmuls) exists from Ampere (compute capability 8) on.
    const bool tf32 = config.tf32 == "on" || (config.tf32 == "auto" && cuda_compute_capability_major() >= 8);
    at::globalContext().setAllowTF32CuBLAS(tf32);
    at::globalContext().setAllowTF32CuDNN(tf32);
    if (tf32) precision = "tf32 matmuls";
    // The current stream is the thread's own: runs side by side, each on its worker
    // thread, then queue their kernels on separate streams and overlap on the GPU.
    const auto* cuda = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    cuda->exchangeStream(cuda->getStreamFromGlobalPool(c10::Device(c10::DeviceType::CUDA, 0)));
  } else {
    // The count is the calling thread's: runs side by side each keep their own. Asked
    // first, so LibTorch's lazy per-thread set-up (which copies the count another thread
    // set last) is done and cannot undo this one.
    torch::get_num_threads();
    torch::set_num_threads(environment.threads);
    const bool bf16 = config.cpu_precision == "bf16" && cpu_has_bf16_units() && config.autocast == "off";
    const bool fp32_products = !bf16 && config.autocast == "off";  // what the kernel choice is for
    bool onednn = config.cpu_matmul == "onednn";
    std::string chosen;
    if (config.cpu_matmul == "auto") {
      const MatmulChoice choice = fp32_products ? choose_cpu_matmul(config) : MatmulChoice{};
      onednn = choice.onednn;
      if (fp32_products) chosen = ", auto: " + describe(choice);
    }
    set_onednn_matmuls(onednn);
    set_bf16_matmuls(bf16);
    if (bf16)
      precision = tile_products_available() ? "CPU bf16 matmuls (AMX tiles), fp32 elsewhere"
                                            : "CPU bf16 matmuls (oneDNN), fp32 elsewhere";
    else if (fp32_products && (onednn || !chosen.empty()))
      precision += (onednn ? ", oneDNN matmuls" : ", LibTorch matmuls") + chosen;
    if (const int slices = batch_slices(config, environment.threads); slices > 1)
      precision += ", batch in " + std::to_string(slices) + " slices";
    if (config.cpu_precision == "bf16" && !bf16)
      precision += config.autocast == "off" ? " (this CPU has no bf16 units)" : " (bf16 matmuls give way to autocast)";
  }
  if (config.autocast == "bf16") precision += ", bf16 autocast";
  set_fused_loss(config.fused_loss == "on");
  if (config.fused_loss == "off") precision += ", unfused loss";
  set_fused_attention(config.fused_attention == "on");
  if (config.fused_attention == "off") precision += ", ATen attention";
  environment.precision = precision;
  return environment.device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

Learner::Learner(const TrainConfig& config, int vocab_size, torch::Device device, bool cuda_graph)
    : clip_grad_norm_(config.clip_grad_norm),
      autocast_bf16_(config.autocast == "bf16"),
      model_(build_model(config, vocab_size, device)),
      decayed_(parameters_where(model_, /*matrices=*/true), with_decay(config.weight_decay)),
      not_decayed_(parameters_where(model_, /*matrices=*/false), with_decay(0.0)) {
  if (device.is_cpu()) slice_count_ = batch_slices(config, torch::get_num_threads());
  if (cuda_graph && device.is_cuda()) {
    graph_decoding_ = true;
    graphed_ = std::make_unique<GraphedStep>([this](const Batch& batch, const torch::Tensor& lr) {
      return std::vector<torch::Tensor>{update(batch, lr, nullptr)};
    });
    // The steps that record the layer statistics, in a graph of their own: the recorder's
    // probes and measures are captured with the update, its vector is the graph's output.
    recording_graphed_ = std::make_unique<GraphedStep>([this](const Batch& batch, const torch::Tensor& lr) {
      LayerRecorder recorder(model_);
      const auto loss = update(batch, lr, &recorder);
      return std::vector<torch::Tensor>{loss, recorder.after_update()};
    });
  }
}

namespace {

std::string graph_state(const GraphedStep* graphed) {
  if (!graphed) return "eager";
  if (!graphed->failure().empty()) return graphed->failure();
  return graphed->captured() ? "replayed" : "eager";
}

}  // namespace

std::string Learner::cuda_graph_state() const { return graph_state(graphed_.get()); }

std::string Learner::recording_graph_state() const { return graph_state(recording_graphed_.get()); }

std::string Learner::decode_graph_state() const {
  std::string state = "eager";
  for (const auto& [rows, decoding] : decoding_) {
    if (!decoding.graph || decoding.graph->state() == "eager") continue;
    if (decoding.graph->state() != "replayed") return decoding.graph->state();  // why a capture failed
    state = "replayed";
  }
  return state;
}

std::vector<torch::Tensor> Learner::state() const {
  std::vector<torch::Tensor> tensors = model_->parameters();
  for (const auto& buffer : model_->buffers()) tensors.push_back(buffer);
  for (const AdamWGroup* group : {&decayed_, &not_decayed_}) {
    for (const auto& tensor : group->state()) tensors.push_back(tensor);
  }
  return tensors;
}

torch::Tensor Learner::step(const Batch& batch, double lr, std::vector<SeriesPoint>* statistics) {
  if (!statistics) {
    if (graphed_) {
      if (auto outputs = graphed_->step(batch, lr); !outputs.empty()) return outputs[0];
    }
    return update(batch, lr, nullptr);
  }
  torch::Tensor measured;
  const auto loss = step(batch, lr, measured);
  const auto host = measured.to(torch::kCPU).contiguous();
  *statistics = statistic_points(model_->config, host.data_ptr<double>());
  return loss;
}

torch::Tensor Learner::step(const Batch& batch, double lr, torch::Tensor& statistics) {
  if (recording_graphed_) {
    if (auto outputs = recording_graphed_->step(batch, lr); !outputs.empty()) {
      statistics = outputs[1];
      return outputs[0];
    }
  }
  LayerRecorder recorder(model_);
  const auto loss = update(batch, lr, &recorder);
  statistics = recorder.after_update();
  return loss;
}

template <typename LearningRate>
torch::Tensor Learner::update(const Batch& batch, const LearningRate& lr, LayerRecorder* recorder) {
  decayed_.zero_grad();
  not_decayed_.zero_grad();
  torch::Tensor loss;
  if (slice_count_ > 1 && !recorder && batch.inputs.size(0) % slice_count_ == 0) {
    loss = sliced_backward(batch);
  } else {
    {
      AutocastScope autocast(autocast_bf16_, batch.inputs.device().type());
      loss = model_->loss(batch.inputs, batch.targets);
    }
    loss.backward();
  }
  if (recorder) recorder->after_backward();
  apply(lr);
  return loss.detach();
}

torch::Tensor Learner::sliced_backward(const Batch& batch) {
  // The threads are made at the first such step, not for a learner that only decodes.
  if (!slices_) slices_ = std::make_unique<SliceWorkers>(slice_count_);
  const int n = slices_->slices();
  const auto rows = batch.inputs.size(0) / n;
  // The calling thread's settings, for the slices' threads too.
  const bool onednn = onednn_matmuls(), bf16 = bf16_matmuls(), fused = fused_loss(), fused_heads = fused_attention();
  const std::vector<torch::Tensor> parameters = model_->parameters();
  std::vector<torch::Tensor> losses(static_cast<std::size_t>(n));
  std::vector<std::vector<torch::Tensor>> gradients(static_cast<std::size_t>(n));
  slices_->run([&](int slice) {
    set_onednn_matmuls(onednn);
    set_bf16_matmuls(bf16);
    set_fused_loss(fused);
    set_fused_attention(fused_heads);
    torch::Tensor loss;
    {
      AutocastScope autocast(autocast_bf16_, c10::DeviceType::CPU);
      loss = model_->loss(batch.inputs.narrow(0, slice * rows, rows), batch.targets.narrow(0, slice * rows, rows));
    }
    // Returned, not accumulated into the parameters: summed below in a fixed order.
    gradients[std::size_t(slice)] = torch::autograd::grad({loss / n}, parameters, {}, /*retain_graph=*/false,
                                                          /*create_graph=*/false, /*allow_unused=*/true);
    losses[std::size_t(slice)] = loss.detach();
  });
  slices_->run([&](int slice) {  // each thread sums every n-th parameter's gradients
    for (std::size_t p = std::size_t(slice); p < parameters.size(); p += std::size_t(n)) {
      torch::Tensor sum;
      for (const auto& slice_gradients : gradients) {
        const torch::Tensor& gradient = slice_gradients[p];
        if (gradient.defined()) sum = sum.defined() ? sum.add_(gradient) : gradient;
      }
      if (sum.defined()) parameters[p].mutable_grad() = sum;
    }
  });
  torch::Tensor total = losses.front();
  for (int slice = 1; slice < n; ++slice) total = total + losses[std::size_t(slice)];
  return total / n;
}

template <typename LearningRate>
void Learner::apply(const LearningRate& lr) {
  if (clip_grad_norm_ > 0) clip_gradients();
  decayed_.step(lr);
  not_decayed_.step(lr);
}

void Learner::apply_gradients(double lr) { apply(lr); }
void Learner::apply_gradients(const torch::Tensor& lr) { apply(lr); }

// torch::nn::utils::clip_grad_norm_'s arithmetic, kept on the device: the library
// function reads the norm back to the host, a sync on every step.
void Learner::clip_gradients() {
  std::vector<torch::Tensor> grads;
  for (auto& p : model_->parameters()) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  const auto total = torch::stack(torch::_foreach_norm(grads)).norm();
  torch::_foreach_mul_(grads, (clip_grad_norm_ / (total + 1e-6)).clamp_max(1.0));
}

double Learner::evaluate(const std::vector<Batch>& batches, PredictionTally* predictions) {
  torch::NoGradGuard no_grad;
  model_->eval();
  std::vector<torch::Tensor> losses;
  for (const auto& batch : batches) {
    AutocastScope autocast(autocast_bf16_, batch.inputs.device().type());
    if (!predictions) {
      losses.push_back(model_->loss(batch.inputs, batch.targets));
      continue;
    }
    // The tally reads each chunk's logits as the loss makes them (in float64, whatever
    // autocast does: it leaves float64 alone).
    losses.push_back(
        model_->loss(batch.inputs, batch.targets, [&](const torch::Tensor& logits) { predictions->add(logits); }));
  }
  model_->train();
  // Summed in double on the host, in batch order: the same number as reading each one.
  const auto values = torch::stack(losses).to(torch::kCPU, torch::kFloat64);
  double total = 0;
  for (std::int64_t i = 0; i < values.numel(); ++i) total += values.data_ptr<double>()[i];
  return total / batches.size();
}

torch::Tensor Learner::true_token_probabilities(const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  model_->eval();
  torch::Tensor logits;
  {
    AutocastScope autocast(autocast_bf16_, ids.device().type());
    logits = model_->forward(ids.slice(1, 0, -1));
  }
  model_->train();
  const auto log_probs = torch::log_softmax(logits.to(torch::kFloat64), -1);
  return log_probs.gather(-1, ids.slice(1, 1).unsqueeze(-1)).squeeze(-1).exp().cpu();
}

Decoder Learner::decoder() {
  auto run = [this](const torch::Tensor& ids, bool fresh) {
    torch::NoGradGuard no_grad;
    // A few rows at a time, where oneDNN's set-up per product costs more than LibTorch's
    // sgemm takes (text only: the losses keep the run's kernel).
    struct LibTorchMatmuls {
      const bool onednn = onednn_matmuls();
      LibTorchMatmuls() { set_onednn_matmuls(false); }
      ~LibTorchMatmuls() { set_onednn_matmuls(onednn); }
    } libtorch_matmuls;
    Decoding& decoding = decoding_[ids.size(0)];
    std::vector<AttentionCache>& cache = decoding.cache;
    if (graph_decoding_ && !decoding.graph) {
      decoding.graph =
          std::make_unique<GraphedDecode>([this, &cache](const torch::Tensor& step_ids, const torch::Tensor& position) {
            return model_->forward_step(step_ids, cache, position);
          });
    }
    model_->eval();
    // Fresh, the cache's buffers are kept (a restart past the context has the same rows)
    // and written over from position 0.
    const std::int64_t first = fresh || cache.empty() ? 0 : cache.front().length;
    torch::Tensor last;
    {
      AutocastScope autocast(autocast_bf16_, ids.device().type());
      if (decoding.graph && first > 0 && ids.size(1) == 1) {
        last = decoding.graph->next(ids, first, cache.front().k.data_ptr()).select(1, -1);
        for (AttentionCache& c : cache) c.length = first + 1;  // forward_step leaves it to its caller
      } else {
        last = model_->forward_at(ids, cache, first).select(1, -1);
      }
    }
    model_->train();
    return last.to(torch::kFloat32);
  };
  return {[run](const torch::Tensor& ids) { return run(ids, true); },
          [run](const torch::Tensor& ids) { return run(ids, false); }, model_->config.context};
}

}  // namespace normlab
