#pragma once
// Everything known about one run, or what sets several apart, as HTML for the panel beside
// the run table.
#include <QColor>
#include <QString>
#include <vector>

#include "core/runs/verdict.h"

namespace normlab::lab {
struct RunEntry;
}  // namespace normlab::lab

namespace normlab::ui {

QString run_details_html(const lab::RunEntry& run);
// The run's verdict as a paragraph: its sentence after a mark in the verdict's colour, and
// links to the views its evidence comes from ("curves", "text", "statistic:attention_grad_norm"),
// for the details panel and Inside the model alike.
QString verdict_html(const lab::RunEntry& run, const QString& lead = {});  // `lead`: words before it, "Left: "
// The colour a verdict is drawn in: red where the run does not learn, green where it does.
QColor verdict_colour(Verdict verdict);
// Runs side by side: for two, a sentence saying what differs in their settings and their
// verdicts; then a column each, a row per setting in which any two differ, and their
// final held-out losses. Links "rename" and "note" in run_details_html ask for those.
QString runs_difference_html(const std::vector<const lab::RunEntry*>& runs);

}  // namespace normlab::ui
