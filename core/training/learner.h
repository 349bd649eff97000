#pragma once
// A model and its optimiser on one device: the training step that the trainer and the
// benchmark share.
#include <map>
#include <torch/torch.h>
#include <vector>

#include "core/data/dataset.h"
#include "core/model/model.h"
#include "core/runs/run_record.h"

#include "adamw.h"
#include "graphed_decode.h"
#include "graphed_step.h"
#include "prediction_tally.h"
#include "slice_workers.h"
#include "text_samples.h"

namespace normlab {

class LayerRecorder;

class Learner {
 public:
  // Seeds torch with config.seed before building the model, so runs repeat exactly. On the
  // CPU with two or more threads (the calling thread's count) and --cpu-parallel batch, an
  // update that records no statistics gives each thread an equal slice of the batch
  // (batch_slices; slice_workers.h). On a
  // CUDA device, with `cuda_graph`, steps that record no statistics replay a CUDA graph of
  // the update (graphed_step.h) once the first few have run, and steps that record them
  // one of their own, which measures them too.
  Learner(const TrainConfig& config, int vocab_size, torch::Device device, bool cuda_graph = true);
  Learner(const Learner&) = delete;  // the graph's update holds `this`
  Learner& operator=(const Learner&) = delete;

  // One optimiser update at `lr` on a batch already on this device. Returns the batch's
  // training loss as a scalar tensor on the device (may be non-finite): reading it is a
  // host sync, which the trainer does in bulk. With `statistics`, also measures
  // layer_statistics() into it (step numbers left 0; one host copy); the update itself
  // is the same either way.
  torch::Tensor step(const Batch& batch, double lr, std::vector<SeriesPoint>* statistics = nullptr);
  // The same, the statistics left on the device as one float64 vector, to be read later
  // (with other steps' and the losses, in one copy) by statistic_points (layer_recorder.h).
  torch::Tensor step(const Batch& batch, double lr, torch::Tensor& statistics);
  // Mean loss over `batches`, which must already be on this device; one host sync. With
  // `predictions`, also adds the same forward passes' predictions to it.
  double evaluate(const std::vector<Batch>& batches, PredictionTally* predictions = nullptr);
  // The model continuing text (text_samples.h) as evaluate() runs it, with a cache of
  // keys and values: (rows, vocab) float32 logits. Valid while the learner is. The caches
  // are the learner's, one per number of rows, kept from one recording to the next, so a
  // learner's decoders are used one at a time. On a CUDA device with `cuda_graph`, a token
  // after the cached ones replays a graph of the step (graphed_decode.h), one per cache.
  Decoder decoder();
  // For (rows, time) ids on this device, the probability the model gives each true next
  // token, ids[:, t + 1] after ids[:, ..t]: (rows, time - 1) float64 on the host.
  torch::Tensor true_token_probabilities(const torch::Tensor& ids);

  // Everything an update reads and changes: the model's parameters and buffers, then the
  // optimiser's state. The live tensors, in an order the config fixes: a checkpoint
  // writes them, a resumed run copies its saved values into them.
  std::vector<torch::Tensor> state() const;

  // Clips the gradients the model's parameters hold (when the config clips) and takes
  // both groups' AdamW steps at `lr`: the end of an update whose backward ran elsewhere,
  // a stack's (stacked_learner.h), whose gradients for this run it has handed over.
  void apply_gradients(double lr);
  void apply_gradients(const torch::Tensor& lr);

  std::int64_t parameter_count() const { return model_->parameter_count(); }
  // "replayed", "eager" (not asked, or not yet captured) or why the capture failed.
  std::string cuda_graph_state() const;
  // The same for the graph of the steps that record the layer statistics.
  std::string recording_graph_state() const;
  // The same for the decoder's step: "replayed" once any has replayed.
  std::string decode_graph_state() const;
  Gpt& model() { return model_; }

 private:
  // The whole update: forward, backward, clipping, both groups' AdamW steps. `lr` is a
  // double, or a float32 scalar on the device for a CUDA graph to replay.
  template <typename LearningRate>
  torch::Tensor update(const Batch& batch, const LearningRate& lr, LayerRecorder* recorder);
  template <typename LearningRate>
  void apply(const LearningRate& lr);
  void clip_gradients();
  // Forward and backward of the batch in slices_'s slices, one a thread; leaves the mean
  // loss's gradients in the parameters, each summed over the slices in their order, and
  // returns the mean loss.
  torch::Tensor sliced_backward(const Batch& batch);

  const double clip_grad_norm_;  // 0 = off
  const bool autocast_bf16_;
  Gpt model_;
  // Matrices (linear weights, embeddings) decay; biases and norm gains do not, as in GPT-2.
  AdamWGroup decayed_;
  AdamWGroup not_decayed_;
  int slice_count_ = 1;                             // batch_slices: 1 where a step takes the batch whole
  std::unique_ptr<SliceWorkers> slices_;            // their threads, from the first step in slices
  std::unique_ptr<GraphedStep> graphed_;            // null on the CPU or when not asked
  std::unique_ptr<GraphedStep> recording_graphed_;  // the same, for steps that record statistics
  // The decoder's keys and values and its step's graph (null where steps are not graphed),
  // by the number of rows decoded at once.
  struct Decoding {
    std::vector<AttentionCache> cache;
    std::unique_ptr<GraphedDecode> graph;
  };
  std::map<std::int64_t, Decoding> decoding_;
  bool graph_decoding_ = false;
};

// How many slices a CPU update at `threads` threads takes its batch in (--cpu-parallel):
// the most, up to one a thread, that divide the batch evenly; 1 where it takes it whole.
int batch_slices(const TrainConfig& config, int threads);

// Moves a batch to `device`.
Batch to_device(const Batch& batch, torch::Device device);

// torch::Device for "cpu"/"cuda" as describe_device resolved it. Also sets what the
// device computes with: CPU threads, TF32 matmuls on the GPU (config.tf32), and records
// the resulting precision in environment.precision.
torch::Device prepare_device(const TrainConfig& config, Environment& environment);

}  // namespace normlab
