#include "about_view.h"

#include <QFile>

#include "core/runs/config.h"
#include "core/runs/config_fields.h"
#include "core/sweeps/sweep.h"
#include "core/training/layer_stats.h"
#include "lab/qstring.h"

namespace normlab::ui {

namespace {

QString escaped(const std::string& text) { return lab::qstr(text).toHtmlEscaped(); }

// One item of a list: its label, the name the command line and run files use, what it
// does (and, where it has one, its formula).
QString item(const std::string& label, const std::string& name, const std::string& help,
             const std::string& formula = {}) {
  QString html = QStringLiteral("<li><b>%1</b> <span class=\"muted\">(%2)</span>").arg(escaped(label), escaped(name));
  if (!formula.empty()) html += QStringLiteral(" &nbsp;<span class=\"formula\">%1</span>").arg(escaped(formula));
  return html + QStringLiteral("<br>%1</li>").arg(escaped(help));
}

}  // namespace

// The pieces are made by scripts/figures.py from measured runs and compiled in as resources
// (ui/CMakeLists.txt); the HTML comments around them are invisible in the page.
QString AboutView::measured_html(const QString& name) {
  QFile file(QStringLiteral(":/about/%1.html").arg(name));
  if (!file.open(QIODevice::ReadOnly)) return tr("<p>(This build lacks its measured figures: %1.)</p>").arg(name);
  return QString::fromUtf8(file.readAll());
}

// Written from the engine's tables, so a placement, norm type, switch, statistic or sweep
// preset added there is listed here with no change to this page (the prose above it
// explains the designs; this says which ones this build has).
QString AboutView::choices_html() {
  QString html = tr("<h2>Every choice in this build</h2>");
  const auto setting = [](const char* key) {
    const ConfigField& field = config_field(key);
    return QStringLiteral("<i>%1</i>, <code>--%2</code>").arg(escaped(field.label), escaped(field.flag));
  };
  html += tr("<p>Placements (%1):</p><ul>").arg(setting("norm"));
  for (const PlacementInfo& row : kPlacements) html += item(row.label, row.name, row.help, row.formula);
  html += tr("</ul><p>Norm types (%1):</p><ul>").arg(setting("norm_type"));
  for (const NormTypeInfo& row : kNormTypes) html += item(row.label, row.name, row.help, row.formula);
  html += tr("</ul><p>Switches, each combining with every placement and norm type:</p><ul>");
  for (const ConfigField& field : config_fields()) {
    if (std::holds_alternative<Member<Switch>>(field.member)) html += item(field.label, "--" + field.flag, field.help);
  }
  html += tr("</ul><p>Statistics recorded inside the model:</p><ul>");
  for (const StatisticInfo& row : layer_statistics()) {
    html += item(row.label, row.name, row.only_for.empty() ? row.help : row.help + " (" + row.only_for + ")");
  }
  html += tr("</ul><p>Built-in sweeps (the Sweeps tab's presets, <code>sweep --preset</code>):</p><ul>");
  for (const SweepPresetInfo& row : kSweepPresets) html += item(row.label, row.name, row.help);
  return html + QStringLiteral("</ul>");
}

AboutView::AboutView(QWidget* parent) : QTextBrowser(parent) {
  setOpenExternalLinks(true);
  setFrameShape(QFrame::NoFrame);
  document()->setDocumentMargin(28);
  document()->setDefaultStyleSheet(
      QStringLiteral("body { color: #222; } h1 { font-size: 17pt; font-weight: 600; margin-bottom: 4px; }"
                     " h2 { font-size: 12.5pt; font-weight: 600; margin-top: 18px; color: #1b3a5c; }"
                     " p, li { font-size: 10.5pt; line-height: 135%; } .formula { font-family: 'DejaVu Serif';"
                     " font-style: italic; font-size: 11.5pt; } .pre { color: #1f5fb0; font-weight: 600; }"
                     " .post { color: #c62828; font-weight: 600; } .long { color: #2e7d32; font-weight: 600; }"
                     " .muted { color: #5f6b7a; } .lns { color: #4a35b1; font-weight: 600; }"
                     " .rezero { color: #b0267f; font-weight: 600; } .dyt { color: #7c8a00; font-weight: 600; }"));
  const QString pre = QString::fromUtf8(formula(NormPlacement::Pre));
  const QString post = QString::fromUtf8(formula(NormPlacement::Post));
  const QString lns = QString::fromUtf8(formula(NormPlacement::LayerNormScaling));
  const QString rezero = QString::fromUtf8(formula(NormPlacement::ReZero));
  const QString dyt = QString::fromUtf8(kNormTypes[std::size_t(NormType::Dyt)].formula);
  setHtml(tr(R"(
<div style="max-width: 46em">
<h1>Where the norm goes</h1>
<p class="muted">NormLab trains the same small GPT twice over, changing one thing: where each
block normalises. Everything else (data, seed, schedule) stays put, so any difference
in the curves comes from that choice.</p>

<h2>Two ways to build a block</h2>
<p>A Transformer block reads a running sum, the residual stream <i>x</i>, computes an
update <i>f</i> (attention, then an MLP) and adds it back. The LayerNorm can sit in one of
two places:</p>
<ul>
<li><span class="post">Post-norm</span> &nbsp;<span class="formula">%2</span><br>
The original 2017 design. The sum is normalised after every addition, so each block
rescales the whole stream, and a gradient travelling back from the loss has to pass
through one norm per block on its way down.</li>
<li><span class="pre">Pre-norm</span> &nbsp;<span class="formula">%1</span><br>
Only what enters the sub-layer is normalised. The stream itself is a plain sum that no
block rescales, which leaves the gradient an untouched path from the loss to the first
layer. The model then needs one last norm before its output head.</li>
</ul>

<h2>Why post-norm wants a warmup</h2>
<p>Within the first few updates a post-norm model's gradients become largest in the blocks
next to the output and fade toward the input (Xiong et al., 2020, describe it at
initialisation; with this model it forms over the first 10 to 20 steps). Taking full-size
steps at that moment knocks the model into a state it does not leave: typically it settles
on predicting how common each token is and learns nothing more. Raising the learning rate slowly over the first part of
training, the <i>warmup</i>, lets the model get into shape before the big steps come.
Pre-norm's gradients are sensible from the start, so a few dozen warmup steps are enough,
even at a learning rate several times higher.</p>

<h2>The dashed line</h2>
<p>The faint dashed line is the <b>unigram baseline</b>: the loss of guessing every token
by its overall frequency in the training text, ignoring all context, on the same held-out
passages as the dark curve. It is what a model scores once it knows which tokens are
common and nothing else. A curve that flattens
out on this line has learned no context at all; a model that trains drops well below it.</p>

<h2>Reading the chart</h2>
<ul>
<li>Colours follow the course: <span class="pre">pre-norm in blues</span>,
<span class="post">post-norm in reds</span>, and
<span class="long">post-norm with a long warmup in green</span> (warmup of at least a
tenth of the run). Several runs of one kind get different shades.</li>
<li>Light, thin lines are the <b>training loss</b> of each step: noisy, because every step
sees a different batch. The smoothing slider averages them (an exponential moving average
with its start-up bias removed); the raw curve stays faintly behind.</li>
<li>Dark lines with dots are the <b>held-out loss</b>, measured every few steps on text the
model never trains on. Only these say how well the model predicts new text.</li>
<li>Losses are in nats per token. An untrained model starts near ln(vocabulary size):
about 9.0 for 8192 tokens.</li>
<li>Drag to zoom into a region, right-drag or middle-drag to pan, turn the wheel to zoom
around the pointer (Ctrl: loss axis only, Shift: steps only), double-click to see all
again. Hover for the values of every visible run at that step.</li>
</ul>

<h2>Inside the model</h2>
<p>The <b>Inside the model</b> tab shows why. While a run trains, NormLab measures each
layer at every step of the first 100, then every 10 steps and at each evaluation. Pick a
statistic and two runs, say <span class="pre">pre-norm</span> on the left and
<span class="post">post-norm</span> on the right at 6e-3: each panel is a picture with the
layers from the input (bottom) to the output (top) and the recorded steps from left to
right. Both panels share one logarithmic colour scale, so equal colours mean equal values.</p>
<ul>
<li><b>Attention and MLP gradient norm</b>: how much the loss pushes on each layer. In the
failing post-norm run the bottom rows go dark within about 20 steps: the lower layers get
a millionth of the gradient the top layer gets, so they stop learning, and the loss stays on
the dashed line. Pre-norm keeps every row lit.</li>
<li><b>RMS into the norms</b>: the size of what each norm divides by. Post-norm's grow from
about 1 to 10 or more; a norm's backward pass divides the gradient by that size, twice per
block, and the losses multiply on the way down. Pre-norm's stream grows with depth
instead, and nothing divides the path from the loss to the first layer.</li>
<li><b>Relative update</b>: how far one step moves each block's weights, as a share of
their size; <b>attention entropy</b>: 1 when a layer spreads its attention evenly, 0 when it
looks at a single token.</li>
</ul>
<p>The chart below the panels shows the statistic across layers at the step under the
pointer, for both runs: a flat line is a healthy model, a line falling toward layer 1 one
that starves its lower layers.</p>

<h2>The course experiment</h2>
<p>Five runs of an eight-layer model without gradient clipping: pre-norm and post-norm at
peak learning rates 1e-3 and 6e-3 with a 30-step warmup, then post-norm at 1e-3 with a
warmup of a third of the run. Watch whether each post-norm curve leaves the dashed line,
and compare where the pre-norm curves end. Without a GPU the runs are shortened and made
smaller so they finish in minutes; the contrast between the placements should still show.
One run at a high learning rate can land anywhere in a range, so the five can be run over
several seeds (<i>× N seeds</i> beside the button): runs that differ only in their seed are
then drawn as their mean, with a band from the lowest to the highest held-out loss.</p>

<h2>Training loss and held-out loss</h2>
<p>The light curve is the loss on each batch just before the model learns from it; the dark
one is the loss on held-out text it never learns from. The <b>Gap</b> column of the run
table is how far the dark sits above the light over the 50 steps up to the last evaluation
(both averaged over those steps; the dark, measured only at evaluations, read off the line
between them), so early in a run, while the loss falls fast, it compares the same models. A model that knows only how common each token is has a gap too,
because a few held-out windows are not exactly as hard as the training text: post-norm on
the baseline shows that floor. A full-size run on the King James text reads it about fourteen
times over, and then the gap grows with what the model remembers of that text rather than learns
of the language, the faster the higher the learning rate. So rank runs by the dark curve.</p>

<h2>How much text a run reads</h2>
<p>Which of two learning rates wins can turn on the size of the corpus. The <i>Corpus</i>
setting offers the King James text and the <i>bookshelf</i>, built from Debian's text packages
and large enough that a full-size run reads none of it twice.</p>
%7

<h2>After pre-norm</h2>
<p>Later designs keep pre-norm's clean path or repair post-norm: <b>peri-norm</b> (sandwich)
also normalises each sub-layer's output before it joins the stream; <b>DeepNorm</b> keeps
post-norm but scales the stream up and some weights down at the start; <b>mix-norm</b> uses
post-norm in the first quarter of the blocks and pre-norm after; and each can use
<b>RMSNorm</b>, which only rescales. The <b>Sweeps</b> tab maps where each one trains: the
final held-out loss against depth, learning rate or warmup, one line per placement, with
the dashed baseline across. A point on the baseline is a result: that design, at that
setting, learnt only how common each token is.</p>

<h2>Taming the norm, or dropping it</h2>
<p>The newest answers change the norm itself, or what flows past it. Each is a choice in the
settings, drawn in its own colour; the two switches combine with any placement.</p>
<ul>
<li><span class="dyt">DyT</span> (Dynamic Tanh, norm type <i>dyt</i>) &nbsp;<span class="formula">%5</span><br>
Every norm is replaced by an element-wise squashing: no mean, no RMS, nothing computed
across the position. &alpha; is one learnt number per DyT, starting at &alpha;<sub>0</sub>
(0.5 by default). The claim (Zhu et al., 2025): a trained LayerNorm behaves much like a
tanh, so a tanh can stand in for it at no loss. On a corpus as small as this one a design can
look better than it does at scale; read DyT's curves with that in mind, and watch its
&alpha; in the <b>Inside the model</b> tab. <i>Here:</i> with pre placement it stalls on the
baseline at every learning rate and every &alpha;<sub>0</sub> tried, warmup and clipping
included. In most runs the stream grows in the first forty updates until the last DyT
saturates; tanh is then flat, and next to no gradient gets back into the blocks (the gradient
panels go dark). Runs whose stream grows slowly keep their gradients and stall all the
same.</li>
<li><b>QK-norm</b> (a switch): each head's queries and keys are RMS-normalised, with a
learnt gain, before their dot product. The claim (Henry et al., 2020; Wortsman et al., 2023):
attention logits can no longer grow without bound, so more learning rates train.
<i>Here:</i> pre-norm with it trains at every rate; it does not rescue post-norm, which stays
on the baseline with or without it.</li>
<li><span class="lns">LayerNorm Scaling</span> &nbsp;<span class="formula">%3</span><br>
Pre-norm with each norm's output divided by &radic;&#8467;, &#8467; the block's depth from 1.
The claim (the Curse of Depth, 2025): in pre-norm the stream grows with depth, so deep
blocks add little and behave almost as the identity; shrinking their input's scale keeps
them useful. <i>Here:</i> level with pre-norm at 1e-3 up to 8 blocks; ahead of it at 6e-3,
and at 16 blocks, where pre-norm gets worse with depth and it does not.</li>
<li><span class="rezero">ReZero</span> &nbsp;<span class="formula">%4</span><br>
No norm anywhere, not even before the output head. Each block adds its sub-layers through one
learnt number &alpha; that starts at 0, so the model begins as the identity and opens each
block as it learns (Bachlechner et al., 2020). Its &alpha; is recorded per block: watch it
leave 0. <i>Here:</i> the lowest held-out loss of every design at 6e-3, but slow at 1e-3,
where the &alpha; open slowly.</li>
<li><b>Scaled residual init</b> (a switch): the attention's output matrix and the MLP's
down matrix start 1/&radic;(2N) as large as the others (GPT-2), so the stream does not grow
with depth at the start. <i>Here:</i> no change beyond the seed spread for post-norm, nor
for pre-norm at 1e-3; pre-norm at 6e-3 ends a little worse with it.</li>
</ul>
<p>These are 600-step runs on about a million tokens, three seeds each: the figures, the
learning-rate and depth sweeps and what they cost are in <i>docs/designs.md</i>. A design
that wins here may not win at scale, and one that stalls here may need a recipe this
small model does not have.</p>
%6</div>)")
              .arg(pre.toHtmlEscaped(), post.toHtmlEscaped(), lns.toHtmlEscaped(), rezero.toHtmlEscaped(),
                   dyt.toHtmlEscaped(), choices_html(), measured_html("corpus-flip")));
}

}  // namespace normlab::ui
