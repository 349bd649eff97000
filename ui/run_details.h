#pragma once
// Everything known about one run, or what sets several apart, as HTML for the panel beside
// the run table.
#include <QString>
#include <vector>

namespace normlab::lab {
struct RunEntry;
}  // namespace normlab::lab

namespace normlab::ui {

QString run_details_html(const lab::RunEntry& run);
// Runs side by side: a column each, a row per setting in which any two differ, and their
// final held-out losses. Links "rename" and "note" in run_details_html ask for those.
QString runs_difference_html(const std::vector<const lab::RunEntry*>& runs);

}  // namespace normlab::ui
