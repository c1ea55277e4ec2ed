"""Helpers shared by CLI commands: dataset + forest set-up, JSON output, progress."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def add_data_arguments(p, *, trees=40):
    p.add_argument("--dataset", default="digits",
                   help="bundled/shared dataset name or a CSV/TSV path (default: digits)")
    p.add_argument("--target", default=None, help="label column of a CSV (default: last)")
    p.add_argument("--costs", default=None,
                   help="cost file: JSON {feature: cost} or 'name:cost' lines (default: the "
                        "dataset's real costs, else uniform)")
    p.add_argument("--trees", type=int, default=trees, help=f"forest size (default {trees})")
    p.add_argument("--max-depth", type=int, default=None, help="tree depth limit")
    p.add_argument("--train-frac", type=float, default=0.5,
                   help="share of rows used to grow the forest (default 0.5); the rest is "
                        "split evenly into validation (pruning) and test")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def read_cost_file(path, feature_names):
    from .. import FeatureCosts

    text = Path(path).read_text()
    try:
        spec = json.loads(text)
    except json.JSONDecodeError:
        spec = {}
        for line in text.splitlines():
            if line.strip() and ":" in line:
                k, v = line.split(":", 1)
                spec[k.strip()] = float(v)
    if isinstance(spec, list):
        return FeatureCosts(spec, feature_names=feature_names)
    if isinstance(spec, dict) and "costs" in spec:
        return FeatureCosts.from_dict({**spec, "feature_names": feature_names})
    return FeatureCosts(spec, feature_names=feature_names)


def setup_experiment(args, *, fit=True):
    """Load data, split train/validation/test, fit a random forest.

    Returns a dict with the dataset, splits, costs and fitted forest.
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    from ..datasets import load_dataset

    if not 0.0 < args.train_frac < 1.0:
        raise ValueError(f"--train-frac must be in (0, 1), got {args.train_frac}")
    if args.trees < 1:
        raise ValueError(f"--trees must be at least 1, got {args.trees}")
    ds = load_dataset(args.dataset, target=args.target)
    costs = (read_cost_file(args.costs, ds.feature_names) if args.costs
             else ds.costs_or_uniform())
    X, y = ds.X, ds.y
    strat = y if np.unique(y).size < 50 and np.min(np.unique(y, return_counts=True)[1]) > 3 \
        else None
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=args.train_frac,
                                                  random_state=args.seed, stratify=strat)
    if ds.X_test is not None:
        X_val, y_val, X_te, y_te = X_rest, y_rest, ds.X_test, ds.y_test
    else:
        X_val, X_te, y_val, y_te = train_test_split(X_rest, y_rest, test_size=0.5,
                                                    random_state=args.seed)
    out = dict(dataset=ds, costs=costs, X_train=X_tr, y_train=y_tr, X_val=X_val, y_val=y_val,
               X_test=X_te, y_test=y_te)
    if fit:
        rf = RandomForestClassifier(n_estimators=args.trees, max_depth=args.max_depth,
                                    random_state=args.seed, n_jobs=1)
        out["forest"] = rf.fit(X_tr, y_tr)
    return out


def write_json(path, obj):
    from .._persistence import _jsonable

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(_jsonable(obj), indent=2))


def format_table(rows, columns):
    """Plain-text table of dict rows."""
    def fmt(v):
        if isinstance(v, float):
            return f"{v:.6g}"
        return str(v)

    cells = [[fmt(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
              for i, c in enumerate(columns)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(columns, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)
