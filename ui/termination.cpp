#include "termination.h"

#include <QSocketNotifier>
#include <QWidget>
#include <atomic>
#include <sys/socket.h>
#include <unistd.h>

#include "core/system/stop_signals.h"

namespace normlab::ui {

namespace {
// The signal thread's end of the socket pair whose other end the window's event loop
// watches; -1 until there is a window.
std::atomic<int> g_signal_socket{-1};
}  // namespace

void route_termination_signals() {
  route_stop_signals([](int signal) {
    const int socket = g_signal_socket.load();
    if (socket < 0) ::_exit(128 + signal);
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(socket, &byte, 1);
  });
}

void close_on_termination_signals(QWidget& window) {
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) return;
  auto* notifier = new QSocketNotifier(sockets[1], QSocketNotifier::Read, &window);
  QObject::connect(notifier, &QSocketNotifier::activated, &window, [&window, socket = sockets[1]] {
    char byte;
    [[maybe_unused]] const ssize_t n = ::read(socket, &byte, 1);
    window.close();
  });
  g_signal_socket.store(sockets[0]);
}

}  // namespace normlab::ui
