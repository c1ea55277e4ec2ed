import os

import pytest
from hypothesis import HealthCheck, settings

import prune_opt.datasets

_COMMON = dict(deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# CI: the same examples on every clone (derandomized); failures found by fuzzing are
# pinned in the tests as @example so they stay covered here
settings.register_profile("ci", max_examples=25, derandomize=True, database=None,
                          print_blob=True, **_COMMON)
settings.register_profile("dev", max_examples=10, **_COMMON)
# `make fuzz`: random exploration with many more examples (run before landing)
settings.register_profile("fuzz", max_examples=400, print_blob=True, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a command starts loading data (i.e. the real work)."""
    def refuse(*args, **kwargs):
        raise AssertionError("the command started its work before checking its arguments")

    monkeypatch.setattr(prune_opt.datasets, "load_dataset", refuse)
