"""Pictures: accuracy-cost curves of several methods and feature-usage bars.

matplotlib is used with the non-interactive Agg backend (files only).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._io import atomic_write

__all__ = ["plot_tradeoff", "plot_feature_usage", "save_figure"]

#: "steps": drawn as a staircase (the exact hull: between two vertices only the cheaper
#: one's score is attainable, a straight segment would suggest points nothing reaches)
_STYLE = {"budgetprune": dict(marker="o", lw=2.0, zorder=5, steps=True),
          "ccp": dict(marker="s", lw=1.2), "greedy": dict(marker="^", lw=1.2),
          "fewer-trees": dict(marker="v", lw=1.2), "impurity": dict(marker="d", lw=1.2),
          "cegb": dict(marker="x", lw=1.2, ls=":"),
          # fit_budget on a grid of budgets (prune_opt.budget.budget_curve): one pruning per
          # budget, joined by a dash-dot line so the grid reads as one method
          "fit_budget": dict(marker="P", ms=8, lw=1.4, ls="-.", zorder=6)}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path, *, dpi=120):
    """Save ``fig`` atomically; the format comes from the suffix (PNG when none).

    The picture is rendered into a temporary file beside ``path`` and renamed
    over it, so an interrupted or failed save never leaves a truncated file.
    Missing parent folders are created.

    Examples
    --------
    >>> import os, tempfile
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from prune_opt.plotting import save_figure
    >>> fig, ax = plt.subplots()
    >>> out = save_figure(fig, os.path.join(tempfile.mkdtemp(), "f.png"))
    >>> open(out, "rb").read(4)
    b'\\x89PNG'
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "png"
    supported = fig.canvas.get_supported_filetypes()
    if fmt not in supported:
        raise ValueError(f"path={str(path)!r}: matplotlib cannot write {fmt!r} files; use one "
                         f"of {', '.join(sorted(supported))}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format=fmt, dpi=dpi)
    return path


_POINT_MARKERS = ("P", "D", "X", "p")


def _score_column(curves):
    """``accuracy_eval`` unless the curves score R^2 (regression) instead."""
    first = next((_records(c) for c in curves.values() if len(_records(c))), [])
    if first and "accuracy_eval" not in first[0] and "r2_eval" in first[0]:
        return "r2_eval"
    return "accuracy_eval"


def _points(name, curve, x, y):
    """Sorted ``(x, y)`` pairs of a curve; a missing column is an error naming the ones
    the curve has."""
    rows = _records(curve)
    missing = [c for c in (x, y) if rows and c not in rows[0]]
    if missing:
        have = [c for c in rows[0] if c.endswith("_eval")] or sorted(rows[0])
        raise ValueError(f"curves[{name!r}] has no column(s) {missing} (it has {have}); pass "
                         "X_eval/y_eval when computing it or choose x=/y=")
    return sorted((float(r[x]), float(r[y])) for r in rows)


def _records(curve):
    if hasattr(curve, "to_dict"):
        return curve.to_dict("records")
    return list(curve)


def plot_tradeoff(curves, *, x="cost_eval", y=None, path=None, ax=None,
                  title=None, reference=None, budget=None, points=None):
    """Accuracy against average acquisition cost, one line per method, one axes.

    Parameters
    ----------
    curves : mapping name -> DataFrame or list of dict
        Rows with columns ``x`` and ``y`` (e.g. the output of
        :func:`prune_opt.budget.tradeoff_curve`, :func:`prune_opt.budget.budget_curve`
        and :func:`prune_opt.budget.baseline_curve` with ``X_eval``).  A name
        starting with ``budgetprune`` is drawn as steps (the exact hull: only
        its vertices are attainable); ``fit_budget`` (one pruning per budget),
        the baselines and ``cegb`` get their own markers.
    x, y : str
        Column names of the two axes; ``y`` defaults to ``accuracy_eval``, or
        ``r2_eval`` for regression curves (which have no accuracy).
    path : str or Path, optional
        Save a PNG (or any matplotlib format) there.
    ax : matplotlib Axes, optional
    title : str, optional
    reference : tuple (cost, accuracy), optional
        The unpruned forest, drawn as a star.
    budget : float or sequence of float, optional
        A vertical line at each budget.
    points : mapping name -> list of dict, optional
        Extra series drawn as markers only (no line), e.g. ``fit_budget`` or a
        budget estimator at a few budgets: rows with the columns ``x`` and
        ``y``.

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> from prune_opt.plotting import plot_tradeoff
    >>> fig = plot_tradeoff({"a": [{"cost_eval": 1.0, "accuracy_eval": 0.8},
    ...                            {"cost_eval": 2.0, "accuracy_eval": 0.9}]})
    >>> len(fig.axes[0].lines)
    1
    """
    if not isinstance(curves, dict) or not curves:
        raise TypeError("curves must be a non-empty dict {method name: rows}")
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
    else:
        fig = ax.figure
    if y is None:
        y = _score_column(curves)
    for name, curve in curves.items():
        pts = _points(name, curve, x, y)
        if not pts:
            continue
        xs, ys = zip(*pts)
        style = dict(_STYLE.get(name.lower().split(" ")[0], dict(marker=".", lw=1.0)))
        if style.pop("steps", False):  # attainable points only: no segment between vertices
            ax.step(xs, ys, where="post", label=name, alpha=0.85, lw=style.get("lw", 1.0),
                    zorder=style.get("zorder", 2))
            ax.plot(xs, ys, ls="none", ms=4, marker=style.get("marker", "."), alpha=0.85,
                    color=ax.lines[-1].get_color(), zorder=style.get("zorder", 2))
        else:
            ax.plot(xs, ys, label=name, alpha=0.85, **{"ms": 4, **style})
    for k, (name, rows) in enumerate((points or {}).items()):
        pts = _points(name, rows, x, y)
        if pts:  # colours after the curves': a point never looks like a curve's vertex
            # each series a little smaller than the one before: two methods landing on
            # the same point both stay visible
            ax.scatter(*zip(*pts), s=max(30, 100 - 30 * k),
                       marker=_POINT_MARKERS[len(ax.collections) % 4],
                       color=f"C{(len(curves) + k) % 10}", edgecolor="k", lw=0.6,
                       label=name, zorder=7 + 0.1 * k)
    if reference is not None:
        ax.scatter([reference[0]], [reference[1]], marker="*", s=160, color="k",
                   label="unpruned forest", zorder=6)
    if budget is not None:
        budgets = np.atleast_1d(np.asarray(budget, dtype=float))
        label = ("budget " if budgets.size == 1 else "budgets ") + ", ".join(
            f"{b:.3g}" for b in budgets)
        for k, b in enumerate(budgets):  # one legend entry for all of them
            ax.axvline(float(b), color="grey", ls="--", lw=1,
                       label=label if k == 0 else "_nolegend_")
    ax.set_xlabel("average feature acquisition cost per example")
    ax.set_ylabel("R^2" if y.startswith("r2") else "accuracy")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best", framealpha=0.85)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)
    return fig


def plot_feature_usage(before, after, X, *, path=None, top=None, title=None):
    """The paper's Table 1 as a picture: how many trees test each feature
    per example, before and after pruning.

    For every feature two stacked bars show the share of examples of ``X``
    that use it in no tree, in 1-7 trees and in more than 7 trees
    (:meth:`PrunedForest.feature_usage`).

    Parameters
    ----------
    before, after : PrunedForest
        E.g. the unpruned forest (``PrunedForest(f, f.full_split_mask())``)
        and a pruning of it.
    X : array-like
    path : str or Path, optional
    top : int, optional
        Show only the ``top`` features most used before pruning.
    title : str, optional

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> from prune_opt.plotting import plot_feature_usage
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> f = po.Forest.from_sklearn(rf)
    >>> fig = plot_feature_usage(po.PrunedForest(f, f.full_split_mask()),
    ...                          po.prune(rf, X, y, lam=0.02), X)
    >>> len(fig.axes)
    1
    """
    bins = ("never", "1-7", ">7")
    ub = _records(before.feature_usage(X))
    ua = _records(after.feature_usage(X))
    names = [r["feature"] for r in ub]
    order = np.arange(len(names))
    if top is not None:
        order = np.argsort([-(1.0 - r["never"]) for r in ub], kind="stable")[: int(top)]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(order) + 2), 4.2))
    pos = np.arange(len(order))
    colors = {"never": "#dddddd", "1-7": "#7fa7d9", ">7": "#1f4e8c"}
    width = 0.38
    for shift, rows, label, hatch in ((-width / 2, ub, "before", ""),
                                      (width / 2, ua, "after", "//")):
        bottom = np.zeros(len(order))
        for b in bins:
            h = np.array([rows[k][b] for k in order])
            ax.bar(pos + shift, h, width, bottom=bottom, color=colors[b], hatch=hatch,
                   edgecolor="k", lw=0.3, label=f"{label}: {b} trees")
            bottom += h
    ax.set_xticks(pos)
    ax.set_xticklabels([names[k] for k in order], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("share of examples")
    ax.set_ylim(0, 1)
    ax.set_title(title or "feature usage per example: before (plain) / after (hatched)")
    ax.legend(fontsize=7, ncol=2, loc="upper right", framealpha=0.9)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)
    return fig
