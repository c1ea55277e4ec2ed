"""Compact first-use records: pair offsets instead of a pair id per record, the
records' leaf source read by the exact solver, compiling from an existing routing
(``routed=``) and one evaluation of the min-cut solution."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.program._problem import PruningProblem, close_under_parents
from prune_opt.routing._routed import RoutedData
from prune_opt.solvers import mincut
from prune_opt.solvers.mincut import build_closure_graph

FIELDS = ("use_node", "pair_start", "pair_row", "pair_unit", "row_weight", "row_of_example",
          "node_error", "node_cost_weight", "tree_error_weight")


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=8, random_state=0).fit(X[:900], y[:900])
    costs = np.random.default_rng(0).uniform(0.5, 3.0, X.shape[1])
    return rf, X, y, costs


def _same_problem(a, b):
    for name in FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.total_weight == b.total_weight


@pytest.mark.parametrize("kwargs", [{}, {"cost_sample": 300},
                                    {"train": "fit"}, {"merge": False}])
def test_routed_gives_the_same_problem(digits, kwargs):
    rf, X, y, costs = digits
    if kwargs.get("train") == "fit":
        kwargs = {"train": (X[:900], y[:900])}
    Xv, yv = X[900:], y[900:]
    f = po.Forest.from_sklearn(rf)
    routed = RoutedData(f, f.check_X(Xv))
    a = po.compile_problem(rf, Xv, yv, costs=costs, lam=0.01, **kwargs)
    b = po.compile_problem(rf, Xv, yv, costs=costs, lam=0.01, routed=routed, **kwargs)
    _same_problem(a, b)
    assert po.solve(a, solver="mincut").objective == po.solve(b, solver="mincut").objective


def test_routed_of_other_rows_or_forest_is_refused(digits):
    rf, X, y, costs = digits
    f = po.Forest.from_sklearn(rf)
    with pytest.raises(ValueError, match="rows"):
        po.compile_problem(rf, X[900:], y[900:], routed=RoutedData(f, f.check_X(X[:50])))
    other = RandomForestClassifier(n_estimators=8, random_state=1).fit(X[:900], y[:900])
    g = po.Forest.from_sklearn(other)
    with pytest.raises(ValueError, match="another forest"):
        po.compile_problem(rf, X[900:], y[900:], routed=RoutedData(g, g.check_X(X[900:])))
    with pytest.raises(TypeError, match="RoutedData"):
        po.compile_problem(rf, X[900:], y[900:], routed=np.zeros((3, 3)))


def test_pair_offsets_hold_the_records(digits):
    rf, X, y, costs = digits
    p = po.compile_problem(rf, X[900:], y[900:], costs=costs, lam=0.01)
    starts = p.pair_start
    assert starts[0] == 0 and starts[-1] == p.n_uses and (np.diff(starts) >= 1).all()
    assert not p.records_held  # kept as leaves until the records are read
    assert p.use_node.dtype == np.int32 and "use_pair" not in vars(p) and p.records_held
    pair = p.use_pair
    assert np.array_equal(np.bincount(pair, minlength=p.n_pairs), np.diff(starts))
    # sorted by pair, then node, and one record per tree of each pair
    key = pair.astype(np.int64) * p.n_nodes + p.use_node
    assert (np.diff(key) > 0).all()


def test_pairs_used_matches_the_record_scan(digits):
    rf, X, y, costs = digits
    p = po.compile_problem(rf, X[900:], y[900:], costs=costs, lam=0.01)
    rng = np.random.default_rng(1)
    masks = [close_under_parents(p.forest, rng.random(p.n_nodes) < q) & ~p.forest.is_leaf
             for q in (0.0, 0.3, 0.7, 0.9, 1.0)]
    from_leaves = [p.pairs_used(m) for m in masks]  # read off the leaves
    per_node = p.uses_per_node().copy()
    assert not p.records_held
    assert np.array_equal(per_node, np.bincount(p.use_node, minlength=p.n_nodes))
    for mask, got in zip(masks, from_leaves):
        used = np.zeros(p.n_pairs, dtype=bool)
        used[p.use_pair[mask[p.use_node]]] = True
        assert np.array_equal(got, used)
        assert np.array_equal(p.pairs_used(mask), used)  # read off the records
    assert from_leaves[-1].all() and not from_leaves[0].any()


def test_pickled_problems_evaluate_the_same(digits):
    rf, X, y, costs = digits
    p = po.compile_problem(rf, X[900:], y[900:], costs=costs, lam=0.01)
    q = pickle.loads(pickle.dumps(p))
    _same_problem(q, p)
    assert q.evaluate(p.forest.full_split_mask()) == p.evaluate(p.forest.full_split_mask())


def test_leaf_source_builds_the_record_graph(digits, monkeypatch):
    """The per-unit matrices read off the leaves give the graph the records give."""
    monkeypatch.setattr(mincut, "HUB_MIN_RECORDS", 0)
    rf, X, y, costs = digits
    p = po.compile_problem(rf, X[900:], y[900:], costs=costs, lam=0.003)
    assert p.leaf_records is not None
    opts = {"prefix_hubs": True, "drop_unprofitable": True}
    a = build_closure_graph(p, **opts)
    assert not p.records_held  # built without materialising the records
    p.use_node  # noqa: B018 (materialise them, then build from the records alone)
    b = build_closure_graph(p._replace(leaf_records=None), **opts)
    assert a.stats == b.stats and a.stats["n_hubs"] > 0
    assert np.array_equal(a.weight, b.weight) and np.array_equal(a.inf_tail, b.inf_tail)
    assert np.array_equal(a.inf_head, b.inf_head)


def test_mincut_solution_is_evaluated_once(digits, monkeypatch):
    rf, X, y, costs = digits
    p = po.compile_problem(rf, X[900:], y[900:], costs=costs, lam=0.01)
    calls = []
    real = PruningProblem.evaluate

    def counting(self, mask):
        calls.append(1)
        return real(self, mask)

    monkeypatch.setattr(PruningProblem, "evaluate", counting)
    got = po.solve(p, solver="mincut")
    assert len(calls) == 1
    assert "_breakdown" not in got.solve_info
    assert got.objective == real(p, got.split_mask).objective


def test_fit_budget_reads_the_rows_a_problem_was_compiled_from(digits, monkeypatch):
    """A problem compiled with routed= lends those routed rows to fit_budget's ensemble
    objectives (X is not routed again) and the pruning is the one fit_budget finds from
    the problem alone; other rows of the same count are routed afresh."""
    import prune_opt.program._prepare as prep

    rf, X, y, costs = digits
    Xv, yv = X[900:], y[900:]
    f = po.Forest.from_sklearn(rf)
    routed = RoutedData(f, f.check_X(Xv))
    held = po.compile_problem(f, Xv, yv, costs=costs, routed=routed)
    plain = po.compile_problem(f, Xv, yv, costs=costs)
    given = []
    real = prep.prepare

    def spy(model, X, y=None, **kwargs):
        given.append(kwargs.get("routed"))
        return real(model, X, y, **kwargs)

    monkeypatch.setattr(prep, "prepare", spy)
    import prune_opt.budget._own_loss as eb

    monkeypatch.setattr(eb, "prepare", spy)
    kw = dict(budget=8.0, objective="brier", time_limit=None)
    a = po.fit_budget(held, Xv, yv, **kw)
    assert given[-1] is routed
    b = po.fit_budget(plain, Xv, yv, **kw)
    assert given[-1] is None
    assert np.array_equal(a.split_mask, b.split_mask)
    shuffled = Xv[::-1].copy()  # same count, other rows: not the routed ones
    po.fit_budget(held, shuffled, yv[::-1], **kw)
    assert given[-1] is None
