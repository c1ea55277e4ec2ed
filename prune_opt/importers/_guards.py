"""The guards every model reader shares (LightGBM's text, XGBoost's and CatBoost's
JSON): the size limit (:func:`read_limited`, :func:`check_size`) and the text a
model's bytes hold (:func:`model_text`: UTF-8, a byte-order mark dropped).
"""

from __future__ import annotations

import os

__all__ = ["read_limited", "check_size", "model_text", "MAX_MODEL_BYTES", "BOM"]

#: the default ``max_bytes`` of every importer: a larger model file or text is refused unread
MAX_MODEL_BYTES = 512 * 2**20
#: what some editors (Notepad, PowerShell's Out-File) write first in a UTF-8 file
BOM = "\ufeff"


def check_size(data, max_bytes, what):
    """``data`` (a model's text or bytes) unless it is longer than ``max_bytes`` (None: no
    limit; text counts its UTF-8 bytes); ``what`` names the document in the error (e.g.
    ``"XGBoost model JSON"``).

    Examples
    --------
    >>> check_size(b"{}", 2, "demo JSON")
    b'{}'
    >>> check_size("{ }", 2, "demo JSON")
    Traceback (most recent call last):
    ...
    ValueError: demo JSON: 3 bytes, more than max_bytes=2; pass a larger max_bytes (None: no limit) if you trust the model
    """
    size = len(data)
    if isinstance(data, str) and max_bytes is not None and max_bytes < 4 * size <= 4 * max_bytes:
        size = len(data.encode("utf-8", "surrogatepass"))  # a character takes 1 to 4 bytes
    if max_bytes is not None and size > max_bytes:
        raise ValueError(f"{what}: {size:,} bytes, more than max_bytes={max_bytes:,}; pass "
                         "a larger max_bytes (None: no limit) if you trust the model")
    return data


def read_limited(path, max_bytes, what):
    """The bytes of the model file at ``path``, a file larger than ``max_bytes`` (None:
    no limit) refused before it is read (see :func:`check_size`)."""
    size = os.path.getsize(path)
    if max_bytes is not None and size > max_bytes:
        raise ValueError(f"{what}: {os.fspath(path)!r} has {size:,} bytes, more than "
                         f"max_bytes={max_bytes:,}; pass a larger max_bytes (None: no limit) "
                         "if you trust the file")
    with open(path, "rb") as fh:  # a file that grew since is cut one byte past the limit
        return check_size(fh.read(-1 if max_bytes is None else max_bytes + 1), max_bytes, what)


def model_text(data, what, how_to_save):
    """The text of a model's ``data`` (str, or bytes read as UTF-8) without a leading
    byte-order mark, which a file saved by a Windows editor starts with; bytes that are
    not UTF-8 are refused, ``how_to_save`` saying how to write a text model.

    Examples
    --------
    >>> model_text(b"\\xef\\xbb\\xbf{}", "demo JSON", "save it as JSON")
    '{}'
    >>> model_text(b"\\x80", "demo JSON", "save it as JSON")
    Traceback (most recent call last):
    ...
    ValueError: demo JSON: not UTF-8 text (invalid start byte at byte 0); save it as JSON
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                             f"{how_to_save}") from None
    if not isinstance(data, str):
        raise TypeError(f"{what}: expected text or bytes, got {type(data).__name__}")
    return data.removeprefix(BOM)
