"""Shared steps of the ensemble optimisers: argument checks and multi-start descent."""

from __future__ import annotations

from ._bcd import block_descent


def _check_max_iter(max_iter):
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    return max_iter


def run_starts(state, setup, starts, *, max_iter, deadline, verbose, unit_moves=True):
    """Block descent from every start; the runs, best (lowest objective) first."""
    runs = []
    for name, mask in starts:
        if verbose:
            print(f"[prune-opt] block descent from the {name} start (lam={state.lam:g})")
        run = block_descent(state, mask, max_iter=max_iter, deadline=deadline,
                            unit_moves=unit_moves, verbose=verbose)
        run["start"] = name
        runs.append(run)
    return sorted(runs, key=lambda r: r["trace"][-1])
