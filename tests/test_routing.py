"""Streaming routing (blocks of rows, hashed row merging, per-tree first-use tables)
against a straightforward per-example reference written independently here."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.routing._records import merge_identical_rows
from tests.forest_cases import forest_cases


def reference_routing(forest, X, costs, w):
    """Records, pairs and merged rows by walking every example's path in Python."""
    units_of = [set(costs.feature_units[k].indices.tolist()) for k in range(costs.n_features)]
    paid = {u for u in range(costs.n_units) if costs.unit_costs[u] > 0}
    leaves = forest.apply(X)
    sig, first, row_of = {}, [], []
    for i, key in enumerate(map(tuple, leaves)):
        if key not in sig:
            sig[key] = len(first)
            first.append(i)
        row_of.append(sig[key])
    weight = np.bincount(row_of, weights=w, minlength=len(first))
    records = []
    for r, i in enumerate(first):
        for t in range(forest.n_trees):
            ind = forest.decision_paths(X[i:i + 1], t)
            seen = set()
            for h in ind.indices + forest.node_offset[t]:
                if forest.feature[h] < 0:
                    continue
                for u in sorted(units_of[forest.feature[h]] & paid):
                    if u not in seen:
                        seen.add(u)
                        records.append((r, u, int(h)))
    records.sort()
    return np.array(row_of), weight, np.array(records, dtype=np.int64).reshape(-1, 3)


@given(case=forest_cases(max_examples=40))
@settings(max_examples=30, deadline=None)
def test_streaming_routing_equals_reference(case):
    w = np.random.default_rng(case["seed"]).integers(1, 4, size=len(case["y_val"]))
    p = po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                           lam=0.1, sample_weight=w, chunk_size=7)
    row_of, weight, rec = reference_routing(p.forest, case["X_val"], p.costs, w)
    assert np.array_equal(p.row_of_example, row_of)
    assert np.array_equal(p.row_weight, weight)
    got = np.column_stack([p.use_row, p.use_unit, p.use_node]).astype(np.int64)
    assert np.array_equal(got, rec)
    pairs = np.unique(rec[:, :2], axis=0)
    assert np.array_equal(np.column_stack([p.pair_row, p.pair_unit]), pairs)
    assert np.array_equal(np.column_stack([p.pair_row, p.pair_unit])[p.use_pair], rec[:, :2])


@given(st.integers(1, 200), st.integers(1, 6), st.integers(1, 4), st.integers(0, 5))
@settings(max_examples=40, deadline=None)
def test_merge_identical_rows_groups_exactly(n, T, n_leaf, seed):
    leaves = np.random.default_rng(seed).integers(0, n_leaf, size=(n, T)).astype(np.uint16)
    group, first = merge_identical_rows(leaves, chunk_size=17, seed=seed)
    _, ref_first, ref_inv = np.unique(leaves, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(ref_first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    assert np.array_equal(group, rank[ref_inv.ravel()])
    assert np.array_equal(first, np.sort(ref_first))


def test_hash_collisions_are_regrouped_exactly(monkeypatch):
    """With every hash key forced to zero all rows collide; grouping must stay exact."""
    leaves = np.array([[0, 1], [1, 0], [0, 1], [2, 2], [1, 0]], dtype=np.uint16)

    class ZeroRng:
        def integers(self, *a, size, dtype, **k):
            return np.zeros(size, dtype=dtype)

    monkeypatch.setattr(np.random, "default_rng", lambda seed=None: ZeroRng())
    group, first = merge_identical_rows(leaves)
    assert group.tolist() == [0, 1, 0, 2, 1]
    assert first.tolist() == [0, 1, 3]


@pytest.mark.parametrize("chunk", [1, 5, 64, 10_000])
def test_block_size_changes_nothing(chunk):
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=4, max_depth=6, random_state=1).fit(X[:700], y[:700])
    a = po.compile_problem(rf, X[700:1000], y[700:1000], lam=0.01, chunk_size=chunk)
    b = po.compile_problem(rf, X[700:1000], y[700:1000], lam=0.01, merge=False)
    assert a.use_node.dtype == np.int32 and a.use_pair.dtype == np.int32
    assert a.n_rows < b.n_rows
    ra, rb = po.solve(a, solver="mincut"), po.solve(b, solver="mincut")
    assert abs(ra.objective - rb.objective) <= 1e-12 * abs(rb.objective)
    assert b.evaluate(ra.split_mask).objective == pytest.approx(ra.objective, rel=1e-12)


@given(case=forest_cases(max_examples=40))
@settings(max_examples=20, deadline=None)
def test_dense_first_use_table_equals_path_matrices(case):
    """The leaf-gather routing (dense first-use table) and the path-matrix routing
    (per-tree CSR tables, used when the table would be too large) give the same
    records, pairs and node weights."""
    import prune_opt.routing._records as routing
    from prune_opt.forest._costs import as_feature_costs
    from prune_opt.forest._forest import as_forest

    forest = as_forest(case["est"])
    fc = as_feature_costs(case["costs"], forest.n_features, forest.feature_names)
    X = np.asarray(case["X_val"], dtype=float)
    w = np.random.default_rng(case["seed"]).integers(1, 4, size=X.shape[0]).astype(float)
    fu = routing.paid_feature_units(fc)
    dense = routing.record_tables(forest, fu)
    assert isinstance(dense, routing.FirstUseTable)
    a = routing.chunk_records(forest, X, w, fu, dense)
    b = routing.chunk_records(forest, X, w, fu, routing.new_units_table(forest, fu))
    for x, y in zip(a[:4], b[:4]):
        assert np.array_equal(x, y)
    assert np.allclose(a[4], b[4], rtol=1e-12, atol=0)


def test_compile_without_dense_table_is_identical(monkeypatch):
    """Forcing the path-matrix routing (as for many-unit forests) compiles the same problem."""
    import prune_opt.routing._records as routing

    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=4, max_depth=6, random_state=0).fit(X, y)
    a = po.compile_problem(rf, X, y, lam=0.01, chunk_size=300)
    monkeypatch.setattr(routing, "DENSE_TABLE_ENTRIES", 0)
    b = po.compile_problem(rf, X, y, lam=0.01, chunk_size=300)
    for name in ("use_node", "use_pair", "pair_row", "pair_unit", "row_of_example"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.allclose(a.closure_data()["split_weight"], b.closure_data()["split_weight"],
                       rtol=1e-12, atol=1e-15)
