#!/usr/bin/env python3
"""Trims a run file to what its verdict reads, for tests/core/verdict_test.cpp: every step
and evaluation (each step's numbers to seven digits), each series only at the evaluations'
steps, no text. A verdict reads the same of the trimmed file as of the whole one: the layer
statistics are recorded at every evaluation, and it reads them at the last.

    tests/core/data/verdicts/trim.py RUN.json [--until STEP | --queued] > trimmed.json

--until keeps the run as it stood at that step (steps, evaluations and points up to it),
status "running": a run seen while it trains; --queued, as it stood before it started."""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--until", type=int)
    parser.add_argument("--queued", action="store_true")
    args = parser.parse_args()
    with open(args.run, encoding="utf-8") as f:
        run = json.load(f)
    until = -1 if args.queued else args.until

    def keep_columns(table, keep):
        return {key: [v for v, k in zip(values, keep) if k] for key, values in table.items()}

    if until is not None:
        run["steps"] = keep_columns(run["steps"], [s <= until for s in run["steps"]["step"]])
        run["evals"] = keep_columns(run["evals"], [s <= until for s in run["evals"]["step"]])
        run["status"] = "queued" if args.queued else "running"
        run["message"] = ""
        if args.queued:
            run["series"] = {}
            run["baseline_loss"] = 0
    evaluated = set(run["evals"]["step"])
    for series in run["series"].values():
        keep = [s in evaluated for s in series["step"]]
        series["step"] = [s for s, k in zip(series["step"], keep) if k]
        if series["layers"]:
            series["values"] = [[v for v, k in zip(layer, keep) if k] for layer in series["values"]]
        else:
            series["values"] = [v for v, k in zip(series["values"], keep) if k]
    # Seven significant digits of each step's numbers: a verdict reads losses to 0.01 nats.
    for key in ("wall_s", "lr", "train_loss", "tokens_per_s"):
        run["steps"][key] = [float(f"{v:.7g}") for v in run["steps"][key]]
    run["text"] = {"prompts": [], "references": [], "samples": []}
    json.dump(run, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
