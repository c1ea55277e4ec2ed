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

Competitors of BudgetPrune (the paper's Figure 2), with the same cost accounting.

* :func:`ccp_prunings` -- minimal cost-complexity pruning of every tree at a
  common ``alpha`` (sklearn's ``ccp_alpha`` rule applied to the fitted trees);
* :func:`greedy_prunings` -- GreedyPrune: repeatedly drop every node of the
  one feature whose removal trades the least error per unit of cost saved;
* :func:`fewer_trees_prunings` -- the first ``m`` trees (a sub-forest);
* :func:`impurity_threshold_prunings` -- BudgetRF-style early stopping: a
  node stays a split only while its impurity exceeds a threshold (Gini
  impurity; for a regression forest the node's target variance).

Each returns a list of ``(parameter, PrunedForest)`` pairs; the pruned
forests of the mask-based baselines live on the original forest (so
``average_cost`` is computed exactly as for BudgetPrune), the fewer-trees
ones on sub-forests of the first ``m`` trees.  :func:`baseline_curve` turns
any of them into curve rows comparable with :func:`tradeoff_curve`.

:data:`BASELINES` is the one registry of them (name -> function with the
common signature ``(forest, X, y, *, costs=None, problem=None)``), a view of
the mask families the budget search and ``fit_budget`` seed from; the CLI
and the benchmarks dispatch through it, and :func:`register_baseline` adds
a family to all of them.  A grower-based competitor that is
not a pruning (LightGBM's CEGB) lives with its grower, in
``forest_builders.cegb.cegb_curve``.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

import numpy as np

from .._clock import UNLIMITED
from .._frames import records_frame
from .._validation import check_labels, fits_budget
from ..forest._forest import as_forest
from ..model._pruned import PrunedForest
from ..program._compile import compile_problem
from ..program._compile_steps import node_statistics
from ..program._problem import close_under_parents
from ..routing._records import node_levels, sum_up
from ..routing._routed import NestedScorer, RoutedData

__all__ = ["MASK_FAMILIES", "register_baseline", "mask_families", "best_in_nested", "cached_per_problem", "greedy_path", "ccp_path", "ccp_masks", "ccp_alphas", "node_risk", "impurity_path", "node_impurity", "ccp_prunings", "greedy_prunings", "fewer_trees_prunings", "feature_prefix_prunings", "impurity_threshold_prunings", "baseline_curve", "sub_forest", "BASELINES", "get_baseline", "register_baseline"]


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


def mask_families(problem, deadline=UNLIMITED, names=None, skip_late=False):
    """``{name: [mask, ...]}`` of the registered baselines (costliest first), each
    computed once per compiled problem; families that do not apply are left out.
    GreedyPrune is skipped once ``deadline`` has passed (every family with
    ``skip_late``)."""
    out = {}
    for name in MASK_FAMILIES if names is None else names:
        late = deadline.expired()
        if late and (skip_late or name == "greedy"):
            continue
        masks = cached_per_problem(problem, f"family:{name}", MASK_FAMILIES[name],
                                   forest_only=_forest_only(name, problem.forest))
        if masks:
            out[name] = masks
    return out


def best_in_nested(masks, budget, score, deadline=UNLIMITED):
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
        if i not in seen and best is not None and deadline.expired():
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


def _prunings(forest, path, costs, method, param):
    """``(param, PrunedForest)`` of each member of a baseline's ``(params, masks)``."""
    return [(v, PrunedForest(forest, mask, costs=costs, solve_info={"method": method, param: v}))
            for v, mask in zip(*path)]


def ccp_prunings(forest, *, alphas=None, n_alphas=CCP_ALPHAS, costs=None, problem=None):
    """Cost-complexity pruning of every tree at a common ``alpha``.

    Parameters
    ----------
    forest : fitted estimator or Forest
    alphas : sequence of float, optional
        ``ccp_alpha`` values; default: the trees' effective weakest-link alphas
        (at most ``n_alphas``, quantile-spaced), which traces the nested
        subtrees from the whole forest down to the roots.
    n_alphas : int
    costs : FeatureCosts, array-like or mapping, optional
    problem : PruningProblem, optional
        Needed for forests without an sklearn estimator (risk = error rate on
        the problem's error data).

    Returns
    -------
    list of (alpha, PrunedForest), distinct prunings only, costliest first.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import ccp_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> path = ccp_prunings(rf)
    >>> path[0][1].n_splits > path[-1][1].n_splits == 0
    True
    """
    f = as_forest(forest) if problem is None else problem.forest  # (a booster's: fitted)
    return _prunings(f, ccp_path(f, node_risk(f, problem), alphas, n_alphas),
                     _costs_of(costs, problem), "ccp", "alpha")


def greedy_prunings(forest, X, y, *, costs=None, train=None, problem=None):
    """GreedyPrune: remove features one at a time, every node of the feature at once.

    At each step every feature still tested is tried: all its nodes are cut
    (with their subtrees), and the feature whose removal increases the error
    term least per unit of average cost saved is removed (error and cost are
    BudgetPrune's, from the compiled problem).  The sequence ends with every
    tree cut to its root.

    Parameters
    ----------
    forest : fitted estimator or Forest
    X, y : array-like
        Cost data (and error data unless ``train`` is given).
    costs : FeatureCosts, array-like or mapping, optional
    train : tuple (X_train, y_train), optional
    problem : PruningProblem, optional
        Reuse a compiled problem.

    Returns
    -------
    list of (n_removed_features, PrunedForest), costliest first.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import greedy_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> seq = greedy_prunings(rf, X, y, costs=[1, 1, 5, 5])
    >>> [k for k, _ in seq][:2], seq[-1][1].n_splits
    ([0, 1], 0)
    """
    problem = _compiled(problem, forest, X, y, costs, train)
    masks, removed = greedy_path(problem)
    return _feature_prunings(problem, "greedy", range(len(masks)), masks,
                             [{"removed": removed[:i]} for i in range(len(masks))])


def _compiled(problem, forest, X, y, costs, train):
    """``problem``, or the program of ``forest`` compiled on ``(X, y)`` at lam 0."""
    if problem is None:
        problem = compile_problem(forest, X, y, costs=costs, lam=0.0, train=train)
    return problem


def _feature_prunings(problem, method, params, masks, infos):
    """``[(param, PrunedForest)]`` of a family of masks that removes features, each
    with its breakdown and what it removed or kept."""
    return [(p, PrunedForest(problem.forest, mask, costs=problem.costs,
                             breakdown=problem.evaluate(mask),
                             solve_info={"method": method, **info}))
            for p, mask, info in zip(params, masks, infos)]


def sub_forest(forest, m):
    """A Forest of the first ``m`` trees, or of the trees listed in ``m`` (in order):
    a new forest, not a mask, so the other trees no longer vote (for a booster: the
    model truncated to those trees, initial score and link kept; see
    :meth:`~prune_opt.Forest.select_trees`)."""
    f = as_forest(forest)
    if np.ndim(m) == 0 and not 1 <= m <= f.n_trees:
        raise ValueError(f"m must be in [1, {f.n_trees}], got {m}")
    keep = list(range(m)) if np.ndim(m) == 0 else [int(t) for t in m]
    sub = f.select_trees(keep)
    sub._sub_forest_of = (f, tuple(keep))  # baseline_curve scores it on f's routing
    return sub


def fewer_trees_prunings(forest, *, sizes=None, costs=None):
    """The first ``m`` trees of the forest, for every ``m`` in ``sizes``.

    Each PrunedForest is over a sub-forest of ``m`` whole trees (see
    :func:`sub_forest`), so predictions average ``m`` trees and the
    acquisition cost counts only their features.  For a booster these are its
    first rounds ("fewer rounds": the model truncated as the libraries'
    ``num_iteration`` does); ``m`` counts trees, a multiple of the trees per
    round (the classes of a multiclass booster), default every round.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import fewer_trees_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    >>> [(m, p.n_trees) for m, p in fewer_trees_prunings(rf)]
    [(4, 4), (3, 3), (2, 2), (1, 1)]
    """
    f = as_forest(forest)
    step = f.round_size
    sizes = range(f.n_trees, 0, -step) if sizes is None else sorted(
        {int(m) for m in sizes}, reverse=True)
    if any(m % step for m in sizes):
        raise ValueError(f"sizes: this booster grows {step} trees per round (one per class); "
                         f"keep whole rounds (multiples of {step})")
    out = []
    for m in sizes:
        sub = f if m == f.n_trees else sub_forest(f, m)
        out.append((m, PrunedForest(sub, sub.full_split_mask(), costs=costs,
                                    solve_info={"method": "fewer-trees", "n_trees": m},
                                    estimator_class=f.source)))
    return out


def impurity_threshold_prunings(forest, *, thresholds=None, n_thresholds=IMPURITY_THRESHOLDS,
                                costs=None, X=None, y=None):
    """BudgetRF-style early stopping: a node stays a split only if its impurity
    (Gini; the target variance for a regression forest, see
    :func:`node_impurity`) exceeds the threshold (and its parent is a split).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import impurity_threshold_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> seq = impurity_threshold_prunings(rf)
    >>> seq[-1][1].n_splits
    0
    """
    f = as_forest(forest)
    path = impurity_path(f, node_impurity(f, X, y), thresholds, n_thresholds)
    return _prunings(f, path, costs, "impurity", "threshold")


def _costs_of(costs, problem):
    """The costs a baseline's prunings are measured with: ``costs``, else the
    problem's (not one per feature when a problem is given)."""
    return problem.costs if costs is None and problem is not None else costs


def _ccp(forest, X, y, *, costs=None, problem=None):
    """Cost-complexity pruning of every tree at a common alpha (on the error data of
    ``X, y`` for a forest without scikit-learn's impurities, a booster's included)."""
    if problem is None and not sklearn_risk(as_forest(forest)):
        problem = compile_problem(forest, X, y, costs=costs, lam=0.0)
    return ccp_prunings(forest, costs=costs, problem=problem)


def feature_prefix_prunings(forest, X, y, *, costs=None, train=None, problem=None):
    """Keep only the splits on the first j features of one ranking, for every j.

    The features are ranked once by the error term their removal adds per unit
    of their cost (GreedyPrune's first step, without its later re-ranking), and
    the j-th member keeps the splits whose root path tests only the first j
    features (the costliest member keeps them all, the last none): a quick
    family that is strong when the budget leaves room for a few features only.

    Parameters
    ----------
    forest : fitted estimator or Forest
    X, y : array-like
        Cost data (and error data unless ``train`` is given).
    costs : FeatureCosts, array-like or mapping, optional
    train : tuple (X_train, y_train), optional
    problem : PruningProblem, optional
        Reuse a compiled problem.

    Returns
    -------
    list of (n_features_kept, PrunedForest), costliest first.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import feature_prefix_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> seq = feature_prefix_prunings(rf, X, y, costs=[1, 1, 5, 5])
    >>> [k for k, _ in seq], seq[-1][1].n_splits
    ([4, 3, 2, 1, 0], 0)
    """
    problem = _compiled(problem, forest, X, y, costs, train)
    masks, kept, order = feature_prefix_path(problem)
    return _feature_prunings(problem, "feature-prefix", kept, masks,
                             [{"kept": order[:j]} for j in kept])


def _feature_prefix(forest, X, y, *, costs=None, problem=None):
    """Keep only the splits on the first features of a ranking by error per cost."""
    return feature_prefix_prunings(forest, X, y, costs=costs, problem=problem)


def _greedy(forest, X, y, *, costs=None, problem=None):
    """GreedyPrune: drop the feature with the least error per cost saved."""
    return greedy_prunings(forest, X, y, costs=costs, problem=problem)


def _fewer_trees(forest, X, y, *, costs=None, problem=None):
    """The first m trees."""
    return fewer_trees_prunings(forest, costs=_costs_of(costs, problem))


def _impurity(forest, X, y, *, costs=None, problem=None):
    """Impurity-threshold early stopping (BudgetRF style)."""
    return impurity_threshold_prunings(forest, costs=_costs_of(costs, problem), X=X, y=y)


# the registered families with a parameter-rich PrunedForest sequence of their own
# (fewer-trees: sub-forests of m trees); any other family is wrapped by _from_family
_SEQUENCES = {"ccp": _ccp, "greedy": _greedy, "fewer-trees": _fewer_trees,
              "impurity": _impurity, "feature-prefix": _feature_prefix}


def _from_family(name):
    def prunings(forest, X, y, *, costs=None, problem=None):
        if problem is None:
            problem = compile_problem(forest, X, y, costs=costs, lam=0.0)
        masks = MASK_FAMILIES[name](problem) or []
        return [(i, PrunedForest(problem.forest, m, costs=_costs_of(costs, problem),
                                 solve_info={"method": name})) for i, m in enumerate(masks)]

    prunings.__doc__ = MASK_FAMILIES[name].__doc__ or f"The {name!r} baseline family."
    return prunings


class _Baselines(Mapping):
    """Name -> ``(forest, X, y, *, costs=None, problem=None)`` returning
    ``(parameter, PrunedForest)`` pairs, costliest first, for every family of
    the one baseline registry (``"fewer-rounds"`` also names ``"fewer-trees"``: a
    booster truncated to its first rounds)
    (:data:`prune_opt.budget._baselines.MASK_FAMILIES`): a family
    registered with :func:`register_baseline` appears here too."""

    def __getitem__(self, name):
        if name == "fewer-rounds":  # a booster's name for its first trees: its first rounds
            return _fewer_trees
        if name not in MASK_FAMILIES:
            raise KeyError(name)
        return _SEQUENCES[name] if name in _SEQUENCES else _from_family(name)

    def __iter__(self):
        return iter(list(MASK_FAMILIES))

    def __len__(self):
        return len(MASK_FAMILIES)

    def __repr__(self):
        return f"BASELINES({list(self)})"


#: The baseline registry as ``PrunedForest`` sequences (a view of the mask
#: families: ``register_baseline`` adds to both).
BASELINES = _Baselines()


def get_baseline(name):
    """The registered baseline function called ``name``.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import get_baseline
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    >>> [m for m, _ in get_baseline("fewer-trees")(rf, X, y)]
    [2, 1]
    """
    try:
        return BASELINES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown baseline {name!r}; known baselines: "
                         f"{', '.join(BASELINES)}") from None


def _on_root(pf):
    """``(forest, mask, trees)``: ``pf`` as a mask over trees of the forest it was cut
    from (a :func:`sub_forest`'s trees are those of its parent, in order)."""
    f, mask = pf.forest, pf.split_mask
    origin = getattr(f, "_sub_forest_of", None)
    if origin is None:
        return f, mask, None
    root, keep = origin
    full = np.zeros(root.n_nodes, dtype=bool)
    for i, t in enumerate(keep):
        full[root.tree_slice(t)] = mask[f.tree_slice(i)]
    prefix = list(keep) == list(range(len(keep)))
    return root, full, range(len(keep)) if prefix else list(keep)


def _routed_cost(pf, used):
    """``pf.average_cost`` from the rows' usage matrix (the same arithmetic)."""
    return float(pf.costs.cost_of_usage(used).mean())


def _routed_score(pf, avg, y):
    """``pf.score`` from the rows' average leaf values (the same arithmetic)."""
    yc = check_labels(pf.forest, y, avg.shape[0])
    if pf.forest.task == "regression":
        from sklearn.metrics import r2_score

        return float(r2_score(yc, avg[:, 0]))
    return float(np.mean(np.argmax(avg, axis=1) == yc))


def baseline_curve(prunings, X, *, y=None, X_eval=None, y_eval=None, method=""):
    """Curve rows of a baseline: average cost on ``X`` (and accuracy on ``X``
    when ``y`` is given), accuracy and cost on ``(X_eval, y_eval)``.

    For regression forests the score columns hold R^2 and are named ``r2``
    and ``r2_eval`` instead of ``accuracy`` and ``accuracy_eval``.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``param``, ``average_cost``, ``n_splits``,
        ``n_trees``, plus ``accuracy`` when ``y`` is given and
        ``accuracy_eval``, ``cost_eval`` when ``X_eval`` is given.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import baseline_curve, fewer_trees_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    >>> len(baseline_curve(fewer_trees_prunings(rf), X, method="fewer-trees"))
    2
    """
    if (X_eval is None) != (y_eval is None):
        raise ValueError("X_eval and y_eval must be given together")
    regression = bool(prunings) and prunings[0][1].forest.task == "regression"
    score = "r2" if regression else "accuracy"
    scorers = {}  # each (forest, rows) routed once; each member scored from the last one

    def on(pf, rows):
        forest, mask, trees = _on_root(pf)
        key = (id(forest), id(rows))
        if key not in scorers:
            scorers[key] = NestedScorer(RoutedData(forest, forest.check_X(rows)))
        return scorers[key].score(mask, trees)

    rows = []
    for param, pf in prunings:
        used, avg = on(pf, X)
        r = {"method": method, "param": param, "average_cost": _routed_cost(pf, used),
             "n_splits": pf.n_splits, "n_trees": pf.n_trees}
        if y is not None:
            r[score] = _routed_score(pf, avg, y)
        if X_eval is not None:
            used, avg = on(pf, X_eval)
            r[f"{score}_eval"] = _routed_score(pf, avg, y_eval)
            r["cost_eval"] = _routed_cost(pf, used)
        rows.append(r)
    columns = ["method", "param", "average_cost", "n_splits", "n_trees"]
    columns += ([score] if y is not None else []) + (
        [f"{score}_eval", "cost_eval"] if X_eval is not None else [])
    return records_frame(rows, columns=columns)

