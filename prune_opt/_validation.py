"""Input checks at the door: every message names the argument and the fix.

Scalar arguments and solver options are checked declaratively: a parameter's
*spec* is a list of constraints, any of which may hold, written with the
constraint objects of scikit-learn's ``_param_validation`` (``Interval``,
``StrOptions``, ``Options``, ``None``, ``"boolean"``), the vocabulary the
estimators' ``_parameter_constraints`` use too.  :func:`check_param` checks
one value, :func:`check_params` a mapping of them (with "did you mean"
hints for unknown keys).  Arrays go through :func:`check_features` and
:func:`check_labels`.
"""

from __future__ import annotations

import difflib
import math
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.utils._param_validation import Interval, Options, StrOptions, make_constraint

__all__ = ["FINITE_NONNEG", "FINITE_POSITIVE", "NONNEG_INT", "POSITIVE_INT", "Interval",
           "Options", "StrOptions", "check_features", "check_labels", "check_nonneg_scalar",
           "check_classification", "check_param", "check_params", "check_targets",
           "check_weights", "refuse_train_for_boosted"]

FINITE_NONNEG = Interval(Real, 0, np.inf, closed="left")
FINITE_POSITIVE = Interval(Real, 0, np.inf, closed="neither")
NONNEG_INT = Interval(Integral, 0, None, closed="left")
POSITIVE_INT = Interval(Integral, 1, None, closed="left")
#: largest sparse X densified for routing (float64 entries); bigger ones are refused
MAX_DENSE_FROM_SPARSE = 50_000_000


# ------------------------------------------------------------ declarative scalars
def _bound(value):
    return "inf" if value in (None, np.inf) else ("-inf" if value == -np.inf else f"{value:g}")


def _describe(constraint):
    """Plain-English description of one constraint (used in error messages)."""
    if constraint is None:
        return "None"
    if isinstance(constraint, Interval):
        kind = "an integer" if constraint.type is Integral else "a real number"
        if constraint.right in (None, np.inf) and constraint.left is not None \
                and constraint.left == 0:
            sign = "non-negative" if constraint.closed in ("left", "both") else "positive"
            finite = "finite " if constraint.type is Real and constraint.right == np.inf else ""
            return f"a {finite}{sign} {kind.split(' ', 1)[1]}"
        lo = "[" if constraint.closed in ("left", "both") else "("
        hi = "]" if constraint.closed in ("right", "both") else ")"
        return f"{kind} in {lo}{_bound(constraint.left)}, {_bound(constraint.right)}{hi}"
    if isinstance(constraint, (StrOptions, Options)):
        return f"one of {sorted(constraint.options, key=repr)}"
    return str(make_constraint(constraint))


def _type_fits(constraint, value):
    """Whether ``value`` has the kind of type ``constraint`` is about (range aside)."""
    if constraint is None:
        return value is None
    if isinstance(constraint, Interval):
        return isinstance(value, constraint.type) and not isinstance(value, (bool, np.bool_))
    if isinstance(constraint, StrOptions):
        return isinstance(value, str)
    if isinstance(constraint, Options):
        return isinstance(value, constraint.type)
    return make_constraint(constraint).is_satisfied_by(value)


def _satisfied(constraint, value):
    if constraint is None:
        return value is None
    if isinstance(constraint, Interval) and isinstance(value, (bool, np.bool_)):
        return False  # True is an Integral to Python, never a count or a weight here
    return make_constraint(constraint).is_satisfied_by(value)


def check_param(value, name, constraints):
    """Return ``value`` if it satisfies one of ``constraints``, else raise.

    Parameters
    ----------
    value : object
        The argument as the user passed it.
    name : str
        How the argument is named in the message (``"lam"``,
        ``"solver_options['step']"``).
    constraints : list
        scikit-learn ``_param_validation`` constraints (``Interval``,
        ``StrOptions``, ``Options``, ``None``, ``"boolean"``, ...); the value
        must satisfy at least one.

    Returns
    -------
    object
        ``value`` unchanged (real intervals return a float, integer ones an int).

    Raises
    ------
    TypeError
        When the value is of a kind no constraint accepts.
    ValueError
        When the kind is right but the value is out of range or not an option.

    Examples
    --------
    >>> from prune_opt._validation import FINITE_NONNEG, check_param
    >>> check_param(2, "lam", [FINITE_NONNEG])
    2.0
    >>> check_param(-1.0, "lam", [FINITE_NONNEG])
    Traceback (most recent call last):
    ...
    ValueError: lam must be a finite non-negative real number, got -1.0
    """
    for c in constraints:
        if _satisfied(c, value):
            if isinstance(c, Interval):
                return int(value) if c.type is Integral else float(value)
            return value
    wanted = " or ".join(_describe(c) for c in constraints)
    msg = f"{name} must be {wanted}, got {value!r}"
    if any(_type_fits(c, value) for c in constraints):
        raise ValueError(msg)
    raise TypeError(msg)


def check_params(values, spec, *, name):
    """Check a mapping of options against ``{key: constraints}``; return a dict.

    Unknown keys raise a ``ValueError`` listing the known ones, with a
    "did you mean" hint for close misspellings.

    Examples
    --------
    >>> from prune_opt._validation import POSITIVE_INT, StrOptions, check_params
    >>> spec = {"max_iter": [POSITIVE_INT], "step": [StrOptions({"polyak", "constant"})]}
    >>> check_params({"max_iter": 10}, spec, name="solver_options")
    {'max_iter': 10}
    >>> check_params({"max_itr": 10}, spec, name="solver_options")
    Traceback (most recent call last):
    ...
    ValueError: solver_options has unknown key 'max_itr' (did you mean 'max_iter'?); known keys: ['max_iter', 'step']
    """
    if not hasattr(values, "items"):
        raise TypeError(f"{name} must be a dict, got {type(values).__name__}")
    for key in values:
        if key not in spec:
            close = difflib.get_close_matches(str(key), [str(k) for k in spec], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"{name} has unknown key {key!r}{hint}; known keys: "
                             f"{sorted(spec)}")
    return {key: check_param(v, f"{name}[{key!r}]", spec[key]) for key, v in values.items()}


def check_nonneg_scalar(value, name, *, allow_none=False):
    """A finite number >= 0 (or None when allowed), returned as float.

    Examples
    --------
    >>> from prune_opt._validation import check_nonneg_scalar
    >>> check_nonneg_scalar(3, "budget")
    3.0
    """
    return check_param(value, name, [FINITE_NONNEG, None] if allow_none else [FINITE_NONNEG])


# a limit above this many seconds (about three years) is no limit
NO_LIMIT_ABOVE = 1e8
# relative slack of every "fits the budget" test: float round-off of an average cost
BUDGET_RTOL = 1e-10


def check_time_limit(time_limit, name="time_limit"):
    """The one ``time_limit`` rule: seconds for the whole call, ``None`` or ``inf``
    (anything above ``NO_LIMIT_ABOVE``) for no limit; returns a float or None.

    Examples
    --------
    >>> from prune_opt._validation import check_time_limit
    >>> check_time_limit(float("inf")) is None, check_time_limit(2)
    (True, 2.0)
    """
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, Real):
        raise TypeError(f"{name} must be a number of seconds or None, got {time_limit!r}")
    value = float(time_limit)
    if math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be >= 0 seconds (or None / inf for no limit), "
                         f"got {time_limit!r}")
    return None if value > NO_LIMIT_ABOVE else value


def fits_budget(cost, budget):
    """True when an average cost meets ``budget`` (up to float round-off, relative
    ``BUDGET_RTOL``): the one test every budget path uses.

    Examples
    --------
    >>> from prune_opt._validation import fits_budget
    >>> fits_budget(4.0 + 1e-14, 4.0), fits_budget(4.001, 4.0)
    (True, False)
    """
    return cost <= budget * (1.0 + BUDGET_RTOL)


# ------------------------------------------------------------ arrays
def _dense_from_sparse(X, forest, name):
    """Densify a small scipy sparse ``X``; refuse big ones.  Implicit entries are zeros,
    or NaN for a forest that reads them as missing (``forest.absent_is_missing``, an
    XGBoost model: its DMatrix treats entries absent from a sparse matrix so)."""
    n_cells = int(np.prod(X.shape))
    if n_cells > MAX_DENSE_FROM_SPARSE:
        raise ValueError(
            f"{name} is a scipy sparse matrix of shape {X.shape}; routing needs dense rows "
            f"and its dense copy would take {n_cells * 8 / 2**30:.1f} GiB. Pass a dense "
            "array of fewer rows (e.g. a sample of X), or prune on X[:k].toarray()")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_examples, {forest.n_features})")
    if np.issubdtype(X.dtype, np.complexfloating):
        raise TypeError(f"{name} is complex; pass real-valued features")
    if not getattr(forest, "absent_is_missing", False):
        return X.toarray()
    coo = sp.coo_matrix(X)
    coo.sum_duplicates()
    dense = np.full(coo.shape, np.nan)
    dense[coo.row, coo.col] = coo.data
    return dense


def _as_real_array(X, forest, name):
    if sp.issparse(X):
        return _dense_from_sparse(X, forest, name)
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):  # ragged nested lists
        raise TypeError(f"{name} must be a numeric 2-D array; got ragged rows") from None
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} is complex; pass real-valued features (X.real or np.abs(X), "
                        "whichever you mean)")
    try:
        return arr.astype(float, copy=False)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric; encode categorical columns first") from None


def _column_order(names, expected, name):
    """Positions in ``names`` (a DataFrame's columns) of the ``expected`` feature names:
    a frame with the forest's columns in another order is read by name; missing,
    unknown or repeated columns are refused, naming them."""
    seen, twice, known = set(), set(), set(expected)
    for c in names:  # linear time: frames may have many columns
        (twice if c in seen else seen).add(c)
    repeated = sorted(twice)
    missing = [c for c in expected if c not in seen]
    unknown = [c for c in names if c not in known]
    index = {c: k for k, c in enumerate(names)}
    if repeated or missing or unknown:
        what = "; ".join(p for p in (
            f"lacks {missing[:5]}" if missing else "",
            f"has columns the forest was not fitted on {unknown[:5]}" if unknown else "",
            f"repeats {repeated[:5]}" if repeated else "") if p)
        raise ValueError(f"{name} column names do not match the forest's feature names: it "
                         f"{what}; pass a DataFrame with exactly the columns "
                         f"{expected[:8]}{' ...' if len(expected) > 8 else ''} (in any order)")
    return [index[c] for c in expected]


def check_features(forest, X, name="X"):
    """Return ``X`` as a 2-D float ndarray that the forest can route.

    Checks dimensionality, emptiness, feature count, column names (a
    DataFrame's columns are matched by name to the forest's
    ``feature_names``, in any order), non-numeric and complex values, inf, and
    NaN when the forest cannot route it.  A scipy sparse ``X`` is densified when its dense copy is small
    (at most ``MAX_DENSE_FROM_SPARSE`` entries) and refused otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> from prune_opt._validation import check_features
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[1, 1], [1, 0], [0, 1]])
    >>> f = Forest([stump], classes=[0, 1], n_features=1)
    >>> check_features(f, [[0.1], [0.9]]).shape
    (2, 1)
    """
    if X is None:
        raise ValueError(f"{name} is None; pass a 2-D array of shape (n_examples, "
                         f"{forest.n_features})")
    columns = getattr(X, "columns", None)  # a DataFrame's, checked against feature_names
    names = None if columns is None else [str(c) for c in columns]
    arr = _as_real_array(X, forest, name)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D of shape (n_examples, {forest.n_features}), got shape "
            f"{arr.shape}; reshape a single example with X.reshape(1, -1)"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has no rows; pass at least one example")
    if arr.shape[1] != forest.n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features, but the forest was fitted on "
            f"{forest.n_features}; pass the same columns used for fitting"
        )
    if names is not None and forest.feature_names is not None and names != forest.feature_names:
        arr = arr[:, _column_order(names, forest.feature_names, name)]
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains inf; replace infinite values before pruning")
    if np.isnan(arr).any() and not forest.allow_nan:
        raise ValueError(
            f"{name} contains NaN and this forest cannot route missing values; impute them "
            "or fit a forest that supports missing values"
        )
    return arr


def _label_vector(y, n_rows, name):
    """``y`` as a 1-D array of ``n_rows`` labels; an (n, 1) column is raveled with a warning."""
    if y is None:
        raise ValueError(f"{name} is None; pass the labels of the examples")
    if sp.issparse(y):
        raise TypeError(f"{name} is a scipy sparse matrix; pass a 1-D array of labels")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(f"{name} is a column vector of shape {y.shape}; it was raveled to "
                      f"({y.shape[0]},). Pass a 1-D array, e.g. y.ravel(), to silence this",
                      DataConversionWarning, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one label per example), got shape {y.shape}")
    if y.shape[0] != n_rows:
        raise ValueError(f"{name} has {y.shape[0]} labels for {n_rows} examples; pass one "
                         "label per row")
    return y


def _label_kind(values):
    kind = np.asarray(values).dtype.kind
    return "number" if kind in "biuf" else ("string" if kind in "US" else "object")


def check_targets(y, n_rows, *, name="y"):
    """Regression targets: 1-D, ``n_rows`` finite real numbers, as float64.

    Examples
    --------
    >>> from prune_opt._validation import check_targets
    >>> check_targets([1, 2.5], 2)
    array([1. , 2.5])
    >>> check_targets([1.0, float("nan")], 2)
    Traceback (most recent call last):
    ...
    ValueError: y contains NaN or inf; a regression forest is pruned on finite targets: drop or impute those rows
    """
    y = _label_vector(y, n_rows, name)
    if np.iscomplexobj(y) or y.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers for a regression forest, got dtype "
                        f"{y.dtype}; convert the target (e.g. y.astype(float)) or fit a "
                        "classifier for class labels")
    y = y.astype(float)
    if not np.isfinite(y).all():
        raise ValueError(f"{name} contains NaN or inf; a regression forest is pruned on finite "
                         "targets: drop or impute those rows")
    return y


def check_labels(forest, y, n_rows, *, name="y"):
    """Encode labels as class indices of the forest, refusing unknown labels.

    ``y`` must be 1-D with ``n_rows`` entries (an ``(n, 1)`` column is raveled
    with a ``DataConversionWarning``), and every label must be one of the
    forest's ``classes_`` (numbers never match strings: ``"1"`` is not ``1``).
    For a regression forest (``forest.task == "regression"``) ``y`` holds
    the real targets and is returned as float64 (see :func:`check_targets`).

    Returns
    -------
    ndarray of int64, shape (n_rows,)
        Index of each label in ``forest.classes_`` (regression: the targets,
        float64).

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> from prune_opt._validation import check_labels
    >>> leaf = dict(left=[-1], right=[-1], feature=[-1], threshold=[0], value=[[1, 1]])
    >>> f = Forest([leaf], classes=["no", "yes"], n_features=1)
    >>> check_labels(f, ["yes", "no", "yes"], 3)
    array([1, 0, 1])
    """
    if getattr(forest, "task", "classification") == "regression":
        return check_targets(y, n_rows, name=name)
    y = _label_vector(y, n_rows, name)
    classes = forest.classes_
    kind, class_kind = _label_kind(y), _label_kind(classes)
    if kind != class_kind and "object" not in (kind, class_kind):
        raise ValueError(
            f"{name} holds {kind} labels but the forest's classes are "
            f"{class_kind}s {classes.tolist()}; pass labels of the same type "
            + ("(e.g. y.astype(int) if the strings are numbers)" if kind == "string"
               else "(the labels the forest was fitted on)"))
    order = np.argsort(classes, kind="stable")
    sorted_classes = classes[order]
    try:
        pos = np.searchsorted(sorted_classes, y)
    except TypeError:
        raise ValueError(f"{name} labels are not comparable with the forest's classes "
                         f"{classes.tolist()}; pass labels the forest was fitted on") from None
    pos = np.clip(pos, 0, classes.size - 1)
    ok = sorted_classes[pos] == y
    if not np.all(ok):
        unknown = list(dict.fromkeys(y[~ok].tolist()))[:5]
        raise ValueError(
            f"{name} contains labels {unknown} unknown to the forest (classes "
            f"{classes.tolist()}); pass labels the forest was fitted on"
        )
    return order[pos].astype(np.int64)


def check_classification(forest, what):
    """Refuse a regression forest where only class probabilities make sense.

    Examples
    --------
    >>> from prune_opt import Forest
    >>> from prune_opt._validation import check_classification
    >>> leaf = dict(left=[-1], right=[-1], feature=[-1], threshold=[0], value=[[2.0]])
    >>> check_classification(Forest([leaf], classes=None, n_features=1), "objective='brier'")
    Traceback (most recent call last):
    ...
    ValueError: objective='brier' scores class probabilities, but this is a regression forest; use objective='paper' (the normalised squared error) instead
    """
    if getattr(forest, "task", "classification") == "regression":
        raise ValueError(f"{what} scores class probabilities, but this is a regression "
                         "forest; use objective='paper' (the normalised squared error) instead")


def refuse_train_for_boosted(forest, train):
    """The one rule for ``train=`` with a boosted model: refused, the same way by every
    entry that takes it (``prune``, ``fit_budget``, ``compile_problem``).

    A boosted model's errors are counted on the pruning rows ``(X, y)``: each of its
    trees fits (the gradients of) every training row, so there is no in-bag sample
    to count on, and on the rows the trees were fitted to every split looks better
    than it is.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from prune_opt._validation import refuse_train_for_boosted
    >>> def kind(in_bag):
    ...     return SimpleNamespace(ensemble=SimpleNamespace(in_bag_errors=in_bag))
    >>> refuse_train_for_boosted(kind(True), ([[0.0]], [0]))
    >>> refuse_train_for_boosted(kind(False), ([[0.0]], [0]))
    Traceback (most recent call last):
    ...
    ValueError: train=: a boosted model's errors are counted on the pruning rows (X, y); its trees each fit every training row, so there is no in-bag sample to count on and on those rows every split looks better than it is: drop train= and pass rows the model was not trained on as X, y
    """
    ensemble = getattr(forest, "ensemble", None)
    if train is not None and ensemble is not None and not ensemble.in_bag_errors:
        raise ValueError("train=: a boosted model's errors are counted on the pruning rows "
                         "(X, y); its trees each fit every training row, so there is no "
                         "in-bag sample to count on and on those rows every split looks "
                         "better than it is: drop train= and pass rows the model was not "
                         "trained on as X, y")


def check_weights(weights, n, name="sample_weight"):
    """Per-example weights: ones when None, else finite, non-negative, shape (n,).

    Examples
    --------
    >>> from prune_opt._validation import check_weights
    >>> check_weights(None, 2)
    array([1., 1.])
    """
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"{name} must be finite and non-negative")
    return w


def scale_weights(weights, *, limit=2.0**20):
    """Weights whose largest value lies outside ``[1/limit, limit]`` multiplied by a
    power of two bringing it into [1, 2): exact (no rounding), and the program is
    invariant to a common factor, while LP solvers fail on coefficients near 1e18.
    Ordinary weights, None and a dask collection are returned as they are.

    Examples
    --------
    >>> from prune_opt._validation import scale_weights
    >>> scale_weights([2.0**70, 2.0**69])
    array([1. , 0.5])
    >>> scale_weights([3.0, 1.0])
    [3.0, 1.0]
    """
    if weights is None or type(weights).__module__.split(".")[0] in ("dask", "dask_expr"):
        return weights
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        return weights  # check_weights names the problem
    top = np.max(w) if w.size else 0.0
    if not (np.isfinite(top) and top > 0) or 1.0 / limit <= top <= limit:
        return weights
    return np.ldexp(w, 1 - np.frexp(top)[1])
