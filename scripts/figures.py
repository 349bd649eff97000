#!/usr/bin/env python3
"""Remakes the figures in README.md and docs/*.md from the commands printed beside them.

  scripts/figures.py [--only NAME,...] [--cli PATH] [--jobs N] [--dry-run]
  scripts/figures.py --list
  scripts/figures.py --check [--only NAME,...]
  scripts/figures.py --only course-full --runs DIR    # that block from runs trained elsewhere

Each figure sits between <!-- NAME --> and <!-- /NAME --> in the Markdown files, and a block
with an HTML form also in resources/about/NAME.html, which the window's About tab shows. The script
trains the block's runs with `normlab-cli train` (one at a time, or --jobs at once: each
run is at one thread, so its numbers do not depend on it), each as its block prints it,
rewrites the block and stamps it with the machine, date and engine commit; charts are
drawn by the window (normlab-ui-screenshots under xvfb-run) and sweep summaries read back
by `normlab-cli sweep --status`. Runs are kept in build/figures/<hash of the binary>/, so
a block made again, or one sharing runs with another, trains only what is missing; another
binary trains everything afresh. It says how long that will take before it starts.

A timing block runs benchmarks instead (normlab-cli bench, bench/*): one at a time, after
every run of the invocation has trained, since runs trained --jobs at once would slow them,
in rounds that alternate the order of its commands; it fills its table from what they
print, and says how much CPU other work took meanwhile. --list marks them; time them on a
quiet machine, e.g.  scripts/figures.py --only step-cost

--check trains each table's check cells afresh and fails when one differs from the number
shown. Run it before resolving an issue that changes the engine, on the machine the blocks
name (chaotic runs differ between CPUs):  nice -n 19 scripts/figures.py --check
It leaves timing blocks out and says so: a timing is not the same twice to the digit.

Python, not Bash: it reads run files (JSON) and Markdown tables.
"""
import argparse
import concurrent.futures
import dataclasses
import datetime
import glob
import gzip
import hashlib
import html
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ABOUT = os.path.join("resources", "about")  # HTML pieces the window's About tab shows (ui/about_view.cpp)
# The commit stamped beside a block: the last one that changed what computes the numbers
# (cmake/NormLabEngineCommit.cmake stamps run files from the same paths).
ENGINE = ["core", "app", "cmake", "CMakeLists.txt"]
# Seconds a step at one thread, 8 blocks: at the CPU scale (8 x 64 tokens) measured on
# this 2-core machine on 2026-12-02 while it was shared; at full scale (32 x 128) alone on
# a quiet machine (issue 31). Two full-scale runs side by side take about 1.9 s a step each
# (2026-12-03), so the course's five runs take about 4 h of both cores either way.
CPU_STEP_S = 0.24
FULL_STEP_S = 1.1
SEEDS = (1337, 1338, 1339)
STALL_NATS = 0.1  # the sweeps' "stalled": within this of the unigram baseline, or above it
# Two runs' final losses closer than this are level: three seeds of one CPU-scale run spread
# over 0.03 nats (the designs-seeds block: pre-norm 1e-3, 5.075–5.106), so an order this
# close could be any seed's.
LEVEL_NATS = 0.02
# Two runs' gaps (held-out above training loss) closer than this are the same gap.
SAME_GAP_NATS = 0.01
# A run has learned when it ends this far under the unigram baseline (issue 46's bar for the course).
LEARNED_NATS = 0.8


def order(loss, other):
    """Where a final loss ends against another's: below, above, or level with it."""
    return "level with" if abs(loss - other) < LEVEL_NATS else "below" if loss < other else "above"


def gap_against(gap, other):
    """A run's gap against another's: the same, wider or narrower."""
    return "the same" if abs(gap - other) < SAME_GAP_NATS else "wider" if gap > other else "narrower"


with open(os.path.join(ROOT, "cmake", "torch.version")) as f:
    TORCH = f.read().strip()  # the torch LibTorch comes from, and bench/compare_pytorch.py runs on


class Failure(Exception):
    """A one-line error for the user."""


@dataclasses.dataclass(frozen=True)
class Run:
    """One `normlab-cli train` command line, without --out."""

    args: tuple

    @staticmethod
    def of(text, **options):
        args = text.split()
        for key, value in options.items():
            args += ["--" + key.replace("_", "-"), str(value)]
        return Run(tuple(args))

    def seeded(self, seed):
        return self if seed == SEEDS[0] else Run(self.args + ("--seed", str(seed)))

    def option(self, name, default):
        return self.args[self.args.index(name) + 1] if name in self.args else default

    def command(self):
        return "normlab-cli train " + " ".join(self.args)

    def key(self):
        return hashlib.sha256(" ".join(self.args).encode()).hexdigest()[:16]

    def records(self):
        return 5 if "--preset" in self.args else 1

    def estimate_s(self):
        full = self.option("--scale", "full") == "full"
        steps = int(self.option("--steps", "3000" if full else "600"))
        layers = int(self.option("--layers", "8"))
        slower = 1.7 if self.option("--cpu-matmul", "onednn") == "libtorch" else 1  # docs/speed.md
        return self.records() * steps * (FULL_STEP_S if full else CPU_STEP_S) * layers / 8 * slower


def final_loss(record):
    return record["evals"]["val_loss"][-1]


def train_loss(record):  # the mean of the last 50 steps, as RunRecord::final_train_loss for a finished run
    tail = record["steps"]["train_loss"][-50:]
    return sum(tail) / len(tail)


MEASURE_NAMES = {"final": "held-out loss", "train": "training loss", "gap": "gap"}
MEASURES = {
    "final": final_loss,
    "train": train_loss,
    "gap": lambda r: final_loss(r) - train_loss(r),
    "baseline": lambda r: baseline_loss(r),  # the unigram's, the same for every run of a scale
}


@dataclasses.dataclass
class Cell:
    """A table cell: a measure of one run, or its mean and range over seeds."""

    run: Run
    seeds: int = 1
    stalls: bool = False  # "(stalls)" after a loss within STALL_NATS of the baseline
    measure: str = "final"  # a MEASURES key, or a recorded series (its last value)
    pick: str = ""  # the record's name, for a command that trains several
    best: bool = False  # "(its best on the way …)" when the held-out loss ended well above its lowest

    def runs(self):
        return [self.run.seeded(seed) for seed in SEEDS[: self.seeds]]

    def value(self, record):
        if self.measure in MEASURES:
            return MEASURES[self.measure](record)
        return record["series"][self.measure]["values"][-1]

    def records(self, results):
        return [pick(results[run], self.pick) for run in self.runs()]

    def values(self, results):
        return [self.value(r) for r in self.records(results)]

    def text(self, results):
        records = self.records(results)
        values = [self.value(r) for r in records]
        mean = sum(values) / len(values)
        out = f"{mean:.3f}" if len(values) == 1 else f"{mean:.3f} ({min(values):.3f}–{max(values):.3f})"
        if self.measure == "baseline":  # the data's, whatever the run did
            return out
        if self.stalls and stalled(mean, records[0]):
            out += " (stalls)"
        if self.best and len(records) == 1 and min(records[0]["evals"]["val_loss"]) < values[0] - STALL_NATS:
            out += f" (its best on the way {min(records[0]['evals']['val_loss']):.3f})"
        diverged = [r["steps"]["step"][-1] for r in records if r["status"] == "diverged"]
        if diverged:
            out += f" (diverged at step {', '.join(map(str, diverged))} of {records[0]['config']['steps']})"
        return out


@dataclasses.dataclass
class Span:
    """A table cell: the lowest to the highest final held-out loss of several runs."""

    runs_: list

    def runs(self):
        return self.runs_

    def text(self, results):
        values = [final_loss(pick(results[run])) for run in self.runs_]
        return f"{min(values):.2f} to {max(values):.2f}"


def run_times(table, results):
    """What a table's runs took, from their own records (load on the machine included)."""
    seconds = sorted(pick(results[run])["steps"]["wall_s"][-1] for run in dict.fromkeys(table.runs()))
    median = seconds[len(seconds) // 2]
    return (f"Run time: {len(seconds)} runs, a median of {median:.0f} s each ({seconds[0]:.0f}–{seconds[-1]:.0f} s), "
            f"{sum(seconds) / 3600:.1f} h in all, at one thread, trained two at a time on this machine's 2 cores "
            f"beside other work.")


def baseline_loss(record):
    """The unigram's loss on the positions the held-out loss averages over. Run files before
    version 9 held it in their series "unigram_loss" (read as the C++ loader reads them)."""
    unigram = record["series"].get("unigram_loss") if record["version"] < 9 else None
    return unigram["values"][-1] if unigram else record["baseline_loss"]


def stalled(loss, record):
    return loss > baseline_loss(record) - STALL_NATS


def pick(records, name=""):
    if not name:
        return next(iter(records.values()))
    if name not in records:
        raise Failure(f"no run named '{name}' among {', '.join(records)}")
    return records[name]


@dataclasses.dataclass
class Table:
    header: list
    rows: list  # each a list of str and Cell
    checks: list  # (row, column) of the cells --check trains again

    def runs(self):
        return [run for row in self.rows for cell in row if not isinstance(cell, str) for run in cell.runs()]

    def markdown(self, results):
        def line(texts):
            return "|" + "|".join(f" {text} " if text else " " for text in texts) + "|"

        lines = [line(self.header), "|" + "---|" * len(self.header)]
        for row in self.rows:
            lines.append(line(c if isinstance(c, str) else c.text(results) for c in row))
        return "\n".join(lines)


@dataclasses.dataclass
class Chart:
    """A picture the window draws from runs: normlab-ui-screenshots OUT [--sweep PRESET] RUNS."""

    file: str  # in docs/
    runs: list
    made_as: str  # the tool's name for it
    sweep: str = ""  # the preset of a Sweeps-tab picture


@dataclasses.dataclass
class Summary:
    """A sweep's summary CSV, read back from the block's runs by `normlab-cli sweep --status`."""

    arguments: str  # the sweep's options
    file: str  # in docs/
    runs: list
    chart: str = ""  # in docs/: the SVG the sweep draws beside its summary, when the docs show it


@dataclasses.dataclass(frozen=True)
class Printout:
    """What a normlab-cli command prints about one of the block's runs: CLI RUN.json ARGUMENTS."""

    command: str  # normlab-cli's command, e.g. sample
    run: Run
    arguments: tuple

    def runs(self):
        return [self.run]


@dataclasses.dataclass(frozen=True)
class Timing:
    """A benchmark a timing block shows: its printout's figures and wall time, one dict a round."""

    command: str  # as the docs print it: normlab-cli …, or a script in bench/ and its arguments
    estimate_s: float  # on this 2-core machine, from the step costs above
    reads: object = None  # its printout -> a dict of figures; None: only its wall time counts
    runs_as: tuple = ()  # a bench/*.sh's positional arguments in full: it takes the build folder last

    def argv(self, cli, python, out):
        """The command with this build's normlab-cli and torch's Python; a run trains into out.
        Leading VARIABLE=value words set its environment, as in a shell."""
        words = self.command.split()
        settings = list(itertools.takewhile(lambda word: re.fullmatch(r"[A-Z_]+=\S*", word), words))
        words = words[len(settings):]
        prefix = ["env", *settings] if settings else []
        if words[0] == "normlab-cli":
            return prefix + [cli, *words[1:]] + (["--out", out] if words[1] == "train" else [])
        script = os.path.join(ROOT, words[0])
        if script.endswith(".py"):
            return prefix + [python, script, *words[1:], "--cli", cli]
        build = os.path.dirname(os.path.dirname(cli))
        return prefix + [script, *[word.format(cores=os.cpu_count(), build=build) for word in self.runs_as]]


@dataclasses.dataclass
class Block:
    name: str  # the Markdown files holding it are found by its markers: files_of
    tables: list
    render: object  # (results, path from the file to docs/) -> Markdown
    charts: list = dataclasses.field(default_factory=list)
    summaries: list = dataclasses.field(default_factory=list)
    printouts: list = dataclasses.field(default_factory=list)  # render finds each one's text and file in results
    timings: list = dataclasses.field(default_factory=list)  # render finds each one's rounds in results
    html: object = None  # results -> HTML, for a copy of the block in the About tab (ABOUT/*.html)
    rounds: int = 1  # each round times every one of its timings once

    def timings_s(self):
        return self.rounds * sum(timing.estimate_s for timing in self.timings)

    def runs(self):
        every = [r for t in self.tables for r in t.runs()]
        every += [r for c in self.charts + self.summaries for r in c.runs]
        every += [r for p in self.printouts for r in p.runs()]
        return list(dict.fromkeys(every))


# --- the blocks -------------------------------------------------------------------------

CPU = "--scale cpu --device cpu --threads 1"
LR_SWEEP = ["3e-4", "1e-3", "3e-3", "6e-3", "1e-2"]
DEPTHS = ["2", "4", "8", "16"]


def train(flags="", **options):
    """A CPU-scale run at one thread, warmup 30 unless given; 8 blocks is the default's run."""
    options.setdefault("warmup", 30)
    if options.get("layers") == "8":
        del options["layers"]
    return Run.of(f"{CPU} {flags}".strip(), **options)


def wrap(text):
    """A paragraph with figures filled in, wrapped as the Markdown around it is."""
    return textwrap.fill(" ".join(text.split()), 92, break_long_words=False, break_on_hyphens=False)


def placements_table():
    rows = []
    for norm, norm_type in [("pre", ""), ("post", ""), ("peri", ""), ("deepnorm", ""), ("mix", ""),
                            ("pre", "rmsnorm"), ("post", "rmsnorm")]:
        flags = f"--norm {norm}" + (f" --norm-type {norm_type}" if norm_type else "")
        rows.append([norm, "RMSNorm" if norm_type else "LayerNorm"] +
                    [Cell(train(flags, lr=lr)) for lr in ("1e-3", "6e-3")])
    baseline_row = ["unigram baseline", ""] + 2 * [Cell(rows[0][2].run, measure="baseline")]
    table = Table(["placement", "norm", "final held-out, lr 1e-3", "final held-out, lr 6e-3"], rows + [baseline_row],
                  checks=[(0, 2), (1, 2), (len(rows), 2)])

    def render(results, docs):
        return f"""At `--scale cpu`, one command line per run, 1 thread (seed 1337, 600 steps of 8 × 64 tokens,
warmup 30, no clipping), final held-out loss in nats:

```sh
normlab-cli train --scale cpu --device cpu --threads 1 --norm PLACEMENT [--norm-type rmsnorm] --lr LR --warmup 30 --out runs
```

{table.markdown(results)}

One seed each. The runs at 6e-3 and those that stall are chaotic: another thread count,
another CPU, or `--cpu-matmul libtorch` (LibTorch's own matmuls, which gave the numbers this
table showed before 2026-12-02) moves them by up to about 0.1 nats, as far as another seed
does (the seed ranges: the course's and the designs' tables in [results.md]({docs}results.md)).

![Every placement at 1e-3, warmup 30, CPU scale, training and held-out loss per step: pre-norm (blue), post-norm (red), peri-norm (teal), DeepNorm (amber) and mix (purple), their final held-out losses as in the table]({docs}placements-1e-3.png)"""

    chart = Chart("placements-1e-3.png", [row[2].run for row in rows[:5]], "course-experiment.png")
    return Block("placements-table", [table], render, charts=[chart])


def what_it_learned():
    pre, post = train("--norm pre", lr="6e-3"), train("--norm post", lr="6e-3")
    rows = [[name, Cell(run), Cell(run, measure="context_use"), Cell(run, measure="frequency_mismatch")]
            for name, run in (("pre-norm", pre), ("post-norm", post))]
    rows.append(["unigram baseline", Cell(pre, measure="baseline"), "0", "0"])
    table = Table(["run", "held-out", "context use", "frequency mismatch"], rows, checks=[(1, 2), (2, 1)])

    def render(results, docs):
        p, q = pick(results[pre]), pick(results[post])

        def last(record, series):
            return f"{record['series'][series]['values'][-1]:.3f}"

        def text(record, kind, chars):  # prompt 3's continuation at the last evaluation
            return record["text"]["samples"][-1][kind][2][:chars].rstrip() + "…"

        story = wrap(f"""Post-norm's predictions hardly depend on what came before ({last(q, 'context_use')} nats,
against pre-norm's {last(p, 'context_use')}), while their average is as close to the frequencies as pre-norm's:
it has learnt which tokens are common and next to nothing about context. Its text says the same. After
"{p['text']['prompts'][2]}", prompt 3's greedy continuation is `{text(q, 'greedy', 24)}` for post-norm and
`{text(p, 'greedy', 24)}` for pre-norm; sampled, post-norm writes "{text(q, 'sampled', 150)}" and pre-norm
"{text(p, 'sampled', 150)}" (the words they share come from the same random numbers falling where both
models give a token similar odds).""")
        return f"""At `--scale cpu`, peak 6e-3, warmup 30, last step (`normlab-cli train --scale cpu --device cpu
--threads 1 --norm pre --lr 6e-3 --warmup 30`, then `--norm post`: the run files' series and
text, which `--show-text` prints as they come):

{table.markdown(results)}

{story}"""

    return Block("what-it-learned", [table], render)


def sample_example():
    run = train("--norm pre", lr="1e-3")  # the placements table's, its best-trained
    prompt = "In the beginning God created"
    printout = Printout("sample", run, ("--prompt", prompt, "--tokens", "30", "--top", "8"))

    def render(results, docs):
        text, _, table = results[printout]["printed"].partition("\n\n")
        shown = "\n".join(table.splitlines()[:4])  # the header and the three likeliest
        file = os.path.basename(results[printout]["file"])
        return f"""```
$ normlab-cli sample runs/{file} --prompt "{prompt}" --tokens 30 --top 8
{text.strip()}

{shown}
  ...
```

(that run: `normlab-cli train --scale cpu --device cpu --threads 1 --norm pre --lr 1e-3 --warmup 30
--out runs`, held-out {final_loss(pick(results[run])):.3f} nats.)"""

    return Block("sample-example", [], render, printouts=[printout])


COURSE = [("pre-norm, lr 1e-3, warmup 30", "pre", "1e-3", 30), ("post-norm, lr 1e-3, warmup 30", "post", "1e-3", 30),
          ("pre-norm, lr 6e-3, warmup 30", "pre", "6e-3", 30), ("post-norm, lr 6e-3, warmup 30", "post", "6e-3", 30)]


def course_cpu():
    # The preset's runs are these commands' (core/runs/presets.cpp: workshop_runs sets the
    # norm, rate and warmup only), so they are trained, and shared with other blocks, one by one.
    runs = COURSE + [("post-norm, lr 1e-3, warmup 200", "post", "1e-3", 200)]
    rows = [[name, Cell(train(f"--norm {norm}", lr=lr, warmup=warmup),
                        seeds=1 if (norm, lr) == ("pre", "1e-3") or warmup == 200 else 3)]
            for name, norm, lr, warmup in runs]
    baseline_row = ["unigram baseline", Cell(rows[0][1].run, measure="baseline")]
    table = Table(["run", "final held-out loss (nats)"], rows + [baseline_row], checks=[(0, 1), (len(rows), 1)])

    def render(results, docs):
        first = [pick(results[row[1].run]) for row in rows]
        wall = sum(r["steps"]["wall_s"][-1] for r in first)
        steps = sum(r["steps"]["step"][-1] + 1 for r in first)
        cost = wrap(f"""Cost: the five seed-1337 runs' own wall times add up to {wall / 60:.1f} min at one
thread ({1000 * wall / steps:.0f} ms a step), trained two at a time on this machine's 2 cores beside
other work. Same seed, device,
CPU, thread count and CPU matmul kernel give the same losses to the last digit; another sums in
another order, which the chaotic runs (post-norm on the baseline, pre-norm at 6e-3) amplify to about
0.1 nats.""")
        return f"""At `--scale cpu`, one thread, final held-out loss: the chaotic runs over seeds 1337–1339,
mean (lowest–highest), the others seed 1337 (`normlab-cli train --preset workshop --scale cpu
--device cpu --threads 1 --seeds 3`, whose runs are `normlab-cli train --scale cpu --device cpu
--threads 1 --norm P --lr LR --warmup W [--seed S]`, trained so here):

{table.markdown(results)}

{cost}"""

    return Block("course-cpu", [table], render)


def verdicts_cpu():
    """What `normlab-cli explain` says of each of the course's runs at the CPU scale (seed 1337)."""
    runs = [(name, train(f"--norm {norm}", lr=lr, warmup=warmup))
            for name, norm, lr, warmup in COURSE + [("post-norm, lr 1e-3, warmup 200", "post", "1e-3", 200)]]
    printouts = [Printout("explain", run, ("--json",)) for _, run in runs]

    def render(results, docs):
        lines = ["| run | verdict | since step | what `explain` says |", "|---|---|---|---|"]
        for (name, _), printout in zip(runs, printouts):
            said = json.loads(results[printout]["printed"])
            since = "" if said["since_step"] is None else str(said["since_step"])
            lines.append(f"| {name} | `{said['verdict']}` | {since} | {said['sentence']} |")
        table = "\n".join(lines)
        return f"""At `--scale cpu`, one thread, seed 1337 (`normlab-cli train --scale cpu --device cpu --threads 1
--norm P --lr LR --warmup W --out runs`, then `normlab-cli explain runs/RUN.json --json` of each):

{table}"""

    return Block("verdicts-cpu", [], render, printouts=printouts)


def matmul_kernels():
    # What the table showed before the CPU matmuls moved to oneDNN (2026-12-01, LibTorch's,
    # on a 2-core AMD EPYC): the figures --cpu-matmul libtorch is to give back.
    before = [("pre-norm, lr 1e-3", "pre", "1e-3", "5.090"), ("post-norm, lr 1e-3", "post", "1e-3", "6.093"),
              ("pre-norm, lr 6e-3", "pre", "6e-3", "5.463")]
    rows = [[label, Cell(train(f"--norm {norm}", lr=lr)), Cell(train(f"--norm {norm}", lr=lr, cpu_matmul="libtorch")),
             shown] for label, norm, lr, shown in before]
    table = Table(["run", "oneDNN (default)", "`--cpu-matmul libtorch`", "shown before 2026-12-01"], rows,
                  checks=[(1, 2)])

    def render(results, docs):
        same = all(row[2].text(results) == row[3] for row in rows)
        verdict = ("On this machine `--cpu-matmul libtorch` gives the earlier numbers." if same else
                   "So `--cpu-matmul libtorch` is the setting the earlier numbers were measured with, but it "
                   "gives them back only on a CPU where MKL sums as it did there (MKL picks its kernels by "
                   "CPU): on this machine not all of them.")
        return f"""The kernels sum in another order, and a chaotic run amplifies that: at `--scale cpu`, one
thread, seed 1337, final held-out loss (`normlab-cli train --scale cpu --device cpu --threads 1
--norm P --lr LR --warmup 30 [--cpu-matmul libtorch]`; the last column as measured with
LibTorch's matmuls on the earlier machine, a 2-core AMD EPYC):

{table.markdown(results)}

{wrap("A run that learns steadily (pre-norm at 1e-3) agrees to the digits shown; post-norm on the "
      "baseline and pre-norm at 6e-3 move by up to about 0.1 nats, as with another thread count or "
      "CPU. " + verdict)}"""

    return Block("matmul-kernels", [table], render)


def course_pictures():
    runs = [(norm, lr, warmup) for _, norm, lr, warmup in COURSE] + [("post", "1e-3", 200)]
    course = [train(f"--norm {norm}", lr=lr, warmup=warmup).seeded(seed) for norm, lr, warmup in runs for seed in SEEDS]
    fast = [train(f"--norm {norm}", lr="6e-3") for norm in ("pre", "post")]
    pictures = [Chart(name, fast, name) for name in ("window-launch.png", "pre-vs-post-6e-3.png",
                                                     "inside-the-model-6e-3.png", "about-this-experiment.png")]
    pictures.append(Chart("course-experiment.png", course, "course-experiment.png"))

    def render(results, docs):
        return """- [launch](window-launch.png), [pre- vs post-norm at 6e-3](pre-vs-post-6e-3.png) (pointer
  at step 480), [inside the model, pre vs post at 6e-3](inside-the-model-6e-3.png) (pointer
  at step 21) and [about](about-this-experiment.png): the two seed-1337 runs at 6e-3 of
  `normlab-cli train --preset workshop --scale cpu --seeds 3 --threads 1 --device cpu`;
- [course experiment](course-experiment.png): all 15 runs of that command, drawn as five
  means with their seed bands (made as `normlab-cli train --scale cpu --device cpu --threads 1
  --norm P --lr LR --warmup W --seed S`, the same runs);"""

    return Block("course-pictures", [], render, charts=pictures)


# The course page's own figures (../shared/reference/plate.txt, trained on a GPU on its
# course corpus): pre-norm's held-out loss at 1e-3 and 6e-3, and post-norm's at warmup
# 1000, which the bookshelf's block sets its runs beside.
PAGE = {"pre 1e-3": 4.575, "pre 6e-3": 4.437, "post 1e-3 warmup 1000": 4.531, "baseline": 7.60}


def corpus_of(record):
    """The corpus a run trained on, by name; files from before names were kept were KJV's."""
    return record.get("corpus_name") or "kjv"


def course_full_run(corpus="kjv"):
    flag = f" --corpus {corpus}" if corpus != "kjv" else ""
    return Run.of(f"--preset workshop --scale full --device cpu --threads 1 --final-checkpoint keep{flag}")


def course_name(norm, lr, warmup, corpus="kjv"):
    return f"{norm}-norm lr {lr} warmup {warmup}" + (f" {corpus}" if corpus != "kjv" else "")


def check_full_scale(records):
    for record in records.values():
        config = record["config"]
        if (config["steps"], config["batch_size"], config["context"]) != (3000, 32, 128):
            raise Failure(f"run '{record['name']}' is not at --scale full ({config['steps']} steps)")


def epochs(record):
    return 3000 * 32 * 128 / record["train_tokens"]


def course_full(corpus="kjv"):
    course = course_full_run(corpus)
    runs = COURSE + [("post-norm, lr 1e-3, warmup 1000", "post", "1e-3", 1000)]
    rows = []
    for label, norm, lr, warmup in runs:
        name = course_name(norm, lr, warmup, corpus)
        rows.append([label] + [Cell(course, pick=name, measure=m) for m in ("final", "train", "gap")])
    rows.append(["unigram baseline", Cell(course, pick=rows[0][1].pick, measure="baseline"), "", ""])
    table = Table(["run", "final held-out", "training (mean of the last 50 steps)", "gap"], rows, checks=[])

    def render(results, docs):
        records = results[course]
        check_full_scale(records)

        def run(norm, lr, warmup=30):
            return pick(records, course_name(norm, lr, warmup, corpus))

        def pre_norm(what):  # at 6e-3, then at 1e-3
            return [MEASURES[what](run("pre", lr)) for lr in ("6e-3", "1e-3")]

        def compared(what):
            fast, slow = pre_norm(what)
            return f"{'lower' if fast < slow else 'higher'} in {MEASURE_NAMES[what]} ({fast:.3f} against {slow:.3f})"

        # Step times from the runs' own clocks (a resumed run's clock goes on from its
        # checkpoint's), by the threads a run had: the median is that of a quiet machine, which
        # most steps were (one-thread runs two at a time, two-thread runs alone); the sum of
        # the wall times also holds the time shared with builds.
        def step_times(group):
            return statistics.median(
                (w1 - w0) / (s1 - s0)
                for r in group
                for (s0, w0), (s1, w1) in itertools.pairwise(zip(r["steps"]["step"], r["steps"]["wall_s"]))
                if s1 > s0)

        by_threads = {}
        for r in records.values():
            by_threads.setdefault(r["config"]["threads"], []).append(r)
        step_s = {threads: step_times(group) for threads, group in sorted(by_threads.items())}
        # A core-hour each step-second of a one-thread run (two run at once), two of a two-thread run.
        both_cores_h = sum(len(by_threads[t]) * 3000 * s * t / 2 for t, s in step_s.items()) / 3600
        first = next(iter(records.values()))
        tokens = first["train_tokens"] / 1e6
        times = epochs(first)
        fast_gap, slow_gap = pre_norm("gap")
        gaps_shown = f"({fast_gap:.3f} against {slow_gap:.3f})"
        # Learning the text by heart takes reading it more than once.
        gaps = {"the same": f"and its gap is about the same {gaps_shown}",
                "wider": f"with the wider gap {gaps_shown}" + (
                    ": the higher rate learns more of the\ntraining text by heart, so rank runs by their held-out loss"
                    if times >= 2 else ""),
                "narrower": f"and its gap is no wider {gaps_shown}"}[gap_against(fast_gap, slow_gap)]
        wall_h = sum(r["steps"]["wall_s"][-1] for r in records.values()) / 3600
        steps_text = " and ".join(
            f"{s:.2f} s at {t} thread{'s' * (t > 1)} ({len(by_threads[t])} run{'s' * (len(by_threads[t]) > 1)})"
            for t, s in step_s.items()) if len(step_s) > 1 else f"{next(iter(step_s.values())):.2f} s"
        seen = (f"{times:.0f} epochs of the {tokens:.2f} M training tokens, so a run can overfit" if times >= 2 else
                f"{times:.2f} of an epoch of the {tokens:.1f} M training tokens: no run sees a token twice")
        corpus_words = "" if corpus == "kjv" else f" on the {corpus} corpus ([corpora.md]({docs}corpora.md))"
        environment = first["environment"]
        on_gpu = environment["device"] == "cuda"
        command = (course.command().replace("--device cpu --threads 1", "--device cuda") if on_gpu
                   else course.command())
        ways = {1: "one thread a run, two at a time on the 2 cores",
                2: "two threads a run (`--threads 2`, the batch in two slices), one at a time"}
        where = (f"on one GPU ({environment['device_name']}){corpus_words}, the five runs side by side" if on_gpu
                 else f"on the CPU{corpus_words}, " + " or ".join(ways.get(t, f"{t} threads a run") for t in step_s))
        text = f"""At `--scale full` {where},
final losses in nats; the gap is the held-out loss above the training loss (3000 × 32 × 128 tokens is
{seen}):

```sh
{command} --out runs
```

{table.markdown(results)}

Pre-norm at 6e-3 ends {compared("train")}
and {compared("final")} than at 1e-3,
{gaps}."""
        if corpus != "kjv":
            baseline = baseline_loss(first)
            pre1, pre6 = final_loss(run("pre", "1e-3")), final_loss(run("pre", "6e-3"))
            post = [final_loss(run("post", lr)) for lr in ("1e-3", "6e-3")]
            long = final_loss(run("post", "1e-3", 1000))
            on_baseline = all(abs(loss - baseline) < STALL_NATS for loss in post)
            # The page: "trains properly, to 4.531, as well as pre-norm at the same rate" (0.044 below
            # it). As well as: it learns, and ends no more than 0.1 nats above pre-norm at 1e-3.
            learns = long < baseline - LEARNED_NATS
            as_well = learns and long - pre1 < 0.1
            page_gap = PAGE["pre 1e-3"] - PAGE["pre 6e-3"]
            verdict = {"below": "the page's order holds", "above": "the page's order does not hold",
                       "level with": f"closer than {LEVEL_NATS} nats, which a seed could swap, where the page has "
                                     f"them {page_gap:.2f} apart"}[order(pre6, pre1)]
            text += "\n\n" + f"""The course page's three relations (its runs: {PAGE["pre 6e-3"]} at 6e-3
against {PAGE["pre 1e-3"]} at 1e-3, post-norm at {PAGE["baseline"]:.2f}, the long warmup at
{PAGE["post 1e-3 warmup 1000"]}), here:

- pre-norm at 6e-3 ends {order(pre6, pre1)} 1e-3 on held-out loss ({pre6:.3f}
  against {pre1:.3f}): {verdict};
- post-norm with warmup 30 ends at {post[0]:.3f} (1e-3) and {post[1]:.3f} (6e-3) against the
  baseline's {baseline:.3f}: {"on the baseline at both rates, as on the page" if on_baseline else
  f"not within {STALL_NATS} nats of the baseline at both rates, unlike the page"};
- post-norm with warmup 1000 ends at {long:.3f}, {abs(long - pre1):.3f} nats
  {"above" if long > pre1 else "below"} pre-norm at 1e-3 (the page: {PAGE["pre 1e-3"] - PAGE["post 1e-3 warmup 1000"]:.3f}
  below): {"it trains, as well as pre-norm at the same rate, as on the page" if as_well else
  "it trains, but ends more than 0.1 nats above pre-norm at the same rate, unlike the page" if learns else
  f"it does not train (not {LEARNED_NATS} nats under the baseline), unlike the page"}."""
        if on_gpu:
            slowest = max(r["steps"]["wall_s"][-1] for r in records.values())
            return text + f"""

Cost: {slowest:.1f} s of training wall time for the slowest of the {len(records)} runs, side by side."""
        return text + f"""

Cost: a median step of {steps_text},
so the {len(records)} runs take about {both_cores_h:.1f} h of both cores; their own wall times add up to
{wall_h:.1f} h, as they shared the machine with builds for a while (a stopped run resumes from its
checkpoint: `normlab-cli train --resume RUN.json`)."""

    return Block("course-full" if corpus == "kjv" else f"course-full-{corpus}", [table], render)


def corpus_flip():
    """The small corpus's flip as a lesson: the same pre-norm pair on KJV and the bookshelf,
    in the docs and in the window's About tab."""
    corpora = ["kjv", "bookshelf"]
    courses = {corpus: course_full_run(corpus) for corpus in corpora}
    rows = []
    for corpus in corpora:
        cells = [Cell(courses[corpus], pick=course_name("pre", lr, 30, corpus), measure=m)
                 for m in ("final", "gap") for lr in ("1e-3", "6e-3")]
        rows.append([corpus] + cells)
    table = Table(["corpus", "held-out, 1e-3", "held-out, 6e-3", "gap, 1e-3", "gap, 6e-3"], rows, checks=[])

    def pairs(results):
        """Per corpus: its runs at 1e-3 and 6e-3, its training tokens in millions, its epochs."""
        for corpus in corpora:
            records = results[courses[corpus]]
            check_full_scale(records)
            slow, fast = (pick(records, course_name("pre", lr, 30, corpus)) for lr in ("1e-3", "6e-3"))
            yield corpus, slow, fast, slow["train_tokens"] / 1e6, epochs(slow)

    def outcome(slow, fast):
        where = order(final_loss(fast), final_loss(slow))
        return {"below": "6e-3 ends lower on held-out loss", "above": "1e-3 ends lower on held-out loss",
                "level with": f"the two end level on held-out loss (within {LEVEL_NATS} nats)"}[where]

    def moral(pairs_made):
        """What the pair says across the corpora, in a sentence: the flip only where the runs show it."""
        (_, small_slow, small_fast, _, small_times), (_, large_slow, large_fast, _, _) = pairs_made
        gap = MEASURES["gap"]
        small = order(final_loss(small_fast), final_loss(small_slow))
        large = order(final_loss(large_fast), final_loss(large_slow))
        if small == "above" and large == "below" and gap_against(gap(small_fast), gap(small_slow)) == "wider":
            return (f"The faster rate wins once the text is large enough, as the course page says; on a text read "
                    f"{small_times:.0f} times over it spends its speed learning that text by heart, and the wider "
                    "gap shows it.")
        if small == large:
            return f"The pair does not flip here: 6e-3 ends {small} 1e-3 on both corpora."
        return f"The pair ends {small} on the small corpus and {large} on the large one (6e-3 against 1e-3)."

    def render(results, docs):
        pairs_made = list(pairs(results))
        lines = [f"on {corpus} ({tokens:.2f} M training tokens, {times:.2f} epochs) {outcome(slow, fast)}"
                 for corpus, slow, fast, tokens, times in pairs_made]
        lines[0] = lines[0][:1].upper() + lines[0][1:]
        return f"""Pre-norm at 1e-3 and 6e-3 at the course's full scale, on the small corpus and on
the large one (`--preset workshop --scale full`, each corpus's runs as in [results.md]({docs}results.md));
final held-out loss and the gap to the training loss, in nats:

{table.markdown(results)}

{wrap("; ".join(lines) + ". " + moral(pairs_made))}"""

    def about(results):
        gap = MEASURES["gap"]
        rows, sentences = [], []
        pairs_made = list(pairs(results))
        for corpus, slow, fast, tokens, times in pairs_made:
            cells = [f"{final_loss(r):.2f}" for r in (slow, fast)] + [f"{gap(r):.2f}" for r in (slow, fast)]
            rows.append(f"<tr><td>{corpus}</td><td>{tokens:.1f} M</td><td>{times:.1f}</td>"
                        + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
            read = f"read {times:.0f} times over" if times >= 1.5 else f"where a run reads {times:.1f} of it"
            width = gap_against(gap(fast), gap(slow))
            sentences.append(
                f"on {corpus}, {read}, 6e-3 ends {order(final_loss(fast), final_loss(slow))} 1e-3 "
                f"on held-out loss ({final_loss(fast):.2f} against {final_loss(slow):.2f}) with "
                f"{width if width == 'the same' else 'a ' + width} gap")
        header = "".join(f"<th>{h}</th>" for h in ("corpus", "training tokens", "epochs", "held-out, 1e-3",
                                                      "held-out, 6e-3", "gap, 1e-3", "gap, 6e-3"))
        return ("<p>Pre-norm at 1e-3 and at 6e-3, at full size on each corpus (final losses in nats; the gap\n"
                "is the held-out loss above the training loss):</p>\n"
                '<table cellspacing="0" cellpadding="4" border="1" style="border-color: #c8d0da">\n'
                f"<tr>{header}</tr>\n" + "\n".join(rows) + "\n</table>\n"
                f"<p>{wrap('; '.join(sentences)[:1].upper() + '; '.join(sentences)[1:] + '. ' + moral(pairs_made))}</p>")

    return Block("corpus-flip", [table], render, html=about)


def sweep_block(preset, option, values, placements, what):
    def run(placement, value):
        return train(f"--norm {placement}", lr="1e-3", layers=value) if option == "layers" else \
            train(f"--norm {placement}", lr=value)

    def setting(value):
        return f"{value} layers" if option == "layers" else f"lr {value}"

    rows = [[p] + [Cell(run(p, v), stalls=True) for v in values] for p in placements]
    header = ["placement"] + [setting(v) for v in values]
    table = Table(header, rows, checks=[(1, 1)])
    arguments = f"--preset {preset} --device cpu --threads 1"
    runs = [cell.run for row in rows for cell in row[1:]]

    def render(results, docs):
        intro = wrap(f"""The {preset} sweep at the CPU scale, `normlab-cli sweep {arguments} --out runs`, final
held-out loss in nats, seed 1337 ("stalls": within 0.1 nats of the baseline or above it; the script
trains each point as the same run, `normlab-cli train --scale cpu --device cpu --threads 1 --norm P
--lr LR --warmup 30 [--layers N]`, and reads the sweep's summary back with `--status`). Summary:
[sweep-{preset}.csv]({docs}sweep-{preset}.csv).""")
        return f"""{intro}

{table.markdown(results)}

{wrap(where_each_trains(rows, values, setting, results))}

![Final held-out loss against {what}, one line per placement, stalled points hollow, the unigram baseline dashed]({docs}sweep-{preset}.png)"""

    return Block(f"sweep-{preset}", [table], render,
                 charts=[Chart(f"sweep-{preset}{kind}.png", runs, f"sweep-{preset}{kind}.png", sweep=preset)
                         for kind in ("", "-window")[:2 if preset == "learning-rate" else 1]],  # only this window is in the docs
                 summaries=[Summary(arguments, f"sweep-{preset}.csv", runs)])


def where_each_trains(rows, values, setting, results):
    """A sweep table's rows in words: the settings at which each placement does not stall."""
    parts = []
    for row in rows:
        means = [sum(v) / len(v) for v in (cell.values(results) for cell in row[1:])]
        first_run = row[1].records(results)[0]  # its baseline is the row's
        trains = [value for value, loss in zip(values, means) if not stalled(loss, first_run)]
        lowest = setting(values[min(range(len(values)), key=lambda i: means[i])])
        if len(trains) == len(values):
            where = f"at all {len(values)}, lowest at {lowest}"
        elif not trains:
            where = "at none"
        elif len(trains) == 1:
            where = f"at {setting(trains[0])} only"
        else:
            where = f"at {', '.join(setting(v) for v in trains)}, lowest at {lowest}"
        parts.append(f"{row[0]} {where}")
    return f"Where each trains (not stalled): {'; '.join(parts)}."


DESIGNS = [("pre-norm (LayerNorm)", "--norm pre"), ("post-norm (LayerNorm)", "--norm post"),
           ("DyT, pre placement", "--norm pre --norm-type dyt"), ("pre-norm + QK-norm", "--norm pre --qk-norm on"),
           ("post-norm + QK-norm", "--norm post --qk-norm on"), ("LayerNorm Scaling", "--norm lns"),
           ("ReZero", "--norm rezero"), ("pre-norm + scaled init", "--norm pre --scaled-init on"),
           ("post-norm + scaled init", "--norm post --scaled-init on")]
DESIGN_RUNS = ("each run `normlab-cli train --scale cpu --device cpu --threads 1 --warmup 30 --lr LR "
               "--seed S` with the design's options, as the sweeps train them")


def designs_table(designs, name="lr", values=("1e-3", "6e-3"), seeds=lambda design, value: 3):
    rows = [[design] + [Cell(train(flags, **{name: value} if name == "lr" else {"lr": "1e-3", name: value}),
                             seeds=seeds(design, value), stalls=True) for value in values]
            for design, flags in designs]
    header = [f"lr {v}" for v in values] if name == "lr" and len(values) == 2 else list(values)
    # The first design at the course's point (1e-3, 8 blocks): its runs are every table's.
    shared = next(i for i, v in enumerate(values) if v in ("1e-3", "8"))
    return Table(["design"] + header, rows, checks=[(0, 1 + shared)])


def against_plain(table, results):
    """Each design against its placement's plain LayerNorm row: the difference of the means,
    and whether the seeds' ranges are apart (the table's own runs, so it cannot drift)."""
    by_name = {row[0]: row[1:] for row in table.rows}
    intro = wrap("""Each design against the same placement with plain LayerNorm: the difference of the means
in nats (negative: lower, better) and whether the seeds' ranges are apart or overlap, a single run
counting as its own range:""")
    lines = [intro, "", "| design | against | " + " | ".join(table.header[1:]) + " |", "|" + "---|" * (len(table.header) + 1)]
    for name, cells in by_name.items():
        if name.endswith("(LayerNorm)"):
            continue
        plain = "post-norm (LayerNorm)" if name.startswith("post-norm") else "pre-norm (LayerNorm)"
        texts = []
        for cell, plain_cell in zip(cells, by_name[plain]):
            mine, theirs = cell.values(results), plain_cell.values(results)
            difference = sum(mine) / len(mine) - sum(theirs) / len(theirs)
            apart = max(mine) < min(theirs) or min(mine) > max(theirs)
            texts.append(f"{difference:+.3f}, {'apart' if apart else 'overlapping'}")
        lines.append(f"| {name} | {plain.split(' ')[0]} | " + " | ".join(texts) + " |")
    return "\n".join(lines)


def design_readings(table, results, values=None, setting=str):
    """What a design table's runs say, generated under it: where each trains (for a sweep),
    each against plain LayerNorm, and what the runs took."""
    where = [wrap(where_each_trains(table.rows, values, setting, results))] if values else []
    return "\n\n".join(where + [against_plain(table, results), wrap(run_times(table, results))])


def designs_results():
    table = designs_table(DESIGNS)

    def render(results, docs):
        intro = wrap(f"""The designs that drop or tame the norm, at the same scale, **three seeds each** (mean,
lowest–highest; "stalls": within 0.1 nats of the baseline or above it; {DESIGN_RUNS}):""")
        return f"""{intro}

{table.markdown(results)}"""

    return Block("designs-results", [table], render)


def designs_seeds():
    table = designs_table(DESIGNS)

    def render(results, docs):
        return f"""```sh
t="--scale cpu --device cpu --out runs --vary lr --values 1e-3,6e-3 --seeds 3"
normlab-cli sweep $t --placements pre,post,lns,rezero
normlab-cli sweep $t --placements pre --norm-type dyt
normlab-cli sweep $t --placements pre,post --qk-norm on
normlab-cli sweep $t --placements pre,post --scaled-init on
```

{wrap(f"**Three seeds (1337–1339), mean and range** ({DESIGN_RUNS}):")}

{table.markdown(results)}

{design_readings(table, results)}"""

    return Block("designs-seeds", [table], render)


def design_summary(table, designs, arguments, name):
    """The summary and chart of a design sweep, read back from the rows of `designs`."""
    runs = [run for row in table.rows if row[0] in designs for cell in row[1:] for run in cell.runs()]
    return Summary(f"--scale cpu --device cpu --threads 1 {arguments}", f"{name}.csv", runs, chart=f"{name}.svg")


def designs_lr():
    names = ("pre-norm (LayerNorm)", "post-norm (LayerNorm)", "DyT, pre placement", "pre-norm + QK-norm",
             "post-norm + QK-norm", "ReZero")
    table = designs_table([d for d in DESIGNS if d[0] in names], values=LR_SWEEP,
                          seeds=lambda design, value: 3 if not design.startswith("DyT") or value in ("1e-3", "6e-3")
                          else 1)

    def render(results, docs):
        return f"""```sh
l="--scale cpu --device cpu --out runs --vary lr --values 3e-4,1e-3,3e-3,6e-3,1e-2"
normlab-cli sweep $l --placements pre,post,rezero --seeds 3
normlab-cli sweep $l --placements pre --norm-type dyt
normlab-cli sweep $l --placements pre,post --qk-norm on --seeds 3
```

{wrap(f"Mean (lowest–highest) over seeds 1337–1339; DyT one seed away from the table's two rates ({DESIGN_RUNS}):")}

{table.markdown(results)}

{design_readings(table, results, LR_SWEEP)}"""

    sweep = f"--vary lr --values {','.join(LR_SWEEP)} --seeds 3 --placements"
    return Block("designs-lr", [table], render, summaries=[
        design_summary(table, names[:2] + ("ReZero",), f"{sweep} pre,post,rezero", "designs-lr"),
        design_summary(table, names[3:5], f"{sweep} pre,post --qk-norm on", "designs-lr-qk")])


def designs_depth():
    names = ("pre-norm (LayerNorm)", "LayerNorm Scaling", "ReZero", "DyT, pre placement")
    designs = sorted([d for d in DESIGNS if d[0] in names], key=lambda d: names.index(d[0]))
    table = designs_table(designs, name="layers", values=DEPTHS,
                          seeds=lambda design, value: 3 if design in names[:2] or value == "8" else 1)

    def render(results, docs):
        return f"""```sh
d="--scale cpu --device cpu --out runs --vary layers --values 2,4,8,16"
normlab-cli sweep $d --placements pre,lns --seeds 3
normlab-cli sweep $d --placements rezero
normlab-cli sweep $d --placements pre --norm-type dyt
```

At 1e-3, mean (lowest–highest) over seeds 1337–1339 where there are three
(`normlab-cli train --scale cpu --device cpu --threads 1 --warmup 30 --lr 1e-3 --layers N --seed S`
with the design's options):

{table.markdown(results)}

{design_readings(table, results, DEPTHS, lambda depth: f"{depth} blocks")}"""

    return Block("designs-depth", [table], render, summaries=[
        design_summary(table, names[:2], f"--vary layers --values {','.join(DEPTHS)} --seeds 3 --placements pre,lns",
                       "designs-depth")])


def dyt_probe():
    probe = "--steps 200 --norm pre"
    rows = [["pre-norm, LayerNorm", ""] + [Cell(train(probe, lr=lr)) for lr in ("1e-3", "6e-3")]]
    for alpha in ["0.25", "0.5", "1", "2", "4", "8", "16"]:
        rows.append(["pre-norm, DyT", alpha + (" (default)" if alpha == "0.5" else "")] +
                    [Cell(train(probe + " --norm-type dyt", dyt_alpha0=alpha, lr=lr)) for lr in ("1e-3", "6e-3")])
    table = Table(["design", "α₀", "lr 1e-3", "lr 6e-3"], rows, checks=[(0, 2)])

    def render(results, docs):
        return f"""First, a short probe (200 steps, one seed, one thread; DyT as built now, with the embedding
scale, which the probe first ran without):

```sh
normlab-cli train --scale cpu --device cpu --threads 1 --steps 200 --warmup 30 --norm pre --norm-type dyt --dyt-alpha0 A0 --lr LR --out runs
```

{table.markdown(results)}"""

    return Block("dyt-probe", [table], render)


def dyt_statistics(record):
    """What a DyT run recorded: the last block's RMS into its norms (the larger of the two) at
    step 40 and at its highest, the largest gradient norm into any block's attention or MLP
    from step 100 on, and the furthest any α moved from α₀."""
    series, last = record["series"], record["config"]["layers"] - 1
    steps = series["mlp_norm_input_rms"]["step"]
    rms = [max(series[f"{part}_norm_input_rms"]["values"][last][i] for part in ("attention", "mlp"))
           for i in range(len(steps))]
    grads = [series[f"{part}_grad_norm"]["values"] for part in ("attention", "mlp")]
    later = [i for i, step in enumerate(steps) if step >= 100]
    grad = max(layer[i] for values in grads for layer in values for i in later)
    alpha0 = record["config"]["dyt_alpha0"]
    moved = max(abs(a - alpha0) for part in ("attention", "mlp")
                for layer in series[f"{part}_dyt_alpha"]["values"] for a in layer)
    return rms[steps.index(40)], max(rms), grad, moved


def dyt_statistics_table(rows, results):
    """One row per run of the recipe table, the learning-rate row's runs one by one."""
    out = ["| α₀ | peak lr | warmup | otherwise | last block's RMS into its norms, step 40 (highest) "
           "| largest block gradient from step 100 | α's largest move |", "|---|---|---|---|---|---|---|"]
    for a0, lr, warmup, otherwise, cell in rows:
        runs = cell.runs()
        for run in runs:
            rms40, rms_max, grad, moved = dyt_statistics(pick(results[run]))
            rate = run.option("--lr", lr) if len(runs) > 1 else lr
            gradient = f"{grad:.0e}" if grad else "0"  # exactly 0 where tanh is flat in float32
            out.append(f"| {a0} | {rate} | {warmup} | {otherwise if len(runs) == 1 else ''} | {rms40:.1f} ({rms_max:.1f}) "
                       f"| {gradient} | {moved:.3f} |")
    return "\n".join(out)


def dyt_recipe():
    def run(a0, lr, warmup, otherwise="", placement="pre", flags=""):
        alpha = {} if a0 == "0.5" else {"dyt_alpha0": a0}  # 0.5 is the default: the designs' own runs
        cell = Cell(train(f"--norm {placement} --norm-type dyt {flags}".strip(), lr=lr, warmup=warmup, **alpha),
                    best=True)
        return [a0, lr, warmup, otherwise, cell]

    rows = [run("0.05", "1e-3", "30"), run("0.1", "1e-3", "30"), run("0.2", "1e-3", "30"),
            run("2", "1e-3", "30"), run("2", "6e-3", "30"), run("0.5", "1e-3", "200"),
            run("0.5", "1e-3", "30", "`--clip 1`", flags="--clip 1"),
            run("0.1", "1e-3", "30", "`--clip 1`", flags="--clip 1"),
            run("0.5", "1e-3", "30", "post placement", "post"), run("0.5", "6e-3", "30", "post placement", "post")]
    # α₀ 0.5 at warmup 30 is the default: the learning-rate table's DyT row, one seed each.
    rows.insert(3, ["0.5", "3e-4 to 1e-2", "30", "(the learning-rate table's runs)",
                    Span([train("--norm pre --norm-type dyt", lr=lr) for lr in LR_SWEEP])])
    table = Table(["α₀", "peak lr", "warmup", "otherwise", "final held-out"], rows, checks=[(0, 4)])

    def render(results, docs):
        recorded = wrap("""What the same runs recorded (their layer statistics, every step of the first 100,
then every 10): the RMS of what the last block's two DyTs squash, the largest gradient norm reaching
any block's attention or MLP once 100 steps have passed, and the furthest any block's α moved from
α₀ in 600 steps:""")
        return f"""Then, with the paper's language-model recipe (the embedding scale from √d, now part of
DyT), full 600-step runs, seed 1337 (`normlab-cli train --scale cpu --device cpu --threads 1
--norm P --norm-type dyt --dyt-alpha0 A0 --lr LR --warmup W [OTHERWISE]`; final held-out):

{table.markdown(results)}

{recorded}

{dyt_statistics_table(rows, results)}"""

    return Block("dyt-recipe", [table], render)


# --- timing blocks ------------------------------------------------------------------------

# A bench's own start: the matmul rate it sets the step against and a checkpoint it times.
BENCH_START_S = 3
TWO_THREADS = 1.24  # a CPU-scale step's speed-up from a second thread (docs/speed.md, Runs side by side)


def bench_s(steps, step_s=CPU_STEP_S):
    return BENCH_START_S + steps * step_s


def bench_json(text):  # normlab-cli bench --json prints one object, last
    return json.loads(text.strip().splitlines()[-1])


def figures_of(results, timing, key):
    """A figure of each round of a timing."""
    return [r[key] for r in results[timing]]


def median_of(results, timing, key):
    return statistics.median(figures_of(results, timing, key))


def ms(value):  # a step's time as the docs give it: three figures
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def others(results, timings):
    """What other work did meanwhile, as the renders say it."""
    worst = max(r["others"] for timing in timings for r in results[timing])
    return f"other work took at most {worst:.2f} of the {os.cpu_count()} cores while one ran"


PYTORCH_SIDES = ("normlab", "pytorch (fused)", "pytorch (for-loop)")  # the table's columns, as the script names them


def compare_medians(text):
    """bench/compare_pytorch.py's median ms/step of each side (its table's next-to-last column), and
    the sides it calls inconclusive (rounds that differed more than the sides do)."""
    lines = text.splitlines()
    figures = {}
    for side in PYTORCH_SIDES:
        row = next((line for line in lines if line.startswith(side + " ")), None)
        if row is None:
            raise ValueError(f"no '{side}' row")
        figures[side] = float(row[len(side):].split()[-2])
    figures["inconclusive"] = [side for side in PYTORCH_SIDES[1:] for line in lines
                               if line.startswith("INCONCLUSIVE") and f"eager {side} (" in line]
    return figures


def compare_s(step_s):  # 3 rounds of 3 + 15 steps: NormLab's, then PyTorch's two at about 1.5 times its cost
    return 15 + 3 * 18 * (1 + 2 * 1.5) * step_s


def speed_pytorch():
    shapes = [("8 × 64, fp32", " --batch 8 --context 64", CPU_STEP_S),
              ("8 × 64, bf16 autocast (both)", " --batch 8 --context 64 --autocast bf16", 2 * CPU_STEP_S),
              ("8 × 64, NormLab CPU bf16, PyTorch bf16 autocast", " --batch 8 --context 64 --cpu-precision bf16",
               2 * CPU_STEP_S),
              ("32 × 128, fp32", "", FULL_STEP_S),  # the script's own batch
              ("32 × 128, NormLab CPU bf16, PyTorch bf16 autocast", " --cpu-precision bf16", 1.5 * FULL_STEP_S)]
    timings = [Timing(f"bench/compare_pytorch.py --device cpu --threads 2{options}", compare_s(step_s / TWO_THREADS),
                      compare_medians) for _, options, step_s in shapes]

    def render(results, docs):
        rows = []
        for (label, _, _), timing in zip(shapes, timings):
            side = {name: median_of(results, timing, name) for name in PYTORCH_SIDES}
            shaky = any("pytorch (fused)" in r["inconclusive"] for r in results[timing])
            rows.append([label] + [ms(side[name]) for name in PYTORCH_SIDES] +
                        [f"{side['pytorch (fused)'] / side['normlab']:.2f}×" + (" (inconclusive)" if shaky else "")])
        table = Table(["ms/step", "NormLab", "PyTorch, fused AdamW", "PyTorch, default AdamW", "NormLab faster than fused"],
                      rows, checks=[])
        shaky = any("inconclusive" in row[-1] for row in rows)
        intro = wrap(f"""`bench/compare_pytorch.py` trains the same model on the same batches with an eager PyTorch
loop on the same torch {TORCH}, alternating rounds with `normlab-cli bench` (median of 3 rounds, 2 threads;
{others(results, timings)}{'; "inconclusive": the script found the rounds differed more than the sides do'
                            if shaky else ''}):""")
        return f"""{intro}

```sh
p=~/.cache/normlab/torch-{TORCH}/bin/python    # the Python of LibTorch's wheel
$p bench/compare_pytorch.py --device cpu --threads 2 --batch 8 --context 64 [--autocast bf16 | --cpu-precision bf16]
$p bench/compare_pytorch.py --device cpu --threads 2 [--cpu-precision bf16]    # 32 × 128
```

{table.markdown(results)}"""

    return Block("speed-pytorch", [], render, timings=timings)


PROFILED = [("8 × 64, fp32", "--batch 8 --context 64", CPU_STEP_S),
            ("8 × 64, CPU bf16", "--batch 8 --context 64 --cpu-precision bf16", CPU_STEP_S),
            ("32 × 128, fp32", "--batch 32 --context 128", FULL_STEP_S),
            ("32 × 128, CPU bf16", "--batch 32 --context 128 --cpu-precision bf16", FULL_STEP_S)]


def step_profile():
    """Where a step's time goes, by kind of work, at both scales and in both precisions."""
    timings = [Timing(f"normlab-cli bench --device cpu {options} --threads 1 --layer-stats-every 0 --text-every 0 "
                      f"--bench-warmup 10 --bench-steps 5 --profile 10 --json", bench_s(25, step_s), bench_json)
               for _, options, step_s in PROFILED]

    def render(results, docs):
        profiles = [results[timing][0]["profile"] for timing in timings]
        kinds = [entry["kind"] for entry in profiles[0]["kinds"]]  # in the order bench prints them
        by_kind = [{entry["kind"]: entry for entry in p["kinds"]} for p in profiles]
        rows = [[kind] + [f"{k[kind]['ms_per_step']:.1f} ({100 * k[kind]['share']:.0f} %)" for k in by_kind]
                for kind in kinds]
        rows.append(["**a step, profiler on**"] + [f"**{ms(p['ms_per_step'])}**" for p in profiles])
        rows.append(["minor page faults a step"] + [f"{results[t][0]['page_faults_per_step']:.0f}" for t in timings])
        table = Table(["ms a step (share)"] + [label for label, _, _ in PROFILED], rows, checks=[])
        top = profiles[1]["operators"][:3]
        intro = wrap(f"""`normlab-cli bench --profile` runs steps under LibTorch's profiler and sums each operator's own
time by the kind its name says (one thread, the layer statistics and text off, page faults over 5 steps after
10; {others(results, timings)}). The
operators inside the fused loss count as loss unless they are matmuls; *between operators* is the autograd engine's
bookkeeping and NormLab's own code. At 8 × 64 in bf16 the three longest operators were
{", ".join(f"`{op['name']}` {op['ms_per_step']:.1f} ms" for op in top)}.""")
        return f"""{intro}

```sh
normlab-cli bench --device cpu --batch 8 --context 64 --threads 1 --layer-stats-every 0 --text-every 0 \\
    --profile [--cpu-precision bf16]
```

{table.markdown(results)}"""

    return Block("step-profile", [], render, timings=timings)


SMALL_BENCH = "normlab-cli bench --device cpu --batch 8 --context 64 --json"


def small_bench_pair(commands):
    """SMALL_BENCH two ways, at 1 and at 2 threads: commands maps each way's name to its
    command (with {threads}) and its step cost against NormLab's default, for the estimate.
    Returns the timings by (threads, name) and a function giving their median ms a step."""
    timings = {(threads, name): Timing(command.format(threads=threads),
                                       bench_s(23, CPU_STEP_S * slower / (TWO_THREADS if threads == 2 else 1)),
                                       bench_json)
               for threads in (1, 2) for name, (command, slower) in commands.items()}

    def step(results, threads, name):
        return median_of(results, timings[threads, name], "median_ms_per_step")

    return timings, step


def matmul_speed():
    # LibTorch's own matmuls cost 1.7 times oneDNN's, as Run.estimate_s has it
    timings, step = small_bench_pair({kernel: (f"{SMALL_BENCH} --threads {{threads}} --cpu-matmul {kernel}", slower)
                                      for kernel, slower in (("onednn", 1), ("libtorch", 1.7))})
    rounds = 3

    def render(results, docs):
        one, two = [(step(results, t, "onednn"), step(results, t, "libtorch")) for t in (1, 2)]
        return wrap(f"""One thread, 8 × 64, medians of {rounds} alternated rounds (`{SMALL_BENCH} --threads 1 --cpu-matmul
onednn|libtorch`; {others(results, timings.values())}): {ms(one[0])} ms a step with oneDNN's matmuls against
{ms(one[1])} with LibTorch's ({one[1] / one[0]:.2f} times as long); 2 threads: {ms(two[0])} against {ms(two[1])} ms
({two[1] / two[0]:.2f}).""")

    return Block("matmul-speed", [], render, timings=list(timings.values()), rounds=rounds)


def spin_cost():
    # NormLab's own spin (core/system/idle_threads.cpp) against libgomp's default
    timings, step = small_bench_pair({spin: (f"{prefix}{SMALL_BENCH} --threads {{threads}}", 1)
                                      for spin, prefix in (("1000", ""), ("300000", "GOMP_SPINCOUNT=300000 "))})
    rounds = 3

    def render(results, docs):
        one, two = [(step(results, t, "1000"), step(results, t, "300000")) for t in (1, 2)]
        return wrap(f"""A run alone, 8 × 64, medians of {rounds} alternated rounds (`{SMALL_BENCH} --threads 1|2`, and
the same after `GOMP_SPINCOUNT=300000`, libgomp's default; {others(results, timings.values())}): at 2
threads {ms(two[0])} ms a step with NormLab's spin of 1000 against {ms(two[1])} with libgomp's
({two[0] / two[1]:.2f} times as long); at 1 thread, where no OpenMP thread waits, {ms(one[0])} against
{ms(one[1])}.""")

    return Block("spin-cost", [], render, timings=list(timings.values()), rounds=rounds)


def cpu_parallel():
    """A run at 2 threads: each thread a slice of the batch against each operator divided."""
    shapes = (("8 × 64", "--batch 8 --context 64", 20, CPU_STEP_S), ("32 × 128", "--batch 32 --context 128", 8,
                                                                     FULL_STEP_S))
    timings = {(shape, way): Timing(f"normlab-cli bench --device cpu {options} --threads 2 --cpu-parallel {way} "
                                    f"--layer-stats-every 0 --text-every 0 --bench-steps {steps} --json",
                                    bench_s(steps + 3, step_s / TWO_THREADS), bench_json)
               for shape, options, steps, step_s in shapes for way in ("batch", "operators")}
    rounds = 3

    def render(results, docs):
        def step(shape, way):
            return median_of(results, timings[shape, way], "median_ms_per_step")

        rows = [[shape, ms(step(shape, "batch")), ms(step(shape, "operators")),
                 f"{step(shape, 'operators') / step(shape, 'batch'):.2f}×"] for shape, _, _, _ in shapes]
        table = Table(["ms a step, 2 threads", "slices of the batch (default)", "each operator divided",
                       "slices faster by"], rows, checks=[])
        intro = wrap(f"""One run at 2 threads, medians of {rounds} alternated rounds (`normlab-cli bench --device cpu
--threads 2 --cpu-parallel batch|operators --layer-stats-every 0 --text-every 0`, at each shape;
{others(results, timings.values())}):""")
        return f"{intro}\n\n{table.markdown(results)}"

    return Block("cpu-parallel", [], render, timings=list(timings.values()), rounds=rounds)


def side_by_side_times(text):  # bench/side-by-side.sh: both wall times
    figures = {}
    for key, label in (("serial", "one after another"), ("together", "side by side")):
        found = re.search(rf"^{label} +([0-9.]+) s", text, re.M)
        if not found:
            raise ValueError(f"no '{label}' line")
        figures[key] = float(found.group(1))
    return figures


def two_process_rounds(text):  # bench/two-processes.sh: a line a round, serial and together seconds
    rounds = re.findall(r"^\d+ +([0-9.]+) +([0-9.]+) +[0-9.]+$", text, re.M)
    if not rounds:
        raise ValueError("no round")
    return {"serial": [float(r[0]) for r in rounds], "together": [float(r[1]) for r in rounds]}


def serial_s(runs, steps, cores=2):
    """CPU-scale runs one after another, each at every core."""
    return runs * steps * CPU_STEP_S / (TWO_THREADS if cores > 1 else 1)


def side_by_side():
    def script(arguments, runs, steps, cores=2, ratio=0.8, shown=""):  # side by side at about ratio of serial
        return Timing(f"bench/side-by-side.sh {shown or arguments}", (1 + ratio) * serial_s(runs, steps, cores),
                      side_by_side_times, runs_as=tuple(arguments.split()) + ("{build}",))

    course = script("course {cores} 600", 5, 600, shown="course")
    five = Timing("normlab-cli train --preset workshop --scale cpu --device cpu --side-by-side 5",
                  0.85 * serial_s(5, 600))
    alone = {threads: Timing(f"normlab-cli train --scale cpu --device cpu --threads {threads}",
                             600 * CPU_STEP_S / (TWO_THREADS if threads == 2 else 1)) for threads in (1, 2)}
    pair = Timing("normlab-cli train --scale cpu --device cpu --threads 1 --seeds 2 --side-by-side 2",
                  1.1 * 600 * CPU_STEP_S)
    sweep = script("lr-sweep {cores} 600", 10, 600, shown="lr-sweep")
    one_core = script("course 1 200", 5, 200, cores=1, ratio=1.1)
    # 3 rounds of two 60-step runs in turn, then together, each with a few seconds' start
    spin = Timing("bench/two-processes.sh 3 60", 3 * 2 * (2 * 60 * CPU_STEP_S / TWO_THREADS + 4), two_process_rounds,
                  runs_as=("3", "60", "{build}"))
    timings = [course, five, alone[1], alone[2], pair, sweep, one_core, spin]

    def render(results, docs):
        def seconds(timing, key="wall_s"):
            return median_of(results, timing, key)

        def span(values, digits, unit=""):  # lowest–highest over the script's own rounds
            low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
            return (low if low == high else f"{low}–{high}") + unit

        def pair_row(label, timing):
            serial, together = seconds(timing, "serial"), seconds(timing, "together")
            return [label, f"{serial:.1f} s", f"{together:.1f} s", f"{together / serial:.2f}"]

        one, two, both = seconds(alone[1]), seconds(alone[2]), seconds(pair)
        spins = {key: [value for r in results[spin] for value in r[key]] for key in ("serial", "together")}
        rows = [pair_row("the course's five runs, `--scale cpu` (`bench/side-by-side.sh course`)", course),
                ["the same, all five at once (`train --preset workshop --scale cpu --side-by-side 5`)", "",
                 f"{seconds(five):.1f} s", f"{seconds(five) / seconds(course, 'serial'):.2f}"],
                ["one run alone, 1 thread / 2 threads; two 1-thread runs at once", f"{one:.1f} s / {two:.1f} s",
                 f"{both:.1f} s for both", f"{both / (2 * two):.2f} of two in turn"],
                pair_row("the learning-rate sweep, pre and post, 10 runs of 600 steps (`bench/side-by-side.sh lr-sweep`)",
                         sweep),
                pair_row("the course on one core, 200 steps a run (`bench/side-by-side.sh course 1 200`)", one_core),
                ["two processes started together (`bench/two-processes.sh 3 60`)", span(spins["serial"], 1, " s"),
                 span(spins["together"], 1, " s"), span([t / s for t, s in zip(spins["together"], spins["serial"])], 2)]]
        cores = os.cpu_count()
        table = Table([f"on this {cores}-core machine, oneDNN matmuls", f"one after another ({cores} threads each)",
                       "side by side (2 at once)", "ratio"], rows, checks=[])
        intro = wrap(f"""Wall times of whole commands, one round ({others(results, timings)}); one run alone is
`normlab-cli train --scale cpu --device cpu --threads 1` (or `2`), two at once `--threads 1 --seeds 2
--side-by-side 2`:""")
        gain = "so two side by side beat two in turn" if both < 2 * two else "so two in turn were as fast"
        after = wrap(f"""Two 1-thread runs at once took {both / one:.2f} times as long as one alone, and a second
thread made one run {one / two:.2f} times as fast, {gain}.""")
        return f"{intro}\n\n{table.markdown(results)}\n\n{after}"

    return Block("side-by-side", [], render, timings=timings)


def step_cost():
    designs = [("pre-norm, LayerNorm", "--norm pre"), ("pre-norm, RMSNorm", "--norm-type rmsnorm"),
               ("pre-norm, DyT", "--norm-type dyt"), ("LayerNorm Scaling", "--norm lns"),
               ("ReZero", "--norm rezero"), ("pre-norm + QK-norm", "--qk-norm on"),
               ("pre-norm + scaled init", "--scaled-init on")]
    bench = ("normlab-cli bench --scale cpu --device cpu --threads 1 --layer-stats-every 0 --bench-steps 30 "
             "--bench-warmup 3 --json")
    timings = [Timing(f"{bench} {flags}", bench_s(33), bench_json) for _, flags in designs]
    rounds = 3

    def render(results, docs):
        rows = [[f"{label} (`{flags}`)", ms(min(figures_of(results, timing, "median_ms_per_step"))),
                 ms(median_of(results, timing, "median_ms_per_step"))]
                for (label, flags), timing in zip(designs, timings)]
        table = Table(["design (`DESIGN`)", "ms/step, fastest round", f"median of {rounds} rounds"], rows, checks=[])
        intro = wrap(f"""**Cost of a step.** One training step at the CPU scale (8 × 64 tokens, one thread, layer
statistics off), median of 30 timed steps after 3 untimed ones, each design benched in turn, {rounds} rounds,
every other one in reverse order ({others(results, timings)}):""")
        medians = [median_of(results, timing, "median_ms_per_step") for timing in timings]

        def percent(ratio):  # as the docs write a change: +6 %, −3 %, ±0 %
            rounded = round(100 * (ratio - 1))
            return f"{'+' if rounded > 0 else '−' if rounded < 0 else '±'}{abs(rounded)} %"

        against = "; ".join(f"{label} {percent(median / medians[0])}"
                            for (label, _), median in zip(designs[1:], medians[1:]))
        return f"""{intro}

```sh
{bench} DESIGN
```

{table.markdown(results)}

{wrap(f"Against {designs[0][0]}, median for median: {against}.")}"""

    return Block("step-cost", [], render, timings=timings, rounds=rounds)


BLOCKS = [placements_table(), what_it_learned(), sample_example(), course_cpu(), verdicts_cpu(), matmul_kernels(),
          course_pictures(),
          sweep_block("depth", "layers", DEPTHS, ["pre", "post"], "depth"),
          sweep_block("learning-rate", "lr", LR_SWEEP, ["pre", "post", "peri", "deepnorm"],
                      "the peak learning rate"),
          designs_results(), designs_seeds(), designs_lr(), designs_depth(), dyt_probe(), dyt_recipe(), course_full(),
          course_full("bookshelf"), corpus_flip(),
          speed_pytorch(), step_profile(), matmul_speed(), cpu_parallel(), side_by_side(), spin_cost(), step_cost()]


# --- running ------------------------------------------------------------------------------

def load_done(folder):
    """The finished run records in a folder, by name: run files as train writes them, or
    gzipped (NAME.json.gz, as docs/runs/ keeps the full-scale runs that took hours)."""
    records = {}
    paths = glob.glob(os.path.join(folder, "*.json")) + glob.glob(os.path.join(folder, "*.json.gz"))
    for path in sorted(paths):
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            record = json.load(f)
        # A run that diverged has a result too: its losses up to there (Cell says where).
        if record.get("schema") == "normlab.run" and record.get("status") in ("done", "diverged"):
            records[record["name"]] = record
    return records


class Runner:
    def __init__(self, cli, folder, fresh=False, given=None):
        self.cli = cli
        self.folder = folder
        self.fresh = fresh  # --check: train everything again
        self.given = given  # --runs: the records of multi-run commands come from here
        self.results = {}

    def path(self, run):
        return os.path.join(self.folder, run.key())

    def from_given(self, run):
        """Whether the run's records come from the --runs folders (multi-run commands only)."""
        return bool(self.given) and run.records() > 1

    def cached(self, run):
        if self.from_given(run):
            corpus = run.option("--corpus", "kjv")
            return {name: r for name, r in self.given.items() if corpus_of(r) == corpus} or None
        if self.fresh:
            return None
        records = load_done(self.path(run))
        return records if len(records) == run.records() else None

    def train(self, run, number, total):
        """Trains the run unless kept; safe to call from several threads for different runs."""
        records = self.cached(run)
        if records is None:
            folder = self.path(run)
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            print(f"[{number}/{total}] {run.command()}", flush=True)
            with open(os.path.join(folder, "train.log"), "w") as log:
                done = subprocess.run([self.cli, "train", *run.args, "--out", folder], stdout=log,
                                      stderr=subprocess.STDOUT)
            if done.returncode != 0:
                raise Failure(f"{run.command()} failed (exit {done.returncode}); its output: {folder}/train.log")
            records = load_done(folder)
            if len(records) != run.records():
                raise Failure(f"{run.command()} finished {len(records)} runs in {folder}, not {run.records()}")
        self.results[run] = records

    def files(self, runs):
        return [glob.glob(os.path.join(self.path(run), "*.json"))[0] for run in runs]


def binary_hash(cli):
    digest = hashlib.sha256()
    with open(cli, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:12]


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, check=True).stdout.strip()


def machine():
    with open("/proc/cpuinfo") as f:
        names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    return f"{names[0] if names else 'a CPU'} ({os.cpu_count()} cores)"


def stamp(block, html_form=False, kept=None):
    """When, where and by which engine the block was made: Markdown, or HTML for the About tab.
    A block made from kept runs (--runs FOLDER) names the folders instead of this machine and
    engine, which need not be the ones that trained them."""
    day = datetime.date.today().isoformat()
    command = f"scripts/figures.py --only {block.name}" + "".join(f" --runs {folder}" for folder in kept or [])
    if kept:
        where = "from the runs kept there (the engine, CPU and threads of each: docs/runs/README.md)"
    else:
        commit = git("log", "-1", "--format=%h", "--", *ENGINE)
        if git("status", "--porcelain", "--", *ENGINE):
            commit += " with uncommitted engine changes"
        where = f"engine at {commit}, on {machine()}"
    if html_form:
        return f"Made by <code>{html.escape(command)}</code> on {day}, {html.escape(where)}."
    return f"<sub>Made by `{command}` on {day}, {where}.</sub>"


MARKERS = "<!-- {0} -->\n(.*?)<!-- /{0} -->"


def markdown_files(root):
    """README.md, docs/*.md and the About tab's HTML pieces, relative to root: where blocks may live."""
    found = [os.path.relpath(p, root) for p in sorted(glob.glob(os.path.join(root, "docs", "*.md")))]
    found += [os.path.relpath(p, root) for p in sorted(glob.glob(os.path.join(root, ABOUT, "*.html")))]
    return (["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []) + found


def files_of(root, block):
    """The files that hold the block, wherever it has been moved to."""
    opening = f"<!-- {block.name} -->\n"
    found = []
    for name in markdown_files(root):
        with open(os.path.join(root, name)) as f:
            if opening in f.read():
                found.append(name)
    if not found:
        raise Failure(f"no Markdown file under {root} holds block {block.name} "
                      f"(<!-- {block.name} --> … <!-- /{block.name} --> in README.md or docs/*.md)")
    return found


def block_text(root, name, block):
    with open(os.path.join(root, name)) as f:
        text = f.read()
    match = re.search(MARKERS.format(re.escape(block.name)), text, re.S)
    if not match:
        raise Failure(f"{name} has no <!-- {block.name} --> … <!-- /{block.name} --> block")
    return text, match


def rewrite(root, block, results, kept=None):
    """Writes the block wherever it lives; `kept`: the --runs folders its runs came from, if any."""
    for name in files_of(root, block):
        text, match = block_text(root, name, block)
        if name.endswith(".html"):  # the window's About tab
            if block.html is None:
                raise Failure(f"{name} holds block {block.name}, which has no HTML form (Block.html)")
            made = stamp(block, html_form=True, kept=kept)
            body = f"<!-- {block.name} -->\n{block.html(results)}\n<p class=\"muted\"><small>{made}</small></p>\n<!-- /{block.name} -->"
        else:
            docs = "" if name.startswith("docs/") else "docs/"
            body = f"<!-- {block.name} -->\n{block.render(results, docs)}\n\n{stamp(block, kept=kept)}\n<!-- /{block.name} -->"
        with open(os.path.join(root, name), "w") as f:
            f.write(text[:match.start()] + body + text[match.end():])
        print(f"rewrote {block.name} in {name}")


def draw(root, block, runner, tools):
    for chart in block.charts:
        if not shutil.which("xvfb-run"):
            raise Failure("the charts need xvfb-run (Debian's xvfb)")
        with tempfile.TemporaryDirectory(prefix="figures-chart-") as out:
            sweep = ["--sweep", chart.sweep] if chart.sweep else []
            drawn = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", tools, out, *sweep,
                                    *runner.files(chart.runs)], capture_output=True, text=True)
            picture = os.path.join(out, chart.made_as)
            if drawn.returncode != 0 or not os.path.exists(picture):
                raise Failure(f"{tools} did not draw {chart.made_as}: {drawn.stderr.strip().splitlines()[-1:]}")
            target = os.path.join(root, "docs", chart.file)
            reduced = subprocess.run(["convert", picture, "-colors", "256", "PNG8:" + target], capture_output=True)
            if reduced.returncode != 0:  # a third of the size, where ImageMagick is installed
                print(f"convert could not reduce docs/{chart.file} to 256 colours; kept in full colour")
                shutil.copy(picture, target)
        print(f"drew docs/{chart.file}")
    for summary in block.summaries:
        with tempfile.TemporaryDirectory(prefix="figures-sweep-") as out:
            # Numbered: seeds of one design share a file name, and the sweep finds a point's
            # run by its settings whatever the file is called.
            for i, path in enumerate(runner.files(summary.runs)):
                shutil.copy(path, os.path.join(out, f"{i}-{os.path.basename(path)}"))
            done = subprocess.run([runner.cli, "sweep", *summary.arguments.split(), "--out", out, "--status"],
                                  capture_output=True, text=True)
            made = glob.glob(os.path.join(out, "*.csv"))
            if done.returncode != 0 or len(made) != 1:
                raise Failure(f"normlab-cli sweep {summary.arguments} --status did not read its points back: "
                              f"{done.stdout.strip().splitlines()[-1:]}")
            shutil.copy(made[0], os.path.join(root, "docs", summary.file))
            if summary.chart:
                shutil.copy(made[0][:-len(".csv")] + ".svg", os.path.join(root, "docs", summary.chart))
        print(f"wrote docs/{summary.file}" + (f" and docs/{summary.chart}" if summary.chart else ""))
    for printout in block.printouts:
        file = runner.files([printout.run])[0]
        done = subprocess.run([runner.cli, printout.command, file, *printout.arguments], capture_output=True, text=True)
        if done.returncode != 0:
            raise Failure(f"normlab-cli {printout.command} failed: {done.stderr.strip().splitlines()[-1:]}")
        runner.results[printout] = {"printed": done.stdout, "file": file}


def busy_s():
    """CPU seconds the machine has been busy since it started, every process's together."""
    with open("/proc/stat") as f:
        user, nice, system, idle, iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_s():
    """CPU seconds this script's finished commands took, theirs and their children's."""
    used = os.times()
    return used.children_user + used.children_system


def time_block(block, runner, python):
    """Runs the block's timings one at a time, each once a round and every other round in reverse
    order, so that none always comes first or after the same one; notes what else the machine did."""
    for number in range(block.rounds):
        for timing in block.timings if number % 2 == 0 else block.timings[::-1]:
            print(f"[round {number + 1}/{block.rounds}] {timing.command}", flush=True)
            with tempfile.TemporaryDirectory(prefix="figures-timing-") as out:
                busy, own, start = busy_s(), own_s(), time.perf_counter()
                done = subprocess.run(timing.argv(runner.cli, python, out), cwd=ROOT, capture_output=True, text=True)
                wall = time.perf_counter() - start
                others_s = busy_s() - busy - (own_s() - own)
            if done.returncode != 0:
                raise Failure(f"{timing.command} failed (exit {done.returncode}): "
                              f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")
            try:
                figures = timing.reads(done.stdout) if timing.reads else {}
            except (ValueError, IndexError) as e:
                raise Failure(f"{timing.command} printed what figures.py cannot read ({e}): "
                              f"{done.stdout.strip().splitlines()[-1:]}")
            # others: the cores other work kept busy on average while it ran
            runner.results.setdefault(timing, []).append(dict(figures, wall_s=wall, others=max(others_s, 0) / wall))


def shown_rows(root, block, table_index):
    """The rows of a block's table as its first file shows them, header and rule left out."""
    tables, current = [], []
    first = files_of(root, block)[0]
    for line in block_text(root, first, block)[1].group(1).splitlines() + [""]:
        if line.startswith("|"):
            current.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif current:
            tables.append(current[2:])
            current = []
    if table_index >= len(tables):
        raise Failure(f"{first}: block {block.name} shows {len(tables)} tables, not {table_index + 1}")
    return tables[table_index]


def unknown_blocks(root):
    """Blocks in the Markdown files that no entry of BLOCKS makes."""
    known = {block.name for block in BLOCKS}
    found = set()
    for name in markdown_files(root):
        with open(os.path.join(root, name)) as f:
            found |= set(re.findall(r"<!-- /([a-z0-9-]+) -->", f.read()))
    return sorted(found - known)


def check(root, blocks, runner, jobs):
    unknown = unknown_blocks(root)
    if unknown:
        raise Failure(f"the docs hold a block figures.py does not know: {unknown[0]}")
    cells = []
    for block in blocks:
        if block.timings:
            print(f"{'skipped':8} {block.name}: timings, not the same twice to the digit "
                  f"(remade by --only {block.name})")
            continue
        for index, table in enumerate(block.tables):
            if not table.checks:  # course-full: hours of runs, measured once by --only
                continue
            shown = shown_rows(root, block, index)
            for row, column in table.checks:
                labels = list(itertools.takewhile(lambda c: isinstance(c, str), table.rows[row]))
                label = " / ".join(c for c in labels if c)
                # Found by its labels, so a row added to a table does not shift the others' checks.
                found = [r for r in shown if r[:len(labels)] == labels]
                if not found:
                    raise Failure(f"{files_of(root, block)[0]}: block {block.name} shows no row '{label}'")
                cells.append((f"{block.name}: {label}, column {column + 1}", found[0][column],
                              table.rows[row][column]))
    runs = list(dict.fromkeys(run for *_, cell in cells for run in cell.runs()))
    say_cost(runs, runner, jobs)
    train_all(runs, runner, jobs)
    wrong = 0
    for where, shown, cell in cells:
        now = cell.text(runner.results)
        wrong += now != shown
        print(f"{'ok' if now == shown else 'DIFFERS':8} {where}: shown {shown}, now {now} "
              f"({'; '.join(run.command() for run in cell.runs())})")
    return wrong


def say_cost(runs, runner, jobs):
    todo = [run for run in runs if runner.cached(run) is None]
    minutes = sum(run.estimate_s() for run in todo) / 60 / min(jobs, max(len(todo), 1))
    print(f"{len(todo)} of {len(runs)} commands to train, about {minutes:.0f} min here, {jobs} at a time "
          f"({len(runs) - len(todo)} kept from before)", flush=True)


def say_timings(blocks):
    timed = [block for block in blocks if block.timings]
    if timed:
        commands = sum(block.rounds * len(block.timings) for block in timed)
        minutes = sum(block.timings_s() for block in timed) / 60
        print(f"then {commands} timed commands, about {minutes:.0f} min here, one at a time after all training",
              flush=True)


def train_all(runs, runner, jobs):
    """Each run trained or read back; `jobs` commands at once, their results the same (one thread each)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(runner.train, run, number, len(runs)) for number, run in enumerate(runs, 1)]
        for future in concurrent.futures.as_completed(futures):
            future.result()  # the first failure stops the script; runs already started finish


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=os.path.join(ROOT, "build/release/app/normlab-cli"))
    parser.add_argument("--screenshots", help="normlab-ui-screenshots (default: beside --cli's build)")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    parser.add_argument("--python", default=os.path.join(cache, "normlab", f"torch-{TORCH}", "bin", "python"),
                        help="a Python with the torch LibTorch comes from, for bench/compare_pytorch.py "
                             "(default: the one scripts/normlab.sh installs)")
    parser.add_argument("--only", help="comma-separated block names (default: every block)")
    parser.add_argument("--check", action="store_true", help="train the check cells afresh, fail on a difference")
    parser.add_argument("--jobs", type=int, default=1,
                        help="commands trained at once (each at one thread: give at most the cores)")
    parser.add_argument("--list", action="store_true", help="the blocks, their files and their cost, then stop")
    parser.add_argument("--dry-run", action="store_true", help="say what would be trained, then stop")
    parser.add_argument("--runs", action="append",
                        help="a folder of finished runs of the blocks' --preset commands (again for more folders; "
                             "a command takes the runs of its --corpus)")
    parser.add_argument("--root", default=ROOT, help="where README.md and docs/ are (default: this checkout)")
    parser.add_argument("--cache", default=os.path.join(ROOT, "build/figures"))
    options = parser.parse_args()

    by_name = {block.name: block for block in BLOCKS}
    names = options.only.split(",") if options.only else list(by_name)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise Failure(f"no block named '{unknown[0]}'; the blocks: {', '.join(by_name)}")
    blocks = [by_name[n] for n in names]
    if options.jobs < 1:
        raise Failure(f"--jobs {options.jobs}: give 1 or more")
    if options.list:
        # Also the cheap self-check: every block is in some file, and every file's block is known.
        unknown = unknown_blocks(options.root)
        if unknown:
            raise Failure(f"the docs hold a block figures.py does not know: {unknown[0]}")
        for block in blocks:
            minutes = (sum(run.estimate_s() for run in block.runs()) + block.timings_s()) / 60
            commands = len(block.runs()) + block.rounds * len(block.timings)
            rounds = f"{block.rounds} round{'s' * (block.rounds > 1)}"
            timed = f"  (timed, {rounds}, after all training)" if block.timings else ""
            print(f"{block.name:20} {commands:3} commands, about {minutes:5.0f} min  {', '.join(files_of(options.root, block))}{timed}")
        return 0
    if not os.access(options.cli, os.X_OK):
        raise Failure(f"{options.cli} is not an executable normlab-cli (build it, or give --cli)")
    cli = os.path.abspath(options.cli)
    given = None
    for folder in options.runs or []:
        done = load_done(folder)
        if not done:
            raise Failure(f"{folder} holds no finished run")
        given = {**(given or {}), **done}
    if options.check:
        with tempfile.TemporaryDirectory(prefix="figures-check-") as folder:
            wrong = check(options.root, blocks, Runner(cli, folder, fresh=True), options.jobs)
        if wrong:
            raise Failure(f"{wrong} shown figure(s) differ from what their command gives today")
        return 0

    runner = Runner(cli, os.path.join(options.cache, binary_hash(cli)), given=given)
    runs = list(dict.fromkeys(run for block in blocks for run in block.runs()))
    say_cost(runs, runner, options.jobs)
    say_timings(blocks)
    if options.dry_run:
        for run in runs:
            print(("kept   " if runner.cached(run) else "train  ") + run.command())
        for block in blocks:
            for timing in block.timings:
                print(f"time   {timing.command}" + (f"  ({block.rounds} rounds)" if block.rounds > 1 else ""))
        return 0
    if any(t.command.split()[0].endswith(".py") for block in blocks for t in block.timings) and \
            not os.access(options.python, os.X_OK):
        raise Failure(f"{options.python} is not an executable Python with torch (give --python)")
    train_all(runs, runner, options.jobs)
    tools = options.screenshots or os.path.join(os.path.dirname(os.path.dirname(cli)), "tests/ui/normlab-ui-screenshots")
    # Timing blocks last: every run has trained by then, and a failed timing costs no other block.
    for block in sorted(blocks, key=lambda b: bool(b.timings)):
        if block.charts and not os.access(tools, os.X_OK):
            raise Failure(f"{tools} is not an executable normlab-ui-screenshots (give --screenshots)")
        time_block(block, runner, os.path.abspath(options.python))
        draw(options.root, block, runner, tools)
        kept = [os.path.relpath(os.path.abspath(folder), options.root) for folder in options.runs or []
                if any(runner.from_given(run) for run in block.runs())]
        rewrite(options.root, block, runner.results, kept)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print(f"figures.py: {e}", file=sys.stderr)
        sys.exit(2)
