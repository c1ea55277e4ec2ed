"""Parse LightGBM's model text (``Booster.model_to_string()``, ``save_model`` files).

Pure Python and numpy: nothing in the text is executed and LightGBM is not
needed to read it.  The format, as LightGBM writes it
(``GBDT::SaveModelToString``, ``Tree::ToString``):

* a header of ``key=value`` lines starting with the line ``tree``
  (``num_class``, ``num_tree_per_iteration``, ``max_feature_idx``,
  ``objective``, ``feature_names``, ``feature_infos``, ``tree_sizes``, and a
  bare ``average_output`` line in random-forest mode);
* one block per tree, ``Tree=<i>`` then ``key=value`` lines and blank lines
  (``tree_sizes`` holds each block's length in bytes);
* ``end of trees``, then feature importances, the training ``parameters:``
  (``[name: value]`` lines up to ``end of parameters``) and, from the Python
  package, ``pandas_categorical:``.

In a tree of ``num_leaves`` leaves the internal nodes are numbered
``0 .. num_leaves - 2`` (the root is 0) and ``left_child``/``right_child``
hold an internal node's number, or ``~leaf`` (``-leaf - 1``) for a leaf.

Everything is checked before anything is built from it: counts, array lengths,
numbers (well formed, finite but for a threshold's ``inf``, never NaN), the ``tree_sizes`` of every block and the size
of the whole text, so a truncated, edited or oversized file is refused with a
``ValueError`` naming what is wrong.  Whether the child indices form one tree
is checked where the tree is walked (:mod:`._lightgbm`).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict

import numpy as np

from ._guards import MAX_MODEL_BYTES, check_size, model_text

__all__ = ["ModelText", "parse_model_text", "MAX_MODEL_BYTES", "MAX_LEAVES", "WHAT"]

#: how every error names the document
WHAT = "LightGBM model text"
#: how many parsed model texts are kept (by their SHA-256) for the next call
CACHE_SIZE = 8
_CACHE = OrderedDict()
_CACHE_LOCK = threading.Lock()
#: LightGBM's own bound on ``num_leaves`` (its config refuses more)
MAX_LEAVES = 131072

_INT = r"-?\d{1,10}"
_SIZE = r"\d{1,18}"
_FLOAT = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d{1,4})?"
# a split threshold may be infinite: LightGBM writes "inf" for a split that separates
# the missing values (NaN) from every number
_THRESHOLD = rf"(?:{_FLOAT}|-?inf)"
_LISTS = {kind: re.compile(rf"{one}(?: {one})*") for kind, one in
          (("int", _INT), ("size", _SIZE), ("float", _FLOAT), ("threshold", _THRESHOLD))}
_PARAMETER = re.compile(r"\[([^:\]]+): ?(.*)\]")

#: the arrays of a tree block: (kind, length as "internal" or "leaves")
TREE_ARRAYS = {
    "split_feature": ("int", "internal"), "split_gain": ("float", "internal"),
    "threshold": ("threshold", "internal"), "decision_type": ("int", "internal"),
    "left_child": ("int", "internal"), "right_child": ("int", "internal"),
    "leaf_value": ("float", "leaves"), "leaf_weight": ("float", "leaves"),
    "leaf_count": ("int", "leaves"), "internal_value": ("float", "internal"),
    "internal_weight": ("float", "internal"), "internal_count": ("int", "internal"),
}
#: the scalars of a tree block and the other keys LightGBM writes (categorical and
#: linear trees; their contents are not read: such trees are refused)
TREE_SCALARS = ("num_leaves", "num_cat", "is_linear", "shrinkage")
TREE_OTHER = ("cat_boundaries", "cat_threshold", "leaf_const", "num_features",
              "leaf_features", "leaf_coeff")
#: arrays a tree of two or more leaves must have (LightGBM refuses it otherwise)
REQUIRED_ARRAYS = ("split_feature", "threshold", "left_child", "right_child", "leaf_value")


class ModelText:
    """A parsed LightGBM model text: the header, the trees' raw arrays, the parameters.

    Attributes
    ----------
    num_class, num_tree_per_iteration, n_features : int
    objective : str or None
        The ``objective=`` line (None: trained with a custom objective).
    average_output : bool
        Random-forest mode: the trees' outputs are averaged.
    feature_names : list of str
    trees : list of dict
        Per tree, in LightGBM's numbering: ``num_leaves`` (int), ``num_cat``,
        ``is_linear`` (int), ``shrinkage`` (float) and the arrays of
        :data:`TREE_ARRAYS` that the block holds (numpy; ``internal_value``
        zeros when absent).
    parameters : dict
        The training parameters (``{"boosting": "gbdt", ...}``, as text), empty
        when the text has none.
    pandas_categorical : str or None
        The ``pandas_categorical:`` line's value (``"null"`` when no column was
        categorical).
    """

    def __init__(self, *, num_class, num_tree_per_iteration, n_features, objective,
                 average_output, feature_names, trees, parameters, pandas_categorical):
        self.num_class = num_class
        self.num_tree_per_iteration = num_tree_per_iteration
        self.n_features = n_features
        self.objective = objective
        self.average_output = average_output
        self.feature_names = feature_names
        self.trees = trees
        self.parameters = parameters
        self.pandas_categorical = pandas_categorical

    def copy(self):
        """A copy with its own lists and dicts, sharing the (read-only) arrays."""
        return ModelText(num_class=self.num_class,
                         num_tree_per_iteration=self.num_tree_per_iteration,
                         n_features=self.n_features, objective=self.objective,
                         average_output=self.average_output,
                         feature_names=list(self.feature_names),
                         trees=[dict(tree) for tree in self.trees],
                         parameters=dict(self.parameters),
                         pandas_categorical=self.pandas_categorical)

    def __repr__(self):
        return (f"ModelText(trees={len(self.trees)}, num_class={self.num_class}, "
                f"n_features={self.n_features}, objective={self.objective!r})")


def _fail(message):
    raise ValueError(f"{WHAT}: {message}")


def _numbers(value, kind, count, where):
    """The ``count`` numbers of a space-separated list, checked to be well formed."""
    if count == 0:
        if value.strip():
            _fail(f"{where} should be empty, got {value[:40]!r}")
        return np.zeros(0, dtype=np.float64 if kind in ("float", "threshold") else np.int64)
    if not _LISTS[kind].fullmatch(value):
        bad = next((tok for tok in value.split(" ")
                    if not _LISTS[kind].fullmatch(tok)), value[:40])
        what = {"float": "a finite number", "threshold": "a number (or inf)"}.get(
            kind, "an integer")
        _fail(f"{where}: {bad[:40]!r} is not {what}")
    parts = value.split(" ")
    if len(parts) != count:
        _fail(f"{where} has {len(parts)} entries, expected {count} (truncated or edited?)")
    if kind in ("float", "threshold"):
        out = np.fromiter(map(float, parts), dtype=np.float64, count=count)
        if kind == "float" and not np.isfinite(out).all():
            _fail(f"{where} holds a number too large to be finite")
        return out
    return np.fromiter(map(int, parts), dtype=np.int64, count=count)


def _integer(fields, key, where, *, low, high=None, default=None):
    if key not in fields:
        if default is None:
            _fail(f"{where} lacks {key}=")
        return default
    value = fields[key]
    if not re.fullmatch(_INT, value):
        _fail(f"{where}: {key}={value[:40]!r} is not an integer")
    number = int(value)
    if number < low or (high is not None and number > high):
        limit = f">= {low}" if high is None else f"in [{low}, {high}]"
        _fail(f"{where}: {key}={number} must be {limit}")
    return number


def _header(lines):
    """The header's fields and the index of the first line after it."""
    if not lines or lines[0] != "tree":
        first = lines[0][:40] if lines else ""
        _fail(f"it must start with the line 'tree' (got {first!r}); pass the output of "
              "Booster.model_to_string() or a file written by save_model()")
    fields, i = {}, 1
    while i < len(lines) and not lines[i].startswith("Tree=") and lines[i] != "end of trees":
        line = lines[i]
        i += 1
        if not line:
            continue
        key, eq, value = line.partition("=")
        if key in fields:
            _fail(f"the header sets {key!r} twice")
        if eq and "=" in value and key not in ("feature_names", "monotone_constraints"):
            _fail(f"wrong header line {line[:60]!r}")
        fields[key] = value
    return fields, i


def _tree_blocks(lines, i):
    """[(fields, block length in characters)] of the tree blocks from line ``i``, and
    the index of the ``end of trees`` line."""
    blocks = []
    while i < len(lines) and lines[i].startswith("Tree="):
        start = i
        if lines[i] != f"Tree={len(blocks)}":
            _fail(f"expected the line 'Tree={len(blocks)}', got {lines[i][:40]!r}")
        fields, i = {}, i + 1
        while i < len(lines) and lines[i]:
            key, eq, value = lines[i].partition("=")
            where = f"tree {len(blocks)}"
            if not eq:
                _fail(f"{where}: line {lines[i][:40]!r} is not key=value (truncated or "
                      "edited?)")
            if key in fields:
                _fail(f"{where} sets {key!r} twice")
            if key not in TREE_ARRAYS and key not in TREE_SCALARS and key not in TREE_OTHER:
                _fail(f"{where} has the unknown field {key!r}")
            fields[key] = value
            i += 1
        while i < len(lines) and not lines[i]:
            i += 1
        blocks.append((fields, sum(len(line) + 1 for line in lines[start:i])))
    if i >= len(lines) or lines[i] != "end of trees":
        _fail("the text ends before the line 'end of trees' (truncated?)")
    return blocks, i


def _tree(fields, t, n_features):
    """One tree's scalars and arrays, every length checked against ``num_leaves``."""
    where = f"tree {t}"
    num_leaves = _integer(fields, "num_leaves", where, low=1, high=MAX_LEAVES)
    tree = {"num_leaves": num_leaves,
            "num_cat": _integer(fields, "num_cat", where, low=0),
            "is_linear": _integer(fields, "is_linear", where, low=0, high=1, default=0)}
    shrinkage = fields.get("shrinkage", "1")
    tree["shrinkage"] = float(_numbers(shrinkage, "float", 1, f"{where}: shrinkage")[0])
    if tree["num_cat"] or tree["is_linear"]:
        return tree  # refused by the importer, which names the reason
    if "leaf_value" not in fields:
        _fail(f"{where} lacks leaf_value=")
    tree["leaf_value"] = _numbers(fields["leaf_value"], "float", num_leaves,
                                  f"{where}: leaf_value")
    if num_leaves == 1:  # a constant tree: LightGBM reads nothing else
        return tree
    for key in REQUIRED_ARRAYS:
        if key not in fields:
            _fail(f"{where} lacks {key}= (a tree of {num_leaves} leaves needs it)")
    for key, (kind, length) in TREE_ARRAYS.items():
        if key in fields and key != "leaf_value":
            count = num_leaves - 1 if length == "internal" else num_leaves
            tree[key] = _numbers(fields[key], kind, count, f"{where}: {key}")
    m = num_leaves - 1
    tree.setdefault("internal_value", np.zeros(m))
    tree.setdefault("decision_type", np.zeros(m, dtype=np.int64))
    feature = tree["split_feature"]
    if (feature < 0).any() or (feature >= n_features).any():
        _fail(f"{where}: split_feature {int(feature[(feature < 0) | (feature >= n_features)][0])}"
              f" is out of range [0, {n_features}) (max_feature_idx={n_features - 1})")
    dt = tree["decision_type"]
    if (dt < 0).any() or (dt > 15).any() or (((dt >> 2) & 3) == 3).any():
        bad = int(dt[(dt < 0) | (dt > 15) | (((dt >> 2) & 3) == 3)][0])
        _fail(f"{where}: decision_type {bad} is not one LightGBM writes")
    for key in ("left_child", "right_child"):
        child = tree[key]
        bad = (child < -num_leaves) | (child >= m) | (child == 0)
        if bad.any():
            _fail(f"{where}: {key} {int(child[bad][0])} is out of range (internal nodes "
                  f"1..{m - 1}, leaves -1..-{num_leaves}; the root 0 is no child)")
    return tree


def _trailer(lines):
    """The training parameters and the pandas_categorical value after the trees."""
    parameters, pandas_categorical, i = {}, None, 0
    while i < len(lines):
        line = lines[i]
        if line == "parameters:":
            i += 1
            while i < len(lines) and lines[i] != "end of parameters":
                match = _PARAMETER.fullmatch(lines[i])
                if not match and lines[i]:  # LightGBM crashed on such a file
                    _fail(f"the line {lines[i][:40]!r} among the parameters is not "
                          "[name: value] (edited?)")
                if match:
                    if match.group(1) in parameters:
                        _fail(f"the parameters set {match.group(1)!r} twice")
                    parameters[match.group(1)] = match.group(2)
                i += 1
            if i >= len(lines):
                _fail("'parameters:' is not closed by 'end of parameters' (truncated?)")
        elif line.startswith("pandas_categorical:"):
            pandas_categorical = line[len("pandas_categorical:"):]
        i += 1
    return parameters, pandas_categorical


def parse_model_text(text, *, max_bytes=MAX_MODEL_BYTES):
    """Parse and check a LightGBM model text (see the module docstring).

    The parse of each of the last :data:`CACHE_SIZE` texts is kept, keyed by the
    SHA-256 of the text, so that reading the same model again (an estimator's
    ``as_forest``, then its acquisition cost, ...) does not parse it again; each
    call gets its own :class:`ModelText` (lists and dicts), whose arrays are
    read-only.  A different text, however small the difference, is another key:
    a cached parse is never that of another text.

    Parameters
    ----------
    text : str or bytes
        What ``Booster.model_to_string()`` returns or ``save_model`` writes (UTF-8; a
        byte-order mark is dropped and CRLF line ends are read as LF, as a file
        edited or checked out on Windows has them).
    max_bytes : int or None, default :data:`MAX_MODEL_BYTES`
        Refuse a longer text (None: no limit).

    Returns
    -------
    ModelText

    Raises
    ------
    ValueError
        Naming what is wrong: not a model text, too large, truncated, a count
        or array length that disagrees with ``num_leaves``, ``tree_sizes`` or
        ``max_feature_idx``, a malformed or non-finite number, a feature or
        child index out of range.

    Examples
    --------
    >>> text = "\\n".join(["tree", "version=v4", "num_class=1", "num_tree_per_iteration=1",
    ...     "label_index=0", "max_feature_idx=0", "objective=regression",
    ...     "feature_names=x", "feature_infos=none", "", "Tree=0", "num_leaves=2",
    ...     "num_cat=0", "split_feature=0", "threshold=0.5", "decision_type=2",
    ...     "left_child=-1", "right_child=-2", "leaf_value=1 2", "", "", "end of trees", ""])
    >>> model = parse_model_text(text)
    >>> model, model.trees[0]["leaf_value"].tolist()
    (ModelText(trees=1, num_class=1, n_features=1, objective='regression'), [1.0, 2.0])
    >>> parse_model_text(text.replace("leaf_value=1 2", "leaf_value=1"))
    Traceback (most recent call last):
    ...
    ValueError: LightGBM model text: tree 0: leaf_value has 1 entries, expected 2 (truncated or edited?)
    """
    text = model_text(check_size(text, max_bytes, WHAT), WHAT,
                      "save the model with booster.save_model('model.txt')")
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    with _CACHE_LOCK:
        parsed = _CACHE.get(key)
        if parsed is not None:
            _CACHE.move_to_end(key)
    if parsed is None:
        parsed = _parse(text)
        for tree in parsed.trees:  # shared by every later call: nobody writes into them
            for value in tree.values():
                if isinstance(value, np.ndarray):
                    value.setflags(write=False)
        with _CACHE_LOCK:
            _CACHE[key] = parsed
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
    return parsed.copy()


def _parse(text):
    """:func:`parse_model_text` of a decoded text, uncached."""
    # a file that went through Windows: CRLF line ends (LightGBM writes "\n" and counts
    # tree_sizes in that text, which the CRLF text converts back to)
    lines = text.replace("\r\n", "\n").split("\n")
    fields, i = _header(lines)
    where = "the header"
    num_class = _integer(fields, "num_class", where, low=1)
    per_iteration = _integer(fields, "num_tree_per_iteration", where, low=1, default=num_class)
    _integer(fields, "label_index", where, low=0)
    n_features = _integer(fields, "max_feature_idx", where, low=0) + 1
    lists = {}
    for key in ("feature_names", "feature_infos"):
        if key not in fields:
            _fail(f"the header lacks {key}=")
        lists[key] = fields[key].split(" ")
        if len(lists[key]) != n_features:
            _fail(f"{key} has {len(lists[key])} entries but max_feature_idx="
                  f"{n_features - 1} says {n_features}")
    blocks, i = _tree_blocks(lines, i)
    if not blocks:
        _fail("the model has no trees")
    if len(blocks) % per_iteration:
        _fail(f"{len(blocks)} trees are not a whole number of iterations of "
              f"num_tree_per_iteration={per_iteration}")
    if "tree_sizes" in fields:
        sizes = _numbers(fields["tree_sizes"], "size", len(blocks), "tree_sizes")
        actual = np.array([size for _, size in blocks])
        if not np.array_equal(sizes, actual):
            t = int(np.flatnonzero(sizes != actual)[0])
            _fail(f"tree_sizes says tree {t} takes {int(sizes[t])} bytes, the text holds "
                  f"{int(actual[t])} (edited or truncated?)")
    trees = [_tree(block, t, n_features) for t, (block, _) in enumerate(blocks)]
    parameters, pandas_categorical = _trailer(lines[i + 1:])
    return ModelText(num_class=num_class, num_tree_per_iteration=per_iteration,
                     n_features=n_features, objective=fields.get("objective"),
                     average_output="average_output" in fields,
                     feature_names=lists["feature_names"], trees=trees,
                     parameters=parameters, pandas_categorical=pandas_categorical)
