"""Tables and target counts of the budget benchmarks' results (see ``_protocol``).

A *cell* is a (dataset, budget) pair; its value for a family is the mean over
the seeds of the test score of the family's chosen member.
"""

from __future__ import annotations

import numpy as np

NOT_AVAILABLE = "not available"
#: the anchors the estimator's first target is counted against (the best of them per cell)
BEST_ANCHORS = ("cegb", "catboost penalties", "cheap-subset rf", "cheap-subset gbm")


def summarise(results):
    """{dataset: {"seeds", "metric", "methods": {family: {frac: mean}}, "best", "best_of",
    "fallbacks": {family: {frac: count}}, "over": {family: {frac: count}}, "not_available"}}."""
    table = {}
    for r in results:
        metric = "acc" if r.get("task", "classification") == "classification" else "mse"
        d = table.setdefault(r["dataset"], {"seeds": 0, "metric": metric, "methods": {},
                                            "best": {}, "best_of": {}, "fallbacks": {},
                                            "over": {}, "not_available": {}})
        d["seeds"] += 1
        for fam, why in r.get("not_available", {}).items():
            d["not_available"].setdefault(fam, why)
        for cell in r["cells"]:
            f = cell["frac"]
            for m, c in cell["chosen"].items():
                d["methods"].setdefault(m, {}).setdefault(f, []).append(c["test_" + metric])
                d["fallbacks"].setdefault(m, {}).setdefault(f, 0)
                d["fallbacks"][m][f] += bool(c.get("fallback"))
                d["over"].setdefault(m, {}).setdefault(f, 0)
                d["over"][m][f] += bool(c.get("over_budget")) and not c.get("fallback")
            if cell["best_method"] is not None:
                d["best"].setdefault(f, []).append(
                    cell["chosen"][cell["best_method"]]["test_" + metric])
                d["best_of"].setdefault(f, []).append(cell["best_method"])
    for d in table.values():
        for m in d["methods"].values():
            for f in list(m):
                m[f] = float(np.mean(m[f]))
        d["best"] = {f: float(np.mean(v)) for f, v in d["best"].items()}
    return table


def _pct(f):
    return format(100 * f, "g") + "%"


def print_table(results, table, budgets, *, order=()):
    """Test score of every family at every budget, and its seconds per seed."""
    fmt = "{:>7.3f}"
    cols = " ".join(f"{'@' + _pct(f):>7}" for f in budgets)
    for name, d in table.items():
        label = "test accuracy" if d["metric"] == "acc" else "test MSE"
        print(f"{name} ({d['seeds']} seed(s); {label}, chosen on validation)")
        print(f"  {'method':<26} {cols}   seconds/seed")
        runs = [r for r in results if r["dataset"] == name]
        names = [m for m in order if m in d["methods"] or m in d["not_available"]]
        names += [m for m in d["methods"] if m not in names]
        for m in names:
            if m in d["not_available"] and m not in d["methods"]:
                print(f"  {m:<26} {d['not_available'][m]}")
                continue
            vals = " ".join((fmt if d["metric"] == "acc" else "{:>7.4g}").format(d["methods"][m][f])
                            for f in budgets)
            secs = np.mean([r["seconds"].get(m, np.nan) for r in runs])
            marks = _marks(d, m, budgets)
            print(f"  {m:<26} {vals}   {'' if np.isnan(secs) else format(secs, '.1f')}{marks}")
        if d["best"]:
            vals = " ".join((fmt if d["metric"] == "acc" else "{:>7.4g}").format(d["best"][f])
                            for f in budgets)
            print(f"  {'BEST PIPELINE':<26} {vals}")
        unp = np.mean([r["unpruned"]["test_" + d["metric"]] for r in runs])
        reference = runs[0].get("model", "random forest") if runs else "random forest"
        print(f"  (unpruned {reference}: {unp:.4g})\n")


def _marks(d, m, budgets):
    """Footnotes: fallbacks to the constant predictor, one-call members over budget."""
    fb = [d["fallbacks"][m].get(f, 0) for f in budgets]
    over = [d["over"][m].get(f, 0) for f in budgets]
    out = ""
    if any(fb):
        out += "  constant in " + "/".join(map(str, fb)) + " seed(s)"
    if any(over):
        out += "  OVER BUDGET on validation in " + "/".join(map(str, over)) + " seed(s)"
    return out


def _cells(table, budgets, *names):
    """(dataset, frac, values...) of the cells where every named family has a value."""
    for name, d in table.items():
        if not all(n in d["methods"] for n in names):
            continue
        for f in budgets:
            yield name, f, [d["methods"][n][f] for n in names]


def _count(table, budgets, names, test, missing):
    """'k/n' over the cells where the families compared with the first have values, or why
    it cannot be counted.  A cell where the first family did not run (not available on
    that dataset, or its fit failed) counts as missed, and the line says how many."""
    lacking = [n for n in names if not any(n in d["methods"] for d in table.values())]
    if lacking:
        return f"n/a ({', '.join(lacking)} {missing})"
    hits, absent = 0, 0
    for d in table.values():
        if not all(n in d["methods"] for n in names[1:]):
            continue
        for f in budgets:
            if names[0] in d["methods"]:
                hits += bool(test(*[d["methods"][n][f] for n in names]))
            else:
                absent += 1
    n = sum(all(m in d["methods"] for m in names[1:]) for d in table.values()) * len(budgets)
    return f"{hits}/{n}" + (f" ({absent} cells without {names[0]})" if absent else "")


def median_seconds(results, family):
    secs = [s for r in results for s in r.get("call_seconds", {}).get(family, [])]
    return (float(np.median(secs)), len(secs)) if secs else (None, 0)


def frontier_targets(results, table, budgets):
    """The issue's targets, counted over the cells of one run (mean test accuracy)."""
    na = NOT_AVAILABLE + " or not run"
    return {
        "estimator >= max(CEGB, CatBoost penalties, cheap-subset RF, cheap-subset GBM) - 0.5 "
        "point": _count(
            table, budgets, ["estimator", *BEST_ANCHORS],
            lambda e, *anchors: e >= max(anchors) - 0.005, na),
        "estimator >= max(CEGB, cheap-subset RF, cheap-subset GBM) - 0.5 point": _count(
            table, budgets, ["estimator", "cegb", "cheap-subset rf", "cheap-subset gbm"],
            lambda e, c, s, g: e >= max(c, s, g) - 0.005, na),
        "estimator >= max(CEGB, cheap-subset RF) - 0.5 point": _count(
            table, budgets, ["estimator", "cegb", "cheap-subset rf"],
            lambda e, c, s: e >= max(c, s) - 0.005, na),
        "estimator >= CEGB + 1 point": _count(
            table, budgets, ["estimator", "cegb"], lambda e, c: e >= c + 0.01, na),
        "fit_budget default >= better of paper / brier by hand - 0.5 point": _count(
            table, budgets, ["fit_budget default", "fit_budget paper", "fit_budget brier"],
            lambda a, p, b: a >= max(p, b) - 0.005, na),
        "fit_budget default >= GreedyPrune": _count(
            table, budgets, ["fit_budget default", "greedy"], lambda a, g: a >= g, na),
        "best pipeline within 0.5 point of CEGB": _count_best(table, budgets,
                                                              lambda b, c: b >= c - 0.005),
        **_timings(results),
    }


def regression_targets(results, table, budgets):
    na = NOT_AVAILABLE + " or not run"
    return {
        "estimator MSE <= 1.02 x best of (CEGB, CatBoost penalties, cheap-subset RF, "
        "cheap-subset GBM)": _count(
            table, budgets, ["estimator", *BEST_ANCHORS],
            lambda e, *anchors: e <= 1.02 * min(anchors), na),
        "estimator MSE <= 1.02 x best of (CEGB, cheap-subset RF, cheap-subset GBM)": _count(
            table, budgets, ["estimator", "cegb", "cheap-subset rf", "cheap-subset gbm"],
            lambda e, c, s, g: e <= 1.02 * min(c, s, g), na),
        "estimator MSE <= CEGB's": _count(table, budgets, ["estimator", "cegb"],
                                          lambda e, c: e <= c, na),
        "fit_budget default MSE <= GreedyPrune's": _count(
            table, budgets, ["fit_budget default", "greedy"], lambda a, g: a <= g, na),
        "best pipeline MSE <= CEGB's": _count_best(table, budgets, lambda b, c: b <= c),
        **_timings(results),
    }


def _count_best(table, budgets, test):
    if any("hull" not in d["methods"] for d in table.values()):
        return "n/a (not every pipeline was run: --families)"
    pairs = [(d["best"][f], d["methods"]["cegb"][f]) for d in table.values()
             if "cegb" in d["methods"] and d["best"] for f in budgets]
    if not pairs:
        return "n/a (cegb not run)"
    return f"{sum(test(b, c) for b, c in pairs)}/{len(pairs)}"


def estimator_fits(results):
    """Per estimator fit (one per dataset, seed and budget): the winner's family, whether
    it is a pruning, its test cost against the budget and the fit's seconds against its
    time limit, from the ``estimator`` members' points."""
    out = []
    for r in results:
        for cell in r["cells"]:
            c = cell["chosen"].get("estimator")
            if c is None or c.get("fallback"):
                continue
            out.append({"dataset": r["dataset"], "seed": r["seed"], "frac": cell["frac"],
                        "budget": cell["budget"], **c})
    return out


def estimator_targets(results):
    """Test cost over 1.02 x the budget, the fit's wall time against 1.25 x its time
    limit and the median fit, over every estimator fit of the run."""
    fits = estimator_fits(results)
    if not fits:
        return {}
    over = [f for f in fits if f["test_cost"] > 1.02 * f["budget"]]
    excess = [f["test_cost"] / f["budget"] - 1 for f in fits if f["budget"] > 0]
    timed = [f for f in fits if "time_limit" in f]
    slow = [f for f in timed if f["seconds"] > 1.25 * f["time_limit"]]
    worst = max(timed, key=lambda f: f["seconds"] / f["time_limit"], default=None)
    return {
        "estimator test cost > 1.02 B (fits)": (
            f"{len(over)}/{len(fits)} ({100 * len(over) / len(fits):.0f}%; test cost / B - 1: "
            f"median {100 * np.median(excess):+.1f}%, max {100 * max(excess):+.1f}%)"),
        "estimator fit > 1.25 x time_limit (fits)": (
            f"{len(slow)}/{len(timed)}" + (f" (slowest {worst['seconds']:.1f} s at "
                                           f"time_limit {worst['time_limit']:g})"
                                           if worst else "")),
    }


def print_winners(results):
    """Per candidate family: how many estimator fits it won, how many of them with a
    pruning (pruning changed the winner), and the datasets."""
    fits = [f for f in estimator_fits(results) if "family" in f]
    if not fits:
        return
    print("estimator winners by family (fits won; of them pruned, i.e. pruning changed "
          "the winner)")
    fams = sorted({f["family"] for f in fits}, key=lambda k: -sum(f["family"] == k
                                                                  for f in fits))
    for k in fams:
        mine = [f for f in fits if f["family"] == k]
        pruned = sum(f["pruned"] for f in mine)
        where = sorted({f["dataset"] for f in mine})
        print(f"  {k:<10} {len(mine):>3} won, {pruned:>3} pruned   {', '.join(where)}")
    total = sum(f["pruned"] for f in fits)
    print(f"  {'all':<10} {len(fits):>3} fits, {total:>3} won by a pruning "
          f"({100 * total / len(fits):.0f}%)\n")


def _timings(results):
    """Median seconds per call and budget overruns on validation of the one-call rows."""
    out = estimator_targets(results)
    for fam in ("fit_budget default", "estimator"):
        over = [c["chosen"][fam]["over_budget"] for r in results for c in r["cells"]
                if fam in c["chosen"]]
        out[f"{fam} over budget on validation (cells x seeds)"] = (
            f"{sum(over)}/{len(over)}" if over else NOT_AVAILABLE)
    for fam in ("fit_budget default", "estimator"):
        med, n = median_seconds(results, fam)
        out[f"median seconds per call, {fam}"] = (
            NOT_AVAILABLE if med is None else f"{med:.2f} ({n} calls)")
    return out


def print_targets(targets):
    width = max(len(k) for k in targets)
    for k, v in targets.items():
        print(f"{k:<{width}}  {v}")


def print_cells(table, budgets, names):
    """Per cell: the mean test score of each named family, and the first minus the best
    of the others."""
    rows = list(_cells(table, budgets, *names))
    if not rows:
        return
    lower = next(iter(table.values()))["metric"] == "mse"
    head = " ".join(f"{n:>19}" for n in names)
    print(f"{'dataset':<14} {'budget':>7} {head} {'diff':>8}")
    for name, f, vals in rows:
        other = min(vals[1:]) if lower else max(vals[1:])
        print(f"{name:<14} {_pct(f):>7} " + " ".join(f"{v:>19.4g}" for v in vals)
              + f" {vals[0] - other:>+8.3g}")
    print()


def fit_budget_margins(results, budgets, baselines):
    """Per cell and seed: the ``fit_budget`` family's validation accuracy minus the best
    fitting baseline's (None where a side is missing)."""
    out = {}
    for r in results:
        for cell in r["cells"]:
            ch = cell["chosen"]
            fb = ch.get("fit_budget")
            bases = [ch[b]["val_acc"] for b in baselines if b in ch and not ch[b]["fallback"]]
            if fb is not None and bases:
                out.setdefault((r["dataset"], cell["frac"]), []).append(
                    fb["val_acc"] - max(bases))
    return out


def print_fit_budget_check(results, budgets, baselines):
    """Does the fit_budget family's validation accuracy reach the best baseline's in every
    seed?  Returns 'k/n'."""
    margins = fit_budget_margins(results, budgets, baselines)
    print(f"{'dataset':<14} {'budget':>7}  fit_budget - best baseline, validation accuracy "
          f"(per seed; baselines: {', '.join(baselines)})")
    k = 0
    for (name, f), ms in margins.items():
        ok = all(m >= -1e-12 for m in ms)
        k += ok
        print(f"{name:<14} {_pct(f):>7}  {' '.join(format(m, '+.3f') for m in ms)}  "
              f"{'ok' if ok else 'LOSS'}")
    print()
    return f"{k}/{len(margins)}"


def plot(results, path, budgets, styles):
    """Validation accuracy against validation cost of each family, first seed of each
    dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from prune_opt._io import atomic_write

    first = {}
    for r in results:
        first.setdefault(r["dataset"], r)
    k = len(first)
    ncol = min(3, k)
    nrow = (k + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.6 * nrow), squeeze=False)
    for ax, (name, r) in zip(axes.ravel(), first.items()):
        for m, st in styles.items():
            pts = sorted(r["points"].get(m, []), key=lambda p: p["val_cost"])
            if pts:
                ax.plot([p["val_cost"] for p in pts], [p["val_acc"] for p in pts], st, ms=3,
                        lw=1, label=m)
        for f in budgets:
            ax.axvline(f * r["unpruned"]["val_cost"], color="0.8", lw=0.8)
        ax.set_xscale("symlog", linthresh=max(1e-3, 0.05 * r["unpruned"]["val_cost"]))
        ax.set_xlim(left=0)
        ax.set_title(f"{name} (seed {r['seed']})")
        ax.set_xlabel("average validation cost")
        ax.set_ylabel("validation accuracy")
    for ax in axes.ravel()[k:]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=7)
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)
