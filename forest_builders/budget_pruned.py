"""The best forest under a cost budget in one call: grow candidates, prune, select honestly.

:class:`BudgetPrunedForestClassifier` and :class:`BudgetPrunedForestRegressor`
package the pipelines of ``benchmarks/frontier.py`` into one scikit-learn
estimator.  ``fit(X, y)`` splits the rows three ways (stratified by class for
a classifier; seeded):

* **grow** rows (60%; 50% for a regressor): the candidate forests are grown on them -- a random
  forest on every column; two shallow random forests (at most 8 leaves per
  tree, one with ``max_features=0.5``); random forests on the nested prefixes of the
  cost-aware feature ranking (:func:`~forest_builders.rank_features_by_cost`)
  around the budget; for classification, lazy-penalty forests
  (:class:`~forest_builders.LazyCostRandomForestClassifier`);
* **prune** rows (20%; 25%): the budget is measured on them.  A forest whose
  average acquisition cost there is within the budget is a candidate as it
  is; any other is pruned to the budget by :func:`prune_opt.fit_budget` with
  the paper's objective (errors on the grow rows), the three most promising
  again with the forest's own loss (``"brier"``; ``"squared_error"`` for
  regression when the installed ``prune_opt`` offers it), started from their
  paper pruning (``warm_start``), and each pruning
  again with its leaves refit on the grow rows (:func:`prune_opt.refit_leaves`,
  same structure and cost);
* **select** rows (20%; 25%): every candidate is scored there, on rows that
  neither grew nor pruned it.  A regressor keeps the best R²; a classifier,
  by the one-standard-error rule, the lowest Brier loss among the candidates
  whose accuracy is within one standard error of the best.  ``candidates_``
  lists them all with their cost, score and the reason the winner won.

The winner is not regrown on more rows (a regrown forest could break the
budget); with ``final_refit=True`` its leaves are re-estimated on the grow and
select rows, which keeps every split and hence every example's cost (off by
default: on pima, spambase and magic at 10/25/50% it changed test accuracy by
-3.1 to +2.1 points, -0.3 on average).  Its
average acquisition cost on the prune rows is at most ``budget`` (a guarantee:
every candidate that does not fit is dropped); ``acquisition_cost(X)`` reports
the per-example cost on any rows.

Costs are divided by their mean positive unit cost before anything is grown,
ranked or pruned (and the budget with them), so the model does not depend on
the unit the costs are given in; a regression target is standardised the same
way, and the winner's node values are mapped back.

With ``budget=None`` there is nothing to choose: ``fit`` grows the random
forest on every row.
"""

from __future__ import annotations

import copy
import functools
import time
import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

import prune_opt as po
from prune_opt import FeatureCosts, Forest, PrunedForest, as_feature_costs
from prune_opt.budget import fits_budget, within_one_standard_error

from ._estimator_record import CANDIDATE_COLUMNS, RECORD_KEY, make_record, read_record
from ._fit_clock import FitClock
from .feature_subset import (
    SubsetForestClassifier,
    _eliminate,
    _savings,
    _widened_forest,
    rank_features_by_cost,
    subset_costs,
)
from .lazy_cost_rf import LazyCostRandomForestClassifier

__all__ = ["BudgetPrunedForestClassifier", "BudgetPrunedForestRegressor"]

#: default seconds for the whole ``fit`` (growing, pruning, refitting, scoring)
DEFAULT_TIME_LIMIT = 12.0
#: shares of the rows that grow, prune and select the candidates, per task (measured on
#: the frontier and regression benchmarks, 3 seeds; see docs/estimator.md)
SPLIT = {"classification": (0.6, 0.2, 0.2), "regression": (0.5, 0.25, 0.25)}
#: (tradeoff, max_features, stop_on_penalty) of the lazy-penalty forests
LAZY_GRID = ((1.0, 0.3, False), (0.1, 0.5, True))
#: shallow random forests grown besides the full one: (label, scikit-learn keywords).
#: Trees of at most 8 leaves read a few features per example (what CEGB's 7-leaf
#: trees exploit at small budgets); with max_features=0.5 they also agree more on
#: which features matter, so an example pays for fewer of them
SHALLOW_RF = (("max_leaf_nodes=8", {"max_leaf_nodes": 8}),
              ("max_leaf_nodes=8, max_features=0.5", {"max_leaf_nodes": 8, "max_features": 0.5}))
#: the share of the time left per pruning call that its fit_budget search is given (the
#: searches end a little late, and compiling, refitting and scoring come on top)
CALL_SHARE = 0.6
#: the share of time_limit by which the candidates are grown (the random forest always is)
GROW_SHARE = 0.5
#: the share of time_limit by which the pruning calls end (choosing and recording follow)
PRUNE_SHARE = 0.95
#: the least time limit of a fit_budget call (it returns its quickest fitting pruning)
MIN_CALL = 0.02
#: forests pruned with their own loss besides the paper's objective (the best paper prunings)
OWN_LOSS_MODELS = 3
#: the share of time_limit the pruning calls aim within when the winner is regrown
REGROW_SHARE = 0.85
#: the regrown winner's fit_budget call gets at most this many times its first call's time
REGROW_CALL_FACTOR = 1.5


def _three_way_split(y, classification, rng, split):
    """Disjoint (grow, prune, select) row indices; per class for a classifier, every
    class with at least one grow row."""
    groups = ([np.flatnonzero(y == c) for c in np.unique(y)] if classification
              else [np.arange(y.shape[0])])
    parts = ([], [], [])
    for rows in groups:
        rows = rng.permutation(rows)
        n = rows.size
        n_grow = max(1, int(round(split[0] * n)))
        n_prune = int(round(split[1] * n))
        parts[0].append(rows[:n_grow])
        parts[1].append(rows[n_grow:n_grow + n_prune])
        parts[2].append(rows[n_grow + n_prune:])
    return tuple(np.sort(np.concatenate(p)).astype(np.int64) for p in parts)


def _rank_for_regression(X, y, costs, n_estimators, step, random_state):
    """:func:`rank_features_by_cost` for a continuous target (a regression forest's
    impurity importance per unit of cost saved)."""
    rf = RandomForestRegressor(n_estimators=n_estimators, max_features=1.0,
                               random_state=random_state, n_jobs=1)
    return _eliminate(X, y, costs, rf, step, lambda fc, s: (_savings(fc, s), 0.0))


def _regression_subset_forest(X, y, columns, n_estimators, random_state, n_jobs, names):
    """A random-forest regressor grown on ``columns``, as a Forest over every column."""
    rf = RandomForestRegressor(n_estimators=n_estimators, max_features=1.0,
                               random_state=random_state, n_jobs=n_jobs).fit(X[:, columns], y)
    return _widened_forest(rf, columns, X, None, names)


def _prune_row_loss(pf, X, y):
    """Brier loss (squared error for regression) of a pruning on the rows it was pruned on."""
    if pf.task == "regression":
        return float(np.mean((pf.predict(X) - y) ** 2))
    onehot = (y[:, None] == pf.classes_[None, :]).astype(float)
    return float(np.mean(np.sum((pf.predict_proba(X) - onehot) ** 2, axis=1)))


def _refit(pf, X, y):
    """``pf`` with its leaves re-estimated on ``(X, y)`` (same splits, hence same cost)."""
    return po.refit_leaves(pf, None, None, train=(X, y), in_bag=False, smoothing=1.0,
                           method="global")


def _objectives(task):
    """fit_budget objectives tried: the paper's and the forest's own loss, when offered."""
    offered = set(po.objectives.available_objectives())
    own = "brier" if task == "classification" else "squared_error"
    return ["paper"] + ([own] if own in offered else [])


class _BudgetPrunedForest(BaseEstimator):
    """Shared fit / predict of the budget-pruned forest estimators."""

    _task = "classification"
    _parameter_constraints: dict = {
        "budget": [Interval(Real, 0, None, closed="left"), None],
        "costs": [None, "array-like", Mapping, FeatureCosts],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "time_limit": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
        "max_subsets": [Interval(Integral, 0, None, closed="left")],
        "refit": ["boolean"],
        "final_refit": ["boolean"],
        "regrow": ["boolean"],
    }

    def __init__(self, budget=None, costs=None, *, n_estimators=40, random_state=None,
                 n_jobs=None, time_limit=DEFAULT_TIME_LIMIT, verbose=False, max_subsets=4,
                 refit=True, final_refit=False, regrow=False):
        self.budget = budget
        self.costs = costs
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.time_limit = time_limit
        self.verbose = verbose
        self.max_subsets = max_subsets
        self.refit = refit
        self.final_refit = final_refit
        self.regrow = regrow

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # every candidate grower routes NaN
        return tags

    # ------------------------------------------------------------------ fit
    def _fit_input(self, X, y):
        """Checked ``X``, ``y`` (a regression target standardised), column names, costs,
        integer seed and the target's ``(shift, scale)``; sets ``classes_``, ``costs_``."""
        _check_numeric_features(X)
        if self._task == "regression":
            y = _numeric_target(y)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan",
                             y_numeric=self._task == "regression")
        y_shift, y_scale = 0.0, 1.0
        if self._task == "regression":
            # grow and prune on a standardised target: sklearn's trees do not split a
            # node whose variance is below 2.2e-16 (targets around 1e-150), and squares
            # of targets around 1e160 overflow; the winner's leaf values are mapped back
            y_shift, y_scale = _target_scale(y)
            y = (y - y_shift) / y_scale
        if self._task == "classification":
            try:
                check_classification_targets(y)
                self.classes_ = np.unique(y)
            except TypeError as exc:  # e.g. str and int labels in one object array
                kinds = sorted({type(v).__name__ for v in np.asarray(y, dtype=object)})
                raise ValueError(f"y mixes labels of different types ({', '.join(kinds)}) "
                                 "that cannot be ordered; convert them to one type, e.g. "
                                 "y.astype(str)") from exc
        names = getattr(self, "feature_names_in_", None)
        names = None if names is None else [str(n) for n in names]
        fc = self.costs_ = as_feature_costs(self.costs, X.shape[1], names)
        if names is None and fc.feature_names is not None:
            names = list(fc.feature_names)  # no column names in X: the costs' names
        seed = int(check_random_state(self.random_state).randint(0, 2**31 - 1)) \
            if not isinstance(self.random_state, Integral) else int(self.random_state)
        return X, y, names, fc, seed, (y_shift, y_scale)

    def fit(self, X, y):
        """Grow the candidates, prune each to the budget, keep the best on held-out rows.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training rows; NaN marks a missing value (every tree routes it to
            a fixed side), ±inf is refused.  A DataFrame's column names are kept
            (``feature_names_in_``; ``costs`` may be a mapping by name).
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        t_start = time.perf_counter()
        X, y, names, fc, seed, (y_shift, y_scale) = self._fit_input(X, y)
        if self.budget is None:
            self._fit_unbudgeted(X, y, names, seed, t_start)
            self._unstandardise(y_shift, y_scale)
            return self
        scale, fc_n = _normalised_costs(fc)
        split = SPLIT[self._task]
        grow, prune, select = _three_way_split(y, self._task == "classification",
                                               np.random.default_rng(seed), split)
        if min(grow.size, prune.size, select.size) == 0:
            raise ValueError(f"fit with a budget needs rows to grow, prune and select on "
                             f"({'/'.join(f'{100 * v:g}' for v in split)}%): X has n_samples={X.shape[0]}, too few; pass "
                             "more rows or budget=None")
        self.split_ = {"grow": grow, "prune": prune, "select": select}
        data = _Data(X, y, grow, prune, select, float(self.budget) / scale)
        fc = fc_n  # costs and budget in units of the mean unit cost from here on
        clock = FitClock(self.time_limit, t_start)
        from tqdm.auto import tqdm

        # a bar over the fit's steps naming the phase (disabled, a no-op, unless verbose)
        bar = tqdm(total=2, desc="budget-pruned forest", unit="step", leave=True,
                   disable=not self.verbose)
        try:
            bar.set_description("growing candidate forests")
            models, recipes, skipped = self._grow_candidates(data, fc, names, seed, clock)
            bar.set_description("pruning to the budget")
            bar.update()
            rows = skipped + self._prune_and_score(
                models, data, fc, clock, REGROW_SHARE if self.regrow else PRUNE_SHARE, bar)
            bar.set_description("selecting on held-out rows")
            bar.update()
            self._choose(rows)
            self.selected_ = self.pruned_
            if self.regrow:
                bar.total += 1
                bar.set_description("regrowing the winner on the grow and select rows")
                self.pruned_ = self._regrow(data, fc, recipes, clock)
                bar.update()
        finally:
            bar.close()
        if self.final_refit and self.pruned_.n_splits > 0:
            self.pruned_ = self._final_refit(data)
        for pf in {id(self.pruned_): self.pruned_, id(self.selected_): self.selected_}.values():
            pf.costs = self.costs_  # back to the user's units
        for col in ("average_cost", "select_cost"):
            self.candidates_[col] = self.candidates_[col] * scale
        self._unstandardise(y_shift, y_scale)
        self.fit_seconds_ = time.perf_counter() - t_start
        return self

    def _unstandardise(self, shift, scale):
        """Map a regression winner's node values back to the user's target units (the
        select-row squared error with them) and record the estimator in the winner."""
        if self._task == "regression" and (shift != 0.0 or scale != 1.0):
            done = {}
            for attr in ("pruned_", "selected_"):
                pf = getattr(self, attr)
                if id(pf) not in done:
                    out = copy.copy(pf)
                    out.forest = copy.copy(pf.forest)
                    out.forest.value = pf.forest.value * scale + shift
                    out.forest.node_stats = _unstandardised_stats(pf.forest.node_stats, scale)
                    out.problem = None
                    done[id(pf)] = out
                setattr(self, attr, done[id(pf)])
            # the squared error in the target's units: inf where it is beyond float64
            # (the R² in "score" is scale-free); a Python float's ** would raise
            with np.errstate(over="ignore"):
                self.candidates_["brier"] = (self.candidates_["brier"].to_numpy(dtype=float)
                                             * np.float64(scale) * np.float64(scale))
        self._record()

    def _regrow(self, d, fc, recipes, clock):
        """The winning recipe grown again on the grow and select rows and pruned again on
        the prune rows the same way (objective, leaf refit): the budget still holds
        there.  The winner as scored when the recipe cannot be repeated, or not within
        the time left."""
        win = self.candidates_[self.candidates_["chosen"]].iloc[0]
        make = recipes.get(win["model"])
        c, objective = self.candidates_, win["objective"] if win["objective"] != "none" \
            else "paper"
        first = c.loc[(c["model"] == win["model"]) & (c["objective"] == objective), "seconds"]
        first = float(first.max()) if first.size else 1.0
        # room to grow the recipe again and to prune it as long as its first call took
        if make is None or not clock.allows(_kind(win["model"]),
                                            extra=clock.expected("prune") + first):
            return self.selected_
        t0 = time.perf_counter()
        rows = np.sort(np.concatenate([d.grow, d.select]))
        forest = make(rows)
        Xb, yb = d.X[d.prune], d.y[d.prune]
        budget = d.budget
        pf = PrunedForest(forest, forest.full_split_mask(), costs=fc)
        if not fits_budget(pf.average_cost(Xb), budget):
            limit = max(first, MIN_CALL, min(CALL_SHARE * clock.left(),
                                             REGROW_CALL_FACTOR * first))
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    pf = po.fit_budget(forest, Xb, yb, budget=budget, costs=fc,
                                       train=(d.X[rows], d.y[rows]), objective=objective,
                                       time_limit=limit)
            except ValueError:
                return self.selected_
        if bool(win["refit"]) and pf.n_splits > 0:
            pf = _refit(pf, d.X[rows], d.y[rows])
        if not fits_budget(pf.average_cost(Xb), budget):
            return self.selected_
        pf.solve_info = {**pf.solve_info, "regrow": {
            "n_rows": int(rows.size), "model": str(win["model"]),
            "seconds": time.perf_counter() - t0}}
        return pf

    def _final_refit(self, d):
        """The winner with its leaves re-estimated on the grow and select rows: same
        splits, so the same cost on every row and the budget still met on the prune rows."""
        rows = np.sort(np.concatenate([d.grow, d.select]))
        out = _refit(self.pruned_, d.X[rows], d.y[rows])
        out.solve_info = {**out.solve_info, "final_refit": {"n_rows": int(rows.size)}}
        return out

    def _fit_unbudgeted(self, X, y, names, seed, t_start):
        forest = self._random_forest(X, y, names, seed)
        pf = PrunedForest(forest, forest.full_split_mask(), costs=self.costs_)
        n = np.arange(X.shape[0])
        self.split_ = {"grow": n, "prune": n, "select": n[:0]}
        row = dict(name="rf", model="rf", objective="none", refit=False, n_splits=pf.n_splits,
                   average_cost=float(pf.average_cost(X)), select_cost=np.nan, score=np.nan,
                   brier=np.nan, fits_budget=True, chosen=True,
                   reason="no budget: the random forest grown on every row", seconds=0.0)
        self.pruned_ = self.selected_ = pf
        self.candidates_ = pd.DataFrame([row], columns=CANDIDATE_COLUMNS)
        self.fit_seconds_ = time.perf_counter() - t_start

    def _random_forest(self, X, y, names, seed, **kw):
        """A scikit-learn random forest (``kw``: extra hyperparameters) fitted on ``X, y``,
        as a Forest named by ``names``."""
        cls = RandomForestClassifier if self._task == "classification" else RandomForestRegressor
        m = cls(n_estimators=self.n_estimators, random_state=seed, n_jobs=self.n_jobs,
                **kw).fit(X, y)
        forest = Forest.from_sklearn(m)
        forest.feature_names = names
        return forest

    def _recipes(self, d, fc, names, seed):
        """``{name: rows -> Forest}``: how to grow each candidate forest on some rows (the
        random forest first, then the shallow ones and the lazy-penalty ones)."""
        X, y = d.X, d.y

        def rf(rows, **kw):
            return self._random_forest(X[rows], y[rows], names, seed, **kw)

        recipes = {"rf": rf}
        for label, kw in SHALLOW_RF:
            recipes[f"rf({label})"] = functools.partial(rf, **kw)
        if self._task == "classification":
            for t, mf, stop in LAZY_GRID:
                def lazy(rows, t=t, mf=mf, stop=stop):
                    m = LazyCostRandomForestClassifier(
                        self.n_estimators, tradeoff=t, max_features=mf, stop_on_penalty=stop,
                        costs=fc, random_state=seed).fit(X[rows], y[rows])
                    f = m.forest_
                    f.feature_names = names
                    return f
                recipes[f"lazy(tradeoff={t:g})"] = lazy
        return recipes

    def _grow_candidates(self, d, fc, names, seed, clock):
        """[(name, Forest)] grown on the grow rows, how to grow each again on other rows
        (``{name: rows -> Forest}``), and a candidates row for each forest the time limit
        left no room for: the random forest is always grown, any other only when it is
        expected to be grown by ``GROW_SHARE`` of ``time_limit`` (:class:`FitClock`)."""
        recipes = self._recipes(d, fc, names, seed)
        models, skipped = [], []

        def grow(name, make):
            kind = _kind(name)
            if name != "rf" and not clock.allows(kind, GROW_SHARE):
                skipped.append(self._unscored_row(name, name, "none", _no_room(
                    "grown", clock, kind, GROW_SHARE)))
                return None
            with clock.step(kind):
                models.append((name, make(d.grow)))
            return models[-1][1]

        for name in [n for n in recipes if n.startswith("rf")]:
            grow(name, recipes[name])
        self._subset_candidates(d, fc, names, seed, recipes, clock, grow, skipped)
        for name in [n for n in recipes if n.startswith("lazy")]:
            grow(name, recipes[name])
        return models, recipes, skipped

    def _subset_candidates(self, d, fc, names, seed, recipes, clock, grow, skipped):
        """Forests on the nested prefixes of the cost ranking, grown by ``grow``: from the
        longest prefix whose features all fit the budget, until two cost more than it on
        the prune rows (or ``max_subsets`` are grown, or the time limit leaves no room)."""
        n_features = d.X.shape[1]
        if self.max_subsets == 0 or n_features < 2:
            return
        if not clock.allows("rank", GROW_SHARE):
            skipped.append(self._unscored_row("subset(k=...)", "subset", "none", _no_room(
                "ranked", clock, "rank", GROW_SHARE)))
            return
        Xa, ya = d.X[d.grow], d.y[d.grow]
        step = 1 if n_features <= 10 else 0.2
        n_rank = min(20, self.n_estimators)
        with clock.step("rank"):
            if self._task == "classification":
                ranking = rank_features_by_cost(Xa, ya, costs=fc, n_estimators=n_rank,
                                                step=step, random_state=seed)
            else:
                ranking = _rank_for_regression(Xa, ya, fc, n_rank, step, seed)
        prefix = subset_costs(fc, ranking)
        k = max(1, int(np.sum(fits_budget(prefix, d.budget))))
        n_grown, over = 0, 0
        while k < n_features and n_grown < self.max_subsets and over < 2:
            cols = np.sort(ranking[:k])

            def subset(rows, cols=cols):
                if self._task == "classification":
                    m = SubsetForestClassifier(self.n_estimators, features=cols, costs=fc,
                                               n_jobs=self.n_jobs,
                                               random_state=seed).fit(d.X[rows], d.y[rows])
                    f = m.forest_
                    f.feature_names = names
                    return f
                return _regression_subset_forest(d.X[rows], d.y[rows], cols,
                                                 self.n_estimators, seed, self.n_jobs, names)
            recipes[f"subset(k={k})"] = subset
            f = grow(f"subset(k={k})", subset)
            if f is None:
                return
            n_grown += 1
            cost = PrunedForest(f, f.full_split_mask(), costs=fc).average_cost(d.X[d.prune])
            over += not fits_budget(cost, d.budget)
            k += 1

    def _prune_and_score(self, models, d, fc, clock, share, bar):
        """One candidate row per (model, objective, refit), scored on the select rows.

        Every forest above the budget is pruned with the paper's objective; the
        forest's own loss (slower) is then tried on the ``OWN_LOSS_MODELS`` forests
        whose paper pruning has the lowest Brier loss (squared error) on the prune
        rows, the loss it minimises there, with that paper pruning among its
        candidates and starts (``warm_start``).  The calls share the time until
        ``share`` of ``time_limit``: the random forest's paper pruning always runs,
        any other only when it is expected to end in time (its search given at least
        ``MIN_CALL`` seconds), and a leaf refit only when it is too.
        """
        Xb, yb = d.X[d.prune], d.y[d.prune]
        objectives = _objectives(self._task)
        full = [PrunedForest(f, f.full_split_mask(), costs=fc) for _, f in models]
        over = [not fits_budget(pf.average_cost(Xb), d.budget) for pf in full]
        n_over = sum(over)
        calls = n_over + min(n_over, OWN_LOSS_MODELS) * (len(objectives) - 1)
        bar.total += calls
        bar.refresh()
        rows, screen, papers = [], [], {}
        run = _PruningRun(self, models, d, fc, clock, share, rows, calls)
        for i, ((name, _), pf) in enumerate(zip(models, full)):
            if not over[i]:
                run.add(name, name, "none", False, pf, 0.0)
                continue
            pruned = run.prune(i, objectives[0], bar, required=i == 0)
            if pruned is not None:
                screen.append((_prune_row_loss(pruned, Xb, yb), i))
                papers[i] = pruned
        for _, i in sorted(screen)[:OWN_LOSS_MODELS]:
            for obj in objectives[1:]:  # the paper pruning joins the own loss's starts
                run.prune(i, obj, bar, warm=papers[i])
        return rows

    def _score_row(self, name, model, objective, refit, pf, Xb, d, budget, seconds):
        Xc, yc = d.X[d.select], d.y[d.select]
        cost = float(pf.average_cost(Xb))
        score = float(pf.score(Xc, yc))  # accuracy, or R² for regression
        brier = _prune_row_loss(pf, Xc, yc)
        return dict(name=name, model=model, objective=objective, refit=refit,
                    n_splits=int(pf.n_splits), average_cost=cost,
                    select_cost=float(pf.average_cost(Xc)), score=score, brier=brier,
                    fits_budget=bool(fits_budget(cost, budget)), chosen=False,
                    reason="", seconds=float(seconds))

    @staticmethod
    def _unscored_row(name, model, objective, reason):
        """The candidates row of a candidate that was not scored (``reason`` says why)."""
        return dict(name=name, model=model, objective=objective, refit=False, n_splits=0,
                    average_cost=np.nan, select_cost=np.nan, score=np.nan, brier=np.nan,
                    fits_budget=False, chosen=False, reason=reason, seconds=0.0,
                    _pruned=None)

    def _choose(self, rows):
        """The winner among the candidates that fit: the best select-row score for a
        regressor (R², ties by lower cost); for a classifier, Breiman's one-standard-
        error rule -- of the candidates whose select-row accuracy is within one
        standard error of the best (``sqrt(p (1 - p) / n)``, p the best accuracy, n
        the select rows), the lowest select-row Brier loss (ties by accuracy, then
        cost).  Accuracy on a few hundred rows moves by a standard error from one
        sample to the next, so picking its maximum among a score of candidates
        mostly picks noise; the Brier loss, a proper score of the same votes, varies
        less."""
        ok = [i for i, r in enumerate(rows) if r["fits_budget"] and r["_pruned"] is not None]
        if not ok:  # cannot happen: fit_budget always returns a fitting pruning
            raise RuntimeError("no candidate fits the budget")
        top = max(rows[i]["score"] for i in ok)
        if self._task == "classification":
            keep, tol = within_one_standard_error([1.0 - rows[i]["score"] for i in ok],
                                                  self.split_["select"].size)
            near = [i for i, k in zip(ok, keep) if k]
        else:
            tol, near = 0.0, [i for i in ok if rows[i]["score"] >= top - 1e-12]
        key = {i: (round(rows[i]["brier"], 12), -round(rows[i]["score"], 12),
                   rows[i]["average_cost"], i) for i in near}
        best = min(near, key=key.__getitem__)
        win = rows[best]
        metric = "accuracy" if self._task == "classification" else "R²"
        loss = "Brier loss" if self._task == "classification" else "squared error"
        for i, r in enumerate(rows):
            if r["reason"]:
                continue
            if i == best:
                r["chosen"] = True
                r["reason"] = (f"lowest held-out {loss} ({r['brier']:.4f}) of the {len(near)} "
                               f"candidates within one standard error ({tol:.4f}) of the "
                               f"best held-out {metric} ({top:.4f}), among {len(ok)} "
                               "within the budget" if tol > 0 else
                               f"best held-out {metric} ({r['score']:.4f}) among the "
                               f"{len(ok)} candidates within the budget")
            elif not r["fits_budget"]:
                r["reason"] = "costs more than the budget on the prune rows"
            elif i not in near:
                r["reason"] = (f"held-out {metric} {r['score']:.4f} < {top:.4f}"
                               + (f" - {tol:.4f} (one standard error)" if tol > 0 else ""))
            else:
                r["reason"] = f"within reach of the best; loses on {loss} or cost"
        self.pruned_ = win["_pruned"]
        self.candidates_ = pd.DataFrame([{k: r[k] for k in CANDIDATE_COLUMNS} for r in rows],
                                        columns=CANDIDATE_COLUMNS)
        self._record()

    def _record(self):
        """Record the estimator in the winner's solve_info (saved with it as JSON)."""
        self.pruned_.solve_info = {**self.pruned_.solve_info, RECORD_KEY: make_record(self)}

    # ------------------------------------------------------------- predict
    def _checked(self, X):
        check_is_fitted(self, "pruned_")
        _check_numeric_features(X)
        return validate_data(self, X, reset=False, dtype=np.float64,
                             ensure_all_finite="allow-nan")

    def predict(self, X):
        """Predictions of the chosen pruned forest.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._checked(X)  # NotFittedError before pruned_ is read
        return self.pruned_.predict(X)

    def acquisition_cost(self, X):
        """Per-example acquisition cost of the chosen forest on ``X`` (units paid once).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._checked(X)
        return self.pruned_.acquisition_cost(X)

    def average_cost(self, X):
        """Mean of :meth:`acquisition_cost` over the rows of ``X``."""
        return float(np.mean(self.acquisition_cost(X)))

    def feature_usage(self, X):
        """Per-feature usage table of the chosen forest (see ``PrunedForest.feature_usage``)."""
        X = self._checked(X)
        return self.pruned_.feature_usage(X)

    def to_sklearn(self):
        """A fitted scikit-learn forest over every input column that predicts identically.

        It takes the inputs this estimator takes: named columns when it was fitted
        on a DataFrame, a plain array otherwise (the costs' feature names, kept
        in the pruned forest for reports, are not required of the input)."""
        check_is_fitted(self, "pruned_")
        est = self.pruned_.to_sklearn()
        if not hasattr(self, "feature_names_in_") and hasattr(est, "feature_names_in_"):
            del est.feature_names_in_
        return est

    def lazy_predictor(self, acquire):
        """A :class:`prune_opt.LazyPredictor` on the chosen forest: features are fetched
        through ``acquire(rows, unit)`` only when a tree needs them."""
        check_is_fitted(self, "pruned_")

        def checked(rows, unit):
            values = acquire(rows, unit)
            if values is not None:
                kind = np.asarray(values).dtype
                if kind.kind not in "biuf":
                    raise ValueError(f"acquire(rows, unit) returned {kind} values for unit "
                                     f"{getattr(unit, 'name', unit)!r}; return numbers, with "
                                     "NaN for a value that is missing")
            return values

        return po.LazyPredictor(self.pruned_, checked)

    def save(self, path):
        """Write the chosen forest as JSON (no pickle).

        ``prune_opt.load(path)`` gives a :class:`prune_opt.PrunedForest`, and
        :meth:`load` a fitted estimator; both predict identically.
        """
        check_is_fitted(self, "pruned_")
        self.pruned_.save(path)

    @classmethod
    def load(cls, path):
        """A fitted estimator from a file written by :meth:`save`.

        Parameters
        ----------
        path : str or path-like

        Returns
        -------
        estimator of this class
        """
        pf = po.load(path)
        params, names, candidates = read_record(cls, pf, path)
        est = cls(**params)
        est.costs = pf.costs
        est.pruned_, est.selected_, est.costs_ = pf, pf, pf.costs  # selected_ is not saved
        est.n_features_in_ = int(pf.forest.n_features)
        if names is not None:
            est.feature_names_in_ = names
        if pf.task == "classification":
            est.classes_ = np.asarray(pf.classes_)
        est.candidates_ = candidates
        return est


class _PruningRun:
    """The pruning calls of one fit: their compiled problems, their share of the time
    left and the candidates rows they add."""

    def __init__(self, est, models, d, fc, clock, share, rows, calls):
        self.est, self.models, self.d, self.fc = est, models, d, fc
        self.clock, self.share, self.rows, self.calls = clock, share, rows, calls
        self.problems = {}

    def add(self, name, model, objective, refit, pf, seconds):
        d = self.d
        row = self.est._score_row(name, model, objective, refit, pf, d.X[d.prune], d,
                                  d.budget, seconds)
        self.rows.append({**row, "_pruned": pf})

    def prune(self, i, obj, bar, warm=None, required=False):
        """Model ``i`` pruned with ``obj`` (and refit), or None when it failed or the time
        left no room for it (a row says which)."""
        name, forest = self.models[i]
        label, d, clock = f"{name} / fit_budget({obj})", self.d, self.clock
        calls, self.calls = self.calls, self.calls - 1
        bar.set_description(f"pruning {name} ({obj})")
        bar.update()
        if not required and not clock.allows("prune", self.share, extra=MIN_CALL):
            self.rows.append(self.est._unscored_row(label, name, obj, _no_room(
                "pruned", clock, "prune", self.share, MIN_CALL)))
            return None
        t0 = time.perf_counter()
        Xa, ya, Xb, yb = d.X[d.grow], d.y[d.grow], d.X[d.prune], d.y[d.prune]
        if i not in self.problems:
            self.problems[i] = po.compile_problem(forest, Xb, yb, costs=self.fc,
                                                  train=(Xa, ya))
        room = clock.left(self.share) - calls * clock.expected("prune")
        limit = max(MIN_CALL, CALL_SHARE * room / max(calls, 1))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                pruned = po.fit_budget(self.problems[i], Xb, yb, budget=d.budget,
                                       objective=obj, time_limit=limit, warm_start=warm)
        except ValueError as exc:  # e.g. the budget is below the cheapest pruning
            self.rows.append(self.est._unscored_row(label, name, obj,
                                                    f"fit_budget failed: {exc}"))
            return None
        self.add(label, name, obj, False, pruned, time.perf_counter() - t0)
        clock.note("prune", time.perf_counter() - t0 - limit)  # beyond the search's limit
        if self.est.refit and pruned.n_splits > 0 and clock.allows("refit", self.share):
            t0 = time.perf_counter()
            with clock.step("refit"):
                refit = _refit(pruned, Xa, ya)
                self.add(label + " + refit", name, obj, True, refit, time.perf_counter() - t0)
        return pruned


def _kind(name):
    """The step kind (:data:`FACTORS`) of growing the candidate called ``name``."""
    return ("rf" if name == "rf" else "shallow" if name.startswith("rf(")
            else name.split("(")[0])


def _no_room(what, clock, kind, share, extra=0.0):
    """Why a step was skipped: the time it was expected to take and the time left."""
    return (f"not {what}: expected to take {clock.expected(kind) + extra:.3g} s, "
            f"{max(clock.left(share), 0.0):.3g} s were left of this phase of time_limit")


class _Data:
    """The checked rows, the three disjoint index sets of one fit and the budget in
    normalised cost units."""

    def __init__(self, X, y, grow, prune, select, budget):
        self.X, self.y = X, y
        self.grow, self.prune, self.select = grow, prune, select
        self.budget = budget


def _unstandardised_stats(stats, scale):
    """Node statistics with the impurities (target variances) in the target's units;
    where those are beyond float64 (targets near 1e155 and beyond) they stay in the
    standardised units, which give the same feature importances (a ratio)."""
    if stats is None:
        return None
    with np.errstate(over="ignore"):
        impurity = stats["impurity"] * np.float64(scale) * np.float64(scale)
    return {**stats, "impurity": impurity if np.isfinite(impurity).all()
            else stats["impurity"]}


def _check_numeric_features(X):
    """Refuse, naming the column, a feature of text, dates or other values that are not
    numbers (scikit-learn's own check names neither ``X`` nor the column)."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        columns = [(name, X[name]) for name in X.columns]
    else:
        try:
            arr = None if hasattr(X, "toarray") else np.asarray(X)
        except ValueError:  # ragged rows: scikit-learn says so
            return
        if arr is None or arr.dtype.kind in "biufcV" or arr.ndim != 2:
            return  # numbers, a sparse matrix or a shape scikit-learn refuses by itself
        columns = [(k, arr[:, k]) for k in range(arr.shape[1])]
    for name, values in columns:
        refused = getattr(getattr(values, "dtype", None), "kind", "O") in "Mm"  # dates
        try:
            if not refused:
                np.asarray(values, dtype=np.float64)
        except ValueError:  # text (other objects raise numpy's TypeError, naming their type)
            refused = True
        if refused:
            first = next((v for v in np.asarray(values, dtype=object).ravel()
                          if not _is_number_text(v)), None)
            raise ValueError(f"X column {name!r} holds {getattr(values, 'dtype', 'object')} "
                             f"values such as {first!r}, which are not numbers; encode it as "
                             "numbers first (e.g. ordinal codes of its categories, as "
                             "prune_opt.datasets.load_csv does)")


def _numeric_target(y):
    """A regression target as numbers (numeric text converted, as scikit-learn's
    regressors do); other values are refused naming ``y``."""
    if y is None or isinstance(getattr(y, "dtype", None), np.dtype) and y.dtype.kind in "biuf":
        return y
    arr = np.asarray(y)
    if arr.dtype.kind in "biuf":
        return y
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError):
        first = next((v for v in arr.ravel() if not _is_number_text(v)), arr.ravel()[:1])
        raise ValueError(f"y holds {arr.dtype} values such as {first!r}, which are not "
                         "numbers: a regressor needs numeric targets (for class labels use "
                         "BudgetPrunedForestClassifier)") from None


def _is_number_text(v):
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _target_scale(y):
    """(shift, scale) that standardise a regression target without overflow (scale 1
    for a constant target)."""
    big = float(np.max(np.abs(y))) if y.size else 0.0
    if not np.isfinite(big) or big == 0.0:
        return 0.0, 1.0
    z = y / big
    shift = float(np.mean(z))
    spread = float(np.std(z - shift))
    if spread == 0.0:
        return shift * big, 1.0
    return shift * big, spread * big


def _normalised_costs(fc):
    """(scale, costs / scale) with scale the mean positive unit cost (1 when none is
    positive): the candidates and the pruning searches see the same numbers whatever
    unit the user's costs are in, so the fitted model does not depend on it."""
    units = np.asarray(fc.unit_costs, dtype=float)
    positive = units[units > 0]
    scale = float(np.mean(positive)) if positive.size else 1.0
    if scale == 1.0:
        return 1.0, fc
    spec = fc.to_dict()
    spec["costs"] = [c / scale for c in spec["costs"]]
    spec["groups"] = {g: [v[0] / scale, v[1]] for g, v in (spec.get("groups") or {}).items()}
    return scale, FeatureCosts.from_dict(spec)


_DOC_PARAMS = """
    Parameters
    ----------
    budget : float or None, default None
        Largest average acquisition cost per example, measured on the prune
        rows.  None: no budget (the random forest on every row).
    costs : FeatureCosts, array-like, mapping by feature name or None
        Acquisition costs (1.0 per feature when None).
    n_estimators : int, default 40
        Trees of every candidate forest.
    random_state : int, RandomState or None
        Seeds the row split and every forest.
    n_jobs : int or None
        For scikit-learn's forests.
    time_limit : float, default 12
        Seconds for the whole fit (growing, ranking, pruning, refitting,
        scoring).  The random forest and its paper pruning always run; every
        other step only when it is expected to end in time (the candidate
        forests by half of it, the pruning calls and refits by 95%; see
        ``docs/estimator.md``); a skipped candidate is a ``candidates_`` row
        saying why.
    verbose : bool, default False
        A tqdm progress bar naming the phase.
    max_subsets : int, default 4
        Most forests grown on feature-ranking prefixes (0: none).
    refit : bool, default True
        Also try every pruning with its leaves refit on the grow rows.
    final_refit : bool, default False
        Re-estimate the winner's leaves on the grow and select rows once it is
        chosen (same splits, same cost); ``selected_`` keeps it as scored.
    regrow : bool, default False
        Grow the winning recipe again on the grow and select rows and prune it
        again on the prune rows the same way (the budget still holds there);
        ``selected_`` keeps the winner as scored.  Off by default: on pima,
        spambase, magic and thyroid at 10/25/50% (2 seeds) it changed test
        accuracy by -0.06 points on average (+0.45 on spambase, -0.43 on pima).

    Attributes
    ----------
    pruned_ : prune_opt.PrunedForest
        The winner, over every input column.
    selected_ : prune_opt.PrunedForest
        The winner as scored on the select rows (``pruned_`` before the final
        refit or the regrowth).
    candidates_ : pandas.DataFrame
        One row per candidate: ``name``, ``model``, ``objective``, ``refit``,
        ``n_splits``, ``average_cost`` (prune rows), ``select_cost``,
        ``score`` and ``brier`` (select rows; ``brier`` is the squared error for
        regression, in the target's units: ``inf`` where it is beyond float64),
        ``fits_budget``, ``chosen``, ``reason``, ``seconds``.
    split_ : dict
        Row indices ``"grow"``, ``"prune"``, ``"select"`` (disjoint).
    costs_ : prune_opt.FeatureCosts
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` had column names.
    fit_seconds_ : float
"""


class BudgetPrunedForestClassifier(ClassifierMixin, _BudgetPrunedForest):
    __doc__ = """The most accurate forest whose average acquisition cost meets a budget.

    ``fit`` grows a random forest, two shallow ones (8 leaves per tree), forests
    on cost-ranked feature prefixes and lazy-penalty forests on 60% of the
    rows, prunes each to ``budget`` on 20% with :func:`prune_opt.fit_budget`
    (paper and Brier objectives, leaves optionally refit), and keeps the
    candidate with the best accuracy on the last 20% (see
    ``docs/estimator.md``).
    """ + _DOC_PARAMS + """
    classes_ : ndarray

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from forest_builders import BudgetPrunedForestClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> est = BudgetPrunedForestClassifier(budget=3.0, n_estimators=10, time_limit=5,
    ...                                    random_state=0).fit(X, y)
    >>> prune_rows = X[est.split_["prune"]]
    >>> bool(est.average_cost(prune_rows) <= 3.0)
    True
    >>> int(est.candidates_["chosen"].sum())
    1
    """

    _task = "classification"

    def predict_proba(self, X):
        """Averaged class probabilities of the chosen pruned forest.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        X = self._checked(X)
        return self.pruned_.predict_proba(X)


class BudgetPrunedForestRegressor(RegressorMixin, _BudgetPrunedForest):
    __doc__ = """The forest regressor with the best R² whose average acquisition cost meets a
    budget.

    As :class:`BudgetPrunedForestClassifier`, without the lazy-penalty forests
    (a classifier only); the pruning objectives are the paper's and, when the
    installed ``prune_opt`` offers it, ``"squared_error"``.
    """ + _DOC_PARAMS + """
    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from forest_builders import BudgetPrunedForestRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> est = BudgetPrunedForestRegressor(budget=2.0, n_estimators=10, time_limit=5,
    ...                                   random_state=0).fit(X, y)
    >>> bool(est.average_cost(X[est.split_["prune"]]) <= 2.0)
    True
    """

    _task = "regression"

    def score(self, X, y, sample_weight=None):
        """R² of :meth:`predict` on ``(X, y)``, as scikit-learn's regressors, computed on
        targets divided by a power of two near their magnitude (exact), so targets
        around 1e155 and beyond, whose squares overflow, still score.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        from sklearn.metrics import r2_score

        pred = self.predict(X)
        y = np.asarray(_numeric_target(y), dtype=np.float64)
        top = max(float(np.max(np.abs(y), initial=0.0)), float(np.max(np.abs(pred), initial=0.0)))
        unit = 2.0 ** np.floor(np.log2(top)) if 0.0 < top < np.inf else 1.0
        return float(r2_score(y / unit, pred / unit, sample_weight=sample_weight))
