#pragma once
// Runs that train at the same time share the machine: how many at once, how many CPU
// threads each (fixed when a run starts: the thread count changes a run's last digits),
// and when a queue of them will be done.
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace normlab {

// The threads LibTorch takes for one run alone: OMP_NUM_THREADS, else one per core.
int cpu_threads();

// How many runs train at once unless the user says: on the CPU two, or one per two cores
// where there are more (the CPU-scale model's matrices are too small to keep more than a
// couple of threads busy each); on a GPU, where the runs share the device on their own
// streams, eight.
int default_side_by_side(const std::string& device, int cores = cpu_threads());

// Each run's CPU threads when `side_by_side` runs train at once: the cores divided
// between them, at least one each, so together they never take more than the machine has.
int threads_per_run(int side_by_side, int cores = cpu_threads());

// The CPU threads of run i (from 0) of `count` that train `side_by_side` at once in
// order, as the command line runs them: runs i / side_by_side train together (a wave),
// and the cores are divided between the runs of the wave, so a last wave with fewer runs
// than places gives each more (the course's fifth run on 2 cores takes both). Fixed before
// the run starts, as the thread count changes its last digits.
int threads_in_wave(std::size_t i, std::size_t count, int side_by_side, int cores = cpu_threads());

// When each run ends, in seconds from now, when the `running` runs (seconds left each)
// and then the `pending` ones (seconds each, in queue order) share `slots`: a pending run
// starts as soon as a slot is free. Answers running runs first, then pending ones.
std::vector<double> finish_times(const std::vector<double>& running, const std::vector<double>& pending, int slots);

// Calls train(i) for i = 0 .. count - 1 on `side_by_side` threads, each taking the next i
// as it is free; after a failure no new i starts (the others go on), and the first
// error is rethrown once all have ended.
void train_side_by_side(std::size_t count, int side_by_side, const std::function<void(std::size_t)>& train);

}  // namespace normlab
