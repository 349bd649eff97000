#include "step_profile.h"

#include <ATen/record_function.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <map>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <unistd.h>
#include <utility>

namespace normlab {

namespace {

// Operators by kind: their names without the namespace. A name is matched whole, or by its
// start where the entry ends in '*'. The first kind whose list matches wins.
struct KindNames {
  std::string_view kind;
  std::vector<std::string_view> names;
};
const std::vector<KindNames>& kind_table() {
  static const std::vector<KindNames> table = {
      {"matmuls",
       {"mm", "addmm", "addmm_", "bmm", "baddbmm", "matmul", "linear", "_linear_pointwise", "_mkldnn*", "mkldnn_*",
        "tile_products"}},
      {"attention",
       {"scaled_dot_product_attention", "_scaled_dot_product*", "_flash_attention*", "_efficient_attention*",
        "causal_attention*"}},
      {"loss",
       {"cross_entropy_loss", "log_softmax", "_log_softmax", "_log_softmax_backward_data", "nll_loss*", "logsumexp",
        "softmax", "_softmax", "_softmax_backward_data"}},
      {"norms", {"layer_norm", "native_layer_norm", "native_layer_norm_backward", "rms_norm", "_fused_rms_norm*"}},
      {"optimiser", {"_fused_adamw_", "_fused_adam_", "_foreach_*"}},
      {"embeddings", {"embedding", "embedding_backward", "embedding_dense_backward", "index_select", "index_add_"}},
      {"allocation/copies", {"empty",     "empty_like", "empty_strided", "zeros",  "zeros_like",   "ones",
                             "ones_like", "full",       "full_like",     "fill_",  "zero_",        "copy_",
                             "clone",     "contiguous", "_to_copy",      "to",     "cat",          "stack",
                             "resize_",   "new_empty*", "new_zeros",     "arange", "tile_operand", "transpose_bf16"}},
      {"views and dispatch",
       {"view",   "_unsafe_view", "reshape", "as_strided", "transpose",      "permute",    "t",          "unbind",
        "select", "slice",        "narrow",  "expand",     "unsqueeze",      "squeeze",    "split",      "chunk",
        "detach", "detach_",      "alias",   "numpy_T",    "_reshape_alias", "lift_fresh", "result_type"}},
      {"element-wise",
       {"add",
        "add_",
        "sub",
        "sub_",
        "rsub",
        "mul",
        "mul_",
        "div",
        "div_",
        "neg",
        "exp",
        "exp_",
        "log",
        "pow",
        "sqrt",
        "rsqrt",
        "tanh",
        "tanh_backward",
        "gelu",
        "gelu_backward",
        "addcmul",
        "addcmul_",
        "where",
        "masked_fill",
        "masked_fill_",
        "sum",
        "mean",
        "clamp*",
        "square",
        "abs",
        "max",
        "min",
        "sigmoid",
        "norm",
        "linalg_vector_norm",
        "scatter*",
        "gather",
        "eq",
        "ne",
        "lt",
        "gt",
        "isfinite",
        "sign",
        "relu",
        "threshold*"}},
  };
  return table;
}

std::string_view base_name(std::string_view name) {
  const auto colons = name.rfind("::");
  return colons == std::string_view::npos ? name : name.substr(colons + 2);
}

bool matches(std::string_view name, std::string_view pattern) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.substr(0, pattern.size() - 1) == pattern.substr(0, pattern.size() - 1);
  return name == pattern;
}

// The kind a NormLab region ("normlab::loss") stands for, or empty.
std::string_view region_kind(std::string_view name) {
  constexpr std::string_view prefix = "normlab::";
  if (name.substr(0, prefix.size()) != prefix) return {};
  const auto rest = name.substr(prefix.size());
  for (const char* kind : kProfileKinds) {
    if (rest == kind) return kind;
  }
  return {};
}

// Kineto writes its own start-up lines, and an error about GPUs on a machine without one,
// to stderr: noise around a bench's printout. Held off while the profiler starts and stops.
class QuietStderr {
 public:
  QuietStderr() {
    std::fflush(stderr);
    saved_ = ::dup(2);
    const int null = ::open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && null >= 0) ::dup2(null, 2);
    if (null >= 0) ::close(null);
  }
  ~QuietStderr() {
    std::fflush(stderr);
    if (saved_ >= 0) {
      ::dup2(saved_, 2);
      ::close(saved_);
    }
  }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_ = -1;
};

struct Interval {
  const torch::autograd::profiler::KinetoEvent* event;
  std::uint64_t start, end;
};

}  // namespace

std::string_view operator_kind(std::string_view name, std::string_view region) {
  const auto base = base_name(name);
  for (const auto& [kind, names] : kind_table()) {
    for (const auto pattern : names) {
      if (!matches(base, pattern)) continue;
      if (!region.empty() && kind != "matmuls") return region;
      return kind;
    }
  }
  return region.empty() ? std::string_view("other") : region;
}

StepProfile profile_steps(const std::function<void()>& step, int steps, bool gpu) {
  namespace profiler = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  std::set<ActivityType> activities{ActivityType::CPU};
  if (gpu) activities.insert(ActivityType::CUDA);
  {
    QuietStderr quiet;
    profiler::prepareProfiler(ProfilerConfig(ProfilerState::KINETO), activities);
    profiler::enableProfiler(ProfilerConfig(ProfilerState::KINETO), activities);
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    for (int i = 0; i < steps; ++i) step();
  } catch (...) {
    QuietStderr quiet;
    profiler::disableProfiler();
    throw;
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const auto result = [] {
    QuietStderr quiet;
    return profiler::disableProfiler();
  }();

  // Each thread's operators nest: an operator's own time is its span less its children's.
  std::map<std::uint64_t, std::vector<Interval>> by_thread;
  std::map<std::string, std::pair<double, long long>> kernel_ns;  // name -> ns, calls
  for (const auto& event : result->events()) {
    if (event.deviceType() == c10::DeviceType::CUDA) {
      auto& [ns, calls] = kernel_ns[event.name()];
      ns += double(event.durationNs());
      ++calls;
      continue;
    }
    if (event.deviceType() != c10::DeviceType::CPU || event.isAsync() || event.durationNs() == 0) continue;
    by_thread[event.startThreadId()].push_back({&event, event.startNs(), event.endNs()});
  }
  // Each thread's own times by kind and by operator, and the time inside its outermost operators.
  struct ThreadTimes {
    std::map<std::string, double> kind_ns;
    std::map<std::string, std::pair<double, long long>> operator_ns;  // name -> own ns, calls
    double covered_ns = 0;
  };
  std::map<std::uint64_t, ThreadTimes> times;
  for (auto& [thread, intervals] : by_thread) {
    ThreadTimes& mine = times[thread];
    std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    struct Open {
      const Interval* interval;
      double children_ns = 0;
      std::string_view region;
    };
    std::vector<Open> open;
    auto close = [&](const Open& o) {
      const double own = std::max(0.0, double(o.interval->end - o.interval->start) - o.children_ns);
      const std::string name = o.interval->event->name();
      if (!region_kind(name).empty()) {
        mine.kind_ns[std::string(region_kind(name))] += own;  // the region's own code
      } else {
        mine.kind_ns[std::string(operator_kind(name, o.region))] += own;
        auto& [ns, calls] = mine.operator_ns[name];
        ns += own;
        ++calls;
      }
      if (open.empty()) mine.covered_ns += double(o.interval->end - o.interval->start);
    };
    for (const Interval& interval : intervals) {
      while (!open.empty() && open.back().interval->end <= interval.start) {
        const Open done = open.back();
        open.pop_back();
        close(done);
      }
      if (!open.empty()) open.back().children_ns += double(interval.end - interval.start);
      std::string_view region = open.empty() ? std::string_view() : open.back().region;
      if (const auto kind = region_kind(interval.event->name()); !kind.empty()) region = kind;
      open.push_back({&interval, 0, region});
    }
    while (!open.empty()) {
      const Open done = open.back();
      open.pop_back();
      close(done);
    }
  }
  // On the CPU, operators on threads other than the caller's are the slices of a step that
  // takes the batch in slices (slice_workers.h). The step then has a lane per slice, and
  // times are per lane: the caller's own operators (the optimiser) run while every slice's
  // thread waits, so they fill every lane. Elsewhere (one thread; a GPU, whose autograd
  // threads only queue kernels) the threads' mean is the one lane, as before slices.
  const std::uint64_t caller = at::RecordFunction::currentThreadId();
  const double wall_ns = wall_ms * 1e6;
  int slices = 0;
  for (const auto& entry : times) slices += !gpu && entry.first != caller;
  const int lanes = std::max(slices, 1);
  const double caller_covered = times.count(caller) ? times.at(caller).covered_ns : 0.0;
  std::map<std::string, double> kind_ns;
  std::map<std::string, std::pair<double, long long>> operator_ns;  // name -> own ns, calls
  double covered_ns = 0;
  for (const auto& [thread, mine] : times) {
    const double weight = slices > 0 && thread == caller ? lanes : 1;
    for (const auto& [kind, ns] : mine.kind_ns) kind_ns[kind] += weight * ns;
    for (const auto& [name, own] : mine.operator_ns) {
      auto& [ns, calls] = operator_ns[name];
      ns += weight * own.first;
      calls += own.second;
    }
    covered_ns += mine.covered_ns;
  }
  double idle_ns = 0;
  if (slices > 0) {
    for (const auto& [thread, mine] : times) {
      if (thread != caller) idle_ns += std::max(0.0, wall_ns - mine.covered_ns - caller_covered);
    }
  } else {
    idle_ns = std::max(0.0, wall_ns - covered_ns / std::max<std::size_t>(1, times.size()));
  }
  StepProfile profile;
  profile.steps = steps;
  profile.ms_per_step = wall_ms / steps;
  profile.threads = lanes;
  kind_ns["between operators"] += idle_ns;
  for (const char* kind : kProfileKinds) {
    const double ms = kind_ns[kind] / 1e6 / steps / lanes;
    profile.kinds.push_back({kind, ms, ms / profile.ms_per_step});
  }
  for (const auto& [name, own] : operator_ns) {
    profile.operators.push_back(
        {name, std::string(operator_kind(name)), own.first / 1e6 / steps / lanes, own.second / steps / lanes});
  }
  std::sort(profile.operators.begin(), profile.operators.end(),
            [](const ProfiledOperator& a, const ProfiledOperator& b) { return a.ms_per_step > b.ms_per_step; });
  for (const auto& [name, time] : kernel_ns) {
    const auto& [ns, calls] = time;
    profile.gpu_kernels.push_back({name, ns / 1e6 / steps, double(calls) / steps});
    profile.gpu_kernels_per_step += double(calls) / steps;
    profile.gpu_busy_ms_per_step += ns / 1e6 / steps;
  }
  std::sort(profile.gpu_kernels.begin(), profile.gpu_kernels.end(),
            [](const ProfiledKernel& a, const ProfiledKernel& b) { return a.ms_per_step > b.ms_per_step; });
  return profile;
}

}  // namespace normlab
