#include "plurals.h"

#include <QCoreApplication>
#include <QRegularExpression>

namespace normlab::ui {

QString EnglishPlurals::translate(const char*, const char* source, const char*, int n) const {
  if (n < 0 || !source) return {};
  static const QRegularExpression forms(QStringLiteral("\\(([^()|]*)\\|([^()|]*)\\)"));  // (singular|plural)
  QString text = QString::fromUtf8(source);
  if (!text.contains(QStringLiteral("(s)")) && !text.contains(forms)) return {};
  text.replace(QStringLiteral("(s)"), n == 1 ? QString() : QStringLiteral("s"));
  return text.replace(forms, n == 1 ? QStringLiteral("\\1") : QStringLiteral("\\2"));
}

void install_english_plurals() {
  QCoreApplication::installTranslator(new EnglishPlurals(QCoreApplication::instance()));
}

}  // namespace normlab::ui
