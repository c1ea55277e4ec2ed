"""How the budget-pruned estimator picks its winner among the scored candidates.

Only candidates that fit the budget (:func:`forest_builders.estimator._pruning.fits`) take
part, scored on the select rows, which neither grew nor pruned any of them.  A
regressor keeps the best R² (ties: lower cost); a classifier follows Breiman's
one-standard-error rule: of the candidates whose select-row accuracy is within
one standard error of the best (``sqrt(p (1 - p) / n)``, p the best accuracy, n
the select rows), the lowest select-row Brier loss wins (ties: higher accuracy,
then lower cost).  Accuracy on a few hundred rows moves by a standard error from
one sample to the next, so picking its maximum among a score of candidates
mostly picks noise; the Brier loss, a proper score of the same votes, varies
less.

**The prior.**  Before either rule, two candidates are set aside: one whose
select-row score is not above the prior's (the best constant prediction on the
select rows: the majority class's share, or an R² of 0) while another's is, and
one that keeps no split (it predicts the prior) while a candidate with splits
scores better.  Every row's ``above_prior`` says whether its score is above the
prior's; the estimator warns when the winner's is not.
"""

from __future__ import annotations

import numpy as np

from prune_opt.budget import fits_budget, within_one_standard_error

__all__ = ["choose", "prior_score"]


def prior_score(y_select, task):
    """The best held-out score of a constant prediction on the select rows: the majority
    class's share (accuracy), or 0 (the R² of their mean)."""
    if task != "classification":
        return 0.0
    _, counts = np.unique(y_select, return_counts=True)
    return float(counts.max() / counts.sum()) if counts.size else 0.0


def _set_aside(rows, ok, prior, metric):
    """``{row: why}`` of the fitting rows set aside before the selection rule: one not
    above the prior while another is, and one with no split while a row with splits
    scores better."""
    beaten = {}
    above = [i for i in ok if rows[i]["above_prior"]]
    if above:
        for i in ok:
            if not rows[i]["above_prior"]:
                beaten[i] = (f"held-out {metric} {rows[i]['score']:.4f} is not above the "
                             f"prior's {prior:.4f}, which {len(above)} candidate(s) within "
                             "the budget beat")
    splits = [i for i in ok if i not in beaten and rows[i]["n_splits"] > 0]
    if splits:
        best_split = max(rows[i]["score"] for i in splits)
        for i in ok:
            if i not in beaten and rows[i]["n_splits"] == 0 and rows[i]["score"] < best_split:
                beaten[i] = (f"keeps no split (it predicts the prior) and a candidate with "
                             f"splits scores better held-out ({metric} {best_split:.4f})")
    return beaten


def choose(rows, task, n_select, budget, prior):
    """The index of the winning row; every row's ``chosen``, ``above_prior`` and
    ``reason`` are set.

    Parameters
    ----------
    rows : list of dict
        Candidate rows (``score``, ``brier``, ``average_cost``, ``n_splits``,
        ``fits_budget``, ``reason`` -- non-empty for a row that was not scored --
        and ``_pruned``).
    task : {"classification", "regression"}
    n_select : int
        Select rows the scores were measured on.
    budget : float
        In the units of the rows' costs.
    prior : float
        The prior's score on the select rows (:func:`prior_score`).

    Raises
    ------
    RuntimeError
        No candidate fits (cannot happen: the fit's first pruning always fits).
    """
    for r in rows:
        r["above_prior"] = bool(r["_pruned"] is not None and np.isfinite(r["score"])
                                and r["score"] > prior + 1e-12)
    ok = [i for i, r in enumerate(rows) if r["fits_budget"] and r["_pruned"] is not None]
    if not ok:
        raise RuntimeError("no candidate fits the budget")
    metric = "accuracy" if task == "classification" else "R²"
    loss = "Brier loss" if task == "classification" else "squared error"
    beaten = _set_aside(rows, ok, prior, metric)
    pool = [i for i in ok if i not in beaten]
    top = max(rows[i]["score"] for i in pool)
    if task == "classification":
        keep, tol = within_one_standard_error([1.0 - rows[i]["score"] for i in pool], n_select)
        near = [i for i, k in zip(pool, keep) if k]
    else:
        tol, near = 0.0, [i for i in pool if rows[i]["score"] >= top - 1e-12]
    key = {i: (round(rows[i]["brier"], 12), -round(rows[i]["score"], 12),
               rows[i]["average_cost"], i) for i in near}
    best = min(near, key=key.__getitem__)
    for i, r in enumerate(rows):
        if r["reason"]:
            continue
        if i == best:
            r["chosen"] = True
            r["reason"] = (f"lowest held-out {loss} ({r['brier']:.4f}) of the {len(near)} "
                           f"candidates within one standard error ({tol:.4f}) of the best "
                           f"held-out {metric} ({top:.4f}), among {len(ok)} within "
                           "the budget" if tol > 0 else
                           f"best held-out {metric} ({r['score']:.4f}) among the {len(ok)} "
                           "candidates within the budget")
            if not r["above_prior"]:
                r["reason"] += (f"; not above the prior's held-out {metric} ({prior:.4f}): "
                                "no candidate within the budget is")
        elif not r["fits_budget"]:
            r["reason"] = ("costs more than the budget on the prune rows"
                           if not fits_budget(r["average_cost"], budget) else
                           f"costs {r['fit_cost']:.4g} per row given to fit, "
                           f"{r['fit_cost_bound']:.4g} with its margin of standard errors: "
                           f"more than the budget {budget:.4g}")
        elif i in beaten:
            r["reason"] = beaten[i]
        elif i not in near:
            r["reason"] = (f"held-out {metric} {r['score']:.4f} < {top:.4f}"
                           + (f" - {tol:.4f} (one standard error)" if tol > 0 else ""))
        else:
            r["reason"] = f"within reach of the best; loses on {loss} or cost"
    return best
