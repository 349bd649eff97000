#include "verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "config_fields.h"
#include "run_title.h"

namespace normlab {

const VerdictInfo& info(Verdict verdict) { return kVerdicts[std::size_t(verdict)]; }

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The series it reads, by the names the engine records them under (core/training's
// predictions.cpp and layer_stats.cpp; tests/core/verdict_test.cpp holds the two together).
constexpr const char* kContextUse = "context_use";
constexpr const char* kFrequencyMismatch = "frequency_mismatch";
constexpr const char* kGradientNorms[] = {"attention_grad_norm", "mlp_grad_norm"};

std::string printed(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}
std::string nats(double value) { return printed("%.2f", value); }
// "1e-12", "3e-4", "0.8", "1.3": a ratio that spans decades.
std::string ratio_text(double ratio) {
  if (ratio >= 0.095) return printed("%.2g", ratio);
  std::string text = printed("%.0e", ratio);  // "1e-12", "3e-04"
  const auto e = text.find("e-0");
  if (e != std::string::npos) text.erase(e + 2, 1);
  return text;
}

bool ended(const RunRecord& run) { return run.status == RunStatus::Done; }

// Below the baseline by more than the stall margin: the model uses the context.
bool learnt(double heldout, double baseline) { return heldout < baseline - kStallMargin; }
// Within the band that counts as sitting on the baseline.
bool on_band(double heldout, double baseline) {
  return !learnt(heldout, baseline) && heldout <= baseline + kAboveBaselineBand;
}

// The last value of a scalar series at or before `step`, with its step; NaN and -1 when none.
std::pair<double, int> scalar_at(const RunRecord& run, const std::string& name, int step) {
  const Series* series = run.find_series(name);
  if (!series || series->layers > 0) return {kNaN, -1};
  for (std::size_t i = series->steps.size(); i-- > 0;) {
    if (series->steps[i] <= step) return {series->at(i), series->steps[i]};
  }
  return {kNaN, -1};
}

// The first layer's gradient norm over the last one's (a block's gradient: its attention's
// and its MLP's taken together, or whichever the record has), the median over the
// evaluations from `from_step` on: one step's ratio jumps by decades (post-norm's spikes), a stretch's
// median does not. Only at evaluations, where the layer statistics are always recorded.
void gradient_evidence(const RunRecord& run, int from_step, VerdictEvidence& e) {
  std::vector<const Series*> parts;  // what the record has of the two, with layers to compare
  for (const char* name : kGradientNorms) {
    const Series* series = run.find_series(name);
    if (series && series->layers >= 2 && (parts.empty() || series->layers == parts[0]->layers)) parts.push_back(series);
  }
  if (parts.empty()) return;
  const int layers = parts[0]->layers;
  std::vector<double> ratios;
  int first_step = -1, last_step = -1;
  for (const EvalMetrics& evaluation : run.evals) {
    if (evaluation.step < from_step) continue;
    double first = 0, last = 0;  // sums of squares over the parts
    bool recorded = true;
    for (const Series* series : parts) {
      const auto at = std::lower_bound(series->steps.begin(), series->steps.end(), evaluation.step);
      recorded = recorded && at != series->steps.end() && *at == evaluation.step;
      if (!recorded) break;
      const std::size_t i = std::size_t(at - series->steps.begin());
      first += series->at(i, 0) * series->at(i, 0);
      last += series->at(i, layers - 1) * series->at(i, layers - 1);
    }
    const double ratio = std::sqrt(first / last);
    if (!recorded || !std::isfinite(ratio)) continue;
    ratios.push_back(ratio);
    if (first_step < 0) first_step = evaluation.step;
    last_step = evaluation.step;
  }
  if (ratios.empty()) return;
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  e.gradient_ratio = n % 2 ? ratios[n / 2] : std::sqrt(ratios[n / 2 - 1] * ratios[n / 2]);  // between two: geometric
  e.gradient_from_step = first_step;
  e.gradient_step = last_step;
  e.layers = layers;
}

VerdictEvidence gather(const RunRecord& run) {
  VerdictEvidence e;
  e.heldout = e.baseline = e.to_baseline = e.lowest_heldout = e.training = e.gap = kNaN;
  e.context_use = e.frequency_mismatch = e.gradient_ratio = kNaN;
  e.baseline = run.baseline_loss > 0 ? run.baseline_loss : kNaN;
  if (!run.evals.empty()) {
    e.step = run.evals.back().step;
    e.heldout = run.evals.back().val_loss;
    e.to_baseline = e.heldout - e.baseline;
    for (const EvalMetrics& m : run.evals) {
      if (std::isfinite(m.val_loss) && !(m.val_loss >= e.lowest_heldout)) {
        e.lowest_heldout = m.val_loss;
        e.lowest_step = m.step;
      }
    }
    const RunRecord::LossesOverSteps losses = run.final_losses();
    e.training = losses.training;
    e.gap = losses.gap();
    e.gap_from_step = losses.first_step;
    std::tie(e.context_use, e.context_step) = scalar_at(run, kContextUse, e.step);
    e.frequency_mismatch = scalar_at(run, kFrequencyMismatch, e.step).first;
  }
  return e;
}

// The first step whose training loss, or evaluation whose held-out loss, is not finite; -1 if none.
int first_non_finite(const RunRecord& run) {
  int at = -1;
  for (const StepMetrics& s : run.steps) {
    if (!std::isfinite(s.train_loss)) {
      at = s.step;
      break;
    }
  }
  for (const EvalMetrics& m : run.evals) {
    if (!std::isfinite(m.val_loss)) return at < 0 ? m.step : std::min(at, m.step);
  }
  return at;
}

Verdict decide(const RunRecord& run, const VerdictEvidence& e, int& since) {
  if (run.evals.empty()) return Verdict::NotStarted;
  if (const int bad = first_non_finite(run); bad >= 0) {
    since = bad;
    return Verdict::Diverged;
  }
  if (run.status == RunStatus::Diverged) {
    since = run.steps.empty() ? e.step : run.steps.back().step;
    return Verdict::Diverged;
  }
  const auto& evals = run.evals;
  const std::size_t last = evals.size() - 1;
  const std::size_t lowest = std::size_t(
      std::find_if(evals.begin(), evals.end(), [&](const EvalMetrics& m) { return m.step == e.lowest_step; }) -
      evals.begin());
  if (e.heldout >= e.lowest_heldout + kExplodedRise) {
    for (std::size_t i = lowest; i <= last; ++i) {
      if (evals[i].val_loss >= e.lowest_heldout + kExplodedRise) {
        since = evals[i].step;
        break;
      }
    }
    return Verdict::Diverged;
  }
  if (!std::isfinite(e.baseline)) return Verdict::TooEarly;  // nothing to hold the loss against (the sentence says so)

  if (learnt(e.heldout, e.baseline)) {
    // Rising over a stretch since its lowest, while the training loss falls.
    bool rising = last >= lowest + std::size_t(kStretchEvaluations - 1);
    for (std::size_t i = lowest + 1; rising && i <= last; ++i) rising = evals[i].val_loss > e.lowest_heldout;
    if (rising && e.heldout >= e.lowest_heldout + kOverfittingRise &&
        run.train_loss_at(e.step) < run.train_loss_at(e.lowest_step)) {
      since = e.lowest_step;
      return Verdict::Overfitting;
    }
    // Below since: the first evaluation of the last unbroken run of evaluations below it.
    std::size_t below = last;
    while (below > 0 && learnt(evals[below - 1].val_loss, e.baseline)) --below;
    since = evals[below].step;
    // A stretch on the baseline before that, after step 0: it sat there, then escaped.
    int in_band = 0;
    for (std::size_t i = below; i-- > 0 && evals[i].step > 0 && on_band(evals[i].val_loss, e.baseline);) ++in_band;
    return in_band >= kStretchEvaluations ? Verdict::LeftBaseline : Verdict::Learning;
  }

  // Not below it: on it for a stretch after the warmup (or at the end of a run that ended), or too early.
  if (on_band(e.heldout, e.baseline)) {
    std::size_t first = last + 1;
    while (first > 0 && evals[first - 1].step > 0 && evals[first - 1].step >= run.config.warmup_steps &&
           on_band(evals[first - 1].val_loss, e.baseline)) {
      --first;
    }
    const int stretch = int(last + 1 - first);
    if (stretch >= kStretchEvaluations || (ended(run) && stretch >= 1)) {
      since = evals[first].step;
      return Verdict::OnBaseline;
    }
  }
  return Verdict::TooEarly;
}

std::string main_clause(const RunRecord& run, const RunVerdict& v) {
  const VerdictEvidence& e = v.evidence;
  const std::string vs = " (" + nats(e.heldout) + " vs " + nats(e.baseline) + " nats";
  switch (v.verdict) {
    case Verdict::NotStarted: return run.status == RunStatus::Queued ? "Queued: not trained yet" : "Not evaluated yet";
    case Verdict::TooEarly:
      if (!std::isfinite(e.baseline))
        return "Held-out loss " + nats(e.heldout) + " at step " + std::to_string(e.step) +
               ", but the record has no unigram baseline to hold it against";
      if (e.step == 0) return "Too early to tell: evaluated only before training (" + nats(e.heldout) + " nats)";
      if (on_band(e.heldout, e.baseline)) {
        return "Too early to tell: on the unigram baseline at step " + std::to_string(e.step) + vs +
               "), not yet for a stretch after the warmup";
      }
      return "Too early to tell: at step " + std::to_string(e.step) + " still " + nats(e.to_baseline) +
             " nats above the unigram baseline" + vs + ")";
    case Verdict::Learning:
      return "Learning: below the unigram baseline since step " + std::to_string(v.since_step) + ", " +
             nats(-e.to_baseline) + " nats under it at step " + std::to_string(e.step) + vs + ")";
    case Verdict::OnBaseline:
      return std::string(ended(run) ? "Ended on the unigram baseline, on it since step "
                                    : "On the unigram baseline since step ") +
             std::to_string(v.since_step) + vs + " at step " + std::to_string(e.step) + ")";
    case Verdict::LeftBaseline:
      return "Sat on the unigram baseline, then left it at step " + std::to_string(v.since_step) + "; now " +
             nats(-e.to_baseline) + " nats under it" + vs + " at step " + std::to_string(e.step) + ")";
    case Verdict::Overfitting:
      return "Overfitting since step " + std::to_string(v.since_step) + ": held-out loss up from " +
             nats(e.lowest_heldout) + " to " + nats(e.heldout) + " nats at step " + std::to_string(e.step) +
             " while training loss fell to " + nats(e.training) + " (gap " + nats(e.gap) + ")";
    case Verdict::Diverged:
      if (!std::isfinite(e.heldout) || first_non_finite(run) >= 0) {
        return "Diverged at step " + std::to_string(v.since_step) + ": the loss became non-finite";
      }
      if (e.heldout >= e.lowest_heldout + kExplodedRise) {
        return "Diverged at step " + std::to_string(v.since_step) + ": held-out loss exploded from " +
               nats(e.lowest_heldout) + " to " + nats(e.heldout) + " nats";
      }
      return "Diverged at step " + std::to_string(v.since_step) + " (" + run.message + ")";
  }
  return {};
}

// What the record says beyond the losses, and what it lacks, as clauses.
std::vector<std::string> evidence_clauses(const RunRecord& run, RunVerdict& v) {
  const VerdictEvidence& e = v.evidence;
  std::vector<std::string> clauses;
  if (v.verdict == Verdict::NotStarted || e.step <= 0) return clauses;
  if (v.verdict == Verdict::Learning || v.verdict == Verdict::LeftBaseline) {
    if (std::isfinite(e.gap)) {
      clauses.push_back("held-out sits " + nats(std::abs(e.gap)) + " nats " + (e.gap < 0 ? "below" : "above") +
                        " training loss");
    }
  }
  if (e.context_step > 0) {
    clauses.push_back(e.context_use < kLittleContextUse ? "it uses almost no context (" + nats(e.context_use) + " nats)"
                                                        : "it uses the context (" + nats(e.context_use) + " nats)");
    if (v.verdict == Verdict::OnBaseline && std::isfinite(e.frequency_mismatch) &&
        e.frequency_mismatch < kLittleContextUse) {
      clauses.push_back("its average prediction is the token frequencies (" + nats(e.frequency_mismatch) +
                        " nats off)");
    }
  } else {
    v.missing.push_back("context use");
  }
  if (e.gradient_step > 0) {
    const std::string first = gradient_clause(e);
    const std::string median =
        e.gradient_from_step < e.gradient_step ? "the median since step " + std::to_string(e.gradient_from_step) : "";
    const std::string noted = median.empty() ? first : first + " (" + median + ")";
    if (e.gradient_ratio < kStarvedGradient) clauses.push_back(noted + ": the update does not reach the first layers");
    else if (e.gradient_ratio < kWeakGradient) clauses.push_back(noted + ": the first layers learn slowly");
    else clauses.push_back("the gradient reaches every layer (" + first + (median.empty() ? "" : ", " + median) + ")");
  } else {
    v.missing.push_back(run.config.layer_stats_every == 0 ? "layer statistics (off for this run)" : "layer statistics");
  }
  return clauses;
}

}  // namespace

std::string gradient_clause(const VerdictEvidence& e) {
  if (e.gradient_step <= 0) return {};
  return "layer 1's gradient is " + ratio_text(e.gradient_ratio) +
         (e.gradient_ratio >= 1 ? " times layer " : " of layer ") + std::to_string(e.layers) + "'s";
}

std::string headline(const RunVerdict& v) {
  std::string text = info(v.verdict).label;
  if (v.since_step < 0) return text;
  const bool at = v.verdict == Verdict::LeftBaseline || v.verdict == Verdict::Diverged;
  return text + (at ? " at step " : " since step ") + std::to_string(v.since_step);
}

RunVerdict judge(const RunRecord& run) {
  RunVerdict v;
  v.evidence = gather(run);
  v.verdict = decide(run, v.evidence, v.since_step);
  // Over the stretch the verdict speaks of: since it took hold, else every evaluation after step 0.
  const bool stretch = v.since_step > 0 && v.verdict != Verdict::Diverged;
  gradient_evidence(run, stretch ? v.since_step : 1, v.evidence);
  if (v.verdict == Verdict::NotStarted) v.missing.push_back("evaluations");
  if (!std::isfinite(v.evidence.baseline) && !run.evals.empty()) v.missing.push_back("unigram baseline");
  v.sentence = main_clause(run, v);
  const std::vector<std::string> clauses = evidence_clauses(run, v);
  for (const std::string& clause : clauses) v.sentence += "; " + clause;
  v.sentence += ".";
  if (std::find(v.missing.begin(), v.missing.end(), "layer statistics (off for this run)") != v.missing.end() &&
      v.verdict != Verdict::NotStarted && v.evidence.step > 0) {
    v.sentence += " No layer statistics were recorded, so where the gradient stops is not known.";
  }
  return v;
}

namespace {

// How a run is called in a comparison: by the one setting that tells it apart, else by its title.
std::string called(const RunRecord& run, const std::vector<const ConfigField*>& differing) {
  if (differing.size() == 1) {
    const ConfigField& field = *differing[0];
    if (field.key == "norm") return placement_name(run.config.model.norm);  // "post-norm", as run names say it
    if (field.key == "peak_lr") return "the run at lr " + format_lr(run.config.peak_lr);  // as run names say it
    return "the run with " + field.noun + " " + shown_text(field, run.config);
  }
  return display_name(run.config);
}

// The verdict as the rest of a sentence that begins with the run's name; `baseline` is how
// it names the baseline: "the baseline" the first time a sentence mentions it, "it" after.
std::string clause(const RunRecord& run, const RunVerdict& v, const std::string& baseline) {
  const VerdictEvidence& e = v.evidence;
  const std::string at = std::to_string(e.step), since = std::to_string(v.since_step);
  switch (v.verdict) {
    case Verdict::NotStarted: return "has not started";
    case Verdict::TooEarly: return "is too early to tell at step " + at;
    case Verdict::Learning:
      return "is below " + baseline + " since step " + since + " (" + nats(e.heldout) + " nats at step " + at + ")";
    case Verdict::OnBaseline:
      return (ended(run) ? "ended on " + baseline : "is still on " + baseline + " at step " + at) +
             ", there since step " + since + " (" + nats(e.heldout) + " nats)";
    case Verdict::LeftBaseline:
      return "sat on " + baseline + " and left it at step " + since + " (" + nats(e.heldout) + " nats at step " + at +
             ")";
    case Verdict::Overfitting: return "overfits since step " + since + " (gap " + nats(e.gap) + ")";
    case Verdict::Diverged: return "diverged at step " + since;
  }
  return {};
}

bool names_the_baseline(Verdict v) {
  return v == Verdict::Learning || v == Verdict::OnBaseline || v == Verdict::LeftBaseline;
}

std::string capitalised(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') text[0] = char(text[0] - 'a' + 'A');
  return text;
}

}  // namespace

std::string compare_sentence(const RunRecord& a, const RunRecord& b) {
  std::vector<const ConfigField*> differing;
  for (const ConfigField* field : differing_fields({&a.config, &b.config})) {
    if (field->shapes_result) differing.push_back(field);
  }
  std::string text;
  if (differing.empty()) {
    text = "The same settings.";
  } else if (differing.size() == 1) {
    text = "Only the " + differing[0]->noun + " differs.";
  } else {
    text = "The ";
    for (std::size_t i = 0; i < differing.size(); ++i) {
      if (i > 0) text += i + 1 == differing.size() ? " and the " : ", the ";
      text += differing[i]->noun;
    }
    text += " differ.";
  }
  const std::vector<const ConfigField*>& naming = differing;
  const RunVerdict va = judge(a), vb = judge(b);
  std::string name_a = called(a, naming), name_b = called(b, naming);
  if (name_a == name_b) {
    name_a = "the first run";
    name_b = "the second";
  }
  const std::string first = clause(a, va, "the baseline");
  const std::string second = clause(b, vb, names_the_baseline(va.verdict) ? "it" : "the baseline");
  return text + " " + capitalised(name_a) + " " + first + "; " + name_b + " " + second + ".";
}

namespace {

nlohmann::json verdict_json(const RunRecord& run, const RunVerdict& v) {
  using nlohmann::json;
  const auto number = [](double value) { return std::isfinite(value) ? json(value) : json(nullptr); };
  const auto step = [](int value) { return value >= 0 ? json(value) : json(nullptr); };
  const VerdictEvidence& e = v.evidence;
  json out = {
      {"run", run.config.name},
      {"title", display_name(run.config)},
      {"status", to_string(run.status)},
      {"verdict", info(v.verdict).name},
      {"since_step", step(v.since_step)},
      {"sentence", v.sentence},
      {"missing", v.missing},
      {"evidence",
       {
           {"step", step(e.step)},
           {"heldout_loss", number(e.heldout)},
           {"baseline_loss", number(e.baseline)},
           {"heldout_minus_baseline", number(e.to_baseline)},
           {"lowest_heldout_loss", number(e.lowest_heldout)},
           {"lowest_step", step(e.lowest_step)},
           {"training_loss", number(e.training)},
           {"gap", number(e.gap)},
           {"context_use", number(e.context_use)},
           {"context_step", step(e.context_step)},
           {"frequency_mismatch", number(e.frequency_mismatch)},
           {"first_to_last_gradient_ratio", number(e.gradient_ratio)},
           {"gradient_from_step", step(e.gradient_from_step)},
           {"gradient_step", step(e.gradient_step)},
           {"layers", e.layers > 0 ? json(e.layers) : json(nullptr)},
       }},
  };
  return out;
}

}  // namespace

std::string verdict_json_text(const RunRecord& run, const RunVerdict& verdict) {
  return verdict_json(run, verdict).dump(2);
}

std::string explain_json_text(const std::vector<const RunRecord*>& runs) {
  if (runs.size() == 1) return verdict_json_text(*runs[0], judge(*runs[0]));
  nlohmann::json out = {{"runs", nlohmann::json::array()}};
  for (const RunRecord* run : runs) out["runs"].push_back(verdict_json(*run, judge(*run)));
  if (runs.size() == 2) out["comparison"] = compare_sentence(*runs[0], *runs[1]);
  return out.dump(2);
}

std::string explain_text(const RunRecord& run) {
  const RunVerdict v = judge(run);
  const VerdictEvidence& e = v.evidence;
  const int done = run.steps.empty() ? 0 : run.steps.back().step;
  std::string text = display_name(run.config) + " (" + to_string(run.status) + ", step " + std::to_string(done) +
                     " of " + std::to_string(run.config.steps) + "): " + info(v.verdict).name;
  if (v.since_step >= 0) text += " since step " + std::to_string(v.since_step);
  text += "\n  " + v.sentence + "\n";
  const auto line = [&](const std::string& what) { text += "  " + what + "\n"; };
  if (e.step >= 0) {
    line("held-out      " + printed("%.3f", e.heldout) + " at step " + std::to_string(e.step) + ", baseline " +
         printed("%.3f", e.baseline) + " (" + printed("%+.3f", e.to_baseline) + "), lowest " +
         printed("%.3f", e.lowest_heldout) + " at step " + std::to_string(e.lowest_step));
  }
  if (std::isfinite(e.training)) {
    line("training      " + printed("%.3f", e.training) + " (mean of steps " + std::to_string(e.gap_from_step) + "-" +
         std::to_string(e.step) + "), gap " + printed("%.3f", e.gap) + " to held-out over the same steps");
  }
  if (e.context_step >= 0) {
    line("context use   " + printed("%.3f", e.context_use) + " nats, frequency mismatch " +
         printed("%.3f", e.frequency_mismatch) + " nats, at step " + std::to_string(e.context_step));
  }
  if (e.gradient_step >= 0) {
    line("gradient      layer 1 / layer " + std::to_string(e.layers) + ": " + printed("%.3g", e.gradient_ratio) +
         ", the median of the evaluations from step " + std::to_string(e.gradient_from_step) + " to " +
         std::to_string(e.gradient_step));
  }
  for (const std::string& what : v.missing) line("not recorded  " + what);
  return text;
}

}  // namespace normlab
