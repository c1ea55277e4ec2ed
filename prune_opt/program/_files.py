"""Write the BudgetPrune program as MPS or LP text for external solvers.

The text is written from :meth:`PruningProblem.to_standard_form` (free MPS, or
CPLEX LP format), so Gurobi, CPLEX, SCIP, HiGHS or CBC can read it; every
number is written with the 17 significant digits that give back the same
double (OR-Tools' writers keep 6, too few for real-valued node errors such as
a regression forest's or a boosted model's: a solver reading them solves a
perturbed program).  Variables are named ``z<h>`` (node h is a leaf of the
pruned tree), ``wt<k>`` (first-use record k pays) and ``w<p>`` (cost pair p is
paid); the objective is the scaled one (``problem.scale`` times the natural
objective).  :func:`build_program` fills an OR-Tools model in bulk for the
in-process GLOP / PDLP backends.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._io import atomic_write

__all__ = ["build_program", "program_text", "write_program", "FORMATS"]

FORMATS = ("mps", "lp")


def build_program(problem, *, integer=False, names=True):
    """An OR-Tools model_builder Model of the program.

    Parameters
    ----------
    problem : PruningProblem
    integer : bool
        Mark every variable binary (the integer program) instead of [0, 1].
    names : bool
        Name variables ``z*``, ``wt*``, ``w*`` and rows ``path*``, ``use*``,
        ``pay*``, ``budget``.

    Returns
    -------
    ortools.linear_solver.python.model_builder.Model

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> from prune_opt.program._files import build_program
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> model = build_program(po.compile_problem(tree, X, y, lam=0.01))
    >>> model.num_variables == po.compile_problem(tree, X, y).size()["n_variables"]
    True
    """
    from ortools.linear_solver.python import model_builder as mb

    sf = problem.to_standard_form()
    A = sp.vstack([sf["A_eq"], sf["A_ub"]], format="csr").astype(np.float64)
    n_eq, n_ub = sf["A_eq"].shape[0], sf["A_ub"].shape[0]
    lo = np.concatenate([sf["b_eq"], np.full(n_ub, -np.inf)])
    hi = np.concatenate([sf["b_eq"], sf["b_ub"]])
    n = A.shape[1]
    model = mb.Model()
    model.name = "budgetprune"
    h = model.helper
    h.fill_model_from_sparse_data(np.zeros(n), np.ones(n), np.asarray(sf["c"], dtype=float),
                                  lo, hi, A)
    if integer:
        for j in range(n):  # the helper has no bulk setter for integrality
            h.set_var_integrality(j, True)
    if names:
        sl = problem.variable_slices()
        for prefix, s in (("z", sl["z"]), ("wt", sl["wt"]), ("w", sl["w"])):
            for k in range(s.stop - s.start):
                h.set_var_name(s.start + k, f"{prefix}{k}")
        n_leaves = int(problem.forest.is_leaf.sum())
        row_names = ([f"path{k}" for k in range(n_leaves)]
                     + [f"use{k}" for k in range(n_eq - n_leaves)]
                     + [f"pay{k}" for k in range(problem.n_uses)])
        if problem.budget is not None:
            row_names.append("budget")
        for i, name in enumerate(row_names):
            h.set_constraint_name(i, name)
    return model


def _names(problem, sf):
    """Variable and row names (z / wt / w; path / use / pay / budget)."""
    sl = problem.variable_slices()
    cols = [f"{prefix}{k}" for prefix, s in (("z", sl["z"]), ("wt", sl["wt"]), ("w", sl["w"]))
            for k in range(s.stop - s.start)]
    n_leaves = int(problem.forest.is_leaf.sum())
    n_eq = sf["A_eq"].shape[0]
    rows = ([f"path{k}" for k in range(n_leaves)] + [f"use{k}" for k in range(n_eq - n_leaves)]
            + [f"pay{k}" for k in range(problem.n_uses)])
    if problem.budget is not None:
        rows.append("budget")
    return cols, rows


def _num(v):
    """A double as the shortest text that reads back as the same double."""
    return repr(float(v))


def _rows_and_columns(problem, fmt):
    """``(c, A, rhs, n_eq, column names, row names)`` of the standard form, ``A`` stacked
    ``[A_eq; A_ub]`` in ``fmt`` ("csc" or "csr") with sorted indices."""
    sf = problem.to_standard_form()
    cols, rows = _names(problem, sf)
    A = sp.vstack([sf["A_eq"], sf["A_ub"]], format=fmt).astype(np.float64)
    A.sort_indices()
    rhs = np.concatenate([sf["b_eq"], sf["b_ub"]])
    return sf["c"], A, rhs, sf["A_eq"].shape[0], cols, rows


def _mps(problem, integer):
    c, A, rhs, n_eq, cols, rows = _rows_and_columns(problem, "csc")
    # FREE: the numbers and names are separated by blanks, not in fixed columns (CBC)
    out = ["* BudgetPrune program written by prune-opt", "NAME          budgetprune FREE",
           "ROWS", " N  COST"]
    out += [f" {'E' if i < n_eq else 'L'}  {name}" for i, name in enumerate(rows)]
    out.append("COLUMNS")
    if integer:
        out.append("    MARKER  'MARKER'  'INTORG'")
    for j, name in enumerate(cols):
        lo, hi = A.indptr[j], A.indptr[j + 1]
        entries = [("COST", c[j])] if c[j] != 0 or lo == hi else []
        entries += [(rows[i], v) for i, v in zip(A.indices[lo:hi], A.data[lo:hi])]
        out += [f"    {name}  {row}  {_num(v)}" for row, v in entries]
    if integer:
        out.append("    MARKER  'MARKER'  'INTEND'")
    out.append("RHS")
    out += [f"    RHS  {rows[i]}  {_num(rhs[i])}" for i in np.flatnonzero(rhs)]
    out.append("BOUNDS")
    out += [f" UP BND  {name}  1" for name in cols]
    out.append("ENDATA")
    return "\n".join(out) + "\n"


def _lp_terms(names, coef, per_line=8):
    """``+ 2.5 x1 - 1.0 x2 ...`` wrapped every ``per_line`` terms (CPLEX LP lines)."""
    terms = [f"{'-' if v < 0 else '+'} {_num(abs(v))} {n}" for n, v in zip(names, coef)]
    return "\n   ".join(" ".join(terms[k:k + per_line]) for k in range(0, len(terms), per_line))


def _lp(problem, integer):
    c, A, rhs, n_eq, cols, rows = _rows_and_columns(problem, "csr")
    nz = np.flatnonzero(c)
    out = ["\\ BudgetPrune program written by prune-opt", "Minimize",
           " obj: " + (_lp_terms([cols[j] for j in nz], c[nz]) or "0 " + cols[0]),
           "Subject To"]
    for i, name in enumerate(rows):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        lhs = _lp_terms([cols[j] for j in A.indices[lo:hi]], A.data[lo:hi]) or "0 " + cols[0]
        out.append(f" {name}: {lhs} {'=' if i < n_eq else '<='} {_num(rhs[i])}")
    out.append("Bounds")
    out += [f" 0 <= {name} <= 1" for name in cols]
    if integer:
        out.append("Binaries")
        out += [f" {name}" for name in cols]
    out.append("End")
    return "\n".join(out) + "\n"


def program_text(problem, fmt="mps", *, integer=False):
    """The program as free-MPS or CPLEX-LP text, every number at full precision.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> from prune_opt.program._files import program_text
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> program_text(po.compile_problem(tree, X, y, lam=0.01), "lp").startswith("\\\\")
    True
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    return _mps(problem, integer) if fmt == "mps" else _lp(problem, integer)


def write_program(problem, path, fmt=None, *, integer=False):
    """Write the program to ``path`` (format from ``fmt`` or the file suffix).

    Returns
    -------
    dict with the path, format, variables, rows and nonzeros written.

    Examples
    --------
    >>> import tempfile, os
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> from prune_opt.program._files import write_program
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> out = os.path.join(tempfile.mkdtemp(), "p.mps")
    >>> write_program(po.compile_problem(tree, X, y, lam=0.01), out)["format"]
    'mps'
    """
    path = Path(path)
    if fmt is None:
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in FORMATS:
            raise ValueError(f"cannot tell the format from {path.name!r}; pass format= "
                             f"one of {FORMATS}")
    text = program_text(problem, fmt, integer=integer)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "w") as fh:  # whole file or none, even on Ctrl-C / full disk
        fh.write(text)
    size = problem.size()
    return {"path": str(path), "format": fmt, "integer": bool(integer),
            "n_variables": size["n_variables"], "n_rows": size["n_rows"], "nnz": size["nnz"],
            "scale": problem.scale}
