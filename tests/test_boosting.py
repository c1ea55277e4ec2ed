"""Pruning boosted models: the combination rule, the node-value rule, the expanded
program, and the guarantees the forests' pipeline gives (solvers agree, integral LP
points, predictions equal to what the IR says, lossless files, exports)."""

import numpy as np
import pytest
from boosted_cases import boosted_cases, boosting_data, fit_boosted
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.special import expit, softmax
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import fewer_trees_prunings, get_baseline
from prune_opt.forest._ensemble import Ensemble
from prune_opt.program._boosted import (
    MOMENTS,
    boosting_statistics,
    expansion_term,
    fitted_forest,
    node_value_rule,
)
from prune_opt.routing._records import node_levels, sum_up

REL = 1e-9


# ---------------------------------------------------------------- combination and loss
@given(st.integers(0, 2**31 - 1), st.sampled_from(["identity", "logistic", "softmax"]))
def test_gradients_are_the_derivatives_of_the_loss(seed, link):
    rng = np.random.default_rng(seed)
    k = 3 if link == "softmax" else 1
    ens = Ensemble("additive", link).bind(
        "regression" if link == "identity" else "classification",
        None if link == "identity" else max(k, 2), 1)
    raw = rng.normal(scale=3, size=(20, k))
    y = rng.normal(size=20) if link == "identity" else rng.integers(0, max(k, 2), 20)
    g, h = ens.gradients(raw, y)
    mid = ens.pointwise_loss(raw, y)
    for j in range(k):
        for eps, order in ((1e-6, 1), (1e-4, 2)):  # central differences, step per order
            step = np.zeros(k)
            step[j] = eps
            up, down = ens.pointwise_loss(raw + step, y), ens.pointwise_loss(raw - step, y)
            # round-off of the differences: a few ulps of the loss over the step
            slack = 1e-15 * (1 + np.abs(mid)) / eps**order + 1e-6
            if order == 1:
                assert np.all(np.abs(g[:, j] - (up - down) / (2 * eps)) <= slack + 1e-8)
            else:
                assert np.all(np.abs(h[:, j] - (up - 2 * mid + down) / eps**2) <= 10 * slack)


def test_output_links_the_summed_raw_scores():
    total = np.array([[0.5], [-2.0]])
    ens = Ensemble("additive", "logistic", init_score=0.25).bind("classification", 2, 3)
    np.testing.assert_allclose(ens.output(total, 3)[:, 1], expit(total[:, 0] + 0.25))
    soft = Ensemble("additive", "softmax", init_score=[0, 1, 2]).bind("classification", 3, 3)
    t3 = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(soft.output(t3, 3), softmax(t3 + [0, 1, 2], axis=1))
    with pytest.raises(ValueError, match="logistic' is binary"):
        Ensemble("additive", "logistic").bind("classification", 3, 1)
    with pytest.raises(ValueError, match="init_score has 2 values"):
        Ensemble("additive", "softmax", init_score=[1, 2]).bind("classification", 3, 3)


# ---------------------------------------------------------------- the node-value rule
@given(st.integers(0, 2**31 - 1))
def test_node_value_is_the_brute_force_minimiser_of_the_curvature_term(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    a, h, w = rng.normal(size=n), rng.uniform(0.01, 0.25, n), rng.uniform(0.5, 2, n)
    m = np.zeros((1, len(MOMENTS)))
    m[0, [0, 1, 2, 4]] = [w.sum(), w @ a, w @ h, w @ (h * a)]
    v = node_value_rule(m, np.array([0.0]))[0]

    def curvature(x):
        return w @ (h * (x - a) ** 2)

    best = minimize_scalar(curvature, bracket=(a.min(), a.max()))
    assert v == pytest.approx(best.x, abs=1e-6)
    grid = np.linspace(a.min() - 1, a.max() + 1, 2001)
    assert curvature(v) <= min(curvature(best.x), min(map(curvature, grid))) + 1e-12
    assert a.min() - 1e-12 <= v <= a.max() + 1e-12  # between the subtree's values


def test_node_value_without_curvature_or_rows():
    m = np.zeros((2, len(MOMENTS)))
    m[0, :2] = [4.0, 2.0]  # four rows, Hessians all zero: their plain mean
    np.testing.assert_allclose(node_value_rule(m, np.array([7.0, 3.0])), [0.5, 3.0])


@given(boosted_cases(kinds=("gb",)))
def test_node_terms_are_the_stagewise_expansion_summed_row_by_row(case):
    model, Xt, yt, Xv, yv, costs, task = case
    f = fitted_forest(po.as_forest(model), Xv, yv)
    Xc = f.check_X(Xv)
    y = yv if task == "regression" else np.searchsorted(f.classes_, yv)
    m = sum_up(node_levels(f), boosting_statistics(f, Xc, y))
    ens, leaves = f.ensemble, f.apply(Xc)
    cols = np.zeros(f.n_trees, int) if ens.tree_class is None else ens.tree_class
    prefix = np.tile(ens.init_score, (Xc.shape[0], 1))
    K = f.round_size
    for t in range(f.n_trees):  # every node of tree t, by brute force over its rows
        sl, k = f.tree_slice(t), cols[t]
        if t % K == 0:  # the model once tree t's whole round was added
            for u in range(t, t + K):
                prefix = prefix + f.value[f.node_offset[u] + leaves[:, u]]
            g, h = ens.gradients(prefix, y)
        paths = f.decision_paths(Xc, t).toarray().astype(bool)
        a = f.value[sl.start + leaves[:, t], k]
        for h_local in np.flatnonzero(~f.is_leaf[sl]):
            rows = paths[:, h_local]
            v = f.value[sl.start + h_local, k]
            direct = np.sum(g[rows, k] * (v - a[rows]) + 0.5 * h[rows, k] * (v - a[rows]) ** 2)
            assert expansion_term(m[[sl.start + h_local]], np.array([v]))[0] == pytest.approx(
                direct, rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------- the expanded program
@given(boosted_cases())
def test_the_unpruned_error_term_is_the_model_loss(case):
    model, Xt, yt, Xv, yv, costs, task = case
    problem = po.compile_problem(model, Xv, yv, costs=costs)
    f = problem.forest
    err = problem.evaluate(f.full_split_mask()).error_term
    own = po.objectives.evaluate_objective(po.PrunedForest(f, f.full_split_mask()), Xv, yv,
                                           objective=f.ensemble.loss_name, lam=0.0)["loss"]
    if task == "regression":
        assert err == pytest.approx(own, rel=1e-9, abs=1e-12)
    else:  # the objective floors p at 1e-4; compare where nothing is floored
        pf = po.PrunedForest(f, f.full_split_mask())
        p = pf.predict_proba(Xv)[np.arange(len(yv)), np.searchsorted(f.classes_, yv)]
        assert err == pytest.approx(float(np.mean(-np.log(p))), rel=1e-9)


#: CBC's simplex stops once every reduced cost is within 1e-7 of the largest cost:
#: a boosted model's real-valued node terms can differ by less (forests' counts never do);
#: cbc-ip, built through PuLP (13 significant digits per coefficient in the file it
#: hands CBC, CBC's default tolerances), was found 4.6e-9 (relative) above the optimum
#: by the fuzz profile
CBC_LP_REL = 1e-7
CBC_BACKENDS = ("cbc", "cbc-ip")


@given(boosted_cases(max_rows=50), st.sampled_from([1e-3, 1e-2, 0.1]))
def test_exact_backends_agree_and_the_lp_is_integral(case, lam):
    model, Xt, yt, Xv, yv, costs, task = case
    problem = po.compile_problem(model, Xv, yv, costs=costs, lam=lam)
    names = ("mincut", "mincut-networkx", "highs", "glop", "cbc-ip", "cbc", "primal-dual")
    results = {s: po.solve(problem, solver=s) for s in names}
    ref = results["mincut"].objective
    for name, res in results.items():
        rel = CBC_LP_REL if name in CBC_BACKENDS else REL
        assert res.objective == pytest.approx(ref, rel=rel, abs=1e-12), name
        # every result is scored by the one evaluation of the IR
        assert problem.evaluate(res.split_mask).objective == pytest.approx(res.objective,
                                                                           rel=REL, abs=1e-12)
    assert results["highs"].solve_info["max_fractionality"] <= 1e-9


def test_the_constraint_matrix_is_unchanged_and_tu():
    rng = np.random.default_rng(0)
    X, y = boosting_data(rng, "binary", 60, 3)
    model = fit_boosted("gb", "binary", X, y, 0, n_rounds=2, depth=2)
    boosted = po.compile_problem(model, X, y, costs=[1, 2, 3], lam=0.01)
    f = boosted.forest
    # the same trees as an averaged forest (any class distributions): the same program
    twin = po.Forest([dict(f.local_arrays(t), value=np.ones((f.tree_slice(t).stop
                                                             - f.tree_slice(t).start, 2)))
                      for t in range(f.n_trees)], classes=[0, 1], n_features=3)
    averaged = po.compile_problem(twin, X, y, costs=[1, 2, 3], lam=0.01)
    A = boosted.constraint_matrix()
    assert (A != averaged.constraint_matrix()).nnz == 0
    assert set(np.unique(A.data)) <= {-1.0, 1.0}
    report = po.is_totally_unimodular(boosted, method="network")
    assert report.is_tu and report.certificate is not None


def test_pruned_predictions_are_what_the_ir_says():
    rng = np.random.default_rng(1)
    X, y = boosting_data(rng, "multiclass", 200, 4)
    model = fit_boosted("hgb", "multiclass", X, y, 0, n_rounds=4)
    pruned = po.prune(model, X, y, costs=[1, 1, 3, 3], lam=0.02, objective="paper")
    f, mask = pruned.forest, pruned.split_mask
    total = np.tile(f.ensemble.init_score, (len(y), 1))
    for t in range(f.n_trees):  # walk every pruned tree by hand
        sl = f.tree_slice(t)
        for i, x in enumerate(X):
            h = sl.start
            while mask[h]:
                h = f.left[h] if x[f.feature[h]] <= f.threshold[h] else f.right[h]
            total[i] += f.value[h]
    np.testing.assert_allclose(pruned.predict_proba(X), softmax(total, axis=1), rtol=1e-12)
    np.testing.assert_allclose(pruned.decision_function(X), total, rtol=1e-12)
    # the cost: every feature a kept split on the rows' paths tests, paid once
    assert pruned.average_cost(X) <= po.acquisition_cost(model, X, [1, 1, 3, 3]).mean()


# ---------------------------------------------------------------- pruning and budgets
@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_default_objective_is_the_model_loss(task):
    rng = np.random.default_rng(2)
    X, y = boosting_data(rng, task, 160, 4)
    model = fit_boosted("gb", task, X, y, 0, n_rounds=6)
    pruned = po.prune(model, X, y, costs=[1, 2, 3, 4], lam=0.01)
    assert pruned.solve_info["objective"] == (
        "squared_error" if task == "regression" else "logloss")
    with pytest.raises(ValueError, match="boosted model's trees are summed raw scores"):
        po.prune(model, X, y, costs=[1, 2, 3, 4], lam=0.01, objective="tree_error")


@pytest.mark.slow
@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_fit_budget_meets_the_budget_and_beats_every_truncation(task):
    from prune_opt.objectives._scorer import VoteScorer

    rng = np.random.default_rng(4)
    X, y = boosting_data(rng, task, 400, 5)
    model = fit_boosted("hgb", task, X[:200], y[:200], 0, n_rounds=12)
    Xv, yv = X[200:], y[200:]
    costs = [1.0, 2.0, 3.0, 4.0, 5.0]
    full = po.acquisition_cost(model, Xv, costs).mean()
    budget = 0.4 * full
    pruned = po.fit_budget(model, Xv, yv, costs=costs, budget=budget)
    assert pruned.average_cost(Xv) <= budget * (1 + 1e-9)
    own = pruned.solve_info["auto"]["loss"]
    f = fitted_forest(po.as_forest(model), Xv, yv)
    scorer = VoteScorer(f, Xv, yv, po.as_feature_costs(costs, 5), own)
    mine = scorer.score(po.budget._fit_budget._full_mask(f, pruned)[0],
                        pruned.solve_info.get("trees_kept"))[0]
    for r, sub in fewer_trees_prunings(model, costs=costs):
        if sub.average_cost(Xv) <= budget:
            truncated = scorer.score(f.full_split_mask(), list(range(r)))[0]
            if task != "regression":  # auto ranks classifiers by their accuracy first
                assert pruned.score(Xv, yv) >= sub.score(Xv, yv) - 1e-12 or mine <= truncated
            else:
                assert mine <= truncated + 1e-12


def test_fewer_rounds_keep_whole_rounds():
    rng = np.random.default_rng(5)
    X, y = boosting_data(rng, "multiclass", 90, 3)
    model = fit_boosted("gb", "multiclass", X, y, 0, n_rounds=3, depth=2)
    rounds = get_baseline("fewer-rounds")(model, X, y)
    assert [m for m, _ in rounds] == [9, 6, 3]
    sub = rounds[-1][1]
    first = model.staged_predict_proba(X)
    np.testing.assert_allclose(sub.predict_proba(X), next(first), atol=1e-12)
    with pytest.raises(ValueError, match="whole rounds"):
        fewer_trees_prunings(model, sizes=[4])


# ---------------------------------------------------------------- files, exports, lazy
@pytest.mark.parametrize("kind, task", [("gb", "binary"), ("hgb", "multiclass"),
                                        ("hgb", "regression")])
def test_files_round_trip_a_boosted_pruning(tmp_path, kind, task):
    rng = np.random.default_rng(6)
    X, y = boosting_data(rng, task, 150, 4, nan_share=0.1 if kind == "hgb" else 0.0)
    model = fit_boosted(kind, task, X, y, 0, n_rounds=5)
    pruned = po.prune(model, X, y, costs=[1, 2, 2, 1], lam=0.01, objective="paper")
    path = tmp_path / "boosted.json"
    pruned.save(path)
    back = po.load(path)
    assert back.forest.ensemble.same_as(pruned.forest.ensemble)
    assert back.forest.split_dtype == pruned.forest.split_dtype
    assert back.forest.node_value_fit == pruned.forest.node_value_fit
    out = back.predict(X) if task == "regression" else back.predict_proba(X)
    ref = pruned.predict(X) if task == "regression" else pruned.predict_proba(X)
    np.testing.assert_array_equal(out, ref)
    back.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == path.read_text()


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_gradient_boosting_exports_a_real_pruned_estimator(tmp_path, task):
    rng = np.random.default_rng(7)
    X, y = boosting_data(rng, task, 150, 4)
    model = fit_boosted("gb", task, X, y, 0, n_rounds=5)
    pruned = po.prune(model, X, y, costs=[1, 2, 2, 1], lam=0.01, objective="paper")
    pruned.save(tmp_path / "p.json")
    for source in (pruned, po.load(tmp_path / "p.json")):  # with and without the estimator
        est = source.to_sklearn()
        assert type(est) is type(model)
        if task == "regression":
            np.testing.assert_allclose(est.predict(X), pruned.predict(X), rtol=1e-12)
        else:
            np.testing.assert_allclose(est.predict_proba(X), pruned.predict_proba(X),
                                       atol=1e-12)
    np.testing.assert_allclose(model.predict(X[:5]), po.as_forest(model).predict(X[:5]))


def test_hist_gradient_boosting_cannot_be_rebuilt_by_sklearn():
    rng = np.random.default_rng(8)
    X, y = boosting_data(rng, "binary", 100, 3)
    pruned = po.prune(fit_boosted("hgb", "binary", X, y, 0), X, y, lam=0.01)
    with pytest.raises(TypeError, match="HistGradientBoosting.*predict.*save"):
        pruned.to_sklearn()


def test_lazy_prediction_of_a_boosted_pruning():
    rng = np.random.default_rng(9)
    X, y = boosting_data(rng, "binary", 200, 4, nan_share=0.05)
    model = fit_boosted("hgb", "binary", X, y, 0, n_rounds=6)
    pruned = po.prune(model, X, y, costs=[1, 5, 5, 1], lam=0.005, objective="paper")

    def acquire(rows, unit):
        return X[rows][:, list(unit.features)]

    out = po.LazyPredictor(pruned, acquire).predict_proba(np.full(X.shape, np.nan))
    np.testing.assert_array_equal(out.proba, pruned.predict_proba(X))
    np.testing.assert_allclose(out.cost_paid, pruned.acquisition_cost(X))


def test_refit_leaves_lowers_the_boosted_loss():
    rng = np.random.default_rng(10)
    X, y = boosting_data(rng, "binary", 300, 4)
    model = fit_boosted("gb", "binary", X[:150], y[:150], 0, n_rounds=8)
    pruned = po.prune(model, X[150:], y[150:], costs=[1, 2, 3, 4], lam=0.01)
    refit = po.refit_leaves(pruned, X[150:], y[150:], smoothing=1.0)
    info = refit.solve_info["refit"]
    assert info["method"] == "newton" and info["loss_after"] <= info["loss_before"]
    assert np.array_equal(refit.acquisition_cost(X), pruned.acquisition_cost(X))
    with pytest.raises(ValueError, match=r"hold raw scores\): use one of \('newton',\)"):
        po.refit_leaves(pruned, X, y, method="counts")
    rf = po.prune(RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y), X, y,
                  lam=0.01)
    with pytest.raises(ValueError, match=r"hold predictions\): use one of \('counts', "):
        po.refit_leaves(rf, X, y, method="newton")


def test_dask_compile_of_a_booster_is_the_in_process_one():
    distributed = pytest.importorskip("dask.distributed")
    rng = np.random.default_rng(11)
    X, y = boosting_data(rng, "regression", 300, 4)
    model = fit_boosted("hgb", "regression", X, y, 0, n_rounds=5)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        a = po.compile_problem(model, X, y, costs=[1, 2, 3, 4], lam=0.01, chunk_size=64)
        b = po.compile_problem(model, X, y, costs=[1, 2, 3, 4], lam=0.01, chunk_size=64,
                               client=client)
    np.testing.assert_array_equal(a.node_error, b.node_error)
    np.testing.assert_array_equal(a.forest.value, b.forest.value)


def test_a_saved_xgboost_pruning_reads_sparse_rows_as_xgboost_does(tmp_path):
    xgb = pytest.importorskip("xgboost")
    import scipy.sparse as sparse

    rng = np.random.default_rng(12)
    X, y = boosting_data(rng, "binary", 200, 4)
    X[X < 0] = 0.0
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3).fit(X, y)
    pruned = po.prune(model, X, y, costs=[1, 2, 3, 4], lam=0.005)
    pruned.save(tmp_path / "x.json")
    back = po.load(tmp_path / "x.json")
    assert back.forest.absent_is_missing and back.estimator_class == "XGBClassifier"
    Xs = sparse.csr_matrix(X)  # absent entries are missing values, as in DMatrix
    np.testing.assert_array_equal(back.predict_proba(Xs), pruned.predict_proba(Xs))
    np.testing.assert_allclose(pruned.to_xgboost().inplace_predict(Xs), pruned.predict_proba(
        Xs)[:, 1], rtol=1e-6)


def test_every_baseline_family_prunes_a_booster_or_says_why():
    rng = np.random.default_rng(13)
    X, y = boosting_data(rng, "binary", 150, 3)
    model = fit_boosted("hgb", "binary", X, y, 0, n_rounds=4)
    for name in ("ccp", "greedy", "fewer-trees", "fewer-rounds"):
        prunings = get_baseline(name)(model, X, y, costs=[1, 2, 3])
        assert prunings and prunings[-1][1].n_splits <= prunings[0][1].n_splits, name
    with pytest.raises(ValueError, match="raw scores.*no impurity"):
        get_baseline("impurity")(model, X, y)
