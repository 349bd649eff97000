#pragma once
// SIGINT and SIGTERM close the window the same way its close button does, so a run in
// progress is stopped and saved instead of being cut off.
class QWidget;

namespace normlab::ui {

void close_on_termination_signals(QWidget& window);

}  // namespace normlab::ui
