"""Typed results of the TU methods: :class:`MethodResult` and :class:`Counterexample`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["Counterexample", "MethodResult", "SearchLimitExceeded"]


@dataclass(frozen=True)
class Counterexample:
    """A square submatrix whose exact determinant is outside {-1, 0, 1}.

    Attributes
    ----------
    rows, columns : list of int
        Its row and column indices in the checked matrix.
    determinant : int
        Exact (fraction-free Bareiss) determinant.
    submatrix : list of list of int

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt.checks import find_2x2_violation
    >>> cex = find_2x2_violation(np.array([[1, 1], [1, -1]]))
    >>> cex.rows, cex.columns, cex.determinant
    ([0, 1], [0, 1], -2)
    """

    rows: list
    columns: list
    determinant: int
    submatrix: list

    @classmethod
    def from_dict(cls, d):
        return cls(rows=list(d["rows"]), columns=list(d["columns"]),
                   determinant=int(d["determinant"]), submatrix=[list(r) for r in d["submatrix"]])

    def to_dict(self):
        """The JSON-friendly dict used in :class:`~prune_opt.checks.TUReport`."""
        return asdict(self)


@dataclass(init=False)
class MethodResult:
    """Outcome of one TU method: a verdict plus its evidence.

    Attributes
    ----------
    verdict : bool or None
        True (certified TU), False (verified counterexample) or None (undecided).
    certificate : object
        What proves a True verdict (network tree, CMR decomposition, dict).
    summary : str
        One line on the evidence.
    counterexample : dict or None
        Rows, columns, exact determinant and submatrix of a violating submatrix.
    reason : str
        Why the method could not decide.
    info : dict
        Method-specific figures (e.g. ``submatrices`` examined).

    Examples
    --------
    >>> from prune_opt.checks import brute_force_tu
    >>> brute_force_tu([[1, 1], [1, -1]]).verdict
    False
    """

    verdict: bool | None
    certificate: object = None
    summary: str = ""
    counterexample: dict | None = None
    reason: str = ""
    info: dict = field(default_factory=dict)

    def __init__(self, verdict, *, certificate=None, summary="", counterexample=None,
                 reason="", **info):
        if verdict not in (True, False, None):
            raise ValueError(f"verdict must be True, False or None, got {verdict!r}")
        self.verdict = verdict
        self.certificate = certificate
        self.summary = summary
        self.counterexample = counterexample
        self.reason = reason
        self.info = info

    @property
    def note(self):
        """The summary when decided, else the reason."""
        return self.summary or self.reason


class SearchLimitExceeded(ValueError):
    """A search would exceed its work limit; raised instead of returning a sentinel.

    Attributes
    ----------
    work, limit : float
        The estimated work and the limit it exceeds.
    """

    def __init__(self, message, *, work, limit):
        super().__init__(message)
        self.work = work
        self.limit = limit
