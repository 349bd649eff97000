#pragma once
// The app's own copy of every run, one JSON file each in its data folder, so that the
// runs of one session come back in the next.
#include <QString>
#include <QStringList>
#include <vector>

#include "run_record.h"

namespace normlab::ui {

class RunArchive {
 public:
  explicit RunArchive(QString folder);

  const QString& folder() const { return folder_; }
  // A fresh file name for a run, "20260130-142501-123-post-norm_lr_6e-3_warmup_30.json":
  // sorting by name keeps the runs in the order they were made.
  QString new_path(const QString& run_name) const;

  struct Restored {
    std::vector<std::pair<RunRecord, QString>> runs;  // record and its file, oldest first
    QStringList problems;                             // "file: what is wrong"
  };
  // Every run in the folder. One that was still training when the app ended comes back
  // stopped: its points up to the last evaluation are kept.
  Restored restore() const;

 private:
  QString folder_;
};

}  // namespace normlab::ui
