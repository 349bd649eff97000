#pragma once
// English plurals for the texts the app writes with tr("%n run(s)", nullptr, n): Qt picks
// a plural form only through a translation, and the app ships none, so "1 run(s)" would
// show as written. Installed once per application, before any window.
#include <QTranslator>

namespace normlab::ui {

class EnglishPlurals : public QTranslator {
 public:
  using QTranslator::QTranslator;
  bool isEmpty() const override { return false; }
  // "(s)" becomes "s", or nothing when n is 1, and "(singular|plural)" the one that fits n:
  // "(It was|They were) moved". Texts without a count are left alone.
  QString translate(const char* context, const char* source, const char* disambiguation = nullptr,
                    int n = -1) const override;
};

// Installs one EnglishPlurals in the running application.
void install_english_plurals();

}  // namespace normlab::ui
