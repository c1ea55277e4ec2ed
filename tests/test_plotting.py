"""Plots are written and show what they claim."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.plotting import plot_feature_usage, plot_tradeoff


def test_tradeoff_plot_one_line_per_method(tmp_path):
    curves = {"budgetprune": [{"cost_eval": 3.0, "accuracy_eval": 0.9},
                              {"cost_eval": 1.0, "accuracy_eval": 0.8}],
              "ccp": [{"cost_eval": 2.0, "accuracy_eval": 0.7}]}
    out = tmp_path / "c.png"
    fig = plot_tradeoff(curves, path=out, reference=(4.0, 0.91), budget=2.5, title="t")
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.lines}
    assert {"budgetprune", "ccp"} <= set(lines)
    np.testing.assert_array_equal(lines["budgetprune"].get_xdata(), [1.0, 3.0])  # sorted
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tradeoff_plot_errors():
    with pytest.raises(TypeError, match="dict"):
        plot_tradeoff([])
    with pytest.raises(ValueError, match="X_eval"):
        plot_tradeoff({"a": [{"average_cost": 1.0}]})


def test_feature_usage_bars_match_usage(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    f = po.Forest.from_sklearn(rf)
    before = po.PrunedForest(f, f.full_split_mask())
    after = po.prune(rf, X, y, costs=[1, 1, 10, 10], lam=0.01, solver="highs")
    fig = plot_feature_usage(before, after, X, path=tmp_path / "u.png", top=3)
    ax = fig.axes[0]
    assert len(ax.get_xticklabels()) == 3
    # 2 (before/after) x 3 bins x 3 features bars; heights stack to 1 per bar group
    heights = np.array([p.get_height() for p in ax.patches]).reshape(6, 3)
    np.testing.assert_allclose(heights[:3].sum(axis=0), 1.0)
    np.testing.assert_allclose(heights[3:].sum(axis=0), 1.0)
    assert (tmp_path / "u.png").stat().st_size > 1000


def test_save_figure_is_atomic_and_checks_the_format(tmp_path, monkeypatch):
    import errno
    import os

    from prune_opt.plotting import save_figure

    fig = plot_tradeoff({"a": [{"cost_eval": 1.0, "accuracy_eval": 0.8}]})
    with pytest.raises(ValueError, match="cannot write 'xyz'"):
        save_figure(fig, tmp_path / "f.xyz")
    out = save_figure(fig, tmp_path / "sub" / "f.svg")  # parents created, format by suffix
    assert out.read_text().lstrip().startswith("<?xml")
    target = tmp_path / "f.png"
    target.write_bytes(b"old")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        save_figure(fig, target)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png", "sub"]


def test_exact_hull_is_drawn_as_steps_and_extra_points_as_markers():
    curves = {"budgetprune": [{"cost_eval": 0.0, "accuracy_eval": 0.1},
                              {"cost_eval": 35.0, "accuracy_eval": 0.94}]}
    fig = plot_tradeoff(curves, points={"fit_budget": [{"cost_eval": 10.0,
                                                        "accuracy_eval": 0.8}]},
                        budget=[10.0, 20.0])
    ax = fig.axes[0]
    hull = next(ln for ln in ax.lines if ln.get_label() == "budgetprune")
    assert hull.get_drawstyle() == "steps-post"  # no straight segment 0 -> 35
    labels = [c.get_label() for c in ax.collections]
    assert "fit_budget" in labels
    np.testing.assert_array_equal(ax.collections[labels.index("fit_budget")].get_offsets(),
                                  [[10.0, 0.8]])
    budget_lines = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert sorted(ln.get_xdata()[0] for ln in budget_lines) == [10.0, 20.0]
    assert [ln.get_label() for ln in budget_lines][0] == "budgets 10, 20"


def test_regression_curves_plot_r2_and_errors_name_the_r2_column():
    rows = [{"cost_eval": 1.0, "r2_eval": 0.3}, {"cost_eval": 2.0, "r2_eval": 0.5}]
    fig = plot_tradeoff({"ccp": rows})
    assert fig.axes[0].get_ylabel() == "R^2"
    with pytest.raises(ValueError, match=r"no column\(s\) \['accuracy_eval'\] \(it has "
                                         r"\['cost_eval', 'r2_eval'\]\)"):
        plot_tradeoff({"ccp": rows}, y="accuracy_eval")


def test_fit_budget_grid_is_a_marked_line_and_points_do_not_take_a_curves_colour():
    from matplotlib.colors import to_rgba

    curves = {"budgetprune": [{"cost_eval": 0.0, "accuracy_eval": 0.1},
                              {"cost_eval": 9.0, "accuracy_eval": 0.9}],
              "fit_budget": [{"cost_eval": 2.0, "accuracy_eval": 0.6},
                             {"cost_eval": 5.0, "accuracy_eval": 0.8}]}
    fig = plot_tradeoff(curves, points={"budget estimator": [{"cost_eval": 5.0,
                                                              "accuracy_eval": 0.85}]})
    ax = fig.axes[0]
    fb = next(ln for ln in ax.lines if ln.get_label() == "fit_budget")
    assert fb.get_linestyle() == "-." and fb.get_marker() == "P"  # not a budget line ("--")
    np.testing.assert_array_equal(fb.get_xdata(), [2.0, 5.0])
    est = next(c for c in ax.collections if c.get_label() == "budget estimator")
    line_colours = {to_rgba(ln.get_color()) for ln in ax.lines}
    assert tuple(est.get_facecolor()[0]) not in line_colours
