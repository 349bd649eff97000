// normlab: the desktop app. Everything lives in ui/; this only reads the command line.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "main_window.h"
#include "memory.h"
#include "termination.h"

int main(int argc, char** argv) {
  normlab::keep_freed_memory_for_reuse();
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName(QStringLiteral("NormLab"));
  QCoreApplication::setApplicationName(QStringLiteral("NormLab"));
  QCoreApplication::setApplicationVersion(QStringLiteral(NORMLAB_VERSION));
  QApplication::setStyle(QStringLiteral("Fusion"));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/normlab.svg")));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral(
      "Train a small GPT with pre-norm or post-norm blocks and watch the loss curves part."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("Queue a run with the last settings."));
  const QCommandLineOption course(QStringLiteral("course"), QStringLiteral("Queue the course experiment's five runs."));
  parser.addOption(start);
  parser.addOption(course);
  parser.addPositionalArgument(QStringLiteral("runs"), QStringLiteral("Run files (JSON) to show, e.g. from normlab-cli."),
                               QStringLiteral("[runs...]"));
  parser.process(app);

  normlab::ui::MainWindow window;
  window.show();
  if (!parser.positionalArguments().isEmpty()) window.import_runs(parser.positionalArguments());
  if (parser.isSet(start)) window.start_run();
  if (parser.isSet(course)) window.start_course_experiment();
  normlab::ui::close_on_termination_signals(window);
  return app.exec();
}
