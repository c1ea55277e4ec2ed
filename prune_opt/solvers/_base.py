"""Solver interface, result type, capability flags and status vocabulary.

How a backend registers
-----------------------
A backend is one class in one module of this package:

1. subclass :class:`Solver`, decorate it with
   ``prune_opt.solvers._registry.register_solver``;
2. set ``name``, ``kind`` (``"lp"``, ``"ip"``, ``"closure"``,
   ``"decomposition"``; informational), ``requires`` (import names of its
   optional packages), ``install_hint``, ``options`` (accepted keyword
   options with defaults) and implement ``_solve``;
3. declare every capability flag below (registration refuses a class that
   misses one) and a ``STATUS_MAP``;
4. add the module name to ``BACKEND_MODULES`` in ``_registry.py``.

``"auto"``, :func:`~prune_opt.solvers.default_solvers`, the CLI defaults and
the contract test (``tests/test_solvers_contract.py``) follow from the flags:

``exact : bool``
    At status ``"optimal"`` the objective is the optimum of the program
    (to 1e-9 relative); :func:`prune_opt.solve` checks it.
``mip : bool``
    Enforces integrality itself (branch and bound), so it is exact on
    programs whose LP relaxation is fractional, e.g. with a budget row.
``matrix_based : bool``
    Builds the LP matrix (its memory is checked before solving).
``reference_only : bool``
    A slow cross-check, left out of the default solver lists.
``supports_budget_row : bool``
    Honours ``problem.budget``: the returned pruning respects the row.  A
    backend with ``False`` is refused a budgeted problem up front.
``auto_rank : int or None``
    Lower is preferred by ``solver="auto"``; ``None`` is never picked.  For a
    budgeted problem ``"auto"`` prefers ``mip`` backends.

``STATUS_MAP`` maps each native status of the backend's library to one of
:data:`STATUSES`, to :data:`STOPPED` (stopped early without saying why:
``"time_limit"`` when a limit was set, else an error) or to one of
:data:`ERROR_STATUSES`; :meth:`Solver.map_status` applies it.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field

import numpy as np

from .. import _memory
from .._clock import Deadline
from .._validation import NO_LIMIT_ABOVE, check_params, fits_budget
from .._validation import check_time_limit as normalize_time_limit

__all__ = ["Solver", "SolveResult", "SolverError", "STATUSES", "STOPPED", "ERROR_STATUSES",
           "FLAGS", "NO_LIMIT_ABOVE", "normalize_time_limit", "available_memory"]

STATUSES = ("optimal", "feasible", "time_limit", "iteration_limit", "gap_limit")
STOPPED = "stopped"
ERROR_STATUSES = ("infeasible", "unbounded", "error")
FLAGS = ("exact", "mip", "matrix_based", "reference_only", "supports_budget_row", "auto_rank")

#: name -> backend class, filled by ``_registry.register_solver`` (the registry's
#: functions live in ``_registry``; the table lives here so that a backend can name
#: its peers without importing upwards)
SOLVER_CLASSES: dict = {}


class SolverError(RuntimeError):
    """A backend failed, crashed, or returned something inconsistent."""


@dataclass
class SolveResult:
    """What every backend returns.

    Attributes
    ----------
    split_mask : ndarray of bool (n_nodes,)
        True where an original node stays a split; always a valid pruning
        (and within ``problem.budget`` when there is one).
    objective : float
        Objective reported by the solver, in natural (unscaled) units.
    bound : float
        A proven lower bound on the optimum (natural units); equals
        ``objective`` for exact solvers at optimality.
    status : str
        One of :data:`STATUSES`: ``"optimal"``; ``"feasible"`` (a valid
        pruning and a bound, optimality not proven, e.g. a fractional LP
        optimum under a budget row); ``"time_limit"``, ``"iteration_limit"``
        or ``"gap_limit"`` (stopped by that limit).
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


def check_flags(cls):
    """Refuse a backend class whose capability flags or STATUS_MAP are missing or mistyped."""
    for flag in FLAGS:
        if not hasattr(cls, flag):
            raise TypeError(f"solver class {cls.__name__} must declare the flag {flag!r} "
                            f"(flags: {list(FLAGS)}; see prune_opt.solvers._base)")
        value = getattr(cls, flag)
        ok = (value is None or (isinstance(value, int) and not isinstance(value, bool))
              if flag == "auto_rank" else isinstance(value, bool))
        if not ok:
            raise TypeError(f"solver class {cls.__name__}: flag {flag!r} has the wrong type "
                            f"({value!r}); auto_rank is int or None, the others bool")
    smap = getattr(cls, "STATUS_MAP", None)
    allowed = set(STATUSES) | {STOPPED} | set(ERROR_STATUSES)
    if not isinstance(smap, dict) or not smap or not set(smap.values()) <= allowed:
        raise TypeError(f"solver class {cls.__name__} must declare a STATUS_MAP dict whose "
                        f"values are in {sorted(allowed)}")


class Solver:
    """Base class of a backend (see the module docstring for how to register one)."""

    name = "base"
    kind = "lp"
    requires: tuple = ()
    install_hint = ""
    max_nnz = None
    options: dict = {}
    STATUS_MAP: dict = {}

    @classmethod
    def install_status(cls):
        """``(installed, reason)``.  A missing optional package (ImportError) makes
        the backend not installed; any other exception raised by its import
        (e.g. a broken shared library) is reported in ``reason`` too."""
        for mod in cls.requires:
            try:
                importlib.import_module(mod)
            except ModuleNotFoundError as exc:
                return False, f"missing package {exc.name or mod!r}"
            except ImportError as exc:
                return False, f"importing {mod!r} failed: ImportError: {exc}"
            except Exception as exc:  # reported, not swallowed: list_solvers shows it
                return False, f"importing {mod!r} raised {type(exc).__name__}: {exc}"
        return True, ""

    @classmethod
    def is_installed(cls):
        return cls.install_status()[0]

    #: optional ``{option: constraints}`` checked by :func:`prune_opt._validation.check_params`
    #: (the declarative validation every public function uses); options without an
    #: entry are only checked for their name
    OPTION_CONSTRAINTS: dict = {}

    def __init__(self, **options):
        checkable = {k: v for k, v in options.items() if k in self.OPTION_CONSTRAINTS}
        check_params(checkable, self.OPTION_CONSTRAINTS, name="solver_options")
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

    @classmethod
    def map_status(cls, native, *, time_limited, message=""):
        """Our status for a native one, through ``STATUS_MAP``; errors raise SolverError."""
        ours = cls.STATUS_MAP.get(native)
        if ours == STOPPED:
            ours = "time_limit" if time_limited else "error"
        if ours in STATUSES:
            return ours
        why = ours or "unmapped status"
        raise SolverError(f"solver {cls.name!r} returned {native!r} ({why})"
                          + (f": {message}" if message else ""))

    # bytes per LP nonzero / variable a matrix-based backend needs (CSR copies, solver
    # internals): HiGHS peaked at about 2.4 GB for 4.6M nonzeros (benchmarks/solvers.py)
    BYTES_PER_NNZ = _memory.LP_BYTES_PER_NNZ
    BYTES_PER_VARIABLE = _memory.LP_BYTES_PER_VARIABLE

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
        if self.max_nnz is not None and nnz > self.max_nnz:
            raise ValueError(
                f"solver={self.name!r}: the LP has {nnz:,} nonzeros, above this backend's "
                f"limit of {self.max_nnz:,}; use solver='mincut' (exact, scales to millions "
                "of examples) or 'primal-dual'"
            )

    def check_problem(self, problem):
        """Refuse a problem this backend cannot solve faithfully (type, budget row)."""
        from ..program._problem import PruningProblem

        if not isinstance(problem, PruningProblem):
            raise TypeError(f"problem must be a PruningProblem (from compile_problem), got "
                            f"{type(problem).__name__}")
        if problem.budget is not None and not self.supports_budget_row:
            able = [n for n, c in SOLVER_CLASSES.items() if c.supports_budget_row]
            installed = [n for n in able if SOLVER_CLASSES[n].is_installed()]
            raise ValueError(
                f"solver={self.name!r} cannot honour the budget row (budget="
                f"{problem.budget:g}) and would ignore it; use a backend that can: "
                f"{able} (installed: {installed}), or "
                "compile without budget= and pick lam with prune_opt.budget.fit_budget")

    def solve(self, problem, *, time_limit=None, verbose=False):
        """Solve ``problem`` and return a :class:`SolveResult`.

        ``time_limit`` (seconds, or the caller's :class:`~prune_opt.Deadline`) becomes
        the one deadline handed to :meth:`_solve`, which gives a library that takes
        seconds what is left of it when it starts."""
        if not self.is_installed():
            reason = (type(self).install_status()[1]
                      or f"{type(self).__name__}.is_installed() is False")
            raise SolverError(f"solver {self.name!r} is not installed; {self.install_hint} "
                              f"({reason})")
        self.check_problem(problem)
        deadline = Deadline.of(time_limit)
        self.check_size(problem)
        start = time.perf_counter()
        try:
            result = self._solve(problem, deadline=deadline, verbose=verbose)
        except (ValueError, TypeError, SolverError, MemoryError):
            raise
        except Exception as exc:  # a crashing backend is named, not hidden
            raise SolverError(f"solver {self.name!r} failed: {type(exc).__name__}: {exc}") from exc
        result.seconds = time.perf_counter() - start
        result.info.setdefault("solver", self.name)
        self._check_result(problem, result)
        return result

    def _check_result(self, problem, result):
        if result.status not in STATUSES:
            raise SolverError(f"solver {self.name!r} returned status {result.status!r}, not "
                              f"one of {STATUSES}")
        if problem.budget is not None:
            cost = problem.evaluate(result.split_mask).average_cost
            if not fits_budget(cost, problem.budget):
                raise SolverError(f"solver {self.name!r} returned a pruning of average cost "
                                  f"{cost!r} above the budget {problem.budget!r}")

    def _solve(self, problem, *, deadline, verbose):  # pragma: no cover - abstract
        raise NotImplementedError


def available_memory():
    """Bytes this process can still allocate (RAM, cgroup and rlimits), or None
    (see :func:`prune_opt._memory.available_memory`)."""
    return _memory.available_memory()
