#pragma once
// Follows a folder of run files that other programs write (normlab-cli, a cluster's array
// tasks, another NormLab), the way TensorBoard follows a log directory: every run in it is
// shown in the store and updated as its file changes (new runs appear, running ones grow,
// finished ones settle, removed ones go, one whose file says running but stays unchanged
// for kLostAfterSeconds shows as interrupted), and a sweep's description there rebuilds the
// sweep. A file counts as changed when its size or modification time does; the folder is
// watched for notifications and polled besides, since a network mount (NFS, sshfs) sends
// none. Following only reads: no lock, no moved damaged file, nothing written there.
#include <QDateTime>
#include <QFileSystemWatcher>
#include <QHash>
#include <QObject>
#include <QString>
#include <QTimer>
#include <optional>

#include "core/sweeps/sweep.h"

namespace normlab::lab {

class RunStore;

class FolderFollower : public QObject {
  Q_OBJECT
 public:
  // How often the folder is looked at without a notification: a run saves at least every
  // few seconds, so its curve moves on at about the pace it is written.
  static constexpr int kPollMs = 2000;
  enum class Watch { NotificationsAndPolling, PollingOnly };

  FolderFollower(RunStore& store, Watch watch = Watch::NotificationsAndPolling, QObject* parent = nullptr);

  // Follows `folder` from now on, in place of the one before (whose runs stay shown);
  // empty, or why not (it is not a folder that can be read).
  QString follow(const QString& folder);
  const QString& folder() const { return folder_; }
  // The sweep the folder's description rebuilds, once one was read.
  const std::optional<Sweep>& sweep() const { return sweep_; }
  // Looks at the folder now; the timer and the notifications call it.
  void look();

 signals:
  // A description was read that differs from the last (results aside).
  void sweep_found(const normlab::Sweep& sweep);

 private:
  struct Seen {
    qint64 size = -1;
    QDateTime modified;
    int run_id = 0;  // 0: not a run (a sweep's description, another JSON, one that could not be read)
  };
  void read_changed(const QString& path, Seen& seen);
  void mark_if_lost(const Seen& seen);

  RunStore& store_;
  QFileSystemWatcher* watcher_ = nullptr;  // none when polling only
  QTimer poll_, soon_;
  QString folder_;
  QHash<QString, Seen> seen_;  // by file path
  std::optional<Sweep> sweep_;
};

}  // namespace normlab::lab
