"""Seconds to prune a large boosted model, against the seconds LightGBM takes to train it.

Three scenarios (``--scenario``):

``binary`` (default): a binary LightGBM model (``--rounds`` rounds of ``--leaves``
leaves, LightGBM's other defaults, all cores) is trained on ``--train-rows`` rows of
a shared dataset, timed; then, on ``--val-rows`` other rows (the dataset's costs):

* ``fit_budget``   one ``po.fit_budget(model, X_val, y_val, costs=, budget=B)`` call per
  budget share (``--shares`` of the model's cost on those rows), every other
  argument at its default (the model's own loss, its default time limit);
* ``prune (paper)``  one ``po.prune(model, X_val, y_val, costs=, lam=, objective="paper")``
  per ``--lams``: the program of the stagewise second-order expansion solved exactly
  (min cut), compile included;
* ``prune``        the same call with the default objective (the model's own loss): the
  exact program's solution refined by exact block coordinate descent over the trees.

Each row reports the call's wall seconds and CPU seconds (this process, all its
threads), the ratio of each to the training's, the pruning's validation cost and
accuracy.  ``--train-threads`` sets LightGBM's threads (default 2, the machine's cores).

``multiclass``: letter's first 10 classes, a LightGBM model of 100 rounds (1,000
trees, 31 leaves) trained on the rows left after 2,500 validation and 2,500 test
rows; ``fit_budget`` with every default at 10% and 25% of the model's cost on the
validation rows, and the model truncated to its first r rounds for the best r that
fits on validation (best validation accuracy), each with its test accuracy.

``million``: a binary LightGBM model of 1,000 rounds trained on ``--train-rows`` rows
of magic, pruned by ``fit_budget(..., cost_sample=)`` on 1,000,000 rows made by
resampling magic's other rows with replacement and adding a small Gaussian jitter
(1% of each column's standard deviation) to every (continuous) column: no real
dataset has a million rows here.  It reports the call's seconds, the process's peak
resident memory (``resource.getrusage``) before and after the call, the sampled
average cost with its 95% interval, and the true average cost on all rows against
that interval and against the half-width ``cost_sample="auto"`` promises
(docs/math/sampling.md).

Usage::

    python benchmarks/boosted_speed.py                       # magic, 200 rounds, 10,000 rows
    python benchmarks/boosted_speed.py --dataset adult --json speed.json
    python benchmarks/boosted_speed.py --scenario multiclass --json multiclass.json
    python benchmarks/boosted_speed.py --scenario million --cost-sample 10000 --json million.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import prune_opt as po  # noqa: E402
from prune_opt.datasets import load_dataset  # noqa: E402


def _clock():
    """(wall, CPU) seconds of this process so far (CPU: every thread)."""
    return time.perf_counter(), time.process_time()


def _since(t):
    wall, cpu = _clock()
    return wall - t[0], cpu - t[1]


def _peak_gb():
    """Peak resident memory of this process so far (GB)."""
    import resource

    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb * (1 if sys.platform == "darwin" else 1024) / 1e9


def _binary_data(name):
    ds = load_dataset(name)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    classes = np.unique(y)
    if classes.size != 2:
        raise SystemExit(f"--dataset {name}: a binary dataset is needed "
                         f"({classes.size} classes)")
    return ds, X, np.searchsorted(classes, y)


def _train(lgb, args, X, y, rounds):
    model = lgb.LGBMClassifier(n_estimators=rounds, num_leaves=args.leaves,
                               random_state=args.seed, verbose=-1, n_jobs=args.train_threads)
    t = _clock()
    model.fit(X, y)
    return model, _since(t)


def _row(method, param, seconds, train, **extra):
    wall, cpu = seconds
    return {"method": method, "param": param, "seconds": wall, "cpu_seconds": cpu,
            "x_training": wall / train[0], "x_training_cpu": cpu / max(train[1], 1e-9),
            **extra}


def run(args):
    return SCENARIOS[args.scenario](args)


def run_binary(args):
    import lightgbm as lgb

    ds, X, y = _binary_data(args.dataset)
    need = args.train_rows + args.val_rows
    if len(y) < need:
        raise SystemExit(f"--dataset {args.dataset} has {len(y)} rows, fewer than "
                         f"--train-rows + --val-rows = {need}")
    idx = np.random.default_rng(args.seed).permutation(len(y))
    tr, va = idx[:args.train_rows], idx[args.train_rows:need]
    model, train = _train(lgb, args, X[tr], y[tr], args.rounds)
    costs = po.as_feature_costs(ds.costs, X.shape[1], ds.feature_names)
    forest = po.as_forest(model)
    full = po.PrunedForest(forest, forest.full_split_mask(), costs=costs)
    base = full.average_cost(X[va])
    rows = [_row("LightGBM training", f"{args.rounds} rounds", train, train, val_cost=base,
                 val_accuracy=float(np.mean(model.predict(X[va]) == y[va])))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for share in args.shares:
            t = _clock()
            pf = po.fit_budget(model, X[va], y[va], costs=costs, budget=share * base)
            rows.append(_row("fit_budget", f"budget {share:g} x cost", _since(t), train,
                             val_cost=pf.average_cost(X[va]),
                             val_accuracy=pf.score(X[va], y[va])))
        for lam in args.lams:
            for method, objective in (("prune (paper)", "paper"), ("prune", None)):
                t = _clock()
                pf = po.prune(model, X[va], y[va], costs=costs, lam=lam, objective=objective)
                extra = {}
                if objective == "paper":
                    g = pf.solve_info.get("graph", {})
                    extra = {"compile_seconds": pf.solve_info.get("compile_seconds"),
                             "build_seconds": pf.solve_info.get("build_seconds"),
                             "flow_seconds": pf.solve_info.get("flow_seconds"),
                             "n_arcs": g.get("n_arcs"),
                             "n_fixed_splits": g.get("n_fixed_splits"),
                             "n_pairs_forced": g.get("n_pairs_forced")}
                rows.append(_row(method, f"lam {lam:g}", _since(t), train,
                                 val_cost=pf.average_cost(X[va]),
                                 val_accuracy=pf.score(X[va], y[va]), **extra))
    return {"scenario": "binary", "dataset": args.dataset, "rounds": args.rounds,
            "leaves": args.leaves, "train_rows": args.train_rows, "val_rows": args.val_rows,
            "n_trees": forest.n_trees, "n_nodes": int(forest.n_nodes), "rows": rows}


def run_multiclass(args):
    import lightgbm as lgb

    from prune_opt.budget import fewer_trees_prunings

    ds = load_dataset("letter")
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    keep = np.isin(y, np.unique(y)[:10])  # the first 10 classes
    X, y = X[keep], y[keep]
    idx = np.random.default_rng(args.seed).permutation(len(y))
    va, te, tr = idx[:2500], idx[2500:5000], idx[5000:]
    rounds = 100
    model, train = _train(lgb, args, X[tr], y[tr], rounds)
    costs = po.as_feature_costs(ds.costs, X.shape[1], ds.feature_names)
    forest = po.as_forest(model)
    full = po.PrunedForest(forest, forest.full_split_mask(), costs=costs)
    base = full.average_cost(X[va])

    def scores(pf):
        return {"val_cost": pf.average_cost(X[va]), "val_accuracy": pf.score(X[va], y[va]),
                "test_cost": pf.average_cost(X[te]), "test_accuracy": pf.score(X[te], y[te])}

    rows = [_row("LightGBM training", f"{rounds} rounds", train, train, **scores(full))]
    t = _clock()
    truncations = [(m // forest.round_size, pf, pf.average_cost(X[va]),
                    pf.score(X[va], y[va])) for m, pf in fewer_trees_prunings(forest,
                                                                             costs=costs)]
    trunc_seconds = _since(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for share in args.multiclass_shares:
            budget = share * base
            t = _clock()
            pf = po.fit_budget(model, X[va], y[va], costs=costs, budget=budget)
            rows.append(_row("fit_budget", f"budget {share:g} x cost", _since(t), train,
                             **scores(pf)))
            fits = [c for c in truncations if c[2] <= budget * (1 + 1e-10)]
            if fits:
                r, pf, _, _ = max(fits, key=lambda c: (c[3], -c[2]))
                rows.append(_row("fewer-rounds", f"budget {share:g}: {r} rounds",
                                 trunc_seconds, train, **scores(pf)))
            else:
                r, _, cost, acc = min(truncations, key=lambda c: c[2])
                rows.append({"method": "fewer-rounds",
                             "param": f"budget {share:g}: none fits ({r} round(s) cost "
                                      f"{cost:.3g}, val acc {acc:.4f})"})
    return {"scenario": "multiclass", "dataset": "letter (first 10 classes)",
            "rounds": rounds, "leaves": args.leaves, "train_rows": int(tr.size),
            "val_rows": int(va.size), "test_rows": int(te.size), "n_trees": forest.n_trees,
            "n_nodes": int(forest.n_nodes), "rows": rows}


def million_rows(X, pool, n, rng):
    """``n`` rows resampled with replacement from the rows ``pool`` of ``X``, each column
    jittered by Gaussian noise of 1% of its standard deviation (a stand-in for a large
    dataset: no real one of a million rows is at hand)."""
    pick = rng.choice(pool, size=n, replace=True)
    sd = X[pool].std(axis=0)
    out = X[pick]
    for a in range(0, n, 1 << 18):  # in blocks: one (n x features) array in all
        out[a:a + (1 << 18)] += rng.normal(scale=0.01, size=out[a:a + (1 << 18)].shape) * sd
    return out, pick


def run_million(args):
    import lightgbm as lgb

    from prune_opt.program._sampling import AUTO_HALF_WIDTH, auto_sample_rows

    ds, X, y = _binary_data("magic")
    rng = np.random.default_rng(args.seed)
    idx = rng.permutation(len(y))
    tr, pool = idx[:args.train_rows], idx[args.train_rows:]
    model, train = _train(lgb, args, X[tr], y[tr], args.million_rounds)
    Xb, pick = million_rows(X, pool, args.million_rows, rng)
    yb = y[pick]
    costs = po.as_feature_costs(ds.costs, X.shape[1], ds.feature_names)
    forest = po.as_forest(model)
    full = po.PrunedForest(forest, forest.full_split_mask(), costs=costs)
    probe = Xb[:: max(1, Xb.shape[0] // 20000)]
    base = full.average_cost(probe)  # the unpruned model's cost (all units on magic)
    sample = args.cost_sample if args.cost_sample == "auto" else int(args.cost_sample)
    rows = [_row("LightGBM training", f"{args.million_rounds} rounds", train, train,
                 val_cost=base)]
    scored = []  # accuracies are measured after every peak is read (in small chunks)
    for share in args.million_shares:
        before = _peak_gb()
        t = _clock()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            pf = po.fit_budget(model, Xb, yb, costs=costs, budget=share * base,
                               cost_sample=sample)
        seconds = _since(t)
        si = pf.solve_info
        m = si.get("n_sample", Xb.shape[0])
        m_auto = auto_sample_rows(Xb.shape[0]) or Xb.shape[0]
        # the half-width "auto" promises at its own sample size, for this sample size
        promised = AUTO_HALF_WIDTH * base * float(np.sqrt(m_auto / m))
        true, sampled = si.get("true_average_cost"), si.get("sampled_average_cost")
        rows.append(_row("fit_budget", f"budget {share:g} x cost, sample {m:,}", seconds,
                         train, budget=share * base, sampled_cost=sampled,
                         cost_ci=si.get("cost_ci"), true_cost=true,
                         true_in_ci=si.get("true_in_ci"), promised_half_width=promised,
                         true_within_promise=(None if true is None else
                                              bool(abs(true - sampled) <= promised)),
                         peak_gb_before=before, peak_gb=_peak_gb(),
                         status=si.get("status"), found_by=si.get("found_by"),
                         search_seconds=si.get("search_seconds"),
                         phase_seconds=si.get("phase_seconds"),
                         warnings=[str(w.message) for w in caught]))
        scored.append((rows[-1], pf))
    for row, pf in [(rows[0], full)] + scored:  # on the first 200,000 rows
        row["val_accuracy"] = float(np.mean(np.concatenate([
            pf.predict(Xb[a:a + 20_000]) == yb[a:a + 20_000] for a in range(0, 200_000,
                                                                          20_000)])))
    return {"scenario": "million", "dataset": "magic, resampled with jitter",
            "rounds": args.million_rounds, "leaves": args.leaves,
            "train_rows": args.train_rows, "rows_pruned": int(Xb.shape[0]),
            "cost_sample": args.cost_sample, "n_trees": forest.n_trees,
            "n_nodes": int(forest.n_nodes), "rows": rows}


SCENARIOS = {"binary": run_binary, "multiclass": run_multiclass, "million": run_million}


def _print(out):
    print(f"{out['scenario']}: {out['dataset']}, LightGBM {out['rounds']} rounds x "
          f"{out['leaves']} leaves ({out['n_trees']} trees, {out['n_nodes']} nodes), trained "
          f"on {out['train_rows']} rows")
    if out["scenario"] == "million":
        print(f"{'method':<18} {'param':<36} {'seconds':>8} {'cpu s':>7} {'peak GB':>8} "
              f"{'sampled':>8} {'95% interval':>19} {'true':>8} {'in CI':>6} {'promise':>8} "
              f"{'acc':>6}")
        for r in out["rows"]:
            if "true_cost" not in r:
                print(f"{r['method']:<18} {r['param']:<36} {r['seconds']:>8.2f} "
                      f"{r['cpu_seconds']:>7.2f} {'':>8} {r['val_cost']:>8.4f} {'':>19} "
                      f"{'':>8} {'':>6} {'':>8} {r['val_accuracy']:>6.4f}")
                continue
            lo, hi = r["cost_ci"] or (float("nan"), float("nan"))
            print(f"{r['method']:<18} {r['param']:<36} {r['seconds']:>8.2f} "
                  f"{r['cpu_seconds']:>7.2f} {r['peak_gb']:>8.2f} {r['sampled_cost']:>8.4f} "
                  f"[{lo:.4f}, {hi:.4f}] {r['true_cost']:>8.4f} {str(r['true_in_ci']):>6} "
                  f"{r['promised_half_width']:>8.4f} {r['val_accuracy']:>6.4f}")
        return
    test = out["scenario"] == "multiclass"
    print(f"{'method':<18} {'param':<26} {'seconds':>8} {'x train':>8} {'cpu s':>7} "
          f"{'x train cpu':>11} {'val cost':>9} {'val acc':>8}" + (f" {'test acc':>8}"
                                                                   if test else ""))
    for r in out["rows"]:
        if "seconds" not in r:
            print(f"{r['method']:<18} {r['param']}")
            continue
        print(f"{r['method']:<18} {r['param']:<26} {r['seconds']:>8.2f} "
              f"{r['x_training']:>8.2f} {r['cpu_seconds']:>7.2f} {r['x_training_cpu']:>11.2f} "
              f"{r['val_cost']:>9.3f} {r.get('val_accuracy', float('nan')):>8.4f}"
              + (f" {r['test_accuracy']:>8.4f}" if test else ""))


def _floats(text):
    return [float(v) for v in text.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), default="binary")
    ap.add_argument("--dataset", default="magic")
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--train-rows", type=int, default=8000)
    ap.add_argument("--val-rows", type=int, default=10000)
    ap.add_argument("--train-threads", type=int, default=2)
    ap.add_argument("--shares", default="0.1,0.25,0.5", type=_floats)
    ap.add_argument("--lams", default="0.001,0.01", type=_floats)
    ap.add_argument("--multiclass-shares", default="0.1,0.25", type=_floats)
    ap.add_argument("--million-rows", type=int, default=1_000_000)
    ap.add_argument("--million-rounds", type=int, default=1000)
    ap.add_argument("--million-shares", default="0.25", type=_floats)
    ap.add_argument("--cost-sample", default="10000",
                    help="cost_sample of the million scenario: rows, or 'auto'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    out = run(args)
    _print(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
