#pragma once
// Everything known about one run, as HTML for the panel beside the run table.
#include <QString>
#include "lab_names.h"

namespace normlab::ui {


QString run_details_html(const RunEntry& run);

}  // namespace normlab::ui
