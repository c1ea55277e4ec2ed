"""VoteScorer scores prunings exactly as PrunedForest predicts and costs them."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import prune_opt as po
from prune_opt.budget import fewer_trees_prunings
from prune_opt.objectives import evaluate_objective
from prune_opt.objectives._scorer import VoteScorer
from tests.boosted_cases import boosted_cases
from tests.forest_cases import forest_cases


def _random_mask(forest, rng):
    from prune_opt.program._problem import close_under_parents

    return close_under_parents(forest, ~forest.is_leaf & (rng.random(forest.n_nodes) < 0.7))


def _vote_errors(pf, X, y):
    """Brute force of the accuracy objective: an example is right only when its class
    leads the vote strictly (exact ties count as errors, whatever predict picks)."""
    proba = pf.predict_proba(X)
    idx = np.searchsorted(pf.forest.classes_, y)
    own = proba[np.arange(len(y)), idx]
    rest = np.where(np.arange(proba.shape[1])[None, :] == idx[:, None], -np.inf, proba)
    return float(np.mean(own - rest.max(axis=1) <= 1e-9))


@given(case=forest_cases(), objective=st.sampled_from(["brier", "logloss", "accuracy"]))
@settings(max_examples=10)
def test_scores_match_pruned_forest(case, objective):
    f = po.Forest.from_sklearn(case["est"])
    Xv, yv, costs = case["X_val"], case["y_val"], case["costs"]
    scorer = VoteScorer(f, Xv, yv, costs, objective)
    mask = _random_mask(f, np.random.default_rng(case["seed"]))
    pf = po.PrunedForest(f, mask, costs=costs)
    loss, cost = scorer.score(mask)
    assert np.isclose(cost, pf.average_cost(Xv), rtol=1e-12, atol=0)
    if objective == "accuracy":
        assert np.isclose(loss, _vote_errors(pf, Xv, yv), rtol=0, atol=1e-12)
    else:
        ref = evaluate_objective(pf, Xv, yv, objective=objective, lam=0.0)["loss"]
        assert np.isclose(loss, ref, rtol=1e-12, atol=1e-15)
    for (m, sub), (s_m, s_loss, s_cost) in zip(fewer_trees_prunings(f, costs=costs)[::-1],
                                               scorer.prefix_scores(), strict=True):
        assert sub.n_trees == m == s_m
        assert np.isclose(s_cost, sub.average_cost(Xv), rtol=1e-12, atol=0)  # sum order
        if objective == "accuracy":
            assert np.isclose(s_loss, _vote_errors(sub, Xv, yv), rtol=0, atol=1e-12)


@given(case=forest_cases(), seed=st.integers(0, 10))
@settings(max_examples=10, deadline=None)
def test_scoring_also_another_objective_matches_two_separate_scorings(case, seed):
    """One routing scored in two objectives gives what each scorer gives alone."""
    f = po.Forest.from_sklearn(case["est"])
    X, y, costs = case["X_val"], case["y_val"], case["costs"]
    brier = VoteScorer(f, X, y, costs, "brier")
    acc = VoteScorer(f, X, y, costs, "accuracy", routed=brier.routed)
    rng = np.random.default_rng(seed)
    mask = _random_mask(f, rng)
    trees = sorted(rng.choice(f.n_trees, size=max(1, f.n_trees // 2), replace=False))
    for t in (None, trees):
        loss, cost, other = brier.score(mask, t, also=acc)
        assert (loss, cost) == brier.score(mask, t)
        assert other == acc.score(mask, t)[0]
    # the first rounds in both objectives, from one pass, as each scorer alone
    both = brier.prefix_scores(also=acc)
    assert [b[:3] for b in both] == brier.prefix_scores()
    assert [(m, r, c) for m, _, c, r in both] == acc.prefix_scores()


@settings(deadline=None)
@given(st.lists(st.integers(0, 200), min_size=1, max_size=12), st.integers(1, 200))
def test_one_standard_error_set_by_counting_errors(wrong, n):
    """The rule's set, checked against the binomial standard error computed from error
    counts: the lowest rate is always kept, a rate is kept exactly when it is at most
    the lowest plus one standard error."""
    from prune_opt.budget import within_one_standard_error

    wrong = [min(w, n) for w in wrong]
    keep, se = within_one_standard_error([w / n for w in wrong], n)
    low = min(wrong) / n
    assert se == np.sqrt(low * (1 - low) / n)
    assert keep[int(np.argmin(wrong))]
    for w, k in zip(wrong, keep):
        assert k == (w / n <= low + se + 1e-12)


@settings(max_examples=20, deadline=None)
@given(case=boosted_cases(), data=st.data())
def test_a_sequence_scored_by_differences_scores_as_each_alone(case, data):
    """Masks scored one after another (few trees changing, or many) give the scores a
    fresh scorer gives each: the loss to round-off, the cost exactly."""
    model, _, _, Xv, yv, costs, task = case
    f = po.as_forest(model)
    objective = "squared_error" if task == "regression" else data.draw(
        st.sampled_from(["logloss", "brier", "accuracy"]))
    running = VoteScorer(f, Xv, yv, costs, objective)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    mask = _random_mask(f, rng)
    for _ in range(data.draw(st.integers(1, 6))):
        if data.draw(st.booleans()):  # one tree re-pruned
            t = int(rng.integers(f.n_trees))
            fresh_tree = _random_mask(f, rng)
            sl = f.tree_slice(t)
            mask = mask.copy()
            mask[sl] = fresh_tree[sl]
        else:
            mask = _random_mask(f, rng)
        loss, cost = running.score(mask)
        ref_loss, ref_cost = VoteScorer(f, Xv, yv, costs, objective).score(mask)
        assert np.isclose(loss, ref_loss, rtol=1e-12, atol=1e-12)
        assert cost == ref_cost
