"""Solver interface, result type and registry (one backend class per module)."""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Solver", "SolveResult", "register_solver", "get_solver", "available_solvers",
           "list_solvers", "SolverError", "STATUSES"]

STATUSES = ("optimal", "time_limit", "iteration_limit", "gap_limit")


class SolverError(RuntimeError):
    """A backend failed, crashed, or returned something inconsistent."""


@dataclass
class SolveResult:
    """What every backend returns.

    Attributes
    ----------
    split_mask : ndarray of bool (n_nodes,)
        True where an original node stays a split; always a valid pruning.
    objective : float
        Objective reported by the solver, in natural (unscaled) units.
    bound : float
        A proven lower bound on the optimum (natural units); equals
        ``objective`` for exact solvers at optimality.
    status : str
        ``"optimal"``, ``"time_limit"``, ``"iteration_limit"`` or ``"gap_limit"``.
    seconds : float
    iterations : int or None
    max_fractionality : float
        Largest distance of an LP variable from an integer (0 for
        combinatorial solvers).
    info : dict
        Backend specifics (e.g. duals of the primal-dual method).
    """

    split_mask: np.ndarray
    objective: float
    bound: float
    status: str
    seconds: float
    iterations: int | None = None
    max_fractionality: float = 0.0
    info: dict = field(default_factory=dict)

    @property
    def gap(self):
        """Relative gap between objective and bound."""
        denom = max(abs(self.objective), 1e-12)
        return max(self.objective - self.bound, 0.0) / denom


class Solver:
    """Base class of a backend.

    Subclasses set ``name``, ``kind`` (``"lp"``, ``"ip"``, ``"closure"`` or
    ``"decomposition"``), ``requires`` (import names of optional packages),
    ``install_hint``, ``max_nnz`` (the largest LP it should be handed, or None)
    and ``options`` (accepted keyword options with defaults), and implement
    :meth:`_solve`.
    """

    name = "base"
    kind = "lp"
    requires: tuple = ()
    install_hint = ""
    max_nnz = None
    options: dict = {}
    exact = True

    @classmethod
    def is_installed(cls):
        for mod in cls.requires:
            try:
                importlib.import_module(mod)
            except Exception:
                return False
        return True

    def __init__(self, **options):
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            import difflib

            hints = {u: difflib.get_close_matches(u, list(self.options), n=1) for u in unknown}
            msg = ", ".join(f"{u!r}" + (f" (did you mean {h[0]!r}?)" if h else "")
                            for u, h in hints.items())
            raise ValueError(
                f"solver_options: unknown option(s) {msg} for solver {self.name!r}; "
                f"accepted: {sorted(self.options) or 'none'}"
            )
        self.params = {**self.options, **options}

    # bytes per LP nonzero / variable a matrix-based backend needs (CSR copies, solver
    # internals): HiGHS peaked at about 2.4 GB for 4.6M nonzeros (benchmarks/solvers.py)
    BYTES_PER_NNZ = 520
    BYTES_PER_VARIABLE = 200

    def check_size(self, problem):
        if self.kind not in ("lp", "ip"):
            return
        size = problem.size()
        nnz = size["nnz"]
        need = nnz * self.BYTES_PER_NNZ + size["n_variables"] * self.BYTES_PER_VARIABLE
        avail = available_memory()
        if avail is not None and need > avail:
            raise ValueError(
                f"solver={self.name!r}: the LP ({size['n_variables']:,} variables, {nnz:,} "
                f"nonzeros) needs about {need / 2**30:.1f} GiB but only "
                f"{avail / 2**30:.1f} GiB is available; use solver='mincut', which solves the "
                "same program exactly without building the matrix"
            )
        if self.max_nnz is None:
            return
        if nnz > self.max_nnz:
            raise ValueError(
                f"solver={self.name!r}: the LP has {nnz:,} nonzeros, above this backend's "
                f"limit of {self.max_nnz:,}; use solver='mincut' (exact, scales to millions "
                "of examples) or 'primal-dual'"
            )

    def solve(self, problem, *, time_limit=None, verbose=False):
        """Solve ``problem`` and return a :class:`SolveResult`."""
        if not self.is_installed():
            raise SolverError(f"solver {self.name!r} is not installed; {self.install_hint}")
        self.check_size(problem)
        start = time.perf_counter()
        try:
            result = self._solve(problem, time_limit=time_limit, verbose=verbose)
        except (ValueError, TypeError, SolverError, MemoryError):
            raise
        except Exception as exc:  # a crashing backend is named, not hidden
            raise SolverError(f"solver {self.name!r} failed: {type(exc).__name__}: {exc}") from exc
        result.seconds = time.perf_counter() - start
        result.info.setdefault("solver", self.name)
        return result

    def _solve(self, problem, *, time_limit, verbose):  # pragma: no cover - abstract
        raise NotImplementedError


def available_memory():
    """Bytes this process can still allocate (RAM, cgroup and rlimits), or None."""
    from .._memory import available_memory as _available

    return _available()


_REGISTRY: dict[str, type[Solver]] = {}


def register_solver(cls):
    """Class decorator adding a backend to the registry."""
    _REGISTRY[cls.name] = cls
    return cls


def _load_all():
    from . import _modules  # noqa: F401  (imports every backend module once)


def list_solvers():
    """All known backends: ``{name: {"installed": bool, "kind": str, "exact": bool,
    "install_hint": str}}``."""
    _load_all()
    return {name: {"installed": cls.is_installed(), "kind": cls.kind, "exact": cls.exact,
                   "install_hint": cls.install_hint}
            for name, cls in sorted(_REGISTRY.items())}


def available_solvers():
    """Names of the installed backends.

    Examples
    --------
    >>> import prune_opt as po
    >>> "highs" in po.available_solvers()
    True
    """
    return [n for n, d in list_solvers().items() if d["installed"]]


AUTO_ORDER = ("mincut", "highs", "glop", "cbc")


def get_solver(name, **options):
    """Instantiate a backend by name (``"auto"`` picks the best installed one)."""
    _load_all()
    if not isinstance(name, str):
        raise TypeError(f"solver must be a name (str), got {type(name).__name__}; "
                        f"choose from {available_solvers()}")
    key = name.lower()
    if key == "auto":
        for cand in AUTO_ORDER:
            if cand in _REGISTRY and _REGISTRY[cand].is_installed():
                key = cand
                break
    if key not in _REGISTRY:
        raise ValueError(
            f"solver={name!r} is unknown; installed solvers: {available_solvers()} "
            f"(all known: {sorted(_REGISTRY)})"
        )
    cls = _REGISTRY[key]
    if not cls.is_installed():
        raise SolverError(f"solver {key!r} is not installed; {cls.install_hint}. "
                          f"Installed solvers: {available_solvers()}")
    return cls(**options)
