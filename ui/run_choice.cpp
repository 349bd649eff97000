#include "run_choice.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QSignalBlocker>

#include "core/runs/run_title.h"
#include "lab/qstring.h"
#include "lab/run_store.h"

namespace normlab::ui {

int fill_run_choice(QComboBox* box, const lab::RunStore& store, int panel, int keep) {
  const QSignalBlocker quiet(box);
  box->clear();
  int fallback = 0, trained = 0;
  const NormPlacement wanted = panel == 0 ? NormPlacement::Pre : NormPlacement::Post;
  for (const lab::RunEntry& run : store.runs()) {
    box->addItem(lab::qstr(display_name(run.record.config)), run.id);
    if (run.record.config.model.norm != wanted) continue;
    fallback = run.id;
    if (!run.record.steps.empty()) trained = run.id;
  }
  if (trained) fallback = trained;
  const int index = box->findData(store.find(keep) ? keep : fallback);
  box->setCurrentIndex(index >= 0 ? index : box->count() - 1);
  box->setToolTip(box->currentText());
  box->view()->setMinimumWidth(box->view()->sizeHintForColumn(0));
  return box->currentData().toInt();
}

}  // namespace normlab::ui
