#pragma once
// A run as one Markdown document, for a notebook or an issue: what the window's details and
// What it writes show of it, in one file. Exported from the window (File ▸ Export runs as
// Markdown) through lab/run_export.
#include <string>

#include "core/runs/run_record.h"

namespace normlab {

// The run's title; its verdict and sentence (core/runs/verdict.h); its note; its settings
// (every field of config_fields(), as the settings panel says them); its losses at each
// evaluation (held-out, training over the same steps and the gap, as the run table has them)
// against the unigram baseline; then its text: the prompts, and a section per evaluation
// with each prompt's continuations and its two statistics there.
std::string run_markdown(const RunRecord& run);

}  // namespace normlab
