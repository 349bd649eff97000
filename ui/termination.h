#pragma once
// SIGINT and SIGTERM close the window the same way its close button does, so a run in
// progress is stopped and saved instead of being cut off.
class QWidget;

namespace normlab::ui {

// First in main, before any thread starts: the signals are taken on a thread of their own
// (core's stop_signals.h says why). Until a window is given they end the app at once, as
// they would by default: nothing has been started to save.
void route_termination_signals();
// From now on the signals close `window`.
void close_on_termination_signals(QWidget& window);

}  // namespace normlab::ui
