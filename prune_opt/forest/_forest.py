"""Forest IR: every tree of an ensemble as flat arrays with global node ids.

Node ``h`` of tree ``t`` has global id ``node_offset[t] + h``.  Within a tree a
parent always has a smaller id than its children (sklearn's depth-first
numbering; :meth:`Forest.from_arrays` renumbers other inputs to preorder), so a
decision path listed in increasing node id is in root-to-leaf order.
"""

from __future__ import annotations

import copy
import importlib

import numpy as np
import scipy.sparse as sp

from .._validation import check_features
from ._ensemble import Ensemble
from ._router import same_routing

__all__ = ["Forest", "as_forest", "detached_estimator", "register_importer",
           "supported_models", "SPLIT_DTYPES"]

#: what a forest predicts: class distributions, or one real value per node
TASKS = ("classification", "regression")
#: the dtypes a split may compare feature values in (``x <= threshold``)
SPLIT_DTYPES = ("float32", "float64")
#: the training statistics of the nodes (``Forest.node_stats``), as scikit-learn names them
NODE_STATS = ("n_node_samples", "weighted_n_node_samples", "impurity")


class Forest:
    """Flat, solver-neutral description of a fitted tree ensemble.

    One IR for averaged forests (random forests, single trees, the
    ``forest_builders`` growers) and additive ones (gradient boosting):
    ``ensemble`` says how the trees' node values combine (see
    :class:`~prune_opt.forest._ensemble.Ensemble`), and :meth:`output` is the one
    place where a per-tree total becomes a prediction.

    Parameters
    ----------
    trees : list of dict
        One dict per tree with arrays ``left``, ``right`` (child ids, -1 for
        leaves), ``feature`` (-1 for leaves), ``threshold`` (go left when
        ``x[feature] <= threshold``, ``x`` cast to ``split_dtype``), ``value``
        and optionally ``missing_go_to_left`` (NaN routing).  Ids must satisfy
        parent < child.  ``value`` is, for an averaged forest, (n_nodes,
        n_classes), the class distribution of each node (rows are normalised
        if they are counts), for classification, or (n_nodes, 1), the mean
        target of each node's training examples, for regression.  For an
        additive ensemble it is the raw score a node adds when it is the leaf
        reached (learning rate included): (n_nodes, 1) for the identity and
        logistic links, (n_nodes, n_classes) for softmax (zero outside the
        tree's class column).  An internal node's value is what it predicts
        once pruned to a leaf.
    classes : array-like or None
        Class labels, in the column order of the prediction; None for regression.
    n_features : int
    feature_names : sequence of str, optional
    estimator : fitted sklearn estimator, optional
        The source estimator; when it holds scikit-learn trees, routing uses
        their own ``decision_path`` so missing values and dtype casts match
        sklearn.
    in_bag : list of ndarray, optional
        Per tree, the multiplicity of each training example in its bootstrap
        sample (used as error data when ``train=`` is given to :func:`prune`).
    task : {"classification", "regression"}, optional
        Default: regression when ``classes`` is None, classification otherwise.
    ensemble : Ensemble, optional
        How the trees combine; default averaged.
    split_dtype : {"float32", "float64"}, default "float32"
        The dtype feature values are cast to before ``x <= threshold`` (float32 as
        scikit-learn's and XGBoost's trees, float64 as LightGBM's and
        HistGradientBoosting's).
    source : str, optional
        The name of the model the forest was read from (e.g.
        ``"LGBMClassifier"``), kept for exports and reports.

    Attributes
    ----------
    task : str
    classes_ : ndarray or None
        None for regression.
    n_classes : int or None
        None for regression (no class columns); use :attr:`value_width` for
        the number of columns of ``value``.
    ensemble : Ensemble
    node_stats : dict or None
        The training statistics scikit-learn keeps per node
        (``n_node_samples``, ``weighted_n_node_samples``, ``impurity``, each
        of shape (n_nodes,)), from which ``to_sklearn()`` exports compute
        ``feature_importances_``: copied by :meth:`from_sklearn`, else set by
        whoever grew the forest (``prune_opt.forest._node_stats``), else None.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> f = Forest([stump], classes=[0, 1], n_features=1)
    >>> f.apply(np.array([[0.2], [0.9]]))
    array([[1],
           [2]])
    >>> leafy = dict(stump, value=[[1.5], [0.5], [2.5]])
    >>> Forest([leafy], classes=None, n_features=1).predict(np.array([[0.2], [0.9]]))
    array([0.5, 2.5])

    A boosted stump: raw scores summed onto an initial score, then the logistic link.

    >>> from prune_opt.forest._ensemble import Ensemble
    >>> raw = dict(stump, value=[[0.0], [-2.0], [2.0]])
    >>> boost = Forest([raw, raw], classes=[0, 1], n_features=1,
    ...                ensemble=Ensemble("additive", "logistic", init_score=0.5))
    >>> boost.decision_function(np.array([[0.2]]))
    array([-3.5])
    """

    #: what an entry absent from a scipy sparse ``X`` is: 0.0 (False, as scikit-learn and
    #: LightGBM read it) or a missing value routed like NaN (True, as XGBoost's DMatrix)
    absent_is_missing = False

    def __init__(self, trees, classes, n_features, *, feature_names=None, estimator=None,
                 in_bag=None, task=None, ensemble=None, split_dtype="float32", source=None):
        if len(trees) == 0:
            raise ValueError("a forest needs at least one tree")
        self.task = _check_task(task, classes)
        if self.task == "regression":
            self.classes_, self.n_classes = None, None
        else:
            self.classes_ = np.asarray(classes)
            self.n_classes = int(self.classes_.size)
        self.n_features = int(n_features)
        self.feature_names = None if feature_names is None else [str(f) for f in feature_names]
        if split_dtype not in SPLIT_DTYPES:
            raise ValueError(f"split_dtype must be one of {SPLIT_DTYPES}, got {split_dtype!r}")
        self.split_dtype = split_dtype
        ensemble = Ensemble() if ensemble is None else ensemble
        if not isinstance(ensemble, Ensemble):
            raise TypeError(f"ensemble must be a prune_opt Ensemble, got "
                            f"{type(ensemble).__name__}")
        self.ensemble = ensemble.bind(self.task, self.n_classes, len(trees))
        self.estimator = estimator
        self.sklearn_trees = _estimator_trees(estimator)
        self.source = source if source is not None or estimator is None else type(
            estimator).__name__
        self.in_bag = in_bag
        # a booster's internal-node values: None while they are the source library's,
        # else how the node-value rule fitted them (see prune_opt.program._boosted)
        self.node_value_fit = None
        self.node_stats = None
        checked = [self._check_tree(tree, t) for t, tree in enumerate(trees)]
        # NaN routing: sklearn decides itself; array-built trees only when told how
        self.allow_nan = estimator is not None or any(
            tree.get("missing_go_to_left") is not None for tree in trees)
        self._concatenate(checked)
        self._set_parent_and_depth()

    def _check_tree(self, tree, t):
        """One tree's arrays, validated (shapes, one tree rooted at 0, parent < child)."""
        _require_keys(tree, t)
        left = np.asarray(tree["left"], dtype=np.int64)
        right = np.asarray(tree["right"], dtype=np.int64)
        n = left.size
        feature = np.asarray(tree["feature"], dtype=np.int64)
        threshold = np.asarray(tree["threshold"], dtype=float)
        if not (right.size == feature.size == threshold.size == n):
            raise ValueError(f"tree {t}: node arrays differ in length")
        internal = left >= 0
        if (internal != (right >= 0)).any():
            raise ValueError(f"tree {t}: a node has exactly one child")
        ids = np.arange(n)
        if (left[internal] <= ids[internal]).any() or (right[internal] <= ids[internal]).any():
            raise ValueError(f"tree {t}: children must have larger ids than parents "
                             "(use Forest.from_arrays, which renumbers)")
        if (feature[internal] < 0).any() or (feature[internal] >= self.n_features).any():
            raise ValueError(f"tree {t}: split feature index out of range")
        children = np.sort(np.concatenate([left[internal], right[internal]]))
        if not np.array_equal(children, np.arange(1, n)):
            raise ValueError(f"tree {t}: node arrays do not form a tree rooted at 0")
        m = tree.get("missing_go_to_left")
        return dict(left=left, right=right, feature=np.where(internal, feature, -1),
                    threshold=threshold, value=self._check_value(tree["value"], n, t),
                    missing_go_to_left=np.zeros(n, dtype=np.uint8) if m is None
                    else np.asarray(m, dtype=np.uint8))

    def _check_value(self, value, n, t):
        """Node values as the forest's kind checks them (class distributions, node
        means, or raw scores)."""
        value = np.asarray(value, dtype=float).reshape(n, -1)
        return self.ensemble.check_values(value, self.task, self.n_classes, t)

    def _concatenate(self, checked):
        """Global node arrays: tree ``t``'s node ``h`` becomes ``node_offset[t] + h``.

        The arrays are allocated once and filled tree by tree, and each tree's
        checked copies are released as soon as they are written, so the peak
        stays close to the final arrays (no list of per-tree copies).
        """
        sizes = [tree["left"].size for tree in checked]
        self.n_trees = len(checked)
        self.node_offset = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        n, first = int(self.node_offset[-1]), checked[0]
        for key in ("left", "right", "feature", "threshold", "value", "missing_go_to_left"):
            setattr(self, key, np.empty((n, *first[key].shape[1:]), dtype=first[key].dtype))
        for t in range(self.n_trees):
            tr, a, b = checked[t], int(self.node_offset[t]), int(self.node_offset[t + 1])
            for key in ("left", "right"):
                np.add(tr[key], a, out=getattr(self, key)[a:b])
                getattr(self, key)[a:b][tr[key] < 0] = -1
            for key in ("feature", "threshold", "value", "missing_go_to_left"):
                getattr(self, key)[a:b] = tr[key]
            checked[t] = None  # release this tree's copies now
        self.tree_of_node = np.repeat(np.arange(self.n_trees, dtype=np.int32), sizes)

    def _set_parent_and_depth(self):
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        internal = self.left >= 0
        parent[self.left[internal]] = np.flatnonzero(internal)
        parent[self.right[internal]] = np.flatnonzero(internal)
        self.parent = parent
        depth = np.zeros(self.n_nodes, dtype=np.int32)
        frontier, level = self.node_offset[:-1].copy(), 0
        while frontier.size:  # one pass per level
            depth[frontier] = level
            frontier = frontier[self.left[frontier] >= 0]
            frontier = np.concatenate([self.left[frontier], self.right[frontier]])
            level += 1
        self.depth = depth
        self.max_depth = int(depth.max())

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_sklearn(cls, estimator):
        """Build from a fitted scikit-learn tree ensemble: a forest or a tree
        (classifier or single-output regressor), ``GradientBoosting*`` or
        ``HistGradientBoosting*`` (see :func:`as_forest`).

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from prune_opt import Forest
        >>> X, y = load_diabetes(return_X_y=True)
        >>> rf = RandomForestRegressor(n_estimators=2, max_depth=2, random_state=0).fit(X, y)
        >>> f = Forest.from_sklearn(rf)
        >>> f.task, f.classes_, f.value.shape[1]
        ('regression', None, 1)
        """
        if not type(estimator).__module__.startswith("sklearn."):
            raise TypeError(f"Forest.from_sklearn: {type(estimator).__name__} is not a "
                            "scikit-learn estimator; use prune_opt.as_forest, which reads "
                            f"every supported model ({supported_models()})")
        return as_forest(estimator)

    @classmethod
    def from_arrays(cls, trees, classes, n_features, *, feature_names=None, in_bag=None,
                    task=None, ensemble=None, split_dtype="float32", source=None):
        """Build from per-tree arrays in any node order (renumbered to preorder).

        ``trees`` is a list of dicts as in :class:`Forest`; children may have
        any ids.  Used by :mod:`forest_builders`.  Arrays that are not one
        tree rooted at node 0 (a child pointing back at the root or at an
        ancestor, a node with two parents, unreachable nodes) are refused in
        linear time.

        Examples
        --------
        >>> from prune_opt import Forest
        >>> stump = dict(left=[2, -1, -1], right=[1, -1, -1], feature=[0, -1, -1],
        ...              threshold=[0.5, 0, 0], value=[[1, 1], [0, 1], [1, 0]])
        >>> f = Forest.from_arrays([stump], classes=[0, 1], n_features=1)
        >>> f.left, f.value[1]
        (array([ 1, -1, -1]), array([1., 0.]))
        >>> Forest.from_arrays([dict(stump, left=[2, 0, -1], right=[1, 0, -1])],
        ...                    classes=[0, 1], n_features=1)
        Traceback (most recent call last):
        ...
        ValueError: tree 0: node 1 has the root (node 0) as a child; the node arrays contain a cycle
        """
        out = [_renumber_preorder(tree, t) for t, tree in enumerate(trees)]
        return cls(out, classes=classes, n_features=n_features, feature_names=feature_names,
                   in_bag=in_bag, task=task, ensemble=ensemble, split_dtype=split_dtype,
                   source=source)

    # ------------------------------------------------------------- structure
    @property
    def n_nodes(self):
        return int(self.node_offset[-1])

    @property
    def is_leaf(self):
        return self.left < 0

    def tree_slice(self, t):
        """Global id range of tree ``t``."""
        return slice(int(self.node_offset[t]), int(self.node_offset[t + 1]))

    def full_split_mask(self):
        """Split mask of the unpruned forest (True on every internal node)."""
        return ~self.is_leaf

    def check_split_mask(self, split_mask, name="split_mask"):
        """Validate a global split mask: bool, right length, closed under parents."""
        mask = np.asarray(split_mask)
        if mask.shape != (self.n_nodes,):
            raise ValueError(f"{name} must have shape ({self.n_nodes},), got {mask.shape}")
        mask = mask.astype(bool)
        if (mask & self.is_leaf).any():
            raise ValueError(f"{name} marks an original leaf as a split")
        has_parent = self.parent >= 0
        if (mask[has_parent] & ~mask[self.parent[has_parent]]).any():
            raise ValueError(f"{name} is not closed under parents: a split below a leaf")
        return mask

    def same_splits(self, other):
        """Whether ``other`` routes every row as this forest does: equal in every field
        routing reads (the trees, features, thresholds, split dtype and the side NaN
        goes to, see :func:`~prune_opt.forest._router.same_routing`), so masks, routed
        rows and prunings of one apply to the other.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> import prune_opt as po
        >>> X, y = load_iris(return_X_y=True)
        >>> tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
        >>> po.as_forest(tree).same_splits(po.as_forest(tree))
        True
        """
        return same_routing(self, other)

    def leaves_of(self, split_mask):
        """Boolean (n_nodes,): the leaves of the pruning ``split_mask`` (a checked mask):
        the nodes that are not splits while their parent is one (a root counts as
        having a split parent)."""
        return np.where(self.parent >= 0, split_mask[self.parent], True) & ~split_mask

    # --------------------------------------------------------------- routing
    #: ``check_X(X, name="X")``: ``X`` validated against the forest (shape, names,
    #: finiteness) as a float array, see :func:`~prune_opt._validation.check_features`
    check_X = check_features

    def sklearn_tree(self, t):
        """The scikit-learn tree estimator behind tree ``t`` (it routes for the IR), or
        None when the forest holds no scikit-learn trees."""
        return None if self.sklearn_trees is None else self.sklearn_trees[t]

    def decision_paths(self, X, t):
        """Node indicator (CSR, local node ids) of tree ``t`` for already-checked X."""
        tree = self.sklearn_tree(t)
        if tree is not None:
            ind = tree.decision_path(X)
            ind = sp.csr_matrix(ind)
            ind.sort_indices()
            return ind
        from ._router import path_indicator

        return path_indicator(self, t, self.apply_tree(X, t))

    def apply_tree(self, X, t):
        """Local leaf ids reached in tree ``t`` (X already checked): compared in the
        source's dtype (float32 as sklearn's and XGBoost's trees, float64 as
        LightGBM's and HistGradientBoosting's), see :mod:`prune_opt.forest._router`."""
        from ._router import route_leaves

        return route_leaves(self, X, trees=[t])[:, 0].astype(np.int64)

    def apply(self, X):
        """Leaf (local id) reached in every tree, shape (n_examples, n_trees)."""
        from ._router import route_leaves

        X = self.check_X(X)
        return route_leaves(self, X).astype(np.int64)

    @property
    def value_width(self):
        """Columns of ``value``: the classes (averaged classifier, softmax), else 1."""
        return int(self.value.shape[1])

    @property
    def is_additive(self):
        """Whether the trees' raw scores are summed (boosting) rather than averaged."""
        return self.ensemble.is_additive

    def tree_total(self, X, leaves=None):
        """Sum over trees of the values of the leaves reached, (n, value_width).

        ``leaves(X, t)`` gives the local leaf ids reached in tree ``t`` (default
        :meth:`apply_tree`, the unpruned forest; a
        :class:`~prune_opt.PrunedForest` passes its pruned leaves).  Summed in tree
        order, as scikit-learn does, so results match bit for bit.
        """
        X = self.check_X(X)
        total = np.zeros((X.shape[0], self.value_width))
        if leaves is None:
            from ._router import route_leaves

            routed = route_leaves(self, X)
            for t in range(self.n_trees):
                total += self.value[routed[:, t].astype(np.int64) + self.node_offset[t]]
            return total
        for t in range(self.n_trees):
            total += self.value[leaves(X, t) + self.node_offset[t]]
        return total

    def output(self, total, *, out=None):
        """The prediction of a per-tree total (see :meth:`tree_total`): the average of
        the trees' distributions or means, or for an additive ensemble the link of
        the initial score plus the total; (n, n_classes) probabilities for a
        classifier, (n, 1) for regression.  The one place where trees combine."""
        return self.ensemble.output(total, self.n_trees, out=out)

    def combined_value(self, X, leaves=None):
        """:meth:`output` of :meth:`tree_total`: class probabilities (n, n_classes) or
        the regression prediction (n, 1) of the (pruned, via ``leaves``) forest."""
        total = self.tree_total(X, leaves)
        return self.output(total, out=total)

    def prediction(self, output):
        """What a forest predicts from its :meth:`output`: the class of the highest
        probability, or for regression the prediction itself."""
        if self.task == "regression":
            return output[:, 0]
        return self.classes_.take(np.argmax(output, axis=1), axis=0)

    def decision_function(self, X, leaves=None):
        """Raw scores of an additive ensemble, ``init_score + sum of the trees``: (n,)
        for the identity and logistic links, (n, n_classes) for softmax (as the
        libraries' ``decision_function`` / ``raw_score``)."""
        if not self.ensemble.has_raw_score:
            raise AttributeError("decision_function: an averaged forest has no raw score; "
                                 "use predict_proba(X)")
        raw = self.ensemble.raw(self.tree_total(X, leaves), self.n_trees)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X):
        """Class probabilities of the unpruned forest (averaged distributions, or the
        linked raw scores of a boosted model)."""
        if self.task == "regression":
            raise AttributeError("predict_proba: this is a regression forest (no classes); "
                                 "use predict(X)")
        return self.combined_value(X)

    def predict(self, X):
        """Predicted class (highest probability), or the regression prediction.

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.tree import DecisionTreeRegressor
        >>> from prune_opt import Forest
        >>> X, y = load_diabetes(return_X_y=True)
        >>> tree = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
        >>> bool((Forest.from_sklearn(tree).predict(X) == tree.predict(X)).all())
        True
        """
        return self.prediction(self.combined_value(X))

    # ------------------------------------------------------------- sub-forests
    @property
    def round_size(self):
        """Trees per boosting round (the classes of a softmax booster), else 1."""
        return self.ensemble.round_size

    def local_arrays(self, t):
        """Tree ``t``'s node arrays with local ids (as :class:`Forest` takes them)."""
        sl = self.tree_slice(t)
        off = sl.start
        left, right = self.left[sl], self.right[sl]
        return dict(left=np.where(left >= 0, left - off, -1),
                    right=np.where(right >= 0, right - off, -1),
                    feature=self.feature[sl], threshold=self.threshold[sl],
                    value=self.value[sl], missing_go_to_left=self.missing_go_to_left[sl])

    def select_trees(self, trees):
        """A new Forest of the listed trees, in order, combined as this one (a booster
        keeps its initial score and link: its first r rounds are the model truncated
        to r rounds, as the libraries' ``num_iteration``)."""
        keep = [int(t) for t in trees]
        if not keep or min(keep) < 0 or max(keep) >= self.n_trees:
            raise ValueError(f"trees must list tree indices in [0, {self.n_trees})")
        in_bag = None if self.in_bag is None else [self.in_bag[t] for t in keep]
        sub = Forest([self.local_arrays(t) for t in keep], classes=self.classes_,
                     n_features=self.n_features, feature_names=self.feature_names,
                     in_bag=in_bag, task=self.task, ensemble=self.ensemble.select(keep),
                     split_dtype=self.split_dtype, source=self.source)
        sub.allow_nan = self.allow_nan
        sub.absent_is_missing = self.absent_is_missing
        sub.node_value_fit = self.node_value_fit
        if self.node_stats is not None:
            sub.node_stats = {k: np.concatenate([v[self.tree_slice(t)] for t in keep])
                              for k, v in self.node_stats.items()}
        return sub

    def __repr__(self):
        kind = ("task='regression'" if self.task == "regression"
                else f"n_classes={self.n_classes}")
        extra = self.ensemble.describe()
        return (f"Forest(n_trees={self.n_trees}, n_nodes={self.n_nodes}, "
                f"{kind}, n_features={self.n_features}{extra})")


TREE_KEYS = ("left", "right", "feature", "threshold", "value")


def _require_keys(tree, t):
    if not hasattr(tree, "keys"):
        raise TypeError(f"trees[{t}] must be a dict of node arrays with keys {TREE_KEYS}, "
                        f"got {type(tree).__name__}")
    missing = [k for k in TREE_KEYS if k not in tree]
    if missing:
        raise ValueError(f"trees[{t}] lacks the node arrays {missing}; each tree needs "
                         f"{TREE_KEYS} (and optionally missing_go_to_left)")


def _check_task(task, classes):
    """The forest's task: given, or regression exactly when ``classes`` is None."""
    if task is None:
        return "regression" if classes is None else "classification"
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if (task == "regression") != (classes is None):
        raise ValueError("classes must be None for task='regression' and the class labels "
                         "for task='classification'")
    return task


def _check_tree_links(left, right, t):
    """Refuse child arrays that are not one tree rooted at node 0 (linear time).

    Every child id must be a node, no node may have two parents (this also
    catches a child pointing back at an ancestor) and the root none; the
    reachability of every node is checked by the walk that follows.
    """
    n = left.size
    if right.size != n:
        raise ValueError(f"tree {t}: left has {n} nodes but right has {right.size}")
    if n == 0:
        raise ValueError(f"tree {t} has no nodes; a tree needs at least a root")
    internal = left >= 0
    if (internal != (right >= 0)).any():
        raise ValueError(f"tree {t}: a node has exactly one child; pass -1 for both children "
                         "of a leaf")
    children = np.concatenate([left[internal], right[internal]])
    if (children >= n).any():
        raise ValueError(f"tree {t}: child id {int(children.max())} out of range [0, {n})")
    n_parents = np.bincount(children, minlength=n)
    if n_parents[0]:
        h = int(np.flatnonzero((left == 0) | (right == 0))[0])
        raise ValueError(f"tree {t}: node {h} has the root (node 0) as a child; the node "
                         "arrays contain a cycle")
    if (n_parents > 1).any():
        h = int(np.flatnonzero(n_parents > 1)[0])
        raise ValueError(f"tree {t}: node {h} has {int(n_parents[h])} parents; each node "
                         "needs exactly one (the arrays contain a cycle or a shared subtree)")


def _renumber_preorder(tree, t):
    """One tree's arrays renumbered so that nodes come in preorder (parent < child)."""
    _require_keys(tree, t)
    left = np.asarray(tree["left"], dtype=np.int64).ravel()
    right = np.asarray(tree["right"], dtype=np.int64).ravel()
    _check_tree_links(left, right, t)
    n = left.size
    order, stack = [], [0]
    while stack:  # preorder walk; at most n steps since every node has <= 1 parent
        h = stack.pop()
        order.append(h)
        if left[h] >= 0:
            stack.append(int(right[h]))
            stack.append(int(left[h]))
    if len(order) != n:
        raise ValueError(f"tree {t}: {n - len(order)} nodes are unreachable from the root")
    order = np.asarray(order)
    new_id = np.empty(n, dtype=np.int64)
    new_id[order] = np.arange(n)
    remap = dict(
        left=np.where(left[order] >= 0, new_id[np.maximum(left[order], 0)], -1),
        right=np.where(right[order] >= 0, new_id[np.maximum(right[order], 0)], -1),
    )
    for key in ("feature", "threshold", "value", "missing_go_to_left"):
        if tree.get(key) is not None:
            arr = np.asarray(tree[key])
            if arr.shape[0] != n:
                raise ValueError(f"tree {t}: {key} has {arr.shape[0]} entries for {n} nodes")
            remap[key] = arr[order]
    return remap


# the model importers, in registration order: (name, accepts(model), build(model))
_IMPORTERS = []
#: the package whose import registers the importers (read by name: it sits above this
#: stage, and registers itself here, as a plug-in does)
IMPORTERS_PACKAGE = "prune_opt.importers"


def _registered_importers():
    """The importers, after :data:`IMPORTERS_PACKAGE` has registered them: ``import
    prune_opt`` no longer imports every stage, so the first model read loads them."""
    importlib.import_module(IMPORTERS_PACKAGE)  # at once when already imported
    return _IMPORTERS


def register_importer(name, accepts, build):
    """Add a model importer: ``accepts(model)`` says whether ``build(model)`` reads it
    into a :class:`Forest` (one per source library, see :mod:`prune_opt.importers`)."""
    _IMPORTERS[:] = [imp for imp in _IMPORTERS if imp[0] != name] + [(name, accepts, build)]


def supported_models():
    """What :func:`as_forest` reads, one entry per registered importer.

    Examples
    --------
    >>> from prune_opt.forest._forest import supported_models
    >>> "sklearn.ensemble.HistGradientBoostingClassifier" in supported_models()
    True
    """
    return "; ".join(name for name, _, _ in _registered_importers()) + (
        "; a prune_opt.Forest, or any object with a to_forest() method (the "
        "forest_builders estimators)")


def as_forest(forest):
    """Coerce a fitted tree ensemble (or Forest) to a :class:`Forest`.

    Parameters
    ----------
    forest : Forest, fitted model or object with ``to_forest()``
        scikit-learn forests and trees (classifier or single-output regressor),
        ``GradientBoosting*`` and ``HistGradientBoosting*``; LightGBM
        (``LGBMClassifier``, ``LGBMRegressor``, ``Booster``) and XGBoost
        (``XGBClassifier``, ``XGBRegressor``, ``Booster``) when installed; a
        fitted ``forest_builders`` grower.  :func:`supported_models` lists them.

    Returns
    -------
    Forest

    Raises
    ------
    TypeError
        For a PrunedForest (prune ``pruned.forest`` instead) or an
        unsupported model.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> po.as_forest(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    Forest(n_trees=1, n_nodes=5, n_classes=3, n_features=4)
    """
    if isinstance(forest, Forest):
        return forest
    if isinstance(getattr(forest, "forest", None), Forest) and hasattr(forest, "split_mask"):
        # a PrunedForest (recognised by shape: this module sits below _pruned)
        raise TypeError("forest: got a PrunedForest; prune the original forest again "
                        "(pass pruned.forest) instead of pruning a pruned one")
    if hasattr(forest, "to_forest") and not isinstance(forest, type):
        from sklearn.exceptions import NotFittedError
        from sklearn.utils.validation import check_is_fitted

        try:
            check_is_fitted(forest)
        except NotFittedError as exc:
            raise NotFittedError(
                f"forest: this {type(forest).__name__} is not fitted yet; call fit(X, y) first"
            ) from exc
        except TypeError:
            pass
        out = forest.to_forest()
        if not isinstance(out, Forest):
            raise TypeError("forest.to_forest() must return a prune_opt.Forest")
        return out
    for _, accepts, build in _registered_importers():
        if accepts(forest):
            return build(forest)
    raise TypeError(f"forest: unsupported model {type(forest).__name__}; supported: "
                    f"{supported_models()}")


def _estimator_trees(estimator):
    """The scikit-learn tree estimators of ``estimator`` in the IR's tree order (a
    boosting's ``estimators_`` array round by round, class by class), or None."""
    from sklearn.tree import BaseDecisionTree

    if estimator is None:
        return None
    if isinstance(estimator, BaseDecisionTree):
        return [estimator]
    trees = getattr(estimator, "estimators_", None)
    if trees is None:
        return None
    trees = list(np.asarray(trees, dtype=object).ravel())
    return trees if all(isinstance(e, BaseDecisionTree) for e in trees) else None


def detached_estimator(estimator):
    """A copy of a fitted sklearn forest, boosting or tree that later changes to it
    cannot reach.

    The estimator object and its array of sub-estimators are copied; the fitted
    ``tree_`` objects are shared, which is safe because scikit-learn never
    modifies a fitted ``Tree``: ``fit`` (also with ``warm_start``) and
    ``set_params`` build new trees or touch only the original's attributes.
    So a Forest (and every PrunedForest on it) keeps routing through the trees
    it was built from after the source is refitted, at no memory cost.
    """
    est = copy.copy(estimator)
    subs = getattr(estimator, "estimators_", None)
    if isinstance(subs, np.ndarray):  # GradientBoosting*: (n_rounds, K) array of trees
        copied = np.empty(subs.shape, dtype=object)
        for idx, e in np.ndenumerate(subs):
            copied[idx] = copy.copy(e)
        est.estimators_ = copied
    elif subs is not None:
        est.estimators_ = [copy.copy(e) for e in subs]
    return est
