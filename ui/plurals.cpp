#include "plurals.h"

#include <QCoreApplication>

namespace normlab::ui {

QString EnglishPlurals::translate(const char*, const char* source, const char*, int n) const {
  if (n < 0 || !source) return {};
  QString text = QString::fromUtf8(source);
  if (!text.contains(QStringLiteral("(s)"))) return {};
  return text.replace(QStringLiteral("(s)"), n == 1 ? QString() : QStringLiteral("s"));
}

void install_english_plurals() {
  QCoreApplication::installTranslator(new EnglishPlurals(QCoreApplication::instance()));
}

}  // namespace normlab::ui
