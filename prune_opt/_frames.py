"""Tabular results: every table prune-opt returns is a pandas DataFrame."""

from __future__ import annotations

__all__ = ["records_frame"]


def records_frame(rows, columns=None):
    """A DataFrame of dict rows (columns in first-seen key order).

    ``columns`` names the columns of the empty frame returned when there are
    no rows, so callers can rely on them either way.

    pandas is a dependency; it is imported here, on first use, so that
    ``import prune_opt`` stays fast for callers that never build a table.

    Examples
    --------
    >>> from prune_opt._frames import records_frame
    >>> records_frame([{"a": 1, "b": 2.0}]).shape
    (1, 2)
    >>> list(records_frame([], columns=["a", "b"]).columns)
    ['a', 'b']
    """
    import pandas as pd

    rows = list(rows)
    if not rows:
        return pd.DataFrame(columns=list(columns or []))
    return pd.DataFrame.from_records(rows)
