#pragma once
// The run pickers of views that set two runs side by side (Inside the model, What it
// writes): every run by name, and by default the two most recent runs that have trained,
// the older on the left unless the newer is the pre-norm one of a pre/post pair (issue 49:
// a view shows the runs the user picked, else these).
class QComboBox;

namespace normlab::lab {
class RunStore;
}  // namespace normlab::lab

namespace normlab::ui {

// Refills `box` with the store's runs and picks `keep` when it is still there, else the
// default of `panel` (0: left, 1: right). Returns the picked run's id, 0 for none.
int fill_run_choice(QComboBox* box, const lab::RunStore& store, int panel, int keep);

}  // namespace normlab::ui
