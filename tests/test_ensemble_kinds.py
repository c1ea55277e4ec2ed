"""The ensemble kinds own their policy: each answer per kind, and no module outside the
kinds, the importers and the file codecs asks which kind an ensemble is."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from prune_opt.forest._ensemble import (
    Additive,
    Averaged,
    BinaryLogLoss,
    Ensemble,
    MultinomialLogLoss,
    SquaredErrorLoss,
)
from prune_opt.objectives import get_objective

ROOT = Path(__file__).resolve().parents[1]
# the kinds themselves, the importers, the exporters and the file codec may look at the kind
ALLOWED = ("prune_opt/forest/_ensemble.py", "prune_opt/importers/", "prune_opt/exporters/",
           "prune_opt/model/_codec.py")
#: attributes that say which kind (or loss) an ensemble is
KIND_ATTRIBUTES = {"kind", "link", "regression", "refit_method", "error_rule", "is_additive"}
#: the kinds' own words
KIND_WORDS = {"identity", "logistic", "softmax", "counts", "newton", "loss expansion",
              "tree errors", "averaged", "additive"}


def _owner(expr):
    """The last name of what an attribute is read from (``forest.ensemble`` -> ensemble)."""
    v = expr.value
    return v.attr if isinstance(v, ast.Attribute) else getattr(v, "id", "")


def _names_the_kind(expr):
    """Whether an expression reads a kind attribute, a loss's name or a kind's word (an
    array's ``dtype.kind`` and a solver's ``self.kind`` are other kinds)."""
    if isinstance(expr, ast.Attribute):
        if expr.attr == "kind":
            return _owner(expr) in ("ensemble", "ens")
        if expr.attr in KIND_ATTRIBUTES:
            return True
        return expr.attr == "name" and (
            (isinstance(expr.value, ast.Name) and expr.value.id == "loss")
            or (isinstance(expr.value, ast.Attribute) and expr.value.attr == "loss"))
    return isinstance(expr, ast.Constant) and expr.value in KIND_WORDS


def kind_branches(tree):
    """Line numbers of the comparisons and branches on the ensemble's kind: a comparison
    with a kind attribute, a loss's name or a kind's word on either side, and an
    ``if``/conditional/``and``/``or``/``not`` whose test is a kind attribute itself."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            # a rule looked up in a table (``rule in ERROR_RULES``) asks the table
            lookup = all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and all(
                isinstance(c, ast.Name) and c.id.isupper() for c in node.comparators)
            if not lookup and any(_names_the_kind(s) for s in (node.left, *node.comparators)):
                found.append(node.lineno)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            if _names_the_kind(node.test) and not isinstance(node.test, ast.Constant):
                found.append(node.lineno)
        elif isinstance(node, ast.BoolOp):
            found += [v.lineno for v in node.values
                      if isinstance(v, ast.Attribute) and _names_the_kind(v)]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            if isinstance(node.operand, ast.Attribute) and _names_the_kind(node.operand):
                found.append(node.lineno)
    return sorted(set(found))


def test_the_guard_sees_every_form_of_asking():
    src = """
if loss.regression: pass
x = a if ens.kind == "additive" else b
ok = f.ensemble.link == "softmax"
ok = loss is None or loss.name != self.name
ok = method == "newton"
ok = forest.ensemble.refit_method
ok = forest.ensemble.refits_by_counts()
"""
    assert kind_branches(ast.parse(src)) == [2, 3, 4, 5, 6]


def test_no_module_outside_the_kinds_asks_which_kind():
    found = []
    for pkg in ("prune_opt", "forest_builders"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(ALLOWED):
                continue
            found += [f"{rel}:{line}" for line in kind_branches(ast.parse(path.read_text()))]
    assert found == [], "ask the kind's policy instead: " + ", ".join(found)


def test_the_factory_builds_each_kind():
    assert type(Ensemble()) is Averaged
    assert type(Ensemble("additive", "logistic")) is Additive
    with pytest.raises(ValueError, match="kind must be one of"):
        Ensemble("stacked")
    with pytest.raises(ValueError, match="averaged ensemble has no link"):
        Ensemble("averaged", "logistic")
    for link, loss in (("identity", SquaredErrorLoss), ("logistic", BinaryLogLoss),
                       ("softmax", MultinomialLogLoss)):
        assert isinstance(Ensemble("additive", link).loss, loss)


@pytest.mark.parametrize("spec", [{"kind": "averaged"},
                                  {"kind": "additive", "link": "logistic", "init_score": [0.5]},
                                  {"kind": "additive", "link": "softmax",
                                   "init_score": [0.1, 0.2, 0.3], "tree_class": [0, 1, 2]}])
def test_records_round_trip(spec):
    kind = Ensemble.from_dict(spec)
    assert kind.to_dict() == spec
    assert Ensemble.from_dict(kind.to_dict()).same_as(kind)


def test_each_kind_answers_its_policy():
    forest, boost = Ensemble(), Ensemble("additive", "logistic").bind("classification", 2, 3)
    reg = Ensemble("additive", "identity").bind("regression", None, 3)
    assert (forest.own_loss("classification"), forest.own_loss("regression")) == (
        "brier", "squared_error")
    assert boost.own_loss("classification") == "logloss" == boost.default_objective("x")
    assert forest.default_objective("classification") == "paper"
    assert reg.is_regression("regression") and not boost.is_regression("classification")
    assert forest.in_bag_errors and not boost.in_bag_errors
    assert (forest.refit_method, boost.refit_method) == ("counts", "newton")
    assert (forest.error_rule, boost.error_rule) == ("tree errors", "loss expansion")
    assert (forest.truncation_name, boost.truncation_name) == ("fewer-trees", "fewer-rounds")
    names = ["ccp", "greedy", "impurity"]
    assert forest.baseline_families(names) == names
    assert boost.baseline_families(names) == ["ccp", "greedy"]
    assert forest.has_raw_score is False and boost.has_raw_score is True
    with pytest.raises(ValueError, match="summed raw scores, not voters"):
        boost.check_objective(get_objective("tree_error"))
    forest.check_objective(get_objective("tree_error"))


def test_a_rescaled_regression_kind_predicts_the_mapped_prediction():
    rng = np.random.default_rng(0)
    leaves = rng.normal(size=(2, 4, 1))  # two trees' leaf values for four rows
    for kind in (Ensemble(), Ensemble("additive", "identity", init_score=[0.7]).bind(
            "regression", None, 2)):
        before = kind.output(leaves.sum(axis=0), 2)
        values, new_kind = kind.rescaled(leaves, 3.0, 2.0)
        after = new_kind.output(values.sum(axis=0), 2)
        assert np.allclose(after, 3.0 + 2.0 * before)


def test_the_losses_derivatives_match_finite_differences():
    rng = np.random.default_rng(1)
    for loss, width, y in ((SquaredErrorLoss(), 1, rng.normal(size=6)),
                           (BinaryLogLoss(), 1, rng.integers(0, 2, 6)),
                           (MultinomialLogLoss(), 3, rng.integers(0, 3, 6))):
        raw = rng.normal(size=(6, width))
        g, h = loss.gradients(raw, y)
        eps = 1e-5
        for k in range(width):
            up, down = raw.copy(), raw.copy()
            up[:, k] += eps
            down[:, k] -= eps
            fd = (loss.pointwise(up, y) - loss.pointwise(down, y)) / (2 * eps)
            fd2 = (loss.pointwise(up, y) - 2 * loss.pointwise(raw, y)
                   + loss.pointwise(down, y)) / eps**2
            assert np.allclose(g[:, k], fd, atol=1e-6)
            assert np.allclose(h[:, k], fd2, atol=1e-3)
