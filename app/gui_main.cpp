// normlab: the desktop app. Everything lives in ui/; this only reads the command line.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "core/device/cuda_backend.h"
#include "core/system/memory.h"
#include "ui/main_window.h"
#include "ui/plurals.h"
#include "ui/termination.h"

namespace {

struct Request {
  QStringList run_files;
  QString follow;
  bool start = false;
  bool course = false;
};

// Read before the window system is touched, so --help and --version work without a display.
Request parse_command_line(int argc, char** argv) {
  QCoreApplication parsing(argc, argv);
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Train a small GPT with pre-norm or post-norm blocks and watch the loss curves part."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("Queue a run with the last settings."));
  const QCommandLineOption course(QStringLiteral("course"), QStringLiteral("Queue the course experiment's five runs."));
  const QCommandLineOption follow(QStringLiteral("follow"),
                                  QStringLiteral("Show every run in DIR and follow it live as its files change "
                                                 "(normlab-cli's or a cluster's runs; nothing is written there)."),
                                  QStringLiteral("DIR"));
  parser.addOption(start);
  parser.addOption(course);
  parser.addOption(follow);
  parser.addPositionalArgument(QStringLiteral("runs"),
                               QStringLiteral("Run files (JSON) to show, e.g. from normlab-cli."),
                               QStringLiteral("[runs...]"));
  parser.process(parsing);  // prints help, version or the error, and exits, when asked to
  return {parser.positionalArguments(), parser.value(follow), parser.isSet(start), parser.isSet(course)};
}

}  // namespace

int main(int argc, char** argv) {
  normlab::ui::route_termination_signals();  // first: before Qt or LibTorch start threads
  normlab::keep_freed_memory_for_reuse();
  QCoreApplication::setOrganizationName(QStringLiteral("NormLab"));
  QCoreApplication::setApplicationName(QStringLiteral("NormLab"));
  QCoreApplication::setApplicationVersion(
      QStringLiteral(NORMLAB_VERSION " (LibTorch %1)").arg(QString::fromStdString(normlab::libtorch_version())));
  const Request request = parse_command_line(argc, argv);

  QApplication app(argc, argv);
  QApplication::setStyle(QStringLiteral("Fusion"));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/normlab.svg")));
  normlab::ui::install_english_plurals();
  normlab::ui::MainWindowOptions options;
  // A first launch offers the lesson, unless the command line asked for something else.
  options.offer_lesson = request.run_files.isEmpty() && request.follow.isEmpty() && !request.start && !request.course;
  normlab::ui::MainWindow window(options);
  // Before anything is queued: a SIGTERM from then on closes the window and saves.
  normlab::ui::close_on_termination_signals(window);
  window.show();
  if (!request.run_files.isEmpty()) window.import_runs(request.run_files);
  if (!request.follow.isEmpty()) window.follow_folder(request.follow);
  if (request.start) window.start_run();
  if (request.course) window.start_course_experiment();
  return app.exec();
}
