"""The estimator's opt-in candidate families, and the CatBoost family (off by default):
its registration, when it applies, what it grows and that it is used only when named."""

import pytest

from forest_builders import _candidates
from forest_builders._families import CANDIDATE_FAMILIES, resolve_families


@pytest.fixture
def opt_in_family():
    """A family registered with ``default=False`` (removed afterwards)."""
    saved = dict(CANDIDATE_FAMILIES)
    _candidates.register_family("opt-in", order=35, default=False)(lambda ctx: None)
    try:
        yield "opt-in"
    finally:
        CANDIDATE_FAMILIES.clear()
        CANDIDATE_FAMILIES.update(saved)


def test_an_opt_in_family_is_grown_only_when_named(opt_in_family):
    assert not CANDIDATE_FAMILIES[opt_in_family].default
    assert opt_in_family not in resolve_families(None, "classification")
    assert opt_in_family not in resolve_families(None, "regression")
    # named, it takes its place in the growing order among the others
    assert resolve_families(["gbm", opt_in_family, "rf"], "classification") == [
        "rf", opt_in_family, "gbm"]
