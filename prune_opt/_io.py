"""Atomic file output: every file prune-opt writes appears whole or not at all.

A temporary file is written in the destination's own directory (so the final
``os.replace`` is a rename on one file system, atomic on POSIX and Windows),
flushed and fsynced, then renamed over the destination.  On any error,
including ``KeyboardInterrupt``, the temporary file is removed and the
destination is left as it was.

The file gets the mode an ordinary ``open(path, "w")`` would leave: the
mode of the file it replaces, else ``0o666`` less the umask.  A destination
that is a symbolic link is written through (its target is replaced, the link
stays a link).  A destination that is a named pipe or a device (``/dev/stdout``)
is written into directly: there is no file to replace.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "check_output_path", "unique_keys"]


def unique_keys(pairs):
    """``object_pairs_hook`` of :func:`json.loads` that refuses an object naming a key
    twice (plain ``json`` keeps the last value without a word).

    Examples
    --------
    >>> import json
    >>> from prune_opt._io import unique_keys
    >>> json.loads('{"a": 1, "a": 2}', object_pairs_hook=unique_keys)
    Traceback (most recent call last):
    ...
    ValueError: the key 'a' appears twice in one JSON object; keep one of them
    """
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"the key {twice[:80]!r} appears twice in one JSON object; keep one "
                         "of them")
    return out


def check_output_path(path, name="path"):
    """Validate an output path before any work is done.

    Raises
    ------
    ValueError
        ``path`` names a directory, or its parent directory is missing or not
        writable.  The message names ``name`` and the fix.
    """
    p = Path(os.fspath(path))
    if p.is_dir():
        raise ValueError(f"{name}={str(p)!r} is a directory; give a file name inside it")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{name}={str(p)!r}: the directory {str(parent)!r} does not exist; "
                         "create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{name}={str(p)!r}: the directory {str(parent)!r} is not writable; "
                         "choose another location")
    return p


@contextlib.contextmanager
def atomic_write(path, mode="w", *, encoding=None, newline=None):
    """Open a temporary file beside ``path``; rename it over ``path`` on success.

    Parameters
    ----------
    path : str or os.PathLike
    mode : {"w", "wb"}
    encoding, newline : passed to :func:`open` in text mode.

    Examples
    --------
    >>> import os, tempfile
    >>> from prune_opt._io import atomic_write
    >>> d = tempfile.mkdtemp()
    >>> with atomic_write(os.path.join(d, "out.txt")) as fh:
    ...     _ = fh.write("whole or nothing")
    >>> open(os.path.join(d, "out.txt")).read()
    'whole or nothing'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    p = Path(os.fspath(path))
    text = {} if mode == "wb" else {"encoding": encoding or "utf-8", "newline": newline}
    if _is_special_file(p):  # a pipe or a device (/dev/stdout): write into it, as open does
        with open(p, mode, **text) as fh:
            yield fh
        return
    p = _through_links(p)
    directory = p.parent if str(p.parent) else Path(".")
    mode_of_file = _new_file_mode(p)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, mode_of_file)  # mkstemp's 0o600 would otherwise end up on the file
        with os.fdopen(fd, mode, **text) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _is_special_file(p):
    """True for an existing destination that is neither a regular file nor a directory
    (a named pipe, a character device, a socket): renaming over it would replace it."""
    try:
        st = os.stat(p)
    except OSError:
        return False
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))


def _through_links(p):
    """The file a (chain of) symbolic link(s) points to; ``p`` itself otherwise."""
    if not p.is_symlink():
        return p
    return Path(os.path.realpath(p))


def _current_umask():
    mask = os.umask(0o022)  # the only portable way to read it: set, then restore
    os.umask(mask)
    return mask


def _new_file_mode(p):
    """The replaced file's permission bits, else ``0o666`` less the umask."""
    try:
        return stat.S_IMODE(os.stat(p).st_mode)
    except OSError:
        return 0o666 & ~_current_umask()
