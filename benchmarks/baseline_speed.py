"""Seconds of each baseline's curve against one ``po.prune`` on the same data.

A random forest (``--trees``) is grown on half of ``--rows`` rows of a shared
dataset and every registered baseline is traced on the other half
(``BASELINES[name]`` then ``baseline_curve`` with the rows' accuracy), next to
one ``po.prune(lam=0.01)``.  Usage::

    python benchmarks/baseline_speed.py [--dataset spambase] [--trees 50] [--rows 7000]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import BASELINES, baseline_curve
from prune_opt.datasets import load_dataset


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="spambase")
    ap.add_argument("--trees", type=int, default=50)
    ap.add_argument("--rows", type=int, default=7000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    ds = load_dataset(a.dataset)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    idx = np.random.default_rng(0).permutation(len(y))[:a.rows]
    tr, va = idx[: len(idx) // 2], idx[len(idx) // 2:]
    rf = RandomForestClassifier(a.trees, random_state=0).fit(X[tr], y[tr])
    t0 = time.perf_counter()
    po.prune(rf, X[va], y[va], lam=0.01)
    base = time.perf_counter() - t0
    out = {"prune_seconds": base, "rows": len(va), "trees": a.trees}
    for name in BASELINES:
        t0 = time.perf_counter()
        seq = BASELINES[name](rf, X[va], y[va])
        baseline_curve(seq, X[va], y=y[va], method=name)
        out[name] = time.perf_counter() - t0
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{a.dataset}: {a.trees} trees, {len(va)} pruning rows; po.prune {base:.2f}s")
        for name in BASELINES:
            print(f"  {name:12s} {out[name]:7.2f}s  ({out[name] / base:5.1f}x prune)")
    return out


if __name__ == "__main__":
    main()
