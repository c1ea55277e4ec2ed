"""The solver registry: one ordered list, capability flags, install probe, "auto"."""

import pkgutil

import pytest

import prune_opt as po
import prune_opt.solvers as solvers
from prune_opt.solvers import _registry
from prune_opt.solvers._base import FLAGS, STATUSES, Solver, check_flags


def test_every_backend_module_is_listed_and_every_listed_module_is_a_backend():
    full = {_registry._module(m) for m in _registry.BACKEND_MODULES}
    modules = {f"prune_opt.solvers.{m.name}" for m in pkgutil.iter_modules(solvers.__path__)
               if not m.name.startswith("_")}
    assert modules == {m for m in full if m.startswith("prune_opt.solvers.")}
    listed = {cls.__module__ for cls in _registry.solver_classes().values()}
    assert listed == full


@pytest.mark.parametrize("name", list(_registry.solver_classes()))
def test_each_backend_declares_its_flags_and_status_map(name):
    cls = _registry.solver_classes()[name]
    check_flags(cls)
    for flag in FLAGS:
        assert flag in po.list_solvers()[name]
    assert "optimal" in cls.STATUS_MAP.values()
    if cls.mip:
        assert cls.supports_budget_row and cls.exact


def test_a_class_missing_a_flag_or_reusing_a_name_is_refused():
    class NoFlags(Solver):
        name = "no-flags"
        STATUS_MAP = {"ok": "optimal"}

    with pytest.raises(TypeError, match="must declare the flag 'exact'"):
        _registry.register_solver(NoFlags)

    class Clash(Solver):
        name = "highs"
        exact = mip = matrix_based = reference_only = supports_budget_row = False
        auto_rank = None
        STATUS_MAP = {"ok": "optimal"}

    with pytest.raises(ValueError, match="already registered"):
        _registry.register_solver(Clash)

    class BadMap(Clash):
        name = "bad-map"
        STATUS_MAP = {"ok": "fine"}

    with pytest.raises(TypeError, match="STATUS_MAP"):
        _registry.register_solver(BadMap)


def test_status_map_maps_limits_and_raises_on_errors():
    from prune_opt.solvers.ortools_lp import GlopSolver

    assert GlopSolver.map_status("OPTIMAL", time_limited=False) == "optimal"
    assert GlopSolver.map_status("NOT_SOLVED", time_limited=True) == "time_limit"
    with pytest.raises(po.SolverError, match="NOT_SOLVED"):
        GlopSolver.map_status("NOT_SOLVED", time_limited=False)
    with pytest.raises(po.SolverError, match="infeasible"):
        GlopSolver.map_status("INFEASIBLE", time_limited=False)
    with pytest.raises(po.SolverError, match="unmapped"):
        GlopSolver.map_status("SOMETHING_NEW", time_limited=False)
    assert set(STATUSES) >= {"optimal", "time_limit", "iteration_limit", "gap_limit"}


def test_a_listed_module_that_fails_to_import_is_an_error(monkeypatch):
    monkeypatch.setattr(_registry, "BACKEND_MODULES",
                        _registry.BACKEND_MODULES + ("no_such_backend",))
    monkeypatch.setattr(_registry, "_loaded", False)
    with pytest.raises(ImportError, match="no_such_backend.*BACKEND_MODULES"):
        po.list_solvers()


def _probe_class(requires):
    class Probe(Solver):
        name = "probe"
        exact = mip = matrix_based = reference_only = supports_budget_row = False
        auto_rank = None
        STATUS_MAP = {"ok": "optimal"}

    Probe.requires = requires
    return Probe


def test_install_probe_reports_missing_and_broken_packages(tmp_path, monkeypatch):
    (tmp_path / "prune_opt_broken_lib.py").write_text(
        "raise OSError('libbroken.so: cannot open shared object file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    missing = _probe_class(("prune_opt_no_such_package",))
    assert missing.install_status() == (False, "missing package 'prune_opt_no_such_package'")
    broken = _probe_class(("prune_opt_broken_lib",))
    ok, reason = broken.install_status()
    assert not ok and "OSError" in reason and "libbroken.so" in reason
    monkeypatch.setitem(_registry._REGISTRY, "probe", broken)
    info = po.list_solvers()["probe"]
    assert info["installed"] is False and "libbroken.so" in info["reason"]
    with pytest.raises(po.SolverError, match="'probe' is not installed.*libbroken"):
        solvers.get_solver("probe")


def test_auto_and_defaults_come_from_the_flags(monkeypatch):
    classes = _registry.solver_classes()
    ranked = sorted((c for c in classes.values() if c.auto_rank is not None
                     and c.is_installed()), key=lambda c: c.auto_rank)
    assert solvers.auto_solver() == ranked[0].name == "mincut"
    assert solvers.get_solver("auto").name == "mincut"
    assert solvers.default_solvers() == [n for n, c in classes.items()
                                         if not c.reference_only and c.is_installed()]
    from prune_opt.solvers.mincut import MinCutSolver

    monkeypatch.setattr(MinCutSolver, "is_installed", classmethod(lambda cls: False))
    assert solvers.auto_solver() == ranked[1].name
    assert "mincut" not in solvers.default_solvers()


def test_auto_with_a_budget_picks_a_backend_that_honours_it():
    from sklearn.datasets import load_iris
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    problem = po.compile_problem(tree, X, y, costs=[1, 2, 3, 4], lam=0.01, budget=2.0)
    name = solvers.auto_solver(problem)
    assert solvers.solver_classes()[name].supports_budget_row
    pruned = po.solve(problem)
    assert pruned.solve_info["solver"] == name
    assert pruned.breakdown.average_cost <= 2.0 + 1e-9


def test_find_solvers_filters_by_flag_and_rejects_unknown_flags():
    assert "cbc-ip" in solvers.find_solvers(mip=True)
    assert set(solvers.budget_solvers()) == set(solvers.find_solvers(supports_budget_row=True))
    with pytest.raises(TypeError, match="unknown flag"):
        solvers.find_solvers(fast=True)


def test_one_backend_table():
    from prune_opt.solvers import _base

    assert po.available_solvers() == solvers.available_solvers()
    # the backend table is one object, shared by the registry and the base class
    assert _base.SOLVER_CLASSES is _registry._REGISTRY and "highs" in _base.SOLVER_CLASSES


def test_cli_defaults_are_the_registry_defaults():
    from prune_opt.cli.compare import fast_solvers, parse_solvers

    assert parse_solvers("all") == solvers.default_solvers()
    assert "cbc-ip" not in parse_solvers("all")
    # without --solvers, compare runs the registry defaults that answer in seconds
    assert parse_solvers(None) == fast_solvers()
    assert set(fast_solvers()) < set(solvers.default_solvers())


def test_a_backend_asked_for_by_name_is_imported_alone():
    """solver='mincut' needs no other backend: the others are not imported to find it
    ('auto' and the listings still import every listed module)."""
    import ast
    import subprocess
    import sys

    code = ("import sys, prune_opt.solvers as s; s.get_solver('mincut'); "
            "print(sorted(m for m in sys.modules if m.startswith('prune_opt.solvers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "prune_opt.solvers.mincut" in out
    assert not {"highs", "cbc", "ortools_lp", "primal_dual"} & {
        m.rpartition(".")[2] for m in ast.literal_eval(out)}
