"""The baselines as nested families of split masks: the one baseline registry.

:data:`MASK_FAMILIES` maps a name to a function of a compiled problem
returning a nested family of split masks of its forest, costliest first
(cost-complexity pruning, GreedyPrune, impurity thresholds, the first m
trees).  The budget search seeds from every entry, ``fit_budget``'s ensemble
objectives take the best fitting member of every entry as a candidate
(:func:`best_in_nested`), and :mod:`prune_opt.budget` wraps the same families
as ``PrunedForest`` sequences (:func:`ccp_path` and :func:`impurity_path`
give their members with their parameters); registering a family
(:func:`register_baseline`) makes it a candidate everywhere.

GreedyPrune (:func:`greedy_path`) scores every feature's removal at once from
bitsets of the features on each node's root path.
"""

from __future__ import annotations

import time
import weakref

import numpy as np

from .._validation import check_labels, fits_budget
from ..program._compile_steps import node_statistics
from ..program._problem import close_under_parents
from ..routing._records import node_levels, sum_up

__all__ = ["MASK_FAMILIES", "register_baseline", "mask_families", "best_in_nested",
           "cached_per_problem", "greedy_path", "ccp_path", "ccp_masks", "ccp_alphas",
           "node_risk", "impurity_path", "node_impurity"]

# GreedyPrune works on the records' feature bitsets in blocks of about this many
# (record, 64-feature word) cells, and unpacks them in blocks of this many bits
GREEDY_CHUNK_CELLS = 1 << 20
# the cost-complexity path: at most this many alphas, and at most this many
# (alpha, node) cells per vectorised block
CCP_ALPHAS = 200
CCP_BLOCK_CELLS = 4_000_000
# the impurity path: at most this many thresholds
IMPURITY_THRESHOLDS = 100
# mask sequences (GreedyPrune, ...) of the last few problems, keyed by their routed data
_CACHE = {}
_CACHE_SIZE = 16

#: The baseline registry: name -> ``family(problem)`` returning a
#: nested list of split masks of ``problem.forest``, costliest first, or None
#: when the baseline does not apply to this forest.
MASK_FAMILIES = {}


#: families whose masks take long to build (GreedyPrune: one pass over every first-use
#: record per feature removed), with the seconds they are expected to take; a
#: time-limited search builds them after its own moves, and only when they fit the time
#: left
LATE_FAMILIES = {}
#: GreedyPrune's seconds per feature removed, in units of the time that materialising the
#: problem's first-use records took (one pass over them; measured 0.22-0.25 on boosted
#: models of 200 trees)
GREEDY_PASS_RATIO = 0.3


def register_baseline(name, late=None):
    """Decorator: register ``family(problem)`` under ``name`` in
    :data:`MASK_FAMILIES` (a candidate of the budget search and of every
    ``fit_budget`` objective from then on); ``late(problem)``: the seconds building it
    is expected to take, for a family that takes long (see :data:`LATE_FAMILIES`)."""
    def deco(fn):
        MASK_FAMILIES[name] = fn
        LATE_FAMILIES.pop(name, None)
        if late is not None:
            LATE_FAMILIES[name] = late
        return fn
    return deco


def _greedy_seconds(problem):
    """Expected seconds of :func:`greedy_path`: one pass over the first-use records per
    feature the forest tests, timed against the pass that materialised them."""
    if cached_per_problem(problem, "greedy", None, peek=True) is not None:
        return 0.0
    records = problem.use_node  # materialised (and timed) once; the path needs them
    seconds = problem._records.get("use_node_seconds")
    if seconds is None:  # held since the compile: about 45 ns a record
        seconds = 4.5e-8 * records.size
    n_tested = np.unique(problem.forest.feature[~problem.forest.is_leaf]).size
    return GREEDY_PASS_RATIO * seconds * n_tested


def cached_per_problem(problem, name, compute, forest_only=False, peek=False):
    """``compute(problem)``, computed once per compiled data and ``name``.

    ``with_lam`` / ``with_budget`` copies share the routed arrays, so the budget
    search at several budgets and objectives reuses one result.  The entry is
    dropped when the problem's arrays are freed (weak references).  With
    ``forest_only`` the result depends on the forest alone and is shared by
    every problem compiled from the same forest (its split and value arrays).
    ``peek``: return the cached result or None, computing nothing.
    """
    a, b = ((problem.forest.feature, problem.forest.value) if forest_only
            else (problem.node_error, problem.pair_start))
    key = (name, id(a), id(b))
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is a and hit[1]() is b:
        return hit[2]
    if peek:  # only asked whether it is there
        return None
    value = compute(problem)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (weakref.ref(a), weakref.ref(b), value)
    return value


def _forest_only(name, forest):
    """Whether a built-in family depends on the forest alone (not on the problem's
    error or cost data): the first m trees, impurity thresholds, and cost-complexity
    pruning of a forest that carries sklearn's node impurities."""
    return name in ("fewer-trees", "impurity") or (name == "ccp" and sklearn_risk(forest))


def sklearn_risk(forest):
    """Whether cost-complexity pruning reads scikit-learn's node impurities (an averaged
    forest of sklearn trees); otherwise the compiled problem's node errors."""
    return forest.sklearn_trees is not None and forest.ensemble.has_impurity


def mask_families(problem, deadline=None, names=None, skip_late=False):
    """``{name: [mask, ...]}`` of the registered baselines (costliest first), each
    computed once per compiled problem; families that do not apply are left out.
    GreedyPrune is skipped once ``deadline`` has passed (every family with
    ``skip_late``)."""
    out = {}
    for name in MASK_FAMILIES if names is None else names:
        late = deadline is not None and time.perf_counter() > deadline
        if late and (skip_late or name == "greedy"):
            continue
        masks = cached_per_problem(problem, f"family:{name}", MASK_FAMILIES[name],
                                   forest_only=_forest_only(name, problem.forest))
        if masks:
            out[name] = masks
    return out


def best_in_nested(masks, budget, score, deadline=None):
    """``(value, cost, mask)`` of the lowest-value member of a nested family that fits.

    ``masks`` is nested, costliest first, so the fitting members are a suffix,
    found by bisection on cost; each of them is scored (``score(mask)`` returns
    ``(value, cost)``), costliest first, until ``deadline`` (the first fitting member
    always); ties go to the cheaper, then the first.
    """
    lo, hi, seen = 0, len(masks), {}
    while lo < hi:
        mid = (lo + hi) // 2
        seen[mid] = score(masks[mid])
        if fits_budget(seen[mid][1], budget):
            hi = mid
        else:
            lo = mid + 1
    best = None
    for i in range(lo, len(masks)):
        if i not in seen and best is not None and deadline is not None \
                and time.perf_counter() > deadline:
            break
        value, cost = seen[i] if i in seen else score(masks[i])
        if fits_budget(cost, budget) and (best is None or (value, cost) < best[:2]):
            best = (value, cost, masks[i])
    return best


def _distinct(params, masks):
    """``(params, masks)`` of the masks not seen before (in order), params as floats."""
    kept_params, kept, seen = [], [], set()
    for param, mask in zip(params, masks):
        key = mask.tobytes()
        if key not in seen:
            seen.add(key)
            kept_params.append(float(param))
            kept.append(mask)
    return kept_params, kept


# ---------------------------------------------------------------- GreedyPrune
def greedy_path(problem):
    """GreedyPrune's masks of ``problem``, costliest first, and the feature each step
    removed: ``(masks, removed)``, computed once per compiled data (see
    :func:`cached_per_problem`).

    A node is cut by removing feature ``k`` exactly when ``k`` is tested on
    its root path (itself included), a set fixed by the forest: it is kept
    as a bitset per node (one bit per feature the forest tests).  Every step
    then scores the removal of each feature still tested at once: the error
    change is the share of the topmost ``k`` nodes as leaves minus the error
    of their current subtrees (one bottom-up pass by level), and a cost pair
    stops being paid when ``k`` is in the AND of the bitsets of its kept
    records (one reduction over the records).  The chosen mask's error term
    is then recomputed exactly as :meth:`PruningProblem.evaluate` does.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> masks, removed = greedy_path(po.compile_problem(rf, X, y, costs=[1, 1, 5, 5]))
    >>> len(masks) == len(removed) + 1, bool(masks[-1].any())
    (True, False)
    """
    return cached_per_problem(problem, "greedy", _greedy_path)


def _greedy_path(problem):
    """:func:`greedy_path`, computed."""
    p = problem
    f = p.forest
    parent, has = f.parent, f.parent >= 0
    levels = node_levels(f)  # every non-root node with its parent, by depth
    pair_cost = p.pair_cost()
    share = p.node_error / p.tree_error_weight[f.tree_of_node] / p.n_trees
    tested, col, ids, path, top, top_col = _feature_paths(f, levels, has)
    n_words = path.shape[1]
    rec_node, rec_pair = p.use_node, p.use_pair  # records grouped by pair
    chunk = max(1, GREEDY_CHUNK_CELLS // n_words)
    mask = f.full_split_mask()
    err = p.error_term(mask)
    out, removed = [mask], []
    while mask.any():  # one step per feature
        parent_split = np.ones(p.n_nodes, dtype=bool)
        parent_split[has] = mask[parent[has]]
        # the error under each node
        sub = sum_up(levels, np.where(parent_split & ~mask, share, 0.0))
        live_top = top & mask
        d_err = np.bincount(top_col[live_top], weights=share[live_top] - sub[live_top],
                            minlength=tested.size)
        alive = mask[rec_node]  # a removed node's records never come back
        rec_node, rec_pair = rec_node[alive], rec_pair[alive]
        starts = np.flatnonzero(np.r_[rec_pair.size > 0, rec_pair[1:] != rec_pair[:-1]])
        saved = np.zeros(tested.size)
        g = 0
        while g < starts.size:  # blocks of whole pairs, about `chunk` records each
            lo = starts[g]
            g2 = max(g + 1, int(np.searchsorted(starts, lo + chunk)))
            hi = starts[g2] if g2 < starts.size else rec_node.size
            anded = np.bitwise_and.reduceat(path[rec_node[lo:hi]], starts[g:g2] - lo,
                                            axis=0)  # features freeing each pair
            saved += _freed_cost(anded, pair_cost[rec_pair[starts[g:g2]]], tested.size)
            g = g2
        best = None
        for c in np.unique(col[mask[ids]]):
            d = d_err[c]
            if abs(d) <= 1e-12 * max(abs(err), 1e-300):
                d = 0.0  # round-off: the error does not change
            # least error per cost saved; ties: the larger saving
            score = (0, d / saved[c], -saved[c]) if saved[c] > 1e-15 else (1, d, 0.0)
            if best is None or score < best[0]:
                best = (score, c)
        c = best[1]
        w, b = divmod(int(c), 64)
        mask = mask & ((path[:, w] >> np.uint64(b)) & np.uint64(1) == 0)
        err = p.error_term(mask)
        out.append(mask)
        removed.append(int(tested[c]))
    return out, removed


def _feature_paths(forest, level_nodes, has_parent):
    """Per node, the bitset of features tested on its root path (itself included).

    Returns ``(tested, col, ids, path, top, top_col)``: the features the forest
    tests, each internal node's column in ``tested``, the internal node ids, the
    (n_nodes, words) bitsets, whether no ancestor tests the node's own feature,
    and that node's column (-1 for a leaf).
    """
    f, has = forest, has_parent
    internal = ~f.is_leaf
    tested, col = np.unique(f.feature[internal], return_inverse=True)
    n_words = max(1, -(-tested.size // 64))
    bit = np.zeros((f.n_nodes, n_words), dtype=np.uint64)  # own feature's bit
    ids = np.flatnonzero(internal)
    bit[ids, col // 64] = np.left_shift(np.uint64(1), (col % 64).astype(np.uint64))
    path = bit.copy()
    for at, par in level_nodes:  # shallowest first
        path[at] |= path[par]
    top = internal.copy()
    top[has] &= ~(path[f.parent[has]] & bit[has]).any(axis=1)
    top_col = np.full(f.n_nodes, -1)
    top_col[ids] = col
    return tested, col, ids, path, top, top_col


def _freed_cost(anded, cost, n_tested):
    """Per feature bit: total ``cost`` of the pairs whose bitset in ``anded`` has it
    (pairs with the same bitset are summed first)."""
    if anded.shape[1] == 1:
        sets, which = np.unique(anded[:, 0], return_inverse=True)
        sets = sets[:, None]
    else:
        sets, which = np.unique(anded, axis=0, return_inverse=True)
    cost = np.bincount(which.ravel(), weights=cost, minlength=sets.shape[0])
    out = np.zeros(n_tested)
    step = max(1, GREEDY_CHUNK_CELLS // (64 * sets.shape[1]))
    for lo in range(0, sets.shape[0], step):
        bits = np.unpackbits(sets[lo:lo + step].astype("<u8").view(np.uint8), axis=1,
                             bitorder="little")
        out += cost[lo:lo + step] @ bits[:, :n_tested].astype(float)
    return out


# ---------------------------------------------------------------- cost-complexity pruning
def _levels(forest, nodes):
    """``nodes`` (ascending ids) grouped by depth, the roots' level first."""
    depth = forest.depth[nodes]
    return [nodes[depth == k] for k in range(forest.max_depth + 1)]

def node_risk(forest, problem=None):
    """R(h): the resubstitution risk of node h as a leaf, per tree normalised.

    sklearn forests: impurity times weighted sample share (sklearn's own
    cost-complexity measure).  Other forests (boosted ones included): the node
    errors of the compiled problem (misclassification rate, squared error, or a
    boosted model's expanded loss).
    """
    if sklearn_risk(forest):
        risk = []
        for tr in forest.sklearn_trees:
            t = tr.tree_
            w = t.weighted_n_node_samples
            risk.append(t.impurity * w / w[0])
        return np.concatenate(risk)
    if problem is None:
        raise ValueError("ccp: this forest has no sklearn estimator (no node impurities); "
                         "pass problem= (a compiled PruningProblem) to prune on its error data")
    return problem.node_error / problem.tree_error_weight[forest.tree_of_node]


def _subtree_stats(forest, risk):
    """Risk and leaf count of the full subtree under every node: sums over its leaves."""
    leaf = forest.is_leaf
    both = sum_up(node_levels(forest), np.column_stack([np.where(leaf, risk, 0.0),
                                                        leaf.astype(float)]))
    return both[:, 0], both[:, 1]


def ccp_alphas(forest, risk, n_alphas=None):
    """A grid of ``alpha`` values spanning the pruning paths.

    The effective alpha ``(R(h) - R(subtree h)) / (#leaves - 1)`` of every
    internal node of the unpruned trees (the first weakest link of each tree is
    the smallest of them; later links fall between them), plus 0 and a value
    that prunes every tree to its root; subsampled by quantile to
    ``n_alphas``.  Every alpha gives a true CCP pruning; the grid only sets how
    densely the path is sampled.
    """
    r_sub, n_leaves = _subtree_stats(forest, risk)
    internal = ~forest.is_leaf
    g = (risk[internal] - r_sub[internal]) / np.maximum(n_leaves[internal] - 1, 1)
    vals = np.unique(np.concatenate([[0.0], np.maximum(g, 0.0), [risk.max() + 1.0]]))
    if n_alphas is not None and vals.size > n_alphas:
        vals = np.unique(np.quantile(vals, np.linspace(0, 1, n_alphas)))
    return vals


def ccp_masks(forest, risk, alphas):
    """Split mask of the smallest minimiser of ``R + alpha * #leaves`` in every tree,
    at every alpha (in the given order).

    Bottom-up dynamic programme over levels: node h keeps its split iff its
    best subtree's value is strictly below ``R(h) + alpha``; the result is the
    subtree sklearn's weakest-link pruning returns for ``ccp_alpha=alpha``.
    Vectorised over blocks of alphas: one bottom-up pass over the levels per
    block instead of one per alpha, so a deep tree costs its depth once, not
    once per alpha.
    """
    alphas = np.asarray(alphas, dtype=float)
    levels = _levels(forest, np.flatnonzero(~forest.is_leaf))[::-1]  # deepest first
    step = max(1, CCP_BLOCK_CELLS // max(forest.n_nodes, 1))
    out = []
    for lo in range(0, alphas.size, step):
        a = alphas[lo:lo + step]
        best = risk[None, :] + a[:, None]
        keep = np.zeros(best.shape, dtype=bool)
        for ids in levels:
            below = best[:, forest.left[ids]] + best[:, forest.right[ids]]
            # the same round-off guard sklearn uses in its pruning loop
            keep[:, ids] = below < best[:, ids] - np.finfo(float).eps * 10
            best[:, ids] = np.minimum(best[:, ids], below)
        out.extend(close_under_parents(forest, keep))
    return out


def ccp_path(forest, risk, alphas=None, n_alphas=CCP_ALPHAS):
    """``(alphas, masks)``: the distinct cost-complexity prunings at ``alphas``
    (ascending, so costliest first; default :func:`ccp_alphas` of at most
    ``n_alphas``)."""
    if alphas is None:
        alphas = ccp_alphas(forest, risk, n_alphas)
    alphas = np.sort(np.asarray(alphas, dtype=float))
    return _distinct(alphas, ccp_masks(forest, risk, alphas))


# ---------------------------------------------------------------- impurity thresholds
def node_impurity(forest, X=None, y=None):
    """Impurity of every node: Gini impurity of its class distribution, or, for a
    regression forest, its target variance.

    A regression forest built from scikit-learn trees uses the training
    impurity its trees carry (the variance for the squared-error criteria, else
    the criterion's own impurity: absolute error, Poisson deviance); other
    regression forests need the data ``(X, y)`` to measure the variance on.
    A boosted model (additive raw scores) has no node impurity: refused.
    """
    if not forest.ensemble.has_impurity:
        raise ValueError("impurity: a boosted model's nodes hold raw scores, not class "
                         "distributions or node means, so they have no impurity; use the "
                         "other baselines (ccp, greedy, fewer-trees)")
    if forest.task == "regression":
        return _node_variance(forest, X, y)
    v = np.asarray(forest.value, dtype=float)
    s = v.sum(axis=1, keepdims=True)
    p = v / np.where(s > 0, s, 1.0)
    return 1.0 - (p ** 2).sum(axis=1)


def _node_variance(forest, X, y):
    if forest.sklearn_trees is not None:
        return np.concatenate([tr.tree_.impurity for tr in forest.sklearn_trees]).astype(float)
    if X is None or y is None:
        raise ValueError("impurity: this regression forest carries no node variances (it "
                         "was not built from scikit-learn trees); pass X and y to measure "
                         "them on data")
    Xc = forest.check_X(X)
    m = node_statistics(forest, Xc, check_labels(forest, y, Xc.shape[0]))
    n = np.where(m[:, 0] > 0, m[:, 0], 1.0)
    return np.maximum(m[:, 2] / n - (m[:, 1] / n) ** 2, 0.0)


def impurity_path(forest, imp, thresholds=None, n_thresholds=IMPURITY_THRESHOLDS):
    """``(thresholds, masks)``: the distinct prunings keeping a split only while its
    impurity ``imp`` exceeds the threshold (and its parent is a split), at
    ``thresholds`` (ascending, so costliest first; default: the internal nodes'
    impurities and -1, at most ``n_thresholds`` of them by quantile)."""
    internal = ~forest.is_leaf
    if thresholds is None:
        thresholds = np.unique(np.concatenate([[-1.0], imp[internal]]))
        if thresholds.size > n_thresholds:
            thresholds = np.unique(np.quantile(thresholds, np.linspace(0, 1, n_thresholds)))
    thresholds = np.sort(np.asarray(thresholds, dtype=float))
    return _distinct(thresholds, [close_under_parents(forest, internal & (imp > t))
                                  for t in thresholds])


# ---------------------------------------------------------------- the built-in families
@register_baseline("ccp")
def _ccp_family(problem):
    """Cost-complexity pruning of every tree at a common alpha."""
    risk = node_risk(problem.forest, problem)
    return ccp_path(problem.forest, risk)[1]


@register_baseline("greedy", late=_greedy_seconds)
def _greedy_family(problem):
    """GreedyPrune: drop the feature with the least error per cost saved."""
    return greedy_path(problem)[0]


@register_baseline("fewer-trees")
def _fewer_trees_family(problem):
    """The first m trees (the others cut to their root); for a booster, the first r
    rounds (every tree of a round together)."""
    f = problem.forest
    full, out = f.full_split_mask(), []
    for m in range(f.n_trees, 0, -f.round_size):
        mk = full.copy()
        mk[f.node_offset[m]:] = False
        out.append(mk)
    return out


@register_baseline("impurity")
def _impurity_family(problem):
    """Impurity-threshold early stopping (BudgetRF style); a boosted model's raw
    scores have no impurity, so it does not apply there."""
    try:
        imp = node_impurity(problem.forest)
    except ValueError:  # a regression forest without node impurities, or a booster
        return None
    return impurity_path(problem.forest, imp)[1]


@register_baseline("feature-prefix")
def _feature_prefix_family(problem):
    """Every split on a feature outside a prefix of the features ranked by the error
    their removal adds per unit of their cost (GreedyPrune's first step, once):
    one pass for the ranking, one closure per prefix; strong at budgets that leave
    room for a few features only."""
    return feature_prefix_path(problem)[0]


def feature_prefix_path(problem):
    """``(masks, kept, order)``: the distinct masks keeping the splits whose root path
    tests only the first j features of ``order`` (j = all .. 0, costliest first), the j
    of each, and ``order``: the tested features by the error term their removal adds
    per unit of cost, the most first (kept longest).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> masks, kept, order = feature_prefix_path(po.compile_problem(rf, X, y, costs=[1, 1, 5, 5]))
    >>> kept[0] == len(order), kept[-1], bool(masks[-1].any())
    (True, 0, False)
    """
    return cached_per_problem(problem, "feature-prefix", _feature_prefix_path)


def _feature_prefix_path(problem):
    p = problem
    f = p.forest
    has = f.parent >= 0
    levels = node_levels(f)
    share = p.node_error / p.tree_error_weight[f.tree_of_node] / p.n_trees
    tested, col, ids, path, top, top_col = _feature_paths(f, levels, has)
    mask = f.full_split_mask()
    parent_split = np.ones(p.n_nodes, dtype=bool)
    parent_split[has] = mask[f.parent[has]]
    sub = sum_up(levels, np.where(parent_split & ~mask, share, 0.0))  # error under each node
    d_err = np.bincount(top_col[top], weights=share[top] - sub[top], minlength=tested.size)
    cost = np.array([p.costs.cost_of([k]) for k in tested])
    # the most error per unit of cost first: kept longest (free features: always kept)
    worth = np.where(cost > 0, d_err / np.where(cost > 0, cost, 1.0), np.inf)
    order = np.argsort(-worth, kind="stable")
    masks, counts = [], []
    for j in range(tested.size, -1, -1):
        allowed = np.zeros(path.shape[1] * 64, dtype=bool)
        allowed[order[:j]] = True
        words = np.zeros(path.shape[1], dtype=np.uint64)
        for c in np.flatnonzero(~allowed[:tested.size]):
            words[c // 64] |= np.uint64(1) << np.uint64(c % 64)
        keep = ~((path & words[None, :]) != 0).any(axis=1)  # no banned feature on the path
        masks.append(mask & keep)
        counts.append(j)
    seen, out, kept = set(), [], []
    for m, j in zip(masks, counts):
        key = m.tobytes()
        if key not in seen:
            seen.add(key)
            out.append(m)
            kept.append(j)
    return out, kept, [int(tested[c]) for c in order]
