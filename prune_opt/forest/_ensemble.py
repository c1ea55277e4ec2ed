"""How the trees of a forest combine into one prediction, and every policy that follows.

A random forest *averages* its trees' node values (class distributions, or
node means for regression).  A gradient-boosted model *adds* its trees' raw
scores to an initial score and applies a link:

* ``"identity"`` -- regression: the prediction is the raw score;
* ``"logistic"`` -- binary classification: one raw score ``s`` per example,
  ``P(class 1) = 1 / (1 + exp(-s))``;
* ``"softmax"`` -- multiclass: one raw score per class; every boosting round
  grows one tree per class, and tree ``t`` adds to class ``tree_class[t]``.

:class:`Ensemble` is that one field of the IR, and it comes in two *kinds*,
:class:`Averaged` and :class:`Additive` (``Ensemble("averaged")`` and
``Ensemble("additive", link, ...)`` build them).  As scikit-learn's
HistGradientBoosting keeps link, initial score, gradient and Hessian in its
loss object and its grower never names one, an additive kind holds a
:class:`Loss` (:class:`SquaredErrorLoss`, :class:`BinaryLogLoss`,
:class:`MultinomialLogLoss`), and the kind answers every question whose
answer depends on how the trees combine: its own loss and default objective,
which rows count the errors (``in_bag_errors``), how its node errors and node
values are made (``error_rule``, ``fits_node_values``, ``refit_method``),
which baselines apply, whether it predicts a regression target.  The rest of
the library asks the kind; only the kind itself, the importers and the file
codecs look at which kind it is.  See ``docs/math/boosting.md`` for the
boosted program these answers compile.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
from scipy.special import expit, log_expit, logsumexp

__all__ = ["Ensemble", "Averaged", "Additive", "Loss", "SquaredErrorLoss", "BinaryLogLoss",
           "MultinomialLogLoss", "KINDS", "LINKS"]

KINDS = ("averaged", "additive")
LINKS = ("identity", "logistic", "softmax")


def target_unit(y):
    """A power of two near the targets' magnitude (1 for moderate targets): dividing by it
    is exact and keeps every square of a target finite (targets near 1e160 would
    overflow when squared).

    Examples
    --------
    >>> import numpy as np
    >>> target_unit(np.array([1.0, -3.0])), target_unit(np.array([1e160])) > 1e150
    (1.0, True)
    """
    top = float(np.max(np.abs(y))) if np.size(y) else 0.0
    if not np.isfinite(top) or 2.0**-400 <= top <= 2.0**400 or top == 0.0:
        return 1.0
    return float(2.0 ** np.floor(np.log2(top)))


def regression_scale(y, w):
    """``(unit, scale, centre)`` of regression targets with row weights ``w``: the error
    term works on ``y / unit - centre`` (``centre`` the weighted mean) and divides
    squared errors by ``scale`` (the weighted variance), all in units of ``unit`` (a
    power of two, :func:`target_unit`: squares of targets near 1e160 would overflow).

    A variance of 0 (constant targets) would make the normalised error undefined:
    the scale is then 1 (the error term is the plain mean squared error, in units
    of ``unit**2``) and a warning says so.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt.forest._ensemble import regression_scale
    >>> regression_scale(np.array([1.0, 3.0]), np.ones(2))
    (1.0, 1.0, 2.0)
    """
    unit = target_unit(y)
    y = y / unit
    w = np.asarray(w, dtype=float)
    total = w.sum()
    if total <= 0:
        return unit, 1.0, 0.0
    centre = float(w @ y / total)
    var = float(w @ (y - centre) ** 2 / total)
    if not var > 1e-24 * max(float(w @ (y * y) / total), np.finfo(float).tiny):
        units = "squared target units" if unit == 1.0 else f"units of ({unit:.6g})^2"
        warnings.warn("the regression targets of the error data are constant (variance 0), "
                      "so the error term cannot be normalised by their variance; it is the "
                      f"plain mean squared error ({units}): choose lam on that "
                      "scale", RuntimeWarning, stacklevel=2)
        return unit, 1.0, centre
    return unit, var, centre


class Loss:
    """The loss a boosted model minimises, in its raw score: the link, the per-row loss
    and its first and second derivatives (the diagonal of the Hessian).

    Attributes
    ----------
    name : str
        The objective of the same loss (``objective=`` of prune and fit_budget).
    link : str
    regression : bool
        Whether the target is real (else class indices).
    """

    name = link = ""
    regression = False

    def unit(self, y, init_score):
        """The power of two targets, scores and values are divided by (1 for a
        classifier; see :func:`target_unit`)."""
        return 1.0

    #: whether :meth:`unit` and :meth:`error_scale` read the targets (a distributed
    #: compile gathers them first)
    scales_by_targets = False

    def error_scale(self, y, w):
        """What the node errors of targets ``y`` (in units of :meth:`unit`, weights
        ``w``) are divided by: 1, or a regression loss's target variance
        (:func:`regression_scale`)."""
        return 1.0

    def targets(self, y, unit):
        """The targets as this loss reads them, in units of ``unit``: class indices as
        given, or real targets divided by ``unit``."""
        return np.asarray(y)

    def pointwise(self, raw, y):
        """Per-row loss of raw scores ``raw`` (n, width)."""
        raise NotImplementedError

    def gradients(self, raw, y):
        """``(g, h)``, both (n, width): first and second derivatives of
        :meth:`pointwise` in each raw score."""
        raise NotImplementedError

    def predict(self, raw):
        """The prediction of raw scores (n, width): class probabilities (n, n_classes),
        or the regression prediction (n, 1); may overwrite ``raw``."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


class SquaredErrorLoss(Loss):
    """``(s - y)^2``: regression, identity link."""

    name, link, regression = "squared_error", "identity", True
    scales_by_targets = True

    def targets(self, y, unit):
        return np.asarray(y, dtype=float) / unit

    def unit(self, y, init_score):
        return target_unit(np.concatenate([np.asarray(y, float), np.atleast_1d(init_score)]))

    def error_scale(self, y, w):
        return regression_scale(np.asarray(y, dtype=float), w)[1]

    def pointwise(self, raw, y):
        return (raw[:, 0] - y) ** 2

    def gradients(self, raw, y):
        return 2.0 * (raw[:, :1] - y[:, None]), np.full((raw.shape[0], 1), 2.0)

    def predict(self, raw):
        return raw


class BinaryLogLoss(Loss):
    """``-log p_y`` with ``p_1 = 1 / (1 + exp(-s))``: binary classification, logistic link."""

    name, link = "logloss", "logistic"

    def pointwise(self, raw, y):
        s = raw[:, 0]
        return -log_expit(np.where(y == 1, s, -s))

    def gradients(self, raw, y):
        p = expit(raw[:, :1])
        return p - (y[:, None] == 1), p * (1.0 - p)

    def predict(self, raw):
        p = expit(raw[:, 0])
        return np.column_stack([1.0 - p, p])


class MultinomialLogLoss(Loss):
    """``-log p_y`` with ``p = softmax(s)``: multiclass, one raw score per class."""

    name, link = "logloss", "softmax"

    def pointwise(self, raw, y):
        return logsumexp(raw, axis=1) - raw[np.arange(y.size), y]

    def gradients(self, raw, y):
        p = self.predict(raw.copy())
        g = p.copy()
        g[np.arange(y.size), y] -= 1.0
        return g, p * (1.0 - p)

    def predict(self, raw):
        raw -= raw.max(axis=1, keepdims=True)
        np.exp(raw, out=raw)
        raw /= raw.sum(axis=1, keepdims=True)
        return raw


LOSSES = {"identity": SquaredErrorLoss(), "logistic": BinaryLogLoss(),
          "softmax": MultinomialLogLoss()}


class Ensemble:
    """How per-tree values combine, and the policies that follow: the base of the two
    kinds, :class:`Averaged` (forests) and :class:`Additive` (boosting).

    ``Ensemble(kind, link, ...)`` builds the kind named by ``kind``.

    Parameters
    ----------
    kind : {"averaged", "additive"}, default "averaged"
    link : {"identity", "logistic", "softmax"}, default "identity"
        Additive ensembles only; an averaged forest's values are already
        predictions (class distributions or means).
    init_score : array-like, optional
        Raw score added to the sum of the trees (additive): one number, or one
        per class for ``"softmax"``.  Default zeros.
    tree_class : array-like of int, optional
        ``"softmax"``: the class column each tree adds to (its values are zero in
        every other column).  Default: ``t % n_classes`` (one tree per class per
        round, in class order, as LightGBM, XGBoost and scikit-learn store them).

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt.forest._ensemble import Ensemble
    >>> boost = Ensemble("additive", "logistic", init_score=[0.5])
    >>> boost.output(np.array([[-0.5], [1.5]]), n_trees=3).round(3)
    array([[0.5  , 0.5  ],
           [0.119, 0.881]])
    >>> Ensemble().output(np.array([[1.2, 0.8]]), n_trees=2)
    array([[0.6, 0.4]])
    >>> boost.own_loss("classification"), Ensemble().own_loss("classification")
    ('logloss', 'brier')
    """

    kind = ""
    #: the kind's loss object (None: an averaged forest's values are predictions)
    loss = None
    link = "identity"
    init_score = tree_class = None

    def __new__(cls, kind="averaged", link="identity", *, init_score=None, tree_class=None):
        if cls is Ensemble:
            if kind not in KINDS:
                raise ValueError(f"ensemble kind must be one of {KINDS}, got {kind!r}")
            cls = Averaged if kind == "averaged" else Additive
        return super().__new__(cls)

    @property
    def is_additive(self):
        """Whether raw scores are summed (for the kinds themselves, the importers and the
        file codecs; everything else asks the policy it needs)."""
        return self.kind == "additive"

    # ---------------------------------------------------------------- policy
    def is_regression(self, task):
        """Whether the forest predicts a real target."""
        return task == "regression"

    def values_to_fit(self, forest):
        """Whether ``forest``'s node values are still the source library's and the kind
        fits its own (:attr:`fits_node_values`; a booster read from its library,
        before :func:`~prune_opt.program._boosted.fitted_forest`)."""
        return self.fits_node_values and forest.node_value_fit is None

    def own_loss(self, task):
        """The objective of the forest's own loss (``objective=`` name)."""
        raise NotImplementedError

    def default_objective(self, task):
        """What ``prune`` minimises when ``objective`` is left out."""
        raise NotImplementedError

    def check_objective(self, objective):
        """Refuse an objective this kind cannot be scored by (a clear ValueError)."""

    def is_own_loss(self, objective_name):
        """Whether the objective named ``objective_name`` is the loss this kind's raw
        scores minimise (so its derivatives in the raw score are the loss's own)."""
        return False

    def own_gradients(self, objective_name, raw, y):
        """``(g, h)`` of the objective named ``objective_name`` in the raw scores ``raw``
        when it is this kind's own loss (:meth:`is_own_loss`), else None."""
        return None

    def refit_methods(self):
        """The leaf-refit methods that apply to this kind's node values, the default
        first (see :func:`prune_opt.refit_leaves`)."""
        return self.REFIT_METHODS

    def refits_by_counts(self):
        """Whether this kind's leaves are refit from the rows' class counts or means (a
        refit that keeps the structure and only re-estimates each leaf)."""
        return self.refit_method == "counts"

    def baseline_families(self, registered):
        """The registered baseline families (names) that apply to this kind: the impurity
        thresholds only where nodes have an impurity."""
        return [n for n in registered if n != "impurity" or self.has_impurity]

    def columns_of_trees(self, n_trees):
        """Per tree, the one value column it adds to, or None when every tree fills every
        column (so a column's total is the sum of its own trees' values)."""
        return None

    def describe(self):
        """What a forest's repr adds about its kind ('' for an averaged forest)."""
        return ""

    # ---------------------------------------------------------------- records
    def same_as(self, other):
        """Whether ``other`` combines trees exactly like this one."""
        return self.to_dict() == other.to_dict()

    @classmethod
    def from_dict(cls, spec):
        """The kind described by :meth:`to_dict`'s output."""
        if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
            raise ValueError(f"ensemble must be an object with kind one of {KINDS}")
        unknown = sorted(set(spec) - {"kind", "link", "init_score", "tree_class"})
        if unknown:
            raise ValueError(f"ensemble has unknown field(s) {unknown}")
        if spec["kind"] == "averaged":
            if len(spec) != 1:
                raise ValueError("an averaged ensemble has no other fields")
            return Averaged()
        return Additive("additive", spec.get("link"), init_score=spec.get("init_score"),
                        tree_class=spec.get("tree_class"))


class Averaged(Ensemble):
    """A forest: the trees' node values (class distributions or means) are averaged.

    Its policies: the paper's program by default (each tree a voter whose errors
    may be counted on its in-bag rows), its own loss the Brier score (squared
    error for regression), node errors counted per tree, refits by counts, every
    baseline family.
    """

    kind = "averaged"
    #: train= may count each tree's errors on its in-bag training rows (the paper's)
    in_bag_errors = True
    #: node values come from the source (class distributions, means): none fitted
    fits_node_values = False
    #: how refit_leaves refits the pruned leaves (the default), and every method that
    #: applies
    refit_method = "counts"
    REFIT_METHODS = ("counts", "global")
    #: how the program's node errors are counted (see prune_opt.program._compile_steps)
    error_rule = "tree errors"
    #: the name of the first-trees baseline
    truncation_name = "fewer-trees"
    #: where prune's block descent starts (both: they end up apart)
    descent_starts = ("paper", "full")
    #: objective="auto" picks the paper's error term or the own loss on held-out halves
    selects_objective_on_holdout = True
    #: no raw score (decision_function) to offer
    has_raw_score = False
    #: its nodes hold distributions or means, which have an impurity
    has_impurity = True
    #: a classifier's nodes hold class distributions (a saved one must have no empty one)
    holds_distributions = True
    #: whether its error rule reads the rows' leaves one block of rows at a time, in
    #: order (``leaves[a:b]``), so that a sampled compile can route them as they are read
    blockwise_errors = False

    def __init__(self, kind="averaged", link="identity", *, init_score=None, tree_class=None):
        if kind != "averaged" or link != "identity" or init_score is not None \
                or tree_class is not None:
            if link not in LINKS:
                raise ValueError(f"link must be one of {LINKS}, got {link!r}")
            raise ValueError("an averaged ensemble has no link, init_score or tree_class "
                             "(its node values are predictions); use kind='additive'")

    def own_loss(self, task):
        return "squared_error" if task == "regression" else "brier"

    def default_objective(self, task):
        return "paper"

    def width(self, task, n_classes):
        """Columns of a node value: the classes, or 1 for regression."""
        return 1 if task == "regression" else int(n_classes)

    def bind(self, task, n_classes, n_trees):
        """This ensemble checked against a forest (nothing to fill in)."""
        return self

    @property
    def round_size(self):
        return 1

    def select(self, trees):
        return self

    def raw(self, total, n_trees):
        """The average of a per-tree total (a copy)."""
        return total / n_trees if n_trees > 1 else total.copy()

    def output(self, total, n_trees, *, out=None):
        """The average of the trees' distributions or means; ``out`` may be ``total``
        itself (divided in place: the same values as ``total / n_trees``)."""
        if out is None:
            out = total.copy()
        elif out is not total:
            out[...] = total
        if n_trees > 1:
            out /= n_trees
        return out

    def check_values(self, value, task, n_classes, t):
        """Node class distributions (finite, non-negative, rows normalised) or node
        means (finite, one column)."""
        if task == "regression":
            if value.shape[1] != 1:
                raise ValueError(f"tree {t}: a regression forest (classes=None) needs one "
                                 f"value per node (the node mean), got {value.shape[1]} "
                                 "columns; pass classes= for a classification forest")
            if not np.isfinite(value).all():
                raise ValueError(f"tree {t}: node values must be finite")
            return value
        if value.shape[1] != n_classes:
            raise ValueError(f"tree {t}: value has {value.shape[1]} class columns, forest has "
                             f"{n_classes} classes")
        if not np.isfinite(value).all() or (value < 0).any():
            raise ValueError(f"tree {t}: value must be finite and non-negative")
        sums = value.sum(axis=1, keepdims=True)
        if not np.allclose(sums, 1.0, rtol=0, atol=1e-9):
            sums[sums == 0.0] = 1.0
            value = value / sums  # store distributions (sklearn >= 1.4 does too)
        return value

    def rescaled(self, value, shift, scale):
        """``(node values, ensemble)`` of the regression forest predicting ``shift +
        scale * prediction``: every node mean mapped so."""
        return value * scale + shift, self

    def to_dict(self):
        return {"kind": "averaged"}

    def __repr__(self):
        return "Ensemble('averaged')"


class Additive(Ensemble):
    """Boosting: raw scores summed onto an initial score, then a link (the kind's
    :class:`Loss`).

    Its policies: its own loss by default (log-loss or squared error) with the
    paper's program as the expansion of that loss, errors on the pruning rows
    only, node values fitted by the node-value rule and refitted by Newton steps,
    no impurity baseline (raw scores have none), rounds as the truncation unit.
    """

    kind = "additive"
    in_bag_errors = False  # each tree fits (the gradients of) every training row
    fits_node_values = True  # the Hessian-weighted mean of a pruned node's rows
    refit_method = "newton"
    REFIT_METHODS = ("newton",)
    error_rule = "loss expansion"
    truncation_name = "fewer-rounds"
    # the expanded program is a second-order model of the own loss: the descent only
    # refines its optimum, and auto runs the own loss with that optimum among its starts
    descent_starts = ("paper",)
    selects_objective_on_holdout = False
    has_raw_score = True
    has_impurity = False  # raw scores
    holds_distributions = False
    blockwise_errors = True  # the loss expansion's moments, block by block

    def __init__(self, kind="additive", link="identity", *, init_score=None, tree_class=None):
        if link not in LINKS:
            raise ValueError(f"link must be one of {LINKS}, got {link!r}")
        self.link = link
        self.loss = LOSSES[link]
        width = None if init_score is None else np.atleast_1d(np.asarray(init_score, float))
        if width is not None and (width.ndim != 1 or not np.isfinite(width).all()):
            raise ValueError("init_score must be a finite number or a 1-D array of them")
        self.init_score = width
        self.tree_class = None if tree_class is None else np.asarray(tree_class, dtype=np.int64)

    # ---------------------------------------------------------------- policy
    def is_regression(self, task):
        return self.loss.regression

    def own_loss(self, task):
        return self.loss.name

    def default_objective(self, task):
        return self.loss.name

    def check_objective(self, objective):
        if not objective.boosted:
            raise ValueError(f"objective={objective.name!r} scores each tree's own prediction, "
                             "but a boosted model's trees are summed raw scores, not voters; "
                             f"use its own loss ({self.loss.name!r}) or another loss of the "
                             "model's prediction")

    def is_own_loss(self, objective_name):
        return objective_name == self.loss.name

    def own_gradients(self, objective_name, raw, y):
        return self.loss.gradients(raw, y) if self.is_own_loss(objective_name) else None

    def columns_of_trees(self, n_trees):
        return self.tree_class

    def describe(self):
        return f", link={self.link!r}"

    # ---------------------------------------------------------------- shape
    def width(self, task, n_classes):
        """Columns of a node value: 1 (regression or logistic), or the classes (softmax)."""
        return int(n_classes) if self.link == "softmax" else 1

    def bind(self, task, n_classes, n_trees):
        """This ensemble checked against a forest's task, classes and trees, with the
        defaults filled in (a new object)."""
        want = "regression" if self.loss.regression else "classification"
        if task != want:
            raise ValueError(f"link {self.link!r} predicts a {want} target, but the forest's "
                             f"task is {task!r}")
        if self.link == "logistic" and n_classes != 2:
            raise ValueError(f"link 'logistic' is binary: the forest needs 2 classes, has "
                             f"{n_classes}; use link='softmax' for more")
        if self.link == "softmax" and n_classes < 2:
            raise ValueError("link 'softmax' needs at least 2 classes")
        width = self.width(task, n_classes)
        init = np.zeros(width) if self.init_score is None else self.init_score
        if init.size == 1 and width > 1:
            init = np.full(width, float(init[0]))
        if init.size != width:
            raise ValueError(f"init_score has {init.size} values; link {self.link!r} with "
                             f"{n_classes} classes needs {width}")
        tree_class = None
        if self.link == "softmax":
            tree_class = (np.arange(n_trees) % width if self.tree_class is None
                          else self.tree_class)
            if tree_class.shape != (n_trees,) or (tree_class < 0).any() or (
                    tree_class >= width).any():
                raise ValueError(f"tree_class must give each of the {n_trees} trees a class "
                                 f"column in [0, {width})")
        elif self.tree_class is not None:
            raise ValueError(f"tree_class applies to link 'softmax', not {self.link!r}")
        return Additive("additive", self.link, init_score=init, tree_class=tree_class)

    @property
    def round_size(self):
        """Trees per boosting round: the classes for softmax, else 1."""
        if self.link == "softmax" and self.tree_class is not None and self.tree_class.size:
            return int(self.tree_class.max()) + 1
        return 1

    def select(self, trees):
        """The ensemble of the listed trees (a sub-forest keeps its init score)."""
        if self.tree_class is None:
            return self
        return Additive("additive", self.link, init_score=self.init_score,
                        tree_class=self.tree_class[np.asarray(trees, dtype=np.int64)])

    # ---------------------------------------------------------------- combining
    def raw(self, total, n_trees):
        """The raw score of a per-tree total: ``init + total``."""
        return total + self.init_score

    def output(self, total, n_trees, *, out=None):
        """The linked raw score: class probabilities (n, n_classes), or the regression
        prediction (n, 1)."""
        return self.loss.predict(total + self.init_score)

    def check_values(self, value, task, n_classes, t):
        """Raw scores: finite, the kind's width, zero outside a softmax tree's column."""
        width = self.width(task, n_classes)
        if value.shape[1] != width:
            raise ValueError(f"tree {t}: an additive ensemble with link {self.link!r} needs "
                             f"{width} value column(s) per node (raw scores), got "
                             f"{value.shape[1]}")
        if not np.isfinite(value).all():
            raise ValueError(f"tree {t}: node values must be finite")
        tc = self.tree_class
        if tc is not None and np.delete(value, tc[t], axis=1).any():
            raise ValueError(f"tree {t} adds to class column {tc[t]} only: its values "
                             "must be zero in every other column")
        return value

    # ---------------------------------------------------------------- the loss
    @property
    def loss_name(self):
        """The objective a boosted model minimises: ``"squared_error"`` or ``"logloss"``."""
        return self.loss.name

    def pointwise_loss(self, raw, y):
        """Per-row loss of raw scores ``raw`` (n, width) (the kind's :class:`Loss`)."""
        return self.loss.pointwise(raw, y)

    def gradients(self, raw, y):
        """First and second derivatives of :meth:`pointwise_loss` in each raw score, both
        (n, width): the terms of the second-order expansion (for softmax the diagonal of
        the Hessian, ``p_k (1 - p_k)``)."""
        return self.loss.gradients(raw, y)

    def rescaled(self, value, shift, scale):
        """``(node values, ensemble)`` of the regression model predicting ``shift + scale
        * prediction``: raw scores scaled, the initial score mapped."""
        out = copy.copy(self)
        out.init_score = self.init_score * scale + shift
        return value * scale, out

    # ---------------------------------------------------------------- records
    def to_dict(self):
        """JSON-ready description (see :meth:`Ensemble.from_dict`)."""
        out = {"kind": "additive", "link": self.link,
               "init_score": [float(v) for v in self.init_score]}
        if self.tree_class is not None:
            out["tree_class"] = [int(c) for c in self.tree_class]
        return out

    def __repr__(self):
        init = np.array2string(self.init_score, precision=4, separator=", ")
        return f"Ensemble('additive', {self.link!r}, init_score={init})"
