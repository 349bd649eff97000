#include "config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "config_fields.h"

namespace normlab {

const PlacementInfo& info(NormPlacement norm) { return kPlacements[std::size_t(norm)]; }

std::string to_string(NormPlacement norm) { return info(norm).name; }

NormPlacement parse_norm(const std::string& text) {
  TrainConfig config;
  set_field_text(config_field("norm"), config, text);
  return config.model.norm;
}

const char* formula(NormPlacement norm) { return info(norm).formula; }

void validate(const TrainConfig& c) {
  for (const ConfigField& field : config_fields()) check_field(field, c);
  if (c.model.d_model % c.model.heads != 0) {
    throw UserError("heads must divide d_model (" + std::to_string(c.model.d_model) + ")");
  }
  if (c.model.scaled_residual_init == Switch::On && c.model.norm == NormPlacement::DeepNorm) {
    throw UserError("scaled-init does not combine with deepnorm, which sets its own initial scale");
  }
}

std::string format_lr(double lr) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", lr);
  std::string s = text;
  // "0.001" -> "1e-3", "0.0006" -> "6e-4": the form the course uses.
  if (lr > 0 && lr < 0.01) {
    const int exponent = int(std::floor(std::log10(lr) + 1e-9));
    std::snprintf(text, sizeof text, "%.3g", lr / std::pow(10.0, exponent));
    s = std::string(text) + "e" + std::to_string(exponent);
  }
  return s;
}

std::string placement_name(NormPlacement placement) {
  std::string name = info(placement).label;  // "Pre-norm" -> "pre-norm"
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  return name;
}

std::string design_name(const TrainConfig& c) {
  return placement_name(c.model.norm) + design_options(c) + " lr " + format_lr(c.peak_lr) + " warmup " +
         std::to_string(c.warmup_steps);
}

std::string design_options(const TrainConfig& c) {
  std::string name;
  // LayerNorm, the default and every earlier run's norm, goes unsaid.
  // ReZero has no norm, so its norm type goes unsaid as well.
  const bool has_norms = info(c.model.norm).norms;
  if (has_norms && c.model.norm_type != NormType::LayerNorm)
    name += std::string(" ") + kNormTypes[std::size_t(c.model.norm_type)].label;
  if (has_norms && c.model.norm_type == NormType::Dyt && c.model.dyt_alpha0 != ModelConfig{}.dyt_alpha0) {
    name += " alpha0 " + field_text(config_field("dyt_alpha0"), c);
  }
  if (c.model.qk_norm == Switch::On) name += " QK-norm";
  if (c.model.scaled_residual_init == Switch::On) name += " scaled init";
  return name;
}

std::string default_run_name(const TrainConfig& c) {
  std::string name = design_name(c);
  // The course's depth goes unsaid too; any other is part of what sets a run apart.
  if (c.model.layers != ModelConfig{}.layers) name += " layers " + std::to_string(c.model.layers);
  // A corpus by name other than the default, so a run on the bookshelf does not take the
  // file of the same design on the King James text (a file's path is left unsaid, as before).
  const std::string& corpus = c.corpus_path;
  if (!corpus.empty() && corpus != kDefaultCorpusName && corpus.find_first_of("/.") == std::string::npos) {
    name += " " + corpus;
  }
  return name;
}

}  // namespace normlab
