"""ACT (Esmeir & Markovitch 2008): split search, pessimistic errors, context costs,
the sklearn contract, exact Forest round trip, anytime behaviour on real costs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

import prune_opt as po
from forest_builders._act_core import ACTConfig, _entropy, best_splits, pessimistic_rate
from forest_builders.act import ACTClassifier, ACTForestClassifier
from prune_opt.datasets import load_dataset


# every check passes once errors are dear enough for tests to pay; with the default
# error cost a single leaf is the cheapest tree on sklearn's blobs (see the docs)
@parametrize_with_checks(
    [ACTClassifier(r=1, max_depth=3, misclassification_cost=100.0, random_state=0),
     ACTForestClassifier(n_estimators=3, r=0, max_depth=3, misclassification_cost=100.0,
                         random_state=0)],
)
def test_sklearn_contract(estimator, check):
    check(estimator)


# ------------------------------------------------------------------ split search
def _brute_best(x, y, C):
    """Information gain of every cut between distinct sorted values, by counting."""
    xs = np.unique(x)
    best, best_t = -np.inf, None
    parent = _entropy(np.bincount(y, minlength=C).astype(float))
    for a, b in zip(xs[:-1], xs[1:]):
        left = x <= a
        gl = _entropy(np.bincount(y[left], minlength=C).astype(float))
        gr = _entropy(np.bincount(y[~left], minlength=C).astype(float))
        g = parent - (left.sum() * gl + (~left).sum() * gr) / x.size
        if g > best + 1e-12:
            best, best_t = g, (a, b)
    return best, best_t


@given(arrays(np.float32, st.tuples(st.integers(2, 30), st.integers(1, 4)),
              elements=st.sampled_from([-2.5, -1.0, 0.0, 0.1, 0.3, 1.0, 7.0])),
       st.data())
def test_best_splits_matches_brute_force(X, data):
    n = X.shape[0]
    y = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    gain, thr = best_splits(X, y, 3, np.arange(X.shape[1]))
    for f in range(X.shape[1]):
        g, cut = _brute_best(X[:, f], y, 3)
        if cut is None:
            assert gain[f] == -np.inf
            continue
        assert gain[f] == pytest.approx(g, abs=1e-9)
        # routing in float32 sends exactly the rows <= the lower value left
        left = X[:, f].astype(np.float32) <= thr[f]
        lower = X[:, f] <= X[:, f][left].max()
        assert np.array_equal(left, lower)
        assert thr[f] == np.float64(np.float32(thr[f]))


def test_pessimistic_rate_is_c45_bound():
    n = np.arange(1, 50)
    # with no observed error, the binomial upper limit solves (1-U)^N = CF
    assert np.allclose(pessimistic_rate(np.zeros_like(n), n, 0.25), 1 - 0.25 ** (1 / n))
    e = np.arange(0, 20)
    u = pessimistic_rate(e, 20, 0.25)
    assert np.all(np.diff(u) > 0) and np.all(u >= e / 20) and u[-1] <= 1
    assert pessimistic_rate(0, 0, 0.25) == 0.0


def test_context_costs_follow_units():
    d = load_dataset("thyroid")
    fc = d.costs
    cfg = ACTConfig(d.X.astype(np.float32), d.y - 1, 3, fc.unit_costs,
                    fc.feature_units.toarray(), 1 - np.eye(3), r=1, w=1, cf=0.25,
                    max_depth=None, min_samples_split=2)
    names = d.feature_names
    fti, tt4, t4u = names.index("FTI"), names.index("TT4"), names.index("T4U")
    nothing = np.zeros(fc.n_units, dtype=bool)
    assert cfg.context_costs(nothing)[fti] == pytest.approx(fc.feature_cost()[fti])
    after_fti = fc.feature_units[fti].toarray().ravel()
    cost = cfg.context_costs(after_fti)
    assert cost[tt4] == 0 and cost[t4u] == 0 and cost[fti] == 0
    after_tt4 = fc.feature_units[tt4].toarray().ravel()
    assert cfg.context_costs(after_tt4)[fti] == pytest.approx(fc.unit_costs[
        fc.feature_units[t4u].indices].sum())


# ------------------------------------------------------------------ estimators
@pytest.fixture(scope="module")
def pima():
    d = load_dataset("pima")
    Xtr, Xte, ytr, yte = train_test_split(d.X, d.y, test_size=0.3, random_state=0,
                                          stratify=d.y)
    return d, Xtr, Xte, ytr, yte


def test_forest_round_trip_is_exact(pima):
    d, Xtr, Xte, ytr, yte = pima
    act = ACTClassifier(r=1, costs=d.costs, max_depth=5, random_state=0).fit(Xtr, ytr)
    forest = act.to_forest()
    assert isinstance(forest, po.Forest) and forest.n_trees == 1
    np.testing.assert_array_equal(act.predict_proba(Xte), forest.predict_proba(Xte))
    np.testing.assert_array_equal(act.predict(Xte), forest.classes_[
        forest.predict_proba(Xte).argmax(axis=1)])
    # the sklearn export of the unpruned forest routes identically (float32 thresholds)
    sk = po.PrunedForest(forest, forest.full_split_mask()).to_sklearn()
    np.testing.assert_array_equal(sk.predict(Xte), act.predict(Xte))
    # node values are the class counts of the training rows reaching each node
    ind = forest.decision_paths(Xtr, 0)
    codes = np.searchsorted(act.classes_, ytr)
    counts = (ind.T @ np.eye(2)[codes])
    np.testing.assert_allclose(forest.value, counts / counts.sum(axis=1, keepdims=True))


def test_post_pruning_against_test_costs(pima):
    d, Xtr, _, ytr, _ = pima
    n = Xtr.shape[1]
    # tests dearer than any error: nothing pays, the tree is a single leaf
    stump = ACTClassifier(r=1, costs=np.full(n, 1e6), misclassification_cost=1.0,
                          max_depth=4).fit(Xtr, ytr)
    assert stump.to_forest().n_nodes == 1
    # free tests and costly errors: the tree grows
    big = ACTClassifier(r=1, costs=np.zeros(n), misclassification_cost=1.0,
                        max_depth=4).fit(Xtr, ytr)
    assert big.to_forest().n_nodes > 5
    # one free feature and all others prohibitive: only the free one is tested
    costs = np.full(n, 1e6)
    costs[1] = 0.0
    one = ACTClassifier(r=1, costs=costs, misclassification_cost=1.0,
                        max_depth=4).fit(Xtr, ytr)
    used = one.to_forest().feature
    assert set(used[used >= 0].tolist()) == {1}


def test_cost_matrix_shifts_predictions(pima):
    d, Xtr, Xte, ytr, _ = pima
    cheap_fp = ACTClassifier(r=0, costs=d.costs, max_depth=4,
                             misclassification_cost=[[0, 1], [20, 0]]).fit(Xtr, ytr)
    plain = ACTClassifier(r=0, costs=d.costs, max_depth=4,
                          misclassification_cost=[[0, 1], [1, 0]]).fit(Xtr, ytr)
    # missing a positive costs 20x: positives are predicted far more often
    assert (cheap_fp.predict(Xte) == 1).mean() > (plain.predict(Xte) == 1).mean()


def test_validation_messages():
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20) % 2
    with pytest.raises(ValueError, match="'r' parameter of ACTClassifier must be an int"):
        ACTClassifier(r=-1).fit(X, y)
    with pytest.raises(ValueError, match="'cf' parameter of ACTClassifier must be"):
        ACTClassifier(cf=0.0).fit(X, y)
    with pytest.raises(ValueError, match=r"misclassification_cost must be a scalar or a \(2, 2\)"):
        ACTClassifier(misclassification_cost=np.ones((3, 3))).fit(X, y)
    with pytest.raises(ValueError, match="costs"):
        ACTClassifier(costs=[1.0, 2.0]).fit(X, y)
    with pytest.raises(ValueError, match="max_features"):
        ACTForestClassifier(max_features="all").fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ACTClassifier().fit(Xn, y)


def test_forest_bags_and_prunes_exactly(pima):
    d, Xtr, Xte, ytr, yte = pima
    f = ACTForestClassifier(n_estimators=4, r=0, costs=d.costs, max_depth=4,
                            random_state=1).fit(Xtr, ytr)
    forest = f.to_forest()
    assert forest.n_trees == 4 and len(f.in_bag_) == 4
    assert all(b.sum() == Xtr.shape[0] for b in f.in_bag_)
    assert forest.in_bag is f.in_bag_
    # same seed, same forest
    g = ACTForestClassifier(n_estimators=4, r=0, costs=d.costs, max_depth=4,
                            random_state=1).fit(Xtr, ytr)
    np.testing.assert_array_equal(g.to_forest().threshold, forest.threshold)
    problem = po.compile_problem(f, Xte, yte, costs=d.costs, lam=0.002)
    a = po.solve(problem, solver="highs")
    b = po.solve(problem, solver="cbc-ip")
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-12)
    assert a.average_cost(Xte) <= po.acquisition_cost(forest, Xte, d.costs).mean() + 1e-9


# ------------------------------------------------------------------ anytime evidence
def _total_costs(name, rs, seeds, max_depth, mc=None):
    """Held-out average total cost (tests + errors) of ACT per r, and of a CART tree."""
    d = load_dataset(name)
    out = {r: [] for r in rs}
    out["cart"] = []
    for seed in seeds:
        Xtr, Xte, ytr, yte = train_test_split(d.X, d.y, test_size=0.3, random_state=seed,
                                              stratify=d.y)
        for r in rs:
            m = ACTClassifier(r=r, costs=d.costs, max_depth=max_depth, misclassification_cost=mc,
                              random_state=seed).fit(Xtr, ytr)
            out[r].append(m.total_cost(Xte, yte))
        M = m.misclassification_cost_
        cart = DecisionTreeClassifier(max_depth=max_depth, random_state=seed).fit(Xtr, ytr)
        tc = po.acquisition_cost(cart, Xte, d.costs).mean()
        truth = np.searchsorted(m.classes_, yte)
        guess = np.searchsorted(m.classes_, cart.predict(Xte))
        out["cart"].append(tc + M[truth, guess].mean())
    return {k: float(np.mean(v)) for k, v in out.items()}


@pytest.mark.slow
def test_anytime_lookahead_lowers_total_cost_on_thyroid():
    # EG2 (r=0) buys cheap weak tests first; lookahead sees that one expensive
    # informative test (TT4/FTI) is cheaper in total once errors cost 1000
    res = _total_costs("thyroid", [0, 1], seeds=range(2), max_depth=5, mc=1000.0)
    assert res[1] < 0.8 * res[0]


def test_act_beats_cost_blind_cart_when_tests_are_expensive():
    # pima's real costs (glucose 17.61, insulin 22.78 + blood draw) with the default
    # error cost (the price of measuring everything): CART pays for tests that do not pay
    res = _total_costs("pima", [0, 1], seeds=range(3), max_depth=4)
    assert res[0] < 0.7 * res["cart"] and res[1] < 0.7 * res["cart"]
