"""``is_totally_unimodular``: the report and the method dispatch."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ._brute import (
    DEFAULT_MAX_SUBMATRICES,
    brute_force_tu,
    estimate_2x2_work,
    find_2x2_violation,
    find_entry_violation,
)
from ._cmr import cmr_available, cmr_tu
from ._exact import as_integer_matrix
from ._ghouila_houri import DEFAULT_MAX_GH_ROWS, ghouila_houri_tu
from ._network import NetworkCertificate
from ._pruning_network import network_tu
from ._result import MethodResult

__all__ = ["TUReport", "is_totally_unimodular", "METHODS"]

METHODS = ("auto", "network", "cmr", "brute", "ghouila-houri")

#: the vectorized 2x2 search is skipped above this many row-pair products
MAX_2X2_WORK = 5e7


@dataclass
class TUReport:
    """Verdict of a total-unimodularity check.

    Attributes
    ----------
    is_tu : bool or None
        True (certified), False (a verified counterexample exists) or None
        (undecided within the limits; see ``reason``).
    method : str
        The method that decided (for ``method="auto"`` see ``tried``).
    seconds : float
        Wall time of the whole check.
    shape : tuple
        Shape of the checked integer matrix; ``nnz`` its nonzeros.
    certificate : object
        What proves the verdict: a :class:`NetworkCertificate` (with a
        networkx DiGraph), CMR's Seymour decomposition node, or a dict.
    certificate_summary : str
    counterexample : dict or None
        ``rows``, ``columns``, exact ``determinant`` and ``submatrix`` of a
        square submatrix with determinant outside {-1, 0, 1}.
    reason : str
        Why the check is undecided (``is_tu is None``).
    tried : list of dict
        Every method run, in order: ``method``, ``verdict``, ``seconds``, ``note``.
    notes : list of str
        Preprocessing notes (e.g. how a budget row was scaled).
    """

    is_tu: bool | None
    method: str
    seconds: float
    shape: tuple
    nnz: int
    certificate: object = None
    certificate_summary: str = ""
    counterexample: dict | None = None
    reason: str = ""
    tried: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def verdict(self):
        return {True: "totally unimodular", False: "NOT totally unimodular",
                None: "undecided"}[self.is_tu]

    @property
    def timings(self):
        """Seconds of every method run, in the order they ran: a list of dicts
        ``{"method", "verdict", "seconds"}`` (``verdict`` True, False or None).

        Examples
        --------
        >>> import numpy as np
        >>> r = is_totally_unimodular(np.array([[1, 1, 0], [0, 1, 1]]))
        >>> [t["method"] for t in r.timings][0], all(t["seconds"] >= 0 for t in r.timings)
        ('entries', True)
        """
        return [{"method": t["method"], "verdict": t["verdict"], "seconds": t["seconds"]}
                for t in self.tried]

    def to_dict(self):
        """JSON-friendly dict (the certificate is summarised, not serialised)."""
        cert = None
        if self.certificate is not None:
            cert = {"type": type(self.certificate).__name__, "summary": self.certificate_summary}
            if isinstance(self.certificate, NetworkCertificate):
                g = self.certificate.graph
                cert.update(kind=self.certificate.kind, transposed=self.certificate.transposed,
                            vertices=g.number_of_nodes(), edges=g.number_of_edges(),
                            arcs=int(len(g.graph["arcs"][0])))
            elif isinstance(self.certificate, dict):
                cert["data"] = self.certificate
        return {"is_tu": self.is_tu, "verdict": self.verdict, "method": self.method,
                "seconds": self.seconds, "shape": list(self.shape), "nnz": self.nnz,
                "certificate": cert, "counterexample": self.counterexample,
                "reason": self.reason, "tried": self.tried, "timings": self.timings,
                "notes": self.notes}

    def __str__(self):
        lines = [f"verdict: {self.verdict}",
                 f"method: {self.method}  ({self.seconds:.3f} s, matrix {self.shape[0]} x "
                 f"{self.shape[1]}, {self.nnz} nonzeros)"]
        lines += [f"note: {n}" for n in self.notes]
        if self.certificate_summary and self.is_tu:
            lines.append(f"certificate: {self.certificate_summary}")
        if self.counterexample is not None:
            c = self.counterexample
            k = len(c["rows"])
            lines.append(f"counterexample: {k}x{k} submatrix, determinant {c['determinant']} "
                         "(exact)")
            lines.append(f"  rows    {c['rows']}")
            lines.append(f"  columns {c['columns']}")
            for row in c["submatrix"]:
                lines.append("  [" + " ".join(f"{v:>3d}" for v in row) + " ]")
        if self.is_tu is None and self.reason:
            lines.append(f"reason: {self.reason}")
        if self.tried:
            lines.append("time per method (in the order run):")
            for t in self.tried:
                v = {True: "TU", False: "not TU", None: "undecided"}[t["verdict"]]
                lines.append(f"  {t['method']:<14} {v:<10} {t['seconds']:8.3f} s  {t['note']}")
        return "\n".join(lines)


class _Check:
    """One run of :func:`is_totally_unimodular`: the matrix, the clock, the log."""

    def __init__(self, A, time_limit, max_submatrices, max_lines):
        self.t0 = time.perf_counter()
        self.M, self.problem, self.notes = as_integer_matrix(A)
        self.time_limit = time_limit
        self.limits = {"max_submatrices": max_submatrices, "max_lines": max_lines}
        self.tried = []

    def remaining(self):
        if self.time_limit is None:
            return None
        return max(float(self.time_limit) - (time.perf_counter() - self.t0), 1e-3)

    def record(self, name, res, started, note=None):
        self.tried.append({"method": name, "verdict": res.verdict,
                           "seconds": time.perf_counter() - started,
                           "note": res.note if note is None else note})

    def run(self, name, note_prefix=None):
        """Run one method, log it, return its MethodResult."""
        started = time.perf_counter()
        if name == "network":
            res = network_tu(self.M, self.problem)
        elif name == "cmr":
            res = cmr_tu(self.M, time_limit=self.remaining())
        elif name == "brute":
            res = brute_force_tu(self.M, time_limit=self.remaining(),
                                 max_submatrices=self.limits["max_submatrices"])
        elif name == "ghouila-houri":
            res = ghouila_houri_tu(self.M, time_limit=self.remaining(),
                                   max_lines=self.limits["max_lines"])
        else:
            raise AssertionError(name)
        self.record(name, res, started,
                    note=None if note_prefix is None else f"{note_prefix}: {res.note}")
        return res

    def report(self, name, res):
        decided = res.verdict is not None
        return TUReport(is_tu=res.verdict, method=name, seconds=time.perf_counter() - self.t0,
                        shape=tuple(self.M.shape), nnz=int(self.M.nnz),
                        certificate=res.certificate,
                        certificate_summary=res.summary if decided else "",
                        counterexample=res.counterexample,
                        reason="" if decided else res.reason, tried=self.tried,
                        notes=self.notes)


def _check_arguments(method, time_limit):
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if time_limit is not None and not (float(time_limit) > 0):
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")


def is_totally_unimodular(A, method="auto", time_limit=None, *,
                          max_submatrices=DEFAULT_MAX_SUBMATRICES,
                          max_lines=DEFAULT_MAX_GH_ROWS):
    """Decide whether an integer matrix is totally unimodular, with evidence.

    Parameters
    ----------
    A : ndarray, scipy.sparse matrix or PruningProblem
        Integer matrix; a PruningProblem is checked through its constraint
        matrix ``[A_eq; A_ub]`` with a budget row (if any) scaled by an exact
        positive rational to primitive integers.
    method : {"auto", "network", "cmr", "brute", "ghouila-houri"}
        ``"network"``: verified network-matrix certificate (the pruning tree
        for PruningProblems; incidence and interval patterns otherwise);
        ``"cmr"``: Seymour decomposition via passagemath-cmr (optional);
        ``"brute"``: exhaustive subdeterminants (small matrices);
        ``"ghouila-houri"``: equitable bicolorings of every row subset (few
        rows).  ``"auto"`` runs the cheapest decisive method first: the
        entry test, then (for a PruningProblem) the network certificate, CMR
        when installed, the network patterns (plain matrices), and only when
        none decided the 2x2-minor scan, brute force and Ghouila-Houri.  Each
        method's time is in ``TUReport.timings``.
    time_limit : float, optional
        Seconds for the whole check; methods past it report None.
    max_submatrices : int
        Size limit of the brute-force method.
    max_lines : int
        Size limit (rows, or columns if fewer) of the Ghouila-Houri method.

    Returns
    -------
    TUReport

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt.checks import is_totally_unimodular
    >>> r = is_totally_unimodular(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]]))
    >>> r.is_tu, r.counterexample["determinant"]
    (False, 2)
    >>> is_totally_unimodular(np.array([[1, 1, 0], [0, 1, 1]]), method="network").is_tu
    True
    """
    _check_arguments(method, time_limit)
    check = _Check(A, time_limit, max_submatrices, max_lines)
    if method != "auto":
        return check.report(method, check.run(method))
    return _auto(check)


def _auto(check):
    """The cheapest decisive method first; the quadratic 2x2 scan, brute force and
    Ghouila-Houri only when nothing before them decided.

    Order: the entry test (one pass over the nonzeros); for a PruningProblem the
    pruning-tree network certificate (linear, and decisive without a budget row);
    CMR when installed; the cheap network patterns for a plain matrix; then the
    2x2 scan, brute force and Ghouila-Houri.
    """
    entry = _entries_step(check)
    budgeted = check.problem is not None and check.problem.budget is not None
    if entry.verdict is False and not budgeted:
        return check.report("entries", entry)
    if entry.verdict is False:
        check.notes.append("the budget row has entries outside {-1, 0, 1}; looking for a "
                           "structural violation through it as well")
    if check.problem is not None:
        res = check.run("network", note_prefix="pruning problem: the pruning-tree network "
                                               "certificate applies")
        if res.verdict is not None:
            return check.report("network", res)
    avail, detail = cmr_available()
    if avail:
        res = check.run("cmr", note_prefix="installed")
        if res.verdict is not None:
            return check.report("cmr", res)
    else:
        check.tried.append({"method": "cmr", "verdict": None, "seconds": 0.0, "note": detail})
    if check.problem is None:
        res = check.run("network", note_prefix="cheap network patterns (incidence, signed "
                                               "incidence, interval)")
        if res.verdict is not None:
            return check.report("network", res)
    if entry.verdict is False:
        return check.report("entries", entry)
    res = _2x2_step(check)
    if res.verdict is False:
        return check.report("2x2", res)
    return _expensive_steps(check)


def _entries_step(check):
    started = time.perf_counter()
    entry = find_entry_violation(check.M)
    res = MethodResult(False if entry else None, counterexample=entry,
                       summary="entry outside {-1, 0, 1}" if entry else "",
                       reason="" if entry else "all entries in {-1, 0, 1}")
    check.record("entries", res, started, note="entry outside {-1, 0, 1} (1x1 counterexample)"
                 if entry else "all entries in {-1, 0, 1}")
    return res


def _2x2_step(check):
    started = time.perf_counter()
    if estimate_2x2_work(check.M) > MAX_2X2_WORK:
        res = MethodResult(None, reason="skipped: too many row pairs")
        check.record("2x2", res, started)
        return res
    hit = find_2x2_violation(check.M, max_work=None)
    if hit is None:
        res = MethodResult(None, reason="no 2x2 violation")
    else:
        res = MethodResult(False, counterexample=hit.to_dict(),
                           summary=f"2x2 submatrix with determinant {hit.determinant}")
    check.record("2x2", res, started)
    return res


def _expensive_steps(check):
    reasons = [t["note"] for t in check.tried if t["method"] in ("network", "cmr")]
    for name in ("brute", "ghouila-houri"):
        res = check.run(name)
        if res.verdict is not None:
            return check.report(name, res)
        reasons.append(f"{name}: {res.reason}")
    return check.report("auto", MethodResult(None, reason="; ".join(reasons)))
