"""The one ordered registry of solver backends and every lookup derived from it.

``BACKEND_MODULES`` lists the backend modules of this package in a fixed
order.  Each module defines its backend class(es) with
:func:`register_solver`; the capability flags those classes declare (see
:class:`~prune_opt.solvers.Solver`) are the only source for ``"auto"``, the
default solver lists of the command-line tools and the test parametrisation.
Adding a backend is one new module plus one line here.

A listed module that fails to import is an error (a broken backend is never
silently skipped); a backend whose *optional package* is missing is only
"not installed", with the reason in :func:`list_solvers`.
"""

from __future__ import annotations

import importlib

from ._base import FLAGS, SOLVER_CLASSES, Solver, SolverError, check_flags

__all__ = ["BACKEND_MODULES", "register_solver", "solver_classes", "list_solvers",
           "available_solvers", "find_solvers", "default_solvers", "auto_solver",
           "budget_solvers", "get_solver", "install_status"]

# the backend modules of this package, in registry order
BACKEND_MODULES = ("mincut", "highs", "ortools_lp", "cbc", "mincut_networkx", "primal_dual",
                   "budget")
# backends that live with their stage, not in this package: the hard-budget search is
# the budget stage's own method (it seeds from the baselines and runs their descent), and
# registers here like any backend; the registry imports it by name, never statically
STAGE_BACKENDS = {"budget": "prune_opt.budget._search"}

_REGISTRY: dict[str, type[Solver]] = SOLVER_CLASSES  # the one table, shared with _base
_loaded = False


def register_solver(cls):
    """Class decorator adding a backend class to the registry.

    The class must declare every capability flag (``exact``, ``mip``,
    ``matrix_based``, ``reference_only``, ``supports_budget_row``,
    ``auto_rank``) and a ``STATUS_MAP``; a second class under the same
    ``name`` is refused.

    Examples
    --------
    >>> from prune_opt.solvers import register_solver
    >>> from prune_opt.solvers.highs import HighsSolver
    >>> register_solver(HighsSolver) is HighsSolver
    True
    """
    check_flags(cls)
    other = _REGISTRY.get(cls.name)
    if other is not None and other.__qualname__ != cls.__qualname__:
        raise ValueError(f"solver name {cls.name!r} is already registered by "
                         f"{other.__module__}.{other.__qualname__}")
    _REGISTRY[cls.name] = cls
    return cls


def _module(mod):
    """Full dotted name of a listed backend module."""
    return STAGE_BACKENDS.get(mod, f"{__package__}.{mod}")


def _import(mod):
    full = _module(mod)
    try:
        importlib.import_module(full)
    except Exception as exc:
        raise ImportError(f"solver backend module {full} (listed in "
                          f"BACKEND_MODULES) failed to import: {type(exc).__name__}: "
                          f"{exc}") from exc


def _load():
    """Import every listed backend module once; an import failure is an error."""
    global _loaded
    if _loaded:
        return
    for mod in BACKEND_MODULES:
        _import(mod)
    _loaded = True


def _named(key):
    """The class registered as ``key``, importing only its module when the module
    is named like the backend (``"budget"``, ``"mincut"``); else every module."""
    if key not in _REGISTRY and key in BACKEND_MODULES:
        _import(key)
    if key not in _REGISTRY:
        _load()
    return _REGISTRY.get(key)


def solver_classes():
    """Registered backend classes by name, in registry order.

    Examples
    --------
    >>> from prune_opt.solvers import solver_classes
    >>> next(iter(solver_classes()))
    'mincut'
    """
    _load()
    order = {_module(m): i for i, m in enumerate(BACKEND_MODULES)}

    def key(cls):
        return (order.get(cls.__module__, len(order)),)

    ranked = sorted(_REGISTRY.values(), key=key)  # stable: registration order within a module
    return {cls.name: cls for cls in ranked}


def install_status(cls):
    """``(installed, reason)`` of a backend class (reason is "" when installed).

    ``is_installed()`` decides (a backend may override it); ``install_status()``
    says why not.
    """
    if cls.is_installed():
        return True, ""
    return False, cls.install_status()[1] or f"{cls.__name__}.is_installed() is False"


def list_solvers():
    """Every known backend with its install state and capability flags.

    Returns
    -------
    dict
        ``{name: {"installed", "reason", "kind", "install_hint", <flags>}}`` in
        registry order; ``reason`` says why a backend is not installed
        (missing package, or the unexpected error its import raised).

    Examples
    --------
    >>> import prune_opt as po
    >>> info = po.list_solvers()["mincut"]
    >>> info["exact"], info["supports_budget_row"]
    (True, False)
    """
    out = {}
    for name, cls in solver_classes().items():
        installed, reason = install_status(cls)
        out[name] = {"installed": installed, "reason": reason, "kind": cls.kind,
                     "install_hint": cls.install_hint,
                     **{flag: getattr(cls, flag) for flag in FLAGS}}
    return out


def find_solvers(*, installed=True, **flags):
    """Names of the backends whose flags equal ``flags``, in registry order.

    Examples
    --------
    >>> from prune_opt.solvers import find_solvers
    >>> "cbc-ip" in find_solvers(mip=True)
    True
    """
    unknown = sorted(set(flags) - set(FLAGS))
    if unknown:
        raise TypeError(f"find_solvers: unknown flag(s) {unknown}; flags are {list(FLAGS)}")
    return [name for name, cls in solver_classes().items()
            if all(getattr(cls, k) == v for k, v in flags.items())
            and (not installed or install_status(cls)[0])]


def available_solvers():
    """Names of the installed backends, in registry order.

    Examples
    --------
    >>> import prune_opt as po
    >>> "highs" in po.available_solvers()
    True
    """
    return find_solvers()


def default_solvers():
    """Installed backends that are not slow references (``reference_only``).

    Examples
    --------
    >>> from prune_opt.solvers import default_solvers
    >>> "cbc-ip" in default_solvers(), "mincut" in default_solvers()
    (False, True)
    """
    return find_solvers(reference_only=False)


def budget_solvers(installed=True):
    """Backends that honour a hard budget row (``supports_budget_row``)."""
    return find_solvers(installed=installed, supports_budget_row=True)


def auto_solver(problem=None):
    """Name ``"auto"`` resolves to: the installed backend of lowest ``auto_rank``.

    With a budgeted ``problem`` only backends that honour the row qualify,
    those that honour integrality (``mip``) first.

    Examples
    --------
    >>> from prune_opt.solvers import auto_solver
    >>> auto_solver()
    'mincut'
    """
    budget = problem is not None and getattr(problem, "budget", None) is not None
    cands = [cls for cls in solver_classes().values() if cls.auto_rank is not None
             and (cls.supports_budget_row or not budget) and install_status(cls)[0]]
    if not cands:
        raise SolverError("solver='auto': no installed backend can solve this problem; "
                          f"installed: {available_solvers()}")
    best = min(cands, key=lambda c: (budget and not c.mip, c.auto_rank))
    return best.name


def get_solver(name, *, problem=None, **options):
    """Instantiate a backend by name (``"auto"``: see :func:`auto_solver`).

    Examples
    --------
    >>> from prune_opt.solvers import get_solver
    >>> get_solver("highs").name
    'highs'
    """
    if not isinstance(name, str):
        raise TypeError(f"solver must be a name (str), got {type(name).__name__}; "
                        f"choose from {available_solvers()}")
    key = name.lower()
    if key == "auto":
        key = auto_solver(problem)
    cls = _named(key)  # a named backend does not import the others
    if cls is None:
        raise ValueError(f"solver={name!r} is unknown; installed solvers: "
                         f"{available_solvers()} (all known: {list(solver_classes())})")
    installed, reason = install_status(cls)
    if not installed:
        raise SolverError(f"solver {key!r} is not installed; {cls.install_hint}"
                          f"{'' if reason.startswith('missing') else f' ({reason})'}. "
                          f"Installed solvers: {available_solvers()}")
    return cls(**options)
