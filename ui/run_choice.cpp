#include "run_choice.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QSignalBlocker>
#include <vector>

#include "core/runs/run_title.h"
#include "lab/qstring.h"
#include "lab/run_store.h"

#include "run_colors.h"

namespace normlab::ui {

int fill_run_choice(QComboBox* box, const lab::RunStore& store, int panel, int keep) {
  const QSignalBlocker quiet(box);
  box->clear();
  std::vector<int> all, trained;  // in the order they were added: the latest last
  for (const lab::RunEntry& run : store.runs()) {
    box->addItem(run_name(store, run), run.id);
    all.push_back(run.id);
    if (!run.record.steps.empty()) trained.push_back(run.id);
  }
  // A queued run, first after a restart or while another trains, has nothing to show.
  const std::vector<int>& recent = trained.empty() ? all : trained;
  int fallback = 0;
  if (!recent.empty()) {
    // The older of the two on the left, but a pre-norm run beside another on the left.
    int pair[2] = {recent[recent.size() > 1 ? recent.size() - 2 : 0], recent.back()};
    const auto pre = [&](int id) { return store.find(id)->record.config.model.norm == NormPlacement::Pre; };
    if (pre(pair[1]) && !pre(pair[0])) std::swap(pair[0], pair[1]);
    fallback = pair[panel == 0 ? 0 : 1];
  }
  const int index = box->findData(store.find(keep) ? keep : fallback);
  box->setCurrentIndex(index >= 0 ? index : box->count() - 1);
  box->setToolTip(box->currentText());
  box->view()->setMinimumWidth(box->view()->sizeHintForColumn(0));
  return box->currentData().toInt();
}

}  // namespace normlab::ui
