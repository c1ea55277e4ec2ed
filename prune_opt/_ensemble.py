"""How the trees of a forest combine into one prediction: averaged or additive.

A random forest *averages* its trees' node values (class distributions, or
node means for regression).  A gradient-boosted model *adds* its trees' raw
scores to an initial score and applies a link:

* ``"identity"`` -- regression: the prediction is the raw score;
* ``"logistic"`` -- binary classification: one raw score ``s`` per example,
  ``P(class 1) = 1 / (1 + exp(-s))``;
* ``"softmax"`` -- multiclass: one raw score per class; every boosting round
  grows one tree per class, and tree ``t`` adds to class ``tree_class[t]``.

:class:`Ensemble` is that one field of the IR.  Everything that turns a
per-tree total into a prediction (prediction, the ensemble objectives'
incremental state, lazy prediction, nested scoring, persistence, exports)
asks it, so averaged and additive ensembles share one pipeline.  It also
knows the loss a boosted model was trained on (squared error or log-loss),
with its first and second derivatives in the raw score, from which the
paper's program of a boosted model is compiled (see
``docs/math/boosting.md``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit, logsumexp

__all__ = ["Ensemble", "KINDS", "LINKS"]

KINDS = ("averaged", "additive")
LINKS = ("identity", "logistic", "softmax")


class Ensemble:
    """How per-tree values combine: averaged (forests) or summed raw scores (boosting).

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
    >>> from prune_opt._ensemble import Ensemble
    >>> boost = Ensemble("additive", "logistic", init_score=[0.5])
    >>> boost.output(np.array([[-0.5], [1.5]]), n_trees=3).round(3)
    array([[0.5  , 0.5  ],
           [0.119, 0.881]])
    >>> Ensemble().output(np.array([[1.2, 0.8]]), n_trees=2)
    array([[0.6, 0.4]])
    """

    def __init__(self, kind="averaged", link="identity", *, init_score=None, tree_class=None):
        if kind not in KINDS:
            raise ValueError(f"ensemble kind must be one of {KINDS}, got {kind!r}")
        if link not in LINKS:
            raise ValueError(f"link must be one of {LINKS}, got {link!r}")
        if kind == "averaged" and (link != "identity" or init_score is not None
                                   or tree_class is not None):
            raise ValueError("an averaged ensemble has no link, init_score or tree_class "
                             "(its node values are predictions); use kind='additive'")
        self.kind, self.link = kind, link
        width = None if init_score is None else np.atleast_1d(np.asarray(init_score, float))
        if width is not None and (width.ndim != 1 or not np.isfinite(width).all()):
            raise ValueError("init_score must be a finite number or a 1-D array of them")
        self.init_score = width
        self.tree_class = None if tree_class is None else np.asarray(tree_class, dtype=np.int64)

    # ---------------------------------------------------------------- shape
    @property
    def is_additive(self):
        return self.kind == "additive"

    def width(self, task, n_classes):
        """Columns of a node value: classes (averaged classifier), 1 (regression or
        logistic), or classes (softmax)."""
        if self.kind == "averaged":
            return 1 if task == "regression" else int(n_classes)
        return int(n_classes) if self.link == "softmax" else 1

    def bind(self, task, n_classes, n_trees):
        """This ensemble checked against a forest's task, classes and trees, with the
        defaults filled in (a new object)."""
        if self.kind == "averaged":
            return self
        want = {"identity": "regression"}.get(self.link, "classification")
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
        return Ensemble("additive", self.link, init_score=init, tree_class=tree_class)

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
        return Ensemble(self.kind, self.link, init_score=self.init_score,
                        tree_class=self.tree_class[np.asarray(trees, dtype=np.int64)])

    # ---------------------------------------------------------------- combining
    def raw(self, total, n_trees):
        """The raw score of a per-tree total: ``init + total`` (additive), the average
        (averaged; a copy either way)."""
        if self.kind == "averaged":
            return total / n_trees if n_trees > 1 else total.copy()
        return total + self.init_score

    def output(self, total, n_trees, *, out=None):
        """What the forest predicts from the sum ``total`` (n, width) of its trees'
        values: averaged class distributions or means; for an additive ensemble the
        linked raw score (class probabilities, (n, n_classes), or the regression
        prediction, (n, 1)).

        ``out`` may be ``total`` itself for an averaged ensemble (divided in place:
        the same values as ``total / n_trees``).
        """
        if self.kind == "averaged":
            if out is None:
                out = total.copy()
            elif out is not total:
                out[...] = total
            if n_trees > 1:
                out /= n_trees
            return out
        raw = total + self.init_score
        if self.link == "identity":
            return raw
        if self.link == "logistic":
            p = expit(raw[:, 0])
            return np.column_stack([1.0 - p, p])
        raw -= raw.max(axis=1, keepdims=True)
        np.exp(raw, out=raw)
        raw /= raw.sum(axis=1, keepdims=True)
        return raw

    @property
    def descent_starts(self):
        """Where the block descent of ``prune`` starts by default: the paper's optimum
        and the unpruned forest for an averaged forest (the two end up apart); the
        expanded program's optimum for a boosted model (a second-order model of its
        own loss, from which the descent only refines)."""
        return ("paper",) if self.kind == "additive" else ("paper", "full")

    @property
    def selects_objective_on_holdout(self):
        """Whether ``fit_budget(objective="auto")`` picks between the paper's error term
        and the own loss on held-out halves of the rows: an averaged forest's two
        objectives differ (per-tree errors against the vote's loss); a booster's
        program is already a second-order model of its own loss, so its own loss runs
        on all rows with the program's result among the candidates."""
        return self.kind == "averaged"

    def baseline_families(self, registered):
        """The registered baseline families (names) that apply to this kind: all but
        the impurity thresholds for a booster (its nodes hold raw scores, not class
        distributions or means)."""
        return [n for n in registered if not (self.kind == "additive" and n == "impurity")]

    # ---------------------------------------------------------------- the loss
    @property
    def loss_name(self):
        """The objective a boosted model minimises: ``"squared_error"`` or ``"logloss"``."""
        return "squared_error" if self.link == "identity" else "logloss"

    def pointwise_loss(self, raw, y):
        """Per-row loss of raw scores ``raw`` (n, width): squared error ``(s - y)^2``
        (``y`` real), or the log-loss ``-log p_y`` (``y`` class indices), computed
        without overflow."""
        if self.link == "identity":
            return (raw[:, 0] - y) ** 2
        if self.link == "logistic":
            s = raw[:, 0]
            return -log_expit(np.where(y == 1, s, -s))
        return logsumexp(raw, axis=1) - raw[np.arange(y.size), y]

    def gradients(self, raw, y):
        """First and second derivatives of :meth:`pointwise_loss` in each raw score,
        both (n, width): the terms of the second-order expansion (for softmax the
        diagonal of the Hessian, ``p_k (1 - p_k)``)."""
        if self.link == "identity":
            return 2.0 * (raw[:, :1] - y[:, None]), np.full((raw.shape[0], 1), 2.0)
        if self.link == "logistic":
            p = expit(raw[:, :1])
            return p - (y[:, None] == 1), p * (1.0 - p)
        p = np.exp(raw - logsumexp(raw, axis=1, keepdims=True))
        g = p.copy()
        g[np.arange(y.size), y] -= 1.0
        return g, p * (1.0 - p)

    # ---------------------------------------------------------------- records
    def to_dict(self):
        """JSON-ready description (see :meth:`from_dict`)."""
        if self.kind == "averaged":
            return {"kind": "averaged"}
        out = {"kind": "additive", "link": self.link,
               "init_score": [float(v) for v in self.init_score]}
        if self.tree_class is not None:
            out["tree_class"] = [int(c) for c in self.tree_class]
        return out

    @classmethod
    def from_dict(cls, spec):
        if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
            raise ValueError(f"ensemble must be an object with kind one of {KINDS}")
        unknown = sorted(set(spec) - {"kind", "link", "init_score", "tree_class"})
        if unknown:
            raise ValueError(f"ensemble has unknown field(s) {unknown}")
        if spec["kind"] == "averaged":
            if len(spec) != 1:
                raise ValueError("an averaged ensemble has no other fields")
            return cls()
        return cls("additive", spec.get("link"), init_score=spec.get("init_score"),
                   tree_class=spec.get("tree_class"))

    def same_as(self, other):
        """Whether ``other`` combines trees exactly like this one."""
        a, b = self.to_dict(), other.to_dict()
        return a == b

    def __repr__(self):
        if self.kind == "averaged":
            return "Ensemble('averaged')"
        init = np.array2string(self.init_score, precision=4, separator=", ")
        return f"Ensemble('additive', {self.link!r}, init_score={init})"
