"""How the budget-pruned estimator picks its winner among the scored candidates.

Only candidates that fit the budget (:func:`forest_builders._pruning.fits`) take
part, scored on the select rows, which neither grew nor pruned any of them.  A
regressor keeps the best R² (ties: lower cost); a classifier follows Breiman's
one-standard-error rule: of the candidates whose select-row accuracy is within
one standard error of the best (``sqrt(p (1 - p) / n)``, p the best accuracy, n
the select rows), the lowest select-row Brier loss wins (ties: higher accuracy,
then lower cost).  Accuracy on a few hundred rows moves by a standard error from
one sample to the next, so picking its maximum among a score of candidates
mostly picks noise; the Brier loss, a proper score of the same votes, varies
less.
"""

from __future__ import annotations

from prune_opt.budget import fits_budget, within_one_standard_error

__all__ = ["choose"]


def choose(rows, task, n_select, budget):
    """The index of the winning row; every row's ``chosen`` and ``reason`` are set.

    Parameters
    ----------
    rows : list of dict
        Candidate rows (``score``, ``brier``, ``average_cost``, ``fits_budget``,
        ``reason`` -- non-empty for a row that was not scored -- and ``_pruned``).
    task : {"classification", "regression"}
    n_select : int
        Select rows the scores were measured on.
    budget : float
        In the units of the rows' costs.

    Raises
    ------
    RuntimeError
        No candidate fits (cannot happen: the fit's first pruning always fits).
    """
    ok = [i for i, r in enumerate(rows) if r["fits_budget"] and r["_pruned"] is not None]
    if not ok:
        raise RuntimeError("no candidate fits the budget")
    top = max(rows[i]["score"] for i in ok)
    if task == "classification":
        keep, tol = within_one_standard_error([1.0 - rows[i]["score"] for i in ok], n_select)
        near = [i for i, k in zip(ok, keep) if k]
    else:
        tol, near = 0.0, [i for i in ok if rows[i]["score"] >= top - 1e-12]
    key = {i: (round(rows[i]["brier"], 12), -round(rows[i]["score"], 12),
               rows[i]["average_cost"], i) for i in near}
    best = min(near, key=key.__getitem__)
    metric = "accuracy" if task == "classification" else "R²"
    loss = "Brier loss" if task == "classification" else "squared error"
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
        elif not r["fits_budget"]:
            r["reason"] = ("costs more than the budget on the prune rows"
                           if not fits_budget(r["average_cost"], budget) else
                           f"costs {r['fit_cost']:.4g} per row given to fit, "
                           f"{r['fit_cost_bound']:.4g} with its margin of standard errors: "
                           f"more than the budget {budget:.4g}")
        elif i not in near:
            r["reason"] = (f"held-out {metric} {r['score']:.4f} < {top:.4f}"
                           + (f" - {tol:.4f} (one standard error)" if tol > 0 else ""))
        else:
            r["reason"] = f"within reach of the best; loses on {loss} or cost"
    return best
