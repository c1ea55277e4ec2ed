"""The families of models the budget benchmarks compare (see ``_protocol``).

Each function returns a list of :class:`_protocol.Member` scored on
validation (or ``None`` when the family cannot run here).  The project's own
pipelines prune with ``prune_opt``; the anchors a practitioner would try
instead are LightGBM's CEGB on a wide grid, CatBoost grown under its feature
penalties on a grid, and a random forest and LightGBM on the cheapest
informative feature prefix; the one-call rows are ``fit_budget`` and the
budget-pruned forest estimator with their defaults.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from benchmarks._protocol import (
    Member,
    Unavailable,
    fit_budget_on,
    model_member,
    pruned_member,
    quiet,
)

# CEGB's grid: penalty kind x num_leaves x rounds x tradeoff (0 to 1000)
CEGB_PENALTIES = ("lazy", "coupled")
CEGB_LEAVES = (7, 31)
CEGB_ROUNDS = (50, 200)
CEGB_TRADEOFFS = (0.0,) + tuple(float(v) for v in np.logspace(-4, 3, 8))
CEGB_QUICK = {"rounds": (50,), "tradeoffs": (0.0,) + tuple(float(v) for v in
                                                           np.logspace(-3, 3, 7))}
# CatBoost's penalty grid, one configuration per (penalty kind, grow policy, depth) with
# its penalties_coefficient values (costs in units of their mean positive cost; times the
# training target's variance in regression).  First-use penalties are paid once per model
# and suit symmetric trees, where every example reaches every level and so pays for every
# feature the model uses; per-object penalties are paid once per example, which only a
# non-symmetric tree can save on (its coefficients are about 1000 times smaller).
CATBOOST_CONFIGS = (
    ("first-use", "SymmetricTree", 4, (0.0,) + tuple(float(v) for v in np.logspace(-2, 2, 9))),
    ("first-use", "SymmetricTree", 6, (0.0,) + tuple(float(v) for v in np.logspace(-2, 2, 9))),
    ("per-object", "Depthwise", 6, (0.0,) + tuple(float(v) for v in np.logspace(-5, 0, 11))),
)
CATBOOST_ROUNDS = 100
CATBOOST_QUICK = {"configs": (
    ("first-use", "SymmetricTree", 6, (0.0,) + tuple(float(v) for v in np.logspace(-2, 2, 5))),
    ("per-object", "Depthwise", 6, (0.0,) + tuple(float(v) for v in np.logspace(-5, 0, 6))))}


# ---------------------------------------------------------------- prunings of one forest
def hull(model, ctx, cost_resolution):
    """The compiled problem (errors on each tree's in-bag sample, costs on validation) and
    the vertices of its exact trade-off curve."""
    import prune_opt as po

    problem = po.compile_problem(model, ctx.X_v, ctx.y_v, costs=ctx.costs,
                                 train=(ctx.X_tr, ctx.y_tr))
    extra = {} if cost_resolution is None else {"cost_resolution": cost_resolution}
    _, pts = quiet(po.tradeoff_curve, problem, return_points=True, **extra)
    return problem, [q.pruned for q in pts]


def score(prunings, ctx, **info):
    return [pruned_member(p, ctx, **info) for p in prunings]


def baselines(model, problem, ctx, timer):
    """Every registered baseline (``prune_opt.budget.BASELINES``), so a baseline added
    there is a row here: {name: members}."""
    from prune_opt.budget import BASELINES

    return {name: timer(name, lambda fn=fn: score([p for _, p in quiet(
        fn, model, ctx.X_v, ctx.y_v, costs=ctx.costs, problem=problem)], ctx))
        for name, fn in BASELINES.items()}


def fit_budget_objectives(problem, ctx, objectives):
    """``fit_budget`` on the compiled problem at every budget, once per objective, with
    ``ctx.time_limit`` seconds per call; every result is a member of one family, so the
    objective is chosen on validation like any other parameter."""
    out = []
    for b in ctx.budgets:
        for obj in objectives:
            try:
                pf = quiet(fit_budget_on, problem, ctx.X_v, ctx.y_v, budget=b, objective=obj,
                           time_limit=ctx.time_limit)
            except ValueError:  # the budget is below the cheapest pruning
                continue
            out.append(pruned_member(pf, ctx, objective=obj))
    return out


def fit_budget_calls(model, ctx, **kwargs):
    """One ``prune_opt.fit_budget(model, X_val, y_val, costs=, budget=B, **kwargs)`` call
    per budget, as a user would make it; each result stands for its budget only."""
    import prune_opt as po

    out = []
    for b in ctx.budgets:
        t0 = time.perf_counter()
        pf = quiet(po.fit_budget, model, ctx.X_v, ctx.y_v, costs=ctx.costs, budget=b, **kwargs)
        secs = time.perf_counter() - t0
        out.append(pruned_member(pf, ctx, budget=b, seconds=secs,
                                 status=pf.solve_info.get("status"),
                                 objective=pf.solve_info.get("objective", kwargs.get(
                                     "objective"))))
    return out


def refit(members, ctx, top=3, smoothing=(1.0,)):
    """The ``top`` prunings of a family by validation score within each budget, their
    leaves refitted jointly on the training rows (structure and cost unchanged)."""
    import prune_opt as po

    keep = set()
    for b in ctx.budgets:
        ok = [i for i, m in enumerate(members) if m.point["val_cost"] <= b * (1 + 1e-9)]
        keep.update(sorted(ok, key=lambda i: ctx.key(members[i].point), reverse=True)[:top])
    return [pruned_member(po.refit_leaves(members[i].model, None, None,
                                          train=(ctx.X_tr, ctx.y_tr),
                                          in_bag=False, method="global", smoothing=s), ctx)
            for i in sorted(keep) for s in smoothing]


def brier(rf, ctx, lams):
    """``prune_opt.prune(..., objective="brier")`` over a lam grid."""
    import prune_opt as po

    return score([quiet(po.prune, rf, ctx.X_v, ctx.y_v, costs=ctx.costs, lam=lam,
                        objective="brier") for lam in lams], ctx)


# ---------------------------------------------------------------- other growers
def lazy_forests(ctx, grid):
    from forest_builders import LazyCostRandomForestClassifier

    return [LazyCostRandomForestClassifier(ctx.trees, tradeoff=t, max_features=mf,
                                           stop_on_penalty=stop, costs=ctx.costs,
                                           random_state=ctx.seed).fit(ctx.X_tr, ctx.y_tr)
            for t, mf, stop in grid]


def budget_rf(ctx):
    from forest_builders import BudgetRandomForestClassifier

    return BudgetRandomForestClassifier(n_estimators=ctx.trees, costs=ctx.costs,
                                        random_state=ctx.seed).fit(ctx.X_tr, ctx.y_tr)


def subset_forests(ctx):
    """``SubsetForestClassifier`` on the nested prefixes of the cost-aware elimination
    ranking, smallest first, until two of them cost more than the largest budget on
    validation: [(forest, validation cost)]."""
    from forest_builders import SubsetForestClassifier, rank_features_by_cost

    ranking = rank_features_by_cost(ctx.X_tr, ctx.y_tr, costs=ctx.costs,
                                    n_estimators=ctx.trees, random_state=ctx.seed)
    models, over = [], 0
    for k in range(1, ranking.size + 1):
        m = SubsetForestClassifier(ctx.trees, features=ranking[:k], costs=ctx.costs,
                                   random_state=ctx.seed).fit(ctx.X_tr, ctx.y_tr)
        cost = float(m.acquisition_cost(ctx.X_v).mean())
        models.append((m, cost))
        over += cost > max(ctx.budgets)
        if over == 2:
            break
    return models


def subset_fit_budget(models, ctx, objectives=("paper", "brier")):
    """Per budget: the two smallest subset forests above it, pruned to it by fit_budget."""
    import prune_opt as po

    out, problems = [], {}  # a forest above several budgets is compiled once
    for b in ctx.budgets:
        for i, (m, _) in [(i, mc) for i, mc in enumerate(models) if mc[1] > b][:2]:
            if i not in problems:
                problems[i] = po.compile_problem(m, ctx.X_v, ctx.y_v, costs=ctx.costs,
                                                 train=(ctx.X_tr, ctx.y_tr))
            for obj in objectives:
                pf = quiet(fit_budget_on, problems[i], ctx.X_v, ctx.y_v, budget=b,
                           objective=obj, time_limit=ctx.time_limit)
                out.append(pruned_member(pf, ctx, objective=obj))
    return out


# ---------------------------------------------------------------- anchors
def _path_cost(model, columns, X, costs):
    """Per-example cost of the features a forest grown on ``X[:, columns]`` reads."""
    ind, _ = model.decision_path(X[:, columns])
    feature = np.concatenate([e.tree_.feature for e in model.estimators_])
    ind = ind.tocoo()
    split = feature[ind.col] >= 0
    used = sp.csr_matrix((np.ones(int(split.sum())),
                          (ind.row[split], columns[feature[ind.col[split]]])),
                         shape=(X.shape[0], X.shape[1]))
    return costs.cost_of_usage(used > 0)


def cheap_subset_rf(rf, ctx):
    """A random forest on each prefix of the features ranked by the reference forest's
    impurity importance per unit of cost (longer prefixes until two cost more than the
    largest budget on validation); the prefix is chosen on validation like any member."""
    from sklearn.base import clone

    cost = ctx.costs.feature_cost()
    value = np.divide(rf.feature_importances_, cost, out=np.full(cost.size, np.inf),
                      where=cost > 0)
    ranking = np.argsort(-value, kind="stable")
    out, over = [], 0
    for k in range(1, ranking.size + 1):
        cols = np.sort(ranking[:k])
        m = clone(rf).fit(ctx.X_tr[:, cols], ctx.y_tr)
        member = Member(ctx, m.predict(ctx.X_v[:, cols]),
                        float(np.mean(_path_cost(m, cols, ctx.X_v, ctx.costs))),
                        lambda m=m, cols=cols: (m.predict(ctx.X_te[:, cols]), float(np.mean(
                            _path_cost(m, cols, ctx.X_te, ctx.costs)))), eager=True,
                        n_features=k)
        out.append(member)
        over += member.point["val_cost"] > max(ctx.budgets)
        if over == 2:
            break
    return out


def _masked(X, cols):
    out = np.zeros_like(X)
    out[:, cols] = X[:, cols]
    return out


def cheap_subset_gbm(rf, ctx):
    """LightGBM with its default parameters on each prefix of the features ranked by a
    default LightGBM's gain importance on every feature per unit of cost (longer
    prefixes until two cost more than the largest budget on validation); the prefix is
    chosen on validation like any member.  A model on a prefix is trained with the other
    columns set to 0, so it reads none of them."""
    import importlib.util

    if importlib.util.find_spec("lightgbm") is None:
        return Unavailable("not available: lightgbm is not installed")
    import lightgbm as lgb

    from forest_builders.lightgbm_import import lightgbm_acquisition_cost

    cls = lgb.LGBMClassifier if ctx.task == "classification" else lgb.LGBMRegressor

    def fit(X):
        return quiet(cls(random_state=ctx.seed, n_jobs=1, verbose=-1,
                         importance_type="gain").fit, X, ctx.y_tr)

    cost = ctx.costs.feature_cost()
    gain = fit(ctx.X_tr).feature_importances_
    value = np.divide(gain, cost, out=np.full(cost.size, np.inf), where=cost > 0)
    ranking = np.argsort(-value, kind="stable")
    out, over = [], 0
    for k in range(1, ranking.size + 1):
        cols = np.sort(ranking[:k])
        m = fit(_masked(ctx.X_tr, cols))
        out.append(model_member(m, ctx, lambda X, m=m: lightgbm_acquisition_cost(
            m, X, ctx.costs), n_features=k))
        over += out[-1].point["val_cost"] > max(ctx.budgets)
        if over == 2:
            break
    return out


def cegb(ctx, *, penalties=CEGB_PENALTIES, leaves=CEGB_LEAVES, rounds=CEGB_ROUNDS,
         tradeoffs=CEGB_TRADEOFFS, refine=4):
    """LightGBM's CEGB over penalty kind x num_leaves x rounds x tradeoff.

    Its cost falls in cliffs as the tradeoff grows, so for every configuration,
    each budget with no model in ``(budget / 2, budget]`` gets ``refine``
    geometric bisection steps between the grid tradeoffs whose costs straddle it.
    """
    import importlib.util

    if importlib.util.find_spec("lightgbm") is None:
        return Unavailable("not available: lightgbm is not installed")
    out = []
    for pen in penalties:
        for nl in leaves:
            for r in rounds:
                own = [_cegb_member(ctx, pen, nl, r, t) for t in tradeoffs]
                for b in ctx.budgets:
                    for _ in range(refine):
                        pts = [m.point for m in own]
                        if any(b / 2 < p["val_cost"] <= b for p in pts):
                            break
                        above = [p["tradeoff"] for p in pts if p["val_cost"] > b]
                        below = [p["tradeoff"] for p in pts if p["val_cost"] <= b / 2]
                        if not above or not below or max(above) >= min(below):
                            break
                        lo, hi = max(above), min(below)
                        t = float(np.sqrt(lo * hi)) if lo > 0 else hi / 100.0
                        own.append(_cegb_member(ctx, pen, nl, r, t))
                out += own
    return out


def _cegb_member(ctx, penalty, num_leaves, rounds, tradeoff):
    import lightgbm as lgb

    from forest_builders.lightgbm_import import lightgbm_acquisition_cost

    feature_cost = [float(c) for c in ctx.costs.feature_cost()]
    cls = lgb.LGBMClassifier if ctx.task == "classification" else lgb.LGBMRegressor
    m = cls(n_estimators=rounds, num_leaves=num_leaves, cegb_tradeoff=tradeoff,
            random_state=ctx.seed, n_jobs=1, verbose=-1,
            **{f"cegb_penalty_feature_{penalty}": feature_cost})
    quiet(m.fit, ctx.X_tr, ctx.y_tr)
    return model_member(m, ctx, lambda X: lightgbm_acquisition_cost(m, X, ctx.costs),
                        penalty=penalty, num_leaves=num_leaves, rounds=rounds,
                        tradeoff=tradeoff)


def catboost_penalties(ctx, *, configs=CATBOOST_CONFIGS, rounds=CATBOOST_ROUNDS, refine=4):
    """CatBoost grown under its own feature penalties: ``first_feature_use_penalties``
    (or ``per_object_feature_penalties``) = each feature's cost, over ``configs`` (penalty
    kind, grow policy, depth, ``penalties_coefficient`` grid), ``rounds`` rounds.

    A model's cost is that of the features its own splits read on each example: the
    fitted model imported by ``po.as_forest`` and measured by
    ``PrunedForest(forest, full mask, costs).average_cost``.  As for CEGB, each budget
    with no model in ``(budget / 2, budget]`` gets ``refine`` geometric bisection steps
    of the coefficient between the grid values whose costs straddle it.
    """
    import importlib.util

    if importlib.util.find_spec("catboost") is None:
        return Unavailable("not available: catboost is not installed")
    out = []
    for kind, policy, depth, coefficients in configs:
        own = [_catboost_member(ctx, kind, policy, depth, rounds, c) for c in coefficients]
        for b in ctx.budgets:
            for _ in range(refine):
                pts = [m.point for m in own]
                if any(b / 2 < p["val_cost"] <= b for p in pts):
                    break
                above = [p["coefficient"] for p in pts if p["val_cost"] > b]
                below = [p["coefficient"] for p in pts if p["val_cost"] <= b / 2]
                if not above or not below or max(above) >= min(below):
                    break
                lo, hi = max(above), min(below)
                c = float(np.sqrt(lo * hi)) if lo > 0 else hi / 100.0
                own.append(_catboost_member(ctx, kind, policy, depth, rounds, c))
        out += own
    return out


def catboost_penalty_params(costs, kind, coefficient, y=None):
    """CatBoost's penalty keywords: the feature costs in units of their mean positive cost
    as ``first_feature_use_penalties`` (``kind`` "first-use") or
    ``per_object_feature_penalties`` ("per-object"), and ``penalties_coefficient`` (times
    the variance of the regression target ``y``, so the grid does not depend on its
    unit)."""
    fc = np.asarray(costs.feature_cost(), dtype=float)
    unit = float(fc[fc > 0].mean()) if np.any(fc > 0) else 1.0
    name = {"first-use": "first_feature_use_penalties",
            "per-object": "per_object_feature_penalties"}[kind]
    scale = 1.0 if y is None else max(float(np.var(y)), 1e-12)
    return {name: [float(c) for c in fc / unit], "penalties_coefficient": coefficient * scale}


def _catboost_member(ctx, kind, policy, depth, rounds, coefficient):
    import catboost as cb

    import prune_opt as po

    regression = ctx.task != "classification"
    cls = cb.CatBoostRegressor if regression else cb.CatBoostClassifier
    m = cls(iterations=rounds, depth=depth, grow_policy=policy, random_seed=ctx.seed,
            thread_count=1, allow_writing_files=False, verbose=0,
            **catboost_penalty_params(ctx.costs, kind, coefficient,
                                      ctx.y_tr if regression else None))
    quiet(m.fit, ctx.X_tr, ctx.y_tr)
    forest = po.as_forest(m)
    pf = po.PrunedForest(forest, forest.full_split_mask(), costs=ctx.costs)
    return Member(ctx, np.ravel(m.predict(ctx.X_v)), pf.average_cost(ctx.X_v),
                  lambda: (np.ravel(m.predict(ctx.X_te)), pf.average_cost(ctx.X_te)),
                  eager=True, penalty=kind, grow_policy=policy, depth=depth, rounds=rounds,
                  coefficient=coefficient)


# ---------------------------------------------------------------- the estimator
def record_candidates(est, X_te, y_te, where, out):
    """Make ``est`` append every candidate it scores to ``out`` when it chooses: its
    select-row score and Brier loss, the select rows' count, its cost, and its test
    accuracy and Brier loss, so that selection rules can be compared offline
    (``benchmarks/selection_rules.py``)."""
    choose = est._choose

    def spy(rows):
        n_select = int(est.split_["select"].size)
        for r in rows:
            pf = r.get("_pruned")
            rec = {k: r[k] for k in ("name", "objective", "refit", "average_cost", "score",
                                     "brier", "fits_budget")}
            rec["n_select"] = n_select
            if pf is not None and pf.task == "classification":
                onehot = (y_te[:, None] == pf.classes_[None, :]).astype(float)
                rec["test_acc"] = float(pf.score(X_te, y_te))
                rec["test_brier"] = float(np.mean(np.sum((pf.predict_proba(X_te) - onehot)
                                                         ** 2, axis=1)))
            out.append({**where, **rec})
        return choose(rows)

    est._choose = spy


def estimator(ctx):
    """``forest_builders.BudgetPrunedForestClassifier`` (or ``...Regressor``) with its
    defaults, one fit per budget on train + validation (it makes its own honest split).
    The row says "not available" when the package does not offer it, and "failed" with
    the error when a fit raises (no number either way).  With ``ctx.candidates`` a
    list, every candidate of every fit is recorded there (:func:`record_candidates`)."""
    name = ("BudgetPrunedForestClassifier" if ctx.task == "classification"
            else "BudgetPrunedForestRegressor")
    try:
        import forest_builders

        cls = getattr(forest_builders, name)
    except (ImportError, AttributeError):
        return Unavailable(f"not available: forest_builders has no {name}")
    out = []
    record = getattr(ctx, "candidates", None)
    params = dict(getattr(ctx, "estimator_params", None) or {})
    patch = {k[len("module."):]: v for k, v in params.items() if k.startswith("module.")}
    params = {k: v for k, v in params.items() if not k.startswith("module.")}
    if isinstance(params.get("candidates"), list) and "default" in params["candidates"]:
        from forest_builders.estimator._registry import resolve_families

        # "default": the families the estimator grows by default for this task
        named = params["candidates"]
        params["candidates"] = list(dict.fromkeys(
            n for c in named for n in (resolve_families(None, ctx.task) if c == "default"
                                       else [c])))
    for b in ctx.budgets:
        t0 = time.perf_counter()
        try:
            est = cls(budget=b, costs=ctx.costs, random_state=ctx.seed, **params)
            if record is not None:
                record_candidates(est, ctx.X_te, ctx.y_te,
                                  {"share": b / ctx.base_cost, "budget": b}, record)
            with _patched(patch):
                est = quiet(est.fit, ctx.X_trval, ctx.y_trval)
        except Exception as exc:  # noqa: BLE001  (reported in the row, the run goes on)
            msg = str(exc).splitlines()[0] if str(exc) else ""
            return Unavailable(f"failed: {type(exc).__name__}: {msg[:80]}")
        secs = time.perf_counter() - t0
        out.append(model_member(est, ctx, est.acquisition_cost, budget=b, seconds=secs,
                                **winner_info(est)))
    return out


class _patched:
    """Set module constants of the estimator for one fit (``--estimator-params``' keys
    ``"module.NAME"``: ``NAME`` in ``forest_builders.estimator._estimator`` or, when it is not
    there, in its ``_pruning``, ``_boosted``, ``_forests``, ``_catboost``, ``_registry`` or
    ``_clock``), restored afterwards."""

    def __init__(self, values):
        self.values, self.saved = values, []

    def __enter__(self):
        import importlib

        mods = [importlib.import_module(f"forest_builders.estimator.{m}") for m in (
            "_estimator", "_pruning", "_boosted", "_forests", "_catboost", "_registry",
            "_clock")]
        for name, value in self.values.items():
            mod = next((m for m in mods if hasattr(m, name)), None)
            if mod is None:
                raise AttributeError(f"--estimator-params: no estimator constant {name}")
            self.saved.append((mod, name, getattr(mod, name)))
            setattr(mod, name, tuple(value) if isinstance(value, list) else value)

    def __exit__(self, *exc):
        for mod, name, value in reversed(self.saved):
            setattr(mod, name, value)


def winner_info(est):
    """What the report says of one estimator fit: the winner and its family, whether it
    is a pruning (then pruning changed the winner: without it another, unpruned
    candidate would have won), the fit's time limit, the winner's cost on every row
    given to fit and the number of candidates."""
    c = est.candidates_
    win = c[c["chosen"]].iloc[0]
    return {"winner": str(win["model"]), "family": str(win.get("family", "")),
            "pruned": bool(win["objective"] != "none"),
            "time_limit": float(est.time_limit),
            "fit_cost": float(win.get("fit_cost", np.nan)),
            "n_candidates": int(len(c))}


def only(rf, ctx, timer, args, names):
    """Only the families named in ``--families`` (those that need no hull): {name: members}."""
    import prune_opt as po

    out = {}
    if "fit_budget default" in names:
        out["fit_budget default"] = timer("fit_budget default", fit_budget_calls, rf, ctx)
    for obj in ("paper", "brier"):
        if f"fit_budget {obj}" in names:
            out[f"fit_budget {obj}"] = timer(f"fit_budget {obj}", fit_budget_calls, rf, ctx,
                                             objective=obj, time_limit=args.time_limit)
    from prune_opt.budget import BASELINES

    wanted = [b for b in BASELINES if b in names]
    if wanted:
        problem = po.compile_problem(rf, ctx.X_v, ctx.y_v, costs=ctx.costs,
                                     train=(ctx.X_tr, ctx.y_tr))
        got = baselines(rf, problem, ctx, timer)
        out.update({b: got[b] for b in wanted})
    if "cheap-subset rf" in names:
        out["cheap-subset rf"] = timer("cheap-subset rf", cheap_subset_rf, rf, ctx)
    if "cheap-subset gbm" in names:
        out["cheap-subset gbm"] = timer("cheap-subset gbm", cheap_subset_gbm, rf, ctx)
    if "cegb" in names and not args.no_cegb:
        out["cegb"] = timer("cegb", cegb, ctx, refine=args.cegb_refine, **args.cegb_grid)
    if "catboost penalties" in names and not args.no_catboost:
        out["catboost penalties"] = timer("catboost penalties", catboost_penalties, ctx,
                                          refine=args.cegb_refine, **args.catboost_grid)
    if "estimator" in names:
        out["estimator"] = timer("estimator", estimator, ctx)
    return out
