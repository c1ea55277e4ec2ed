"""A saved model file, recognised by its content and read by the right importer, and
the guards every model reader shares: the size limit (:func:`read_limited`,
:func:`check_size`) and the text a model's bytes hold (:func:`model_text`: UTF-8, a
byte-order mark dropped).

Only the libraries' own documented text formats are read: LightGBM's model
text (``booster.save_model("model.txt")``), XGBoost's JSON model
(``model.save_model("model.json")``) and CatBoost's JSON model
(``model.save_model("model.json", format="json")``).  All go through
prune-opt's own parsers, so nothing in a file is ever executed; a pickle (or a
joblib dump) is refused with the way to save the model instead, and so is
CatBoost's binary ``.cbm`` format.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["read_model_file", "model_file_kind", "read_limited", "check_size", "model_text",
           "MAX_MODEL_BYTES"]

#: the default ``max_bytes`` of every importer: a larger model file or text is refused unread
MAX_MODEL_BYTES = 512 * 2**20
#: what some editors (Notepad, PowerShell's Out-File) write first in a UTF-8 file
BOM = "\ufeff"

HOW_TO_SAVE = ("save a LightGBM model with booster.save_model('model.txt') (LGBMClassifier: "
               "model.booster_.save_model(...)), an XGBoost model with "
               "model.save_model('model.json') or a CatBoost model with "
               "model.save_model('model.json', format='json')")
#: the top-level fields of CatBoost's JSON model (XGBoost's are "learner" and "version")
CATBOOST_FIELDS = (b"features_info", b"model_info", b"oblivious_trees", b"trees",
                   b"scale_and_bias", b"ctr_data")
_FIRST_KEY = re.compile(rb'\{\s*"([^"\\]*)"')


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


def model_file_kind(path):
    """``"lightgbm"``, ``"xgboost"`` or ``"catboost"``: which library wrote the model
    file at ``path``, from its first bytes (a JSON model by its first field);
    anything else is refused with a ValueError saying what it is.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "model.txt")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("tree\\nversion=v4\\n")
    >>> model_file_kind(path)
    'lightgbm'
    >>> with open(path, "w") as fh:
    ...     _ = fh.write('{\\n    "features_info" : {}}')
    >>> model_file_kind(path)
    'catboost'
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"model file {str(path)!r} does not exist")
    if not p.is_file():
        raise ValueError(f"model file {str(path)!r} is not a file")
    with open(p, "rb") as fh:
        head = fh.read(256)
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if start.startswith(b"tree"):
        return "lightgbm"
    if start.startswith(b"{"):
        first = _FIRST_KEY.match(start)
        return "catboost" if first and first.group(1) in CATBOOST_FIELDS else "xgboost"
    if start.startswith(b"CBM1"):
        raise ValueError(f"model file {str(path)!r} is CatBoost's binary format (.cbm), which "
                         "prune-opt does not parse; save the model as JSON: "
                         "model.save_model('model.json', format='json')")
    if head[:1] == b"\x80" or head[:2] in (b"PK", b"\x1f\x8b"):
        what = "a Python pickle" if head[:1] == b"\x80" else "a compressed archive"
        raise ValueError(f"model file {str(path)!r} is {what}; prune-opt never loads pickles "
                         f"or archives (loading one can run code): {HOW_TO_SAVE}")
    raise ValueError(f"model file {str(path)!r} is neither a LightGBM model text nor an "
                     f"XGBoost or CatBoost JSON model; {HOW_TO_SAVE}")


def read_model_file(path):
    """The :class:`~prune_opt.Forest` of a LightGBM, XGBoost or CatBoost model file, read
    by :func:`~prune_opt.importers.from_lightgbm`,
    :func:`~prune_opt.importers.from_xgboost` or
    :func:`~prune_opt.importers.from_catboost` (no library needs to be
    installed; see :func:`model_file_kind`).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, lightgbm as lgb
    >>> X = np.arange(40.0)[:, None]; y = (X[:, 0] > 19).astype(int)
    >>> m = lgb.LGBMClassifier(n_estimators=2, num_leaves=2, min_child_samples=5,
    ...                        verbose=-1).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.txt")
    >>> _ = m.booster_.save_model(path)
    >>> read_model_file(path)
    Forest(n_trees=2, n_nodes=6, n_classes=2, n_features=1, link='logistic')
    """
    from ._catboost import from_catboost
    from ._lightgbm import from_lightgbm
    from ._xgboost import from_xgboost

    read = {"lightgbm": from_lightgbm, "xgboost": from_xgboost, "catboost": from_catboost}
    return read[model_file_kind(path)](str(path))
