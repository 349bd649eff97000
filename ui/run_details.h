#pragma once
// Everything known about one run, as HTML for the panel beside the run table.
#include <QString>

namespace normlab::lab {
struct RunEntry;
}  // namespace normlab::lab

namespace normlab::ui {

QString run_details_html(const lab::RunEntry& run);

}  // namespace normlab::ui
