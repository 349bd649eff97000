#pragma once
// The app's own copy of every run, one JSON file each in its data folder, so that the
// runs of one session come back in the next.
#include <QDateTime>
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
  // sorting by name keeps the runs in the order they were made (and so queued), as no
  // two names of a session share a time stamp.
  QString new_path(const QString& run_name);

  // Where files that cannot be read are moved, so they are reported once and never lost.
  QString damaged_folder() const;

  struct Restored {
    std::vector<std::pair<RunRecord, QString>> runs;  // record and its file, oldest first
    QStringList damaged;                              // "file: what is wrong", each moved to damaged_folder()
    QStringList unmovable;                            // damaged and left in place: "file: why"
  };
  // Every run in the folder, in the order they were made. One that was still training
  // when its process ended comes back interrupted, with its points up to the last save;
  // queued runs come back queued.
  Restored restore() const;

 private:
  QString folder_;
  QDateTime last_stamp_;
};

}  // namespace normlab::ui
