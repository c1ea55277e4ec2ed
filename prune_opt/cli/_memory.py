"""Resident-memory probes from ``/proc/self`` (Linux), shared by the CLI and benchmarks."""

from __future__ import annotations

__all__ = ["proc_status_kb", "reset_peak_rss"]


def proc_status_kb(key):
    """A ``/proc/self/status`` figure in kB (``"VmRSS"``, ``"VmHWM"``), None if unavailable.

    Examples
    --------
    >>> from prune_opt.cli._memory import proc_status_kb
    >>> proc_status_kb("NoSuchKey") is None
    True
    """
    from .._memory import _status_bytes  # NumPy: imported when a command measures

    value = _status_bytes(key)
    return None if value is None else value // 1024


def reset_peak_rss():
    """Reset the resident high-water mark (VmHWM) to the current RSS; True on success.

    Needs Linux >= 4.0 (``/proc/self/clear_refs``); elsewhere returns False
    and the caller must measure another way.

    Examples
    --------
    >>> from prune_opt.cli._memory import reset_peak_rss
    >>> reset_peak_rss() in (True, False)
    True
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False
