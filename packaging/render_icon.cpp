// Renders the app's SVG icon to a square PNG of the given size, for the hicolor sizes
// desktops look up (build-time tool; Qt Svg is already a dependency of the app).
//   normlab-render-icon icon.svg 48 out.png
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  const int size = argc == 4 ? std::atoi(argv[2]) : 0;
  if (size <= 0) {
    std::fprintf(stderr, "usage: normlab-render-icon ICON.svg SIZE OUT.png\n");
    return 2;
  }
  QSvgRenderer svg(QString::fromLocal8Bit(argv[1]));
  if (!svg.isValid()) {
    std::fprintf(stderr, "normlab-render-icon: cannot read %s\n", argv[1]);
    return 1;
  }
  QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  svg.render(&painter);
  painter.end();
  if (!image.save(QString::fromLocal8Bit(argv[3]), "PNG")) {
    std::fprintf(stderr, "normlab-render-icon: cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
