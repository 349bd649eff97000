#pragma once
// Everything known about one run, as HTML for the panel beside the run table.
#include <QString>

namespace normlab::ui {

struct RunEntry;

QString run_details_html(const RunEntry& run);

}  // namespace normlab::ui
