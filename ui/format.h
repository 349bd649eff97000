#pragma once
// How the app writes numbers and settings. Run names as files and durations are
// written as the command line writes them (run_text.h).
#include <QString>

#include "core/runs/config.h"

namespace normlab::lab {
struct Estimate;
}  // namespace normlab::lab

namespace normlab::ui {

QString loss_text(double nats);            // "5.090", or an em dash when not a number
QString lr_text(double lr);                // "6e-3", as the course writes rates
QString setup_text(const TrainConfig& c);  // one line: model, batch, steps
// "from “pre-norm lr 1e-3”, 45 s for 600 steps": what an estimate rests on; empty if nothing.
QString estimate_basis_text(const lab::Estimate& e);

}  // namespace normlab::ui
