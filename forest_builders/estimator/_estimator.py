"""The best model under a cost budget in one call: grow candidates, prune, select honestly.

:class:`BudgetPrunedForestClassifier` and :class:`BudgetPrunedForestRegressor`
package the pipelines of ``benchmarks/frontier.py`` into one scikit-learn
estimator.  ``fit(X, y)`` splits the rows three ways (stratified by class for
a classifier; seeded):

* **grow** rows (60%; 50% for a regressor): every candidate family of the
  registry (``forest_builders.estimator._registry``; ``candidates=`` names them) grows
  its models on them: a random forest, shallow forests, forests on the
  cheapest-feature prefixes, lazy-penalty forests (classification), gradient
  boosting on the cheapest-feature prefixes and LightGBM's CEGB around the
  budget.  The families' anchors grow first whatever the time left: a forest
  and a boosted model on the longest cost-ranked prefix whose features fit the
  budget (on the grow and prune rows: they fit as they are);
* **prune** rows (20%; 25%): a model whose cost fits the budget is a candidate
  as it is; any other is pruned to the budget by :func:`prune_opt.fit_budget`
  on these rows -- a forest with the paper's objective (errors on the grow
  rows) and, for the three most promising, again with its own loss; a boosted
  model with its own loss (log-loss or squared error; boosted models also stop
  growing early on these rows) -- and each forest pruning again with its
  leaves refit on the grow rows (:func:`prune_opt.refit_leaves`, same cost);
* **select** rows (20%; 25%): every candidate is scored there, on rows that
  neither grew nor pruned it.  A regressor keeps the best R²; a classifier, by
  the one-standard-error rule, the lowest Brier loss among the candidates
  whose accuracy is within one standard error of the best.  A candidate no
  better than the prior (a constant prediction) never wins over one that is,
  and a winner no better than it is a ``UserWarning``.  ``candidates_`` lists
  them all with their family, costs, scores and the reason the winner won.

A candidate fits the budget when its average acquisition cost is within it on
the prune rows and, with a margin of one standard error, on every row given to
``fit`` (cost needs no labels; see ``forest_builders.estimator._pruning``).  The winner is
not regrown on more rows unless ``regrow=True``; with ``final_refit=True`` a
forest winner's leaves are re-estimated on the grow and select rows (same
splits, same cost).  ``acquisition_cost(X)`` reports the per-example cost on
any rows.

Costs are divided by their mean positive unit cost before anything is grown,
ranked or pruned (and the budget with them), so the model does not depend on
the unit the costs are given in; a regression target is standardised the same
way, and the winner's node values are mapped back.

With ``budget=None`` there is nothing to choose: ``fit`` grows the random
forest on every row.
"""

from __future__ import annotations

import copy
import sys
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

from ._clock import FitClock
from ._input import (
    check_numeric_features,
    normalised_costs,
    numeric_target,
    rescaled_forest,
    target_scale,
    three_way_split,
)
from ._pruning import (
    COST_COLUMNS,
    MIN_CALL,
    FitData,
    PruningRun,
    cost_summary,
    fits,
    prune_kind,
    refit_forest,
    refits_leaves,
    unscored_row,
    zero_cost_model,
)
from ._record import CANDIDATE_COLUMNS, RECORD_KEY, make_record, read_record
from ._registry import CANDIDATE_FAMILIES, GrowContext, resolve_families
from ._selection import choose, prior_score

__all__ = ["BudgetPrunedForestClassifier", "BudgetPrunedForestRegressor"]

#: default seconds for the whole ``fit`` (growing, pruning, refitting, scoring)
DEFAULT_TIME_LIMIT = 18.0
#: shares of the rows that grow, prune and select the candidates, per task (measured on
#: the frontier and regression benchmarks, 3 seeds; see docs/estimator.md)
SPLIT = {"classification": (0.6, 0.2, 0.2), "regression": (0.5, 0.25, 0.25)}
#: the share of time_limit by which the candidates are grown (the first always is)
GROW_SHARE = 0.5
#: the share of time_limit by which the pruning calls end (choosing and recording follow)
PRUNE_SHARE = 0.95
#: the share of time_limit the pruning calls aim within when the winner is regrown
REGROW_SHARE = 0.85
#: the regrown winner's fit_budget call gets at most this many times its first call's time
REGROW_CALL_FACTOR = 1.5


class _BudgetPrunedForest(BaseEstimator):
    """Shared fit / predict of the budget-pruned estimators."""

    _task = "classification"
    _parameter_constraints: dict = {
        "budget": [Interval(Real, 0, None, closed="left"), None],
        "costs": [None, "array-like", Mapping, FeatureCosts],
        "candidates": [None, str, list, tuple],
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

    def __init__(self, budget=None, costs=None, *, candidates=None, n_estimators=40,
                 random_state=None, n_jobs=None, time_limit=DEFAULT_TIME_LIMIT, verbose=False,
                 max_subsets=4, refit=True, final_refit=False, regrow=False):
        self.budget = budget
        self.costs = costs
        self.candidates = candidates
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
        check_numeric_features(X)
        if self._task == "regression":
            y = numeric_target(y)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan",
                             y_numeric=self._task == "regression")
        y_shift, y_scale = 0.0, 1.0
        if self._task == "regression":
            # grow and prune on a standardised target: sklearn's trees do not split a
            # node whose variance is below 2.2e-16 (targets around 1e-150), and squares
            # of targets around 1e160 overflow; the winner's leaf values are mapped back
            y_shift, y_scale = target_scale(y)
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
        families = resolve_families(self.candidates, self._task)
        X, y, names, fc, seed, (y_shift, y_scale) = self._fit_input(X, y)
        if self.budget is None:
            self._fit_unbudgeted(X, y, names, seed, t_start)
            self._unstandardise(y_shift, y_scale)
            return self
        scale, fc_n = normalised_costs(fc)
        split = SPLIT[self._task]
        grow, prune, select = three_way_split(y, self._task == "classification",
                                               np.random.default_rng(seed), split)
        if min(grow.size, prune.size, select.size) == 0:
            raise ValueError(f"fit with a budget needs rows to grow, prune and select on "
                             f"({'/'.join(f'{100 * v:g}' for v in split)}%): X has n_samples={X.shape[0]}, too few; pass "
                             "more rows or budget=None")
        self.split_ = {"grow": grow, "prune": prune, "select": select}
        self._select_prior = prior_score(y[select], self._task)
        data = FitData(X, y, grow, prune, select, float(self.budget) / scale)
        # the fit's one deadline; steps whose time grows with the classes expect it
        n_classes = len(self.classes_) if self._task == "classification" else 1
        clock = FitClock(self.time_limit, t_start, n_classes=n_classes)
        from tqdm.auto import tqdm

        # a bar over the fit's steps naming the phase (disabled, a no-op, unless verbose)
        bar = tqdm(total=len(families) + 1, desc="budget-pruned estimator", unit="step",
                   leave=True, disable=not self.verbose)
        try:
            ctx = self._grow_candidates(data, fc_n, names, seed, clock, families, bar)
            bar.set_description("pruning to the budget")
            share = PRUNE_SHARE if not self.regrow else REGROW_SHARE
            run = PruningRun(ctx.candidates, data, fc_n, clock, share, bar, self.refit)
            skipped = [unscored_row(name, name, family, "none", why)
                       for name, family, why in ctx.skipped]
            rows = skipped + run.run()
            bar.set_description("selecting on held-out rows")
            bar.update()
            for r in rows:  # costs back in the user's units
                for col in COST_COLUMNS:
                    r[col] = r[col] * scale
            self._choose(rows)
            self.selected_ = self.pruned_
            if self.regrow:
                bar.total += 1
                bar.set_description("regrowing the winner on the grow and select rows")
                self.pruned_ = self._regrow(data, fc_n, ctx.candidates, run, clock)
                bar.update()
        finally:
            bar.close()
        if self.final_refit and self.pruned_.n_splits > 0 and refits_leaves(self.pruned_.forest):
            self.pruned_ = self._final_refit(data)
        for pf in {id(self.pruned_): self.pruned_, id(self.selected_): self.selected_}.values():
            pf.costs = self.costs_  # back to the user's units
        self._unstandardise(y_shift, y_scale)
        self.fit_seconds_ = time.perf_counter() - t_start
        return self

    def _grow_candidates(self, d, fc, names, seed, clock, families, bar):
        """The :class:`GrowContext` after every family of ``families`` grew its models on
        the grow rows: first every family's anchor (a model on the longest cost-ranked
        feature prefix that fits the budget), whatever the clock says; then each family
        in turn, its steps only when the clock expects them to end within the family's
        share of ``GROW_SHARE`` of ``time_limit`` (the fit's first model always grows)."""
        params = {"n_estimators": self.n_estimators, "n_jobs": self.n_jobs, "seed": seed,
                  "max_subsets": self.max_subsets}
        ctx = GrowContext(d.X, d.y, d.grow, d.prune, d.budget, fc, names, self._task, params,
                          clock, GROW_SHARE, parts=d.parts)
        anchored = [n for n in families if CANDIDATE_FAMILIES[n].anchor is not None]
        bar.total += len(anchored)
        steps = [(f"growing the {n} anchor", CANDIDATE_FAMILIES[n].anchor, None)
                 for n in anchored]
        steps += [(f"growing {n} candidates", CANDIDATE_FAMILIES[n].grow, len(families) - k)
                  for k, n in enumerate(families)]
        for what, grow, families_left in steps:
            bar.set_description(what)
            seen = len(ctx.skipped)
            if families_left is None:
                with ctx.anchoring():
                    grow(ctx)
            else:
                ctx.begin_family(families_left)
                grow(ctx)
            for label, _, why in ctx.skipped[seen:]:
                if not bar.disable:
                    bar.write(f"skipped {label}: {why}", file=sys.stderr)
            bar.update()
        if not ctx.candidates:
            raise ValueError(f"candidates={self.candidates!r} grew no model here (the subset "
                             "family needs max_subsets >= 1 and at least 2 columns); add "
                             "'rf' or 'gbm' to candidates")
        return ctx

    def _choose(self, rows):
        """Mark the winner among ``rows`` (costs in the user's units), build
        ``candidates_`` (see :func:`forest_builders.estimator._selection.choose`) and warn when the
        winner is no better than the prior on the select rows."""
        best = choose(rows, self._task, self.split_["select"].size, float(self.budget),
                      self._select_prior)
        self.pruned_ = rows[best]["_pruned"]
        self.candidates_ = pd.DataFrame([{k: r[k] for k in CANDIDATE_COLUMNS} for r in rows],
                                        columns=CANDIDATE_COLUMNS)
        self._record()
        win = rows[best]
        with_splits = [r for r in rows if r["_pruned"] is not None and r["n_splits"] > 0]
        if win["above_prior"] and with_splits:
            return
        if self._task == "classification":
            said = (f"held-out accuracy {win['score']:.4f}, no better than the prior's "
                    f"{self._select_prior:.4f} (always predicting the majority class)")
        else:
            said = f"held-out R² {win['score']:.4f}, no better than predicting the mean"
        if not with_splits:
            why = (f"every candidate with a split was skipped or kept none "
                   f"(time_limit={self.time_limit:g} s; see candidates_['reason']): a larger "
                   "time_limit or budget may give one")
        else:
            why = ("no candidate within the budget predicts the held-out rows better; the "
                   "features that fit carry little signal here: a larger budget may help")
        warnings.warn(f"{type(self).__name__}: the chosen model {win['name']!r} has {said}; "
                      f"{why}.  candidates_['above_prior'] flags the candidates that beat "
                      "the prior.", UserWarning, stacklevel=3)

    def _unstandardise(self, shift, scale):
        """Map a regression winner's node values back to the user's target units (the
        select-row squared error with them) and record the estimator in the winner."""
        if self._task == "regression" and (shift != 0.0 or scale != 1.0):
            done = {}
            for attr in ("pruned_", "selected_"):
                pf = getattr(self, attr)
                if id(pf) not in done:
                    out = copy.copy(pf)
                    out.forest = rescaled_forest(pf.forest, shift, scale)
                    out.problem = None
                    done[id(pf)] = out
                setattr(self, attr, done[id(pf)])
            # the squared error in the target's units: inf where it is beyond float64
            # (the R² in "score" is scale-free); a Python float's ** would raise
            with np.errstate(over="ignore"):
                self.candidates_["brier"] = (self.candidates_["brier"].to_numpy(dtype=float)
                                             * np.float64(scale) * np.float64(scale))
        self._record()

    def _regrow(self, d, fc, candidates, run, clock):
        """The winning recipe grown again on the grow and select rows and pruned again on
        the prune rows the same way (objective, leaf refit), at the budget share the
        fit's searches ended with: the budget still holds.  The winner as scored when
        the recipe cannot be repeated, or not within the time left."""
        win = self.candidates_[self.candidates_["chosen"]].iloc[0]
        cand = next((c for c in candidates if c.name == win["model"]), None)
        if cand is None:
            return self.selected_
        c = self.candidates_
        objective = win["objective"]
        first = c.loc[(c["model"] == win["model"]) & (c["objective"] == objective), "seconds"]
        # a row's seconds hold the growing too: the first call's is what is beyond it
        first = float(first.max()) - cand.seconds if first.size else 1.0
        # room to grow the recipe again and to prune it as long as its first call took
        if not clock.fits(cand.kind, clock.deadline,
                          extra=clock.expected(prune_kind(cand.forest)) + first):
            return self.selected_
        t0 = time.perf_counter()
        rows = np.sort(np.concatenate([d.grow, d.select]))
        forest = cand.recipe(rows, deadline=clock.deadline)
        Xb, yb = d.X[d.prune], d.y[d.prune]
        pf = PrunedForest(forest, forest.full_split_mask(), costs=fc)
        if not fits(cost_summary(pf, d), d.budget):
            if objective == "none":
                objective = forest.ensemble.default_objective(forest.task)
            limit = max(first, MIN_CALL, min(0.6 * clock.deadline.left(),
                                             REGROW_CALL_FACTOR * first))
            train = (d.X[rows], d.y[rows]) if forest.ensemble.in_bag_errors else None
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    pf = po.fit_budget(forest, Xb, yb, budget=d.budget * run.rho, costs=fc,
                                       train=train, objective=objective,
                                       time_limit=clock.deadline.within(limit))
            except ValueError:
                return self.selected_
        if d.budget <= 0:  # paid splits that only rows outside the prune rows reach
            pf = zero_cost_model(pf, fc)
        if bool(win["refit"]) and pf.n_splits > 0 and refits_leaves(forest):
            pf = refit_forest(pf, d.X[rows], d.y[rows])
        if not fits(cost_summary(pf, d), d.budget):
            return self.selected_
        pf.solve_info = {**pf.solve_info, "regrow": {
            "n_rows": int(rows.size), "model": str(win["model"]),
            "seconds": time.perf_counter() - t0}}
        return pf

    def _final_refit(self, d):
        """The winner with its leaves re-estimated on the grow and select rows: same
        splits, so the same cost on every row and the budget still met on the prune rows."""
        rows = np.sort(np.concatenate([d.grow, d.select]))
        out = refit_forest(self.pruned_, d.X[rows], d.y[rows])
        out.solve_info = {**out.solve_info, "final_refit": {"n_rows": int(rows.size)}}
        return out

    def _fit_unbudgeted(self, X, y, names, seed, t_start):
        cls = RandomForestClassifier if self._task == "classification" else RandomForestRegressor
        t0 = time.perf_counter()
        m = cls(n_estimators=self.n_estimators, random_state=seed, n_jobs=self.n_jobs).fit(X, y)
        grown = time.perf_counter() - t0
        forest = Forest.from_sklearn(m)
        forest.feature_names = names
        pf = PrunedForest(forest, forest.full_split_mask(), costs=self.costs_)
        n = np.arange(X.shape[0])
        self.split_ = {"grow": n, "prune": n, "select": n[:0]}
        cost = float(pf.average_cost(X))
        row = dict(name="rf", model="rf", family="rf", objective="none", refit=False,
                   n_splits=pf.n_splits, average_cost=cost, fit_cost=cost,
                   fit_cost_bound=np.nan, heldout_cost=np.nan, select_cost=np.nan,
                   score=np.nan, brier=np.nan, above_prior=False, fits_budget=True, chosen=True,
                   reason="no budget: the random forest grown on every row", seconds=grown)
        self.pruned_ = self.selected_ = pf
        self.candidates_ = pd.DataFrame([row], columns=CANDIDATE_COLUMNS)
        self.fit_seconds_ = time.perf_counter() - t_start

    def _record(self):
        """Record the estimator in the winner's solve_info (saved with it as JSON)."""
        self.pruned_.solve_info = {**self.pruned_.solve_info, RECORD_KEY: make_record(self)}

    # ------------------------------------------------------------- predict
    def _checked(self, X):
        check_is_fitted(self, "pruned_")
        check_numeric_features(X)
        return validate_data(self, X, reset=False, dtype=np.float64,
                             ensure_all_finite="allow-nan")

    def predict(self, X):
        """Predictions of the chosen pruned model (a forest or a boosted model).

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
        """A fitted scikit-learn forest over every input column that predicts identically,
        for a forest winner.

        It takes the inputs this estimator takes: named columns when it was fitted
        on a DataFrame, a plain array otherwise (the costs' feature names, kept
        in the pruned forest for reports, are not required of the input).

        Raises
        ------
        TypeError
            The winner is a boosted model that scikit-learn cannot rebuild (from
            LightGBM or HistGradientBoosting): ``pruned_.to_lightgbm()`` exports a
            LightGBM winner; ``save()`` writes any winner.
        """
        check_is_fitted(self, "pruned_")
        try:
            est = self.pruned_.to_sklearn()
        except TypeError as exc:  # a boosted winner scikit-learn cannot rebuild
            export = ("pruned_.to_lightgbm() exports it" if
                      str(self.pruned_.estimator_class).startswith("LGBM")
                      else "predict with the estimator itself")
            raise TypeError(f"to_sklearn: the winner is a boosted {self.pruned_.estimator_class} "
                            f"model ({self.candidates_.loc[self.candidates_['chosen'], 'model'].iloc[0]}), "
                            f"which scikit-learn cannot rebuild; {export}, and save() writes "
                            "it as JSON (prune_opt.load reads it back)") from exc
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



_DOC_PARAMS = """
    Parameters
    ----------
    budget : float or None, default None
        Largest average acquisition cost per example, measured on the prune
        rows.  None: no budget (the random forest on every row).
    costs : FeatureCosts, array-like, mapping by feature name or None
        Acquisition costs (1.0 per feature when None).
    candidates : str, list of str or None, default None
        The candidate families to grow (``forest_builders.CANDIDATE_FAMILIES``,
        in ``forest_builders.estimator._registry``):
        ``"rf"``, ``"shallow"``, ``"subset"``, ``"gbm"`` (gradient boosting on
        the cheapest-feature prefixes: LightGBM when installed, else
        HistGradientBoosting), ``"cegb"`` (LightGBM's CEGB; needs lightgbm),
        ``"lazy"`` (classification) and ``"catboost"`` (CatBoost under first-use
        feature penalties; needs catboost; grown only when named).  None: every
        default family that applies to the task and is installed.  A family
        that cannot be used here is refused naming why.
    n_estimators : int, default 40
        Trees of every candidate forest (a boosted candidate grows up to 100
        rounds, stopped early on the prune rows).
    random_state : int, RandomState or None
        Seeds the row split and every forest.
    n_jobs : int or None
        For scikit-learn's forests.
    time_limit : float, default DEFAULT_TIME_LIMIT
        Seconds for the whole fit (growing, ranking, pruning, refitting,
        scoring); it ends within 1.25 x ``time_limit``.  The anchors (a forest
        and a boosted model on the longest cost-ranked feature prefix that
        fits the budget) always grow first, and when nothing fits as grown the
        first pruning always runs; every other step only when it is expected
        (by its family and the number of classes) to end in time (the
        candidates by half of the time the anchors left, each family an equal
        share of it, a boosted family with fewer rounds when time is short;
        the pruning calls and refits by 95%; see ``docs/estimator.md``), and a
        boosted model or lazy forest that runs longer than expected stops
        adding rounds or trees at the end of its share; a skipped candidate is
        a ``candidates_`` row saying why.
    verbose : bool, default False
        A tqdm progress bar naming the phase; what was skipped for time is
        written to stderr.
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
        One row per candidate: ``name``, ``model``, ``family``, ``objective``
        (``"none"``: as grown), ``refit``, ``n_splits``, ``average_cost``
        (prune rows), ``fit_cost`` (every row given to ``fit``; cost needs no
        labels), ``fit_cost_bound`` (that plus one standard error),
        ``heldout_cost`` (the rows it was not pruned on), ``select_cost``,
        ``score`` and ``brier`` (select rows; ``brier`` is the squared error for
        regression, in the target's units: ``inf`` where it is beyond float64),
        ``above_prior`` (its score is above the best constant prediction's on
        the select rows: the majority class's share, or an R² of 0; a winner
        that is not is a ``UserWarning``), ``fits_budget``, ``chosen``,
        ``reason``, ``seconds`` (its model's growing plus its pruning and leaf
        refit; a model kept as grown: its growing; a skipped row: 0).
    split_ : dict
        Row indices ``"grow"``, ``"prune"``, ``"select"`` (disjoint).
    costs_ : prune_opt.FeatureCosts
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` had column names.
    fit_seconds_ : float
""".replace("DEFAULT_TIME_LIMIT", f"{DEFAULT_TIME_LIMIT:g}")


class BudgetPrunedForestClassifier(ClassifierMixin, _BudgetPrunedForest):
    __doc__ = """The most accurate forest whose average acquisition cost meets a budget.

    ``fit`` grows a random forest, two shallow ones (8 leaves per tree), forests
    on cost-ranked feature prefixes, gradient boosting on those prefixes,
    LightGBM's CEGB around the budget and lazy-penalty forests on 60% of the
    rows, prunes each that costs too much to ``budget`` on 20% with
    :func:`prune_opt.fit_budget` (a forest with the paper and Brier
    objectives, leaves optionally refit; a boosted model with its own
    log-loss), and keeps the best candidate on the last 20% (see
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
        """Class probabilities of the chosen pruned model.

        A forest winner averages its trees' class distributions; a boosted winner
        (gbm, cegb) applies its link (logistic or softmax) to the initial score
        plus its pruned trees' raw scores, as its library does.

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
        y = np.asarray(numeric_target(y), dtype=np.float64)
        top = max(float(np.max(np.abs(y), initial=0.0)), float(np.max(np.abs(pred), initial=0.0)))
        unit = 2.0 ** np.floor(np.log2(top)) if 0.0 < top < np.inf else 1.0
        return float(r2_score(y / unit, pred / unit, sample_weight=sample_weight))
