#include "seeds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "config_fields.h"
#include "run_title.h"

namespace normlab {

namespace {
std::string seed_suffix(std::uint64_t seed) { return " seed " + std::to_string(seed); }
std::string without_seed(const std::string& name, std::uint64_t seed) {
  const std::string suffix = seed_suffix(seed);
  const bool suffixed =
      name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  return suffixed ? name.substr(0, name.size() - suffix.size()) : name;
}
}  // namespace

TrainConfig with_seed(TrainConfig config, int i, int seeds) {
  config.seed += std::uint64_t(i);
  if (config.name.empty()) config.name = default_run_name(config);
  if (seeds > 1) config.name += seed_suffix(config.seed);
  if (seeds > 1 && !config.label.empty()) config.label += seed_suffix(config.seed);
  return config;
}

std::string seed_group_name(const TrainConfig& config) { return without_seed(config.name, config.seed); }

std::string seed_group_title(const TrainConfig& config) {
  return config.label.empty() ? run_title(config, SeedInTitle::Unsaid) : without_seed(config.label, config.seed);
}

std::vector<TrainConfig> repeat_over_seeds(const std::vector<TrainConfig>& configs, int seeds) {
  if (seeds < 1) throw UserError("seeds must be at least 1, not " + std::to_string(seeds));
  std::vector<TrainConfig> out;
  for (int i = 0; i < seeds; ++i) {
    for (const TrainConfig& config : configs) out.push_back(with_seed(config, i, seeds));
  }
  return out;
}

bool differ_only_in_seed(const TrainConfig& a, const TrainConfig& b) {
  TrainConfig b_with_a_seed = b;
  b_with_a_seed.seed = a.seed;
  return same_experiment(a, b_with_a_seed);
}

std::vector<std::vector<std::size_t>> seed_groups(const std::vector<const RunRecord*>& runs) {
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto group = std::find_if(groups.begin(), groups.end(), [&](const std::vector<std::size_t>& g) {
      return differ_only_in_seed(runs[g.front()]->config, runs[i]->config);
    });
    if (group == groups.end()) groups.push_back({i});
    else group->push_back(i);
  }
  return groups;
}

namespace {

// Mean, low and high at each index of `points(run)` over the runs that reached it.
template <typename Point, typename Points, typename Value>
void spread_over(const std::vector<const RunRecord*>& group, Points points, Value value, std::vector<Point>& mean,
                 std::vector<Point>* low = nullptr, std::vector<Point>* high = nullptr) {
  std::size_t longest = 0;
  for (const RunRecord* run : group) longest = std::max(longest, points(*run).size());
  for (std::size_t i = 0; i < longest; ++i) {
    double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
    int count = 0;
    const Point* first = nullptr;
    for (const RunRecord* run : group) {
      if (i >= points(*run).size()) continue;
      const Point& p = points(*run)[i];
      if (!first) first = &p;
      const double v = value(p);
      if (!std::isfinite(v)) continue;
      sum += v, lo = std::min(lo, v), hi = std::max(hi, v), ++count;
    }
    Point m = *first;  // step and wall time of the first run that got there
    const double nan = std::numeric_limits<double>::quiet_NaN();
    value(m) = count ? sum / count : nan;
    mean.push_back(m);
    if (low && high) {
      Point l = m, h = m;
      value(l) = count ? lo : nan;
      value(h) = count ? hi : nan;
      low->push_back(l);
      high->push_back(h);
    }
  }
}

}  // namespace

std::vector<const RunRecord*> runs_in_mean(const std::vector<const RunRecord*>& group) {
  auto with_points_once_per_seed = [&group](bool cut_short) {
    std::vector<const RunRecord*> picked;
    for (const RunRecord* run : group) {
      const bool has_points = !run->steps.empty() || !run->evals.empty();
      const bool seed_taken = std::any_of(picked.begin(), picked.end(),
                                          [run](const RunRecord* p) { return p->config.seed == run->config.seed; });
      if (has_points && !seed_taken && (progress_of(run->status) == RunProgress::CutShort) == cut_short) {
        picked.push_back(run);
      }
    }
    return picked;
  };
  std::vector<const RunRecord*> picked = with_points_once_per_seed(false);
  return picked.empty() ? with_points_once_per_seed(true) : picked;
}

SeedSpread seed_spread(const std::vector<const RunRecord*>& group) {
  SeedSpread s;
  if (group.empty()) return s;
  const std::vector<const RunRecord*> members = runs_in_mean(group);
  const RunRecord& first = members.empty() ? *group.front() : *members.front();
  s.runs = int(members.size());
  s.mean.config = first.config;
  s.mean.environment = first.environment;
  s.mean.parameters = first.parameters;
  s.mean.baseline_loss = first.baseline_loss;
  s.mean.status = first.status;
  spread_over(
      members, [](const RunRecord& r) -> const std::vector<StepMetrics>& { return r.steps; },
      [](auto& p) -> auto& { return p.train_loss; }, s.mean.steps);
  spread_over(
      members, [](const RunRecord& r) -> const std::vector<EvalMetrics>& { return r.evals; },
      [](auto& p) -> auto& { return p.val_loss; }, s.mean.evals, &s.low, &s.high);
  return s;
}

}  // namespace normlab
