#pragma once
// The lab's own copy of every run, one JSON file each in its runs folder, so that the
// runs of one session come back in the next. The one place that writes and deletes the
// app's run files (the trainer's saves come through write() too). One NormLab owns a
// folder at a time: a second one finds it locked and only reads it.
#include <QDateTime>
#include <QLockFile>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "core/runs/run_record.h"

namespace normlab::lab {

class RunArchive {
 public:
  // Takes the folder's lock, or, when another living NormLab holds it, opens it read-only.
  explicit RunArchive(QString folder);

  const QString& folder() const { return folder_; }
  // False when another NormLab owns the folder: nothing here is then written or deleted.
  bool writable() const { return owner_.isEmpty(); }
  // Gives the folder up, as the session ends: another NormLab may own it now.
  void release();
  // Who owns the folder when this archive cannot write: "process 4242 on host"; empty
  // when this archive may write (a folder refusing the lock file refuses the runs' files
  // too, and each save says so).
  const QString& owner() const { return owner_; }

  // A fresh file name for a run, "20260130-142501-123-post-norm_lr_6e-3_warmup_30.json":
  // sorting by name keeps the runs in the order they were made (and so queued), as no
  // two names of a session share a time stamp.
  QString new_path(const QString& run_name);
  // Writes the record atomically (safe from any thread); UserError saying why not.
  static void write(const RunRecord& run, const QString& path);
  // A run's checkpoint (core/training/checkpoint.h) beside its file, RUN.json -> RUN.ckpt: written
  // atomically, or dropped when the run keeps none. Safe from any thread.
  static QString checkpoint_of(const QString& run_file);
  static void write_checkpoint(const std::string& bytes, const QString& run_file);
  static void drop_checkpoint(const QString& run_file);
  static QString weights_of(const QString& run_file);  // RUN.weights (core/training/weights.h)
  static void write_weights(const std::string& bytes, const QString& run_file);
  static void drop_weights(const QString& run_file);
  // Deletes a run's file, its checkpoint and its weights; exported copies elsewhere are never touched.
  void remove(const QString& path) const;

  // Where files that cannot be read are moved, so they are reported once and never lost.
  QString damaged_folder() const;

  struct Restored {
    std::vector<std::pair<RunRecord, QString>> runs;  // record and its file, oldest first
    QStringList damaged;                              // "file: what is wrong", each moved to damaged_folder()
    QStringList unmovable;                            // damaged and left in place: "file: why"
  };
  // Every run in the folder, in the order they were made. One that was still training
  // when its process ended comes back interrupted, with its points up to the last save;
  // queued runs come back queued. Read-only, records are as their owner last saved them
  // and damaged files stay where they are.
  Restored restore() const;

 private:
  QString folder_;
  std::unique_ptr<QLockFile> lock_;
  QString owner_;
  QDateTime last_stamp_;
};

}  // namespace normlab::lab
