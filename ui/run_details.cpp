#include "run_details.h"

#include <QFileInfo>
#include <QLocale>
#include <algorithm>
#include <cmath>

#include "core/data/corpora.h"
#include "core/runs/config_fields.h"
#include "core/runs/run_text.h"
#include "core/runs/run_title.h"
#include "lab/qstring.h"
#include "lab/run_archive.h"
#include "lab/run_store.h"

#include "format.h"
#include "run_colors.h"

namespace normlab::ui {

namespace {

QString row(const QString& label, const QString& value) {
  return QStringLiteral("<tr><td style='color:#5f6b7a; padding-right:10px'>%1</td><td>%2</td></tr>").arg(label, value);
}

QString count_text(std::int64_t n) {
  return n > 0 ? QLocale::system().toString(qlonglong(n)) : QStringLiteral("\u2014");
}

// "Pre-norm with RMSNorm", "Post-norm" (LayerNorm goes unsaid, as in run names), "ReZero": a
// ReZero block has no norm to name.
QString block_text(const ModelConfig& model) {
  const QString placement = QString::fromUtf8(info(model.norm).label);
  if (!info(model.norm).norms || model.norm_type == NormType::LayerNorm) return placement;
  return QObject::tr("%1 with %2").arg(placement, QString::fromUtf8(kNormTypes[std::size_t(model.norm_type)].label));
}

}  // namespace

QColor verdict_colour(Verdict verdict) {
  switch (verdict) {
    case Verdict::Diverged:
    case Verdict::OnBaseline: return QColor(0xb71c1c);
    case Verdict::Overfitting: return QColor(0x9a6400);
    case Verdict::Learning:
    case Verdict::LeftBaseline: return QColor(0x2e7d32);
    case Verdict::NotStarted:
    case Verdict::TooEarly: break;
  }
  return QColor(0x5f6b7a);
}

QString verdict_html(const lab::RunEntry& run, const QString& lead) {
  const RunVerdict& v = run.verdict;
  QStringList links;
  if (v.evidence.step > 0) links << QStringLiteral("<a href='curves'>%1</a>").arg(QObject::tr("the loss curves"));
  if (v.evidence.gradient_step > 0) {
    links << QStringLiteral("<a href='statistic:attention_grad_norm'>%1</a>").arg(QObject::tr("the gradient by layer"));
  }
  if (v.evidence.context_step > 0) {
    links << QStringLiteral("<a href='text'>%1</a>").arg(QObject::tr("its context use and text"));
  }
  // A mark in the verdict's colour (the sentence names the verdict itself), then the sentence.
  QString html =
      QStringLiteral("<p style='margin:0 0 6px 0'>%1<span style='color:%2'>\u25cf</span> %3")
          .arg(lead.toHtmlEscaped(), verdict_colour(v.verdict).name(), lab::qstr(v.sentence).toHtmlEscaped());
  if (!links.isEmpty())
    html += QStringLiteral(" <span style='color:#5f6b7a'>%1</span>")
                .arg(QObject::tr("See %1.").arg(links.join(QStringLiteral(", "))));
  return html + QStringLiteral("</p>");
}

QString run_details_html(const lab::RunEntry& run) {
  const RunRecord& r = run.record;
  const TrainConfig& c = r.config;
  // Rename and the note beside the name: at the foot of a 250-px panel they were found only
  // by scrolling (issue 49).
  QString html = QStringLiteral(
                     "<p style='margin:0 0 6px 0'><span style='color:%1; font-size:14pt'>\u25a0</span>"
                     " <b>%2</b> &nbsp;<span style='color:#5f6b7a'>%3</span> &nbsp; <a href='rename'>%4</a> &nbsp; "
                     "<a href='note'>%5</a></p>")
                     .arg(run_colour(run).name(), lab::qstr(display_name(c)).toHtmlEscaped(),
                          lab::qstr(to_string(r.status)), QObject::tr("Rename\u2026"),
                          c.note.empty() ? QObject::tr("Add a note\u2026") : QObject::tr("Edit the note\u2026"));
  html += verdict_html(run);
  if (!c.note.empty()) {
    html += QStringLiteral("<p style='margin:0 0 6px 0; white-space:pre-wrap'>%1</p>")
                .arg(lab::qstr(c.note).toHtmlEscaped());
  }
  if (!r.message.empty()) {
    html +=
        QStringLiteral("<p style='margin:0 0 6px 0; color:#8a1c1c'>%1</p>").arg(lab::qstr(r.message).toHtmlEscaped());
  }
  html += QStringLiteral("<table cellspacing='0' cellpadding='1'>");
  html += row(QObject::tr("Block"),
              QObject::tr("%1, <i>%2</i>").arg(block_text(c.model), QString::fromUtf8(formula(c.model.norm))));
  html += row(QObject::tr("Model"), QObject::tr("%1 layers, width %2, %3 heads, vocabulary %4; %5 parameters")
                                        .arg(c.model.layers)
                                        .arg(c.model.d_model)
                                        .arg(c.model.heads)
                                        .arg(c.model.vocab)
                                        .arg(count_text(r.parameters)));
  html += row(QObject::tr("Schedule"), QObject::tr("peak lr %1, warmup %2 steps, %3 steps of %4 \u00d7 %5 tokens")
                                           .arg(lr_text(c.peak_lr))
                                           .arg(c.warmup_steps)
                                           .arg(c.steps)
                                           .arg(c.batch_size)
                                           .arg(c.model.context));
  html += row(QObject::tr("Optimiser"),
              QObject::tr("AdamW, weight decay %1, clipping %2, seed %3")
                  .arg(c.weight_decay)
                  .arg(c.clip_grad_norm > 0 ? QString::number(c.clip_grad_norm) : QObject::tr("off"))
                  .arg(qulonglong(c.seed)));
  // A corpus by its title ("Bookshelf"), a file by its name; the content hash when the file has it.
  const NamedCorpus* named = find_named_corpus(c.corpus_path.empty() ? kDefaultCorpus : c.corpus_path);
  QString corpus = named ? lab::qstr(named->title) : QFileInfo(lab::qstr(c.corpus_path)).fileName();
  if (!r.corpus_hash.empty()) corpus += QStringLiteral(" (%1)").arg(lab::qstr(r.corpus_hash));
  html += row(QObject::tr("Data"),
              QObject::tr("%1: %2 training, %3 held-out tokens")
                  .arg(corpus.toHtmlEscaped(), count_text(r.train_tokens), count_text(r.heldout_tokens)));
  if (!r.environment.device_name.empty()) {
    html += row(QObject::tr("Ran on"),
                QObject::tr("%1 (%2), LibTorch %3, NormLab %4")
                    .arg(lab::qstr(r.environment.device_name).toHtmlEscaped(),
                         lab::qstr(r.environment.precision).toHtmlEscaped(), lab::qstr(r.environment.libtorch_version),
                         lab::qstr(r.environment.app_version)));
  }
  if (!r.environment.engine.empty()) {
    html += row(QObject::tr("Built from"), QObject::tr("commit %1, on %2")
                                               .arg(lab::qstr(r.environment.engine).toHtmlEscaped(),
                                                    lab::qstr(r.environment.cpu).toHtmlEscaped()));
  }
  if (!r.evals.empty()) {
    const auto best = std::min_element(r.evals.begin(), r.evals.end(), [](const auto& a, const auto& b) {
      auto key = [](double v) { return std::isnan(v) ? INFINITY : v; };  // NaN is never the lowest
      return key(a.val_loss) < key(b.val_loss);
    });
    html += row(QObject::tr("Held-out"), QObject::tr("last <b>%1</b> at step %2, lowest %3 at step %4; baseline %5")
                                             .arg(loss_text(r.final_val_loss()))
                                             .arg(r.evals.back().step)
                                             .arg(loss_text(best->val_loss))
                                             .arg(best->step)
                                             .arg(loss_text(r.baseline_loss)));
    if (const RunRecord::LossesOverSteps losses = r.final_losses(); std::isfinite(losses.training)) {
      html += row(QObject::tr("Training"),
                  QObject::tr("%1 over steps %2–%3, held-out %4 over the same steps; the gap <b>%5</b>")
                      .arg(loss_text(losses.training))
                      .arg(losses.first_step)
                      .arg(losses.last_step)
                      .arg(loss_text(losses.heldout))
                      .arg(loss_text(losses.gap())));
    }
  }
  if (!r.steps.empty()) {
    const StepMetrics& last = r.steps.back();
    html += row(QObject::tr("Time"),
                QObject::tr("%1 for %2 steps, %3 tokens/s")
                    .arg(lab::qstr(duration_text(last.wall_s)))
                    .arg(last.step)
                    .arg(QLocale::system().toString(
                        last.step * double(c.batch_size) * c.model.context / std::max(last.wall_s, 1e-9), 'f', 0)));
  }
  if (!run.file.isEmpty()) {
    html += row(QObject::tr("Saved in"), run.file.toHtmlEscaped());
    if (const QFileInfo checkpoint(lab::RunArchive::checkpoint_of(run.file)); checkpoint.exists()) {
      html += row(QObject::tr("Checkpoint"), QObject::tr("%1 MB beside it: Run \u25b8 Resume goes on from it")
                                                 .arg(QString::number(double(checkpoint.size()) / 1e6, 'f', 1)));
    }
  }
  if (!c.label.empty()) html += row(QObject::tr("Settings say"), lab::qstr(run_title(c)).toHtmlEscaped());
  html += QStringLiteral("</table>");
  return html;
}

QString runs_difference_html(const std::vector<const lab::RunEntry*>& runs) {
  std::vector<const TrainConfig*> configs;
  for (const lab::RunEntry* run : runs) configs.push_back(&run->record.config);
  const auto cell = [](const QString& text) {
    return QStringLiteral("<td style='padding-right:10px'>%1</td>").arg(text);
  };
  QString html;
  if (runs.size() == 2) {
    html += QStringLiteral("<p style='margin:0 0 6px 0'>%1</p>")
                .arg(lab::qstr(compare_sentence(runs[0]->record, runs[1]->record)).toHtmlEscaped());
  }
  html += QStringLiteral("<table cellspacing='0' cellpadding='1'><tr><td></td>");
  for (const lab::RunEntry* run : runs) {
    html += cell(QStringLiteral("<span style='color:%1'>\u25a0</span> <b>%2</b>")
                     .arg(run_colour(*run).name(), lab::qstr(display_name(run->record.config)).toHtmlEscaped()));
  }
  html += QStringLiteral("</tr>");
  const auto line = [&](const QString& label, const auto& value_of) {
    html += QStringLiteral("<tr><td style='color:#5f6b7a; padding-right:10px'>%1</td>").arg(label);
    for (const lab::RunEntry* run : runs) html += cell(value_of(run->record));
    html += QStringLiteral("</tr>");
  };
  const std::vector<const ConfigField*> fields = differing_fields(configs);
  for (const ConfigField* field : fields) {
    line(lab::qstr(field->label).toHtmlEscaped(), [&](const RunRecord& r) {
      const std::string text = shown_text(*field, r.config);
      return text.empty() ? QStringLiteral("\u2014") : lab::qstr(text).toHtmlEscaped();  // an empty corpus: the default
    });
  }
  line(QObject::tr("Held-out, last"), [](const RunRecord& r) { return loss_text(r.final_val_loss()); });
  line(QObject::tr("Gap to training"), [](const RunRecord& r) { return loss_text(r.generalisation_gap()); });
  html += QStringLiteral("<tr><td style='color:#5f6b7a; padding-right:10px'>%1</td>").arg(QObject::tr("Verdict"));
  for (const lab::RunEntry* run : runs) {
    html += cell(QStringLiteral("<span style='color:%1'>%2</span>")
                     .arg(verdict_colour(run->verdict.verdict).name(),
                          QString::fromUtf8(info(run->verdict.verdict).label).toHtmlEscaped()));
  }
  html += QStringLiteral("</tr>");
  html += QStringLiteral("</table>");
  if (fields.empty()) {
    html += QStringLiteral("<p style='color:#5f6b7a'>%1</p>").arg(QObject::tr("The same settings, seed included."));
  }
  return html;
}

}  // namespace normlab::ui
