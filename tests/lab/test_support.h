#pragma once
// What the lab, UI tests and the UI benchmark share: a made-up corpus, a model small enough to
// train in milliseconds a step, runs with plausible curves, and waiting on the event loop.
#include <QString>
#include <functional>
#include <string>

#include "core/runs/run_record.h"

namespace normlab::lab::test {

// About `bytes` of made-up English-like sentences (fixed seed): enough for a 256-token BPE.
QString write_synthetic_corpus(const QString& folder, int bytes = 60000);

// The shared tiny run (tests/support/tiny_config.h) in the lab's shape: two layers of width
// 32 on 4 sequences of 16 tokens, a step in milliseconds on a CPU.
TrainConfig tiny_config(const QString& corpus, int steps = 30);

// A run as training would record it, without training: pre-norm and long-warmup post-norm
// curves fall towards ~4.5 nats, short-warmup post-norm stays at the baseline.
RunRecord synthetic_run(NormPlacement norm, double lr, int warmup, int steps, int eval_interval = 100);

// Trains `config` to its end with the engine itself, writing its run file `run_file` and the
// weights beside it (RUN.weights), as the window's and the command line's runs do.
RunRecord train_keeping_weights(const TrainConfig& config, const QString& run_file);

// Runs the event loop until `done()` or `timeout_ms`; returns done().
bool wait_until(const std::function<bool()>& done, int timeout_ms);

}  // namespace normlab::lab::test
