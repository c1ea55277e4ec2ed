"""The estimator's selection rule against alternatives, replayed on recorded candidates.

``python benchmarks/frontier.py --families estimator --candidates --json c.json``
records, for every estimator fit, every candidate's select-row accuracy and
Brier loss, the number of select rows, and its test accuracy.  This script
replays selection rules on those records -- each rule picks one candidate per
fit from the same candidates, so the comparison is free of the run-to-run
noise of the time-limited searches -- and prints each rule's mean test
accuracy per dataset and over every (dataset, budget) cell:

* ``best accuracy``: the best select-row accuracy (ties: lower Brier loss, then
  lower cost), the estimator's rule before the one-standard-error rule;
* ``brier``: the lowest select-row Brier loss;
* ``one standard error``: the lowest Brier loss among the candidates within one
  binomial standard error of the best accuracy
  (:func:`prune_opt.budget.within_one_standard_error`), the estimator's rule;
* ``hindsight``: the best test accuracy (not a rule: the ceiling).

Usage::

    python benchmarks/selection_rules.py a.json,b.json [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prune_opt.budget import within_one_standard_error  # noqa: E402


def _best_accuracy(c):
    return min(c, key=lambda r: (-round(r["score"], 12), round(r["brier"], 12),
                                 r["average_cost"]))


def _brier(c):
    return min(c, key=lambda r: (round(r["brier"], 12), -r["score"], r["average_cost"]))


def _one_standard_error(c):
    keep, _ = within_one_standard_error([1.0 - r["score"] for r in c], c[0]["n_select"])
    return _brier([r for r, k in zip(c, keep) if k])


RULES = {"best accuracy": _best_accuracy, "brier": _brier,
         "one standard error": _one_standard_error,
         "hindsight": lambda c: max(c, key=lambda r: r["test_acc"])}


def fits(paths):
    """{(dataset, seed, share): [fitting candidates]} from frontier ``--json`` files."""
    out = defaultdict(list)
    for path in paths:
        for run in json.loads(Path(path).read_text())["results"]:
            for r in run.get("candidates", ()):
                if r["fits_budget"] and "test_acc" in r:
                    out[(run["dataset"], run["seed"], round(r["share"], 6))].append(r)
    return out


def replay(paths):
    """{rule: {(dataset, share): mean test accuracy over seeds}}."""
    cells = defaultdict(lambda: defaultdict(list))
    for (dataset, _, share), c in fits(paths).items():
        for name, rule in RULES.items():
            cells[name][(dataset, share)].append(rule(c)["test_acc"])
    return {name: {k: float(np.mean(v)) for k, v in by.items()} for name, by in cells.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", help="comma-separated frontier --json files run with --candidates")
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    table = replay(args.runs.split(","))
    if not table:
        raise SystemExit("no recorded candidates: run benchmarks/frontier.py with "
                         "--families estimator --candidates --json FILE first")
    names = list(RULES)
    keys = sorted(table[names[0]])
    print(f"{'dataset':<14} {'budget':>6} " + " ".join(f"{n:>18}" for n in names))
    for k in keys:
        print(f"{k[0]:<14} {k[1]:>6.0%} " + " ".join(f"{table[n][k]:>18.4f}" for n in names))
    means = {n: float(np.mean([table[n][k] for k in keys])) for n in names}
    print(f"{'mean':<14} {len(keys):>6} " + " ".join(f"{means[n]:>18.4f}" for n in names))
    base = means["best accuracy"]
    print("change of the mean against 'best accuracy', points: " + ", ".join(
        f"{n} {100 * (means[n] - base):+.2f}" for n in names[1:]))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"cells": {n: {f"{k[0]} {k[1]}": v for k, v in t.items()}
                       for n, t in table.items()}, "means": means}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
