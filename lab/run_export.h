#pragma once
// The window's exports of runs, below the widgets: JSON (one run to a file, several into a
// folder, each under a name of its own), one CSV table of every run, the runs' text as
// Markdown. One code path writes the three and says what happened in one line; the
// window asks with the user's choice of file and shows the answer.
#include <QList>
#include <QString>
#include <string>
#include <vector>

namespace normlab::lab {

class RunStore;

enum class RunExport { Json, Csv, Markdown };

struct Exported {
  int runs = 0;   // the runs written
  QString error;  // empty when everything was written; else why not, for a dialog
  QString done;   // "Exported 2 runs to /home/me/x": for the status bar
};

// Writes the store's runs `ids` (ones no longer in it left out) to `target`: for JSON, a
// file when there is one run and `target` is not a folder, else one file per run into the
// folder `target`; for CSV and Markdown, the file `target`. Never throws.
Exported export_runs(const RunStore& store, const QList<int>& ids, RunExport format, const QString& target);

// File stems for runs' names, each its own: the name's file stem, then "-2", "-3", … for
// a stem already taken, so runs of one name exported together do not overwrite each other.
std::vector<std::string> unique_stems(const std::vector<std::string>& names);

}  // namespace normlab::lab
