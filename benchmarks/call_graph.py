"""How much of the project one ``fit_budget`` call walks through.

Traces one call with ``sys.setprofile`` and counts the distinct project
functions entered (files under ``prune_opt/`` or ``forest_builders/``) and the
modules they live in.  Usage::

    python benchmarks/call_graph.py [--trees 20] [--objective brier] [--json] [--modules]

``--modules`` also lists the functions entered per module (most first).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import fit_budget

ROOTS = (os.sep + "prune_opt" + os.sep, os.sep + "forest_builders" + os.sep)


def trace(fn):
    seen = set()

    def prof(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if any(r in code.co_filename for r in ROOTS):
                seen.add((code.co_filename, code.co_firstlineno, code.co_name))

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, default=20)
    ap.add_argument("--rows", type=int, default=600)
    ap.add_argument("--objective", default="brier")
    ap.add_argument("--time-limit", type=float, default=5.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--modules", action="store_true", help="list functions per module")
    a = ap.parse_args(argv)
    X, y = make_classification(a.rows, 10, n_informative=5, random_state=0)
    rf = RandomForestClassifier(a.trees, max_depth=6, random_state=0).fit(X, y)
    costs = po.FeatureCosts(np.arange(1.0, 11.0))
    budget = 0.3 * po.PrunedForest(po.Forest.from_sklearn(rf),
                                   po.Forest.from_sklearn(rf).full_split_mask(),
                                   costs=costs).average_cost(X)
    seen = trace(lambda: fit_budget(rf, X, y, costs=costs, budget=budget,
                                    objective=a.objective, time_limit=a.time_limit))
    modules = {s[0] for s in seen}
    # comprehensions and lambdas are code objects of their own before Python 3.12
    # (PEP 709 inlines comprehensions); a module body counts once, on first import
    anonymous = sum(1 for s in seen if s[2].startswith("<") and s[2] != "<module>")
    bodies = sum(1 for s in seen if s[2] == "<module>")
    per_module = {}
    for file, _, name in seen:
        rel = file[max(file.rfind(os.sep + r.strip(os.sep) + os.sep) for r in ROOTS) + 1:]
        per_module.setdefault(rel, []).append(name)
    out = {"objective": a.objective, "trees": a.trees, "functions": len(seen),
           "modules": len(modules), "comprehensions_and_lambdas": anonymous,
           "module_bodies": bodies}
    if a.modules:
        out["per_module"] = {k: sorted(v) for k, v in
                             sorted(per_module.items(), key=lambda kv: -len(kv[1]))}
    if a.json:
        print(json.dumps(out))
    else:
        print(f"objective={a.objective!r} trees={a.trees}: {len(seen)} project functions "
              f"in {len(modules)} modules ({anonymous} of them comprehensions or lambdas, "
              f"{bodies} module bodies run on first import)")
        for k, v in out.get("per_module", {}).items():
            print(f"  {len(v):4d} {k}: {' '.join(v)}")
    return out


if __name__ == "__main__":
    main()
