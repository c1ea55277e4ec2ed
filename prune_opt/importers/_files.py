"""A saved model file, recognised by its content and read by the right importer.

Only the libraries' own documented text formats are read: LightGBM's model
text (``booster.save_model("model.txt")``), XGBoost's JSON model
(``model.save_model("model.json")``) and CatBoost's JSON model
(``model.save_model("model.json", format="json")``).  All go through
prune-opt's own parsers, so nothing in a file is ever executed; a pickle (or a
joblib dump) is refused with the way to save the model instead, and so is
CatBoost's binary ``.cbm`` format.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["read_model_file", "model_file_kind"]

HOW_TO_SAVE = ("save a LightGBM model with booster.save_model('model.txt') (LGBMClassifier: "
               "model.booster_.save_model(...)), an XGBoost model with "
               "model.save_model('model.json') or a CatBoost model with "
               "model.save_model('model.json', format='json')")
#: the top-level fields of CatBoost's JSON model (XGBoost's are "learner" and "version")
CATBOOST_FIELDS = (b"features_info", b"model_info", b"oblivious_trees", b"trees",
                   b"scale_and_bias", b"ctr_data")
_FIRST_KEY = re.compile(rb'\{\s*"([^"\\]*)"')


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
