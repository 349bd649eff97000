#include "image_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <cmath>

namespace normlab::ui {

ImageRequest ask_image(QWidget* parent, QSize shown, const QString& folder) {
  QDialog dialog(parent);
  dialog.setWindowTitle(QObject::tr("Export chart image"));
  auto* form = new QFormLayout(&dialog);
  auto* format = new QComboBox;
  format->addItem(QObject::tr("PNG image"), QStringLiteral("png"));
  format->addItem(QObject::tr("SVG drawing"), QStringLiteral("svg"));
  auto* width = new QSpinBox;
  auto* height = new QSpinBox;
  for (QSpinBox* box : {width, height}) {
    box->setRange(100, 16000);
    box->setSuffix(QObject::tr(" px"));
  }
  auto* keep = new QCheckBox(QObject::tr("Keep the chart's proportions"));
  keep->setChecked(true);
  auto* note = new QLabel;
  note->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  auto set_defaults = [=] {
    const bool png = format->currentData() == QStringLiteral("png");
    // PNG at twice the screen size is sharp on high-resolution screens and in print.
    const QSize size = png ? shown * 2 : shown;
    const QSignalBlocker block_w(width), block_h(height);
    width->setValue(size.width());
    height->setValue(size.height());
    note->setText(png ? QObject::tr("Default: twice the chart's size on screen")
                      : QObject::tr("Vector drawing; size sets its proportions"));
  };
  QObject::connect(format, &QComboBox::currentIndexChanged, &dialog, set_defaults);
  QObject::connect(width, &QSpinBox::valueChanged, &dialog, [=](int w) {
    if (!keep->isChecked()) return;
    const QSignalBlocker block(height);
    height->setValue(int(std::lround(double(w) * shown.height() / shown.width())));
  });
  QObject::connect(height, &QSpinBox::valueChanged, &dialog, [=](int h) {
    if (!keep->isChecked()) return;
    const QSignalBlocker block(width);
    width->setValue(int(std::lround(double(h) * shown.width() / shown.height())));
  });
  set_defaults();
  auto* size_row = new QHBoxLayout;
  size_row->addWidget(width);
  size_row->addWidget(new QLabel(QStringLiteral("\u00d7")));
  size_row->addWidget(height);
  form->addRow(QObject::tr("Format"), format);
  form->addRow(QObject::tr("Size"), size_row);
  form->addRow(QString(), keep);
  form->addRow(QString(), note);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(QObject::tr("Choose file\u2026"));
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return {};
  const QString suffix = format->currentData().toString();
  const QString filter =
      suffix == QStringLiteral("png") ? QObject::tr("PNG image (*.png)") : QObject::tr("SVG drawing (*.svg)");
  QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Export chart image"),
                                              QDir(folder).filePath(QStringLiteral("normlab-loss.") + suffix), filter);
  if (path.isEmpty()) return {};
  if (QFileInfo(path).suffix().toLower() != suffix) path += '.' + suffix;
  return {path, QSize(width->value(), height->value())};
}

}  // namespace normlab::ui
