"""Run a function in a child process that can be killed at a deadline.

The child starts its own process group, so killing the group also stops
any program the function launched (e.g. the CBC binary PuLP runs).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal

__all__ = ["run_killable"]


def _child(conn, func, args, kwargs):
    try:
        os.setpgrp()
    except OSError:  # pragma: no cover - platforms without process groups
        pass
    try:
        conn.send((True, func(*args, **kwargs)))
    except BaseException as exc:  # reported to the parent, which raises it
        conn.send((False, f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()  # the child had not made its group yet


def run_killable(func, args=(), kwargs=None, *, timeout=None):
    """Call ``func(*args, **kwargs)`` in a child process.

    Returns ``(True, value)``, or ``(False, None)`` when ``timeout`` seconds
    passed first (the child and its process group are then killed).  An
    exception in the child is raised here as RuntimeError with its text.

    Examples
    --------
    >>> run_killable(divmod, (7, 2))
    (True, (3, 1))
    """
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else "spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(sender, func, args, kwargs or {}), daemon=True)
    proc.start()
    sender.close()
    try:
        if not receiver.poll(timeout):
            _kill(proc)
            return False, None
        try:
            ok, value = receiver.recv()
        except EOFError:
            raise RuntimeError(f"the child process died (exit code {proc.exitcode})") from None
    except BaseException:
        _kill(proc)  # e.g. KeyboardInterrupt: never leave the child running
        raise
    finally:
        proc.join()
        receiver.close()
    if not ok:
        raise RuntimeError(value)
    return True, value
