"""Real datasets: bundled ones (digits, thyroid, heart, pima, and the regression
sets heart-severity and diabetes), the larger UCI sets, and any CSV/TSV with a
target column.

A larger set is read from a local data folder when one holds it
(``$PRUNE_OPT_DATA``, else ``../shared/data`` relative to the working
directory or to the source checkout).  Otherwise it is fetched once from
OpenML through scikit-learn's :func:`~sklearn.datasets.fetch_openml` into
scikit-learn's data home (``download=False`` forbids that); the OpenML copies
may encode categorical columns differently from the local files.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import zlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from .forest._costs import FeatureCosts

__all__ = ["Dataset", "load_dataset", "list_datasets", "dataset_catalog", "shared_data_dir",
           "load_csv", "read_table", "encode_table", "match_columns"]

BUNDLED = ("digits", "thyroid", "heart", "pima", "heart-severity", "diabetes")
#: datasets whose target is a real number (the rest are classification)
REGRESSION = ("heart-severity", "diabetes")
SHARED = {
    "elec": ("elec.csv.gz", ","),
    "weather": ("weather.csv.gz", ","),
    "magic": ("magic.tsv.gz", "\t"),
    "letter": ("letter.tsv.gz", "\t"),
    "spambase": ("spambase.tsv.gz", "\t"),
    "adult": ("adult.tsv.gz", "\t"),
}
# OpenML data ids of the same UCI sets (weather has no OpenML copy: local only)
OPENML = {"spambase": 44, "magic": 1120, "letter": 6, "adult": 1590, "elec": 151}
DESCRIPTIONS = {
    "digits": ("bundled (scikit-learn)", "uniform"),
    "thyroid": ("bundled (UCI ann-thyroid)", "Turney 1995 test costs; FTI requires TT4, T4U"),
    "heart": ("bundled (UCI Cleveland)", "Turney 1995 test costs"),
    "pima": ("bundled (UCI Pima)", "Turney 1995 costs; glucose/insulin share a blood draw"),
    "weather": ("local data folder only", "uniform"),
    "heart-severity": ("bundled (UCI Cleveland), regression",
                       "Turney 1995 test costs; target: severity 0-4"),
    "diabetes": ("bundled (scikit-learn), regression",
                 "illustrative (not published): 1 per exam value, 5 per serum test + a "
                 "shared 10 blood draw"),
}
#: diabetes: an illustrative cost model (no published one exists): the four
#: exam values cost 1, each of the six blood serum measurements costs 5, and the
#: first of them also pays a shared blood draw of 10
DIABETES_EXAM = ("age", "sex", "bmi", "bp")
DIABETES_SERUM = ("s1", "s2", "s3", "s4", "s5", "s6")


@dataclass
class Dataset:
    """A classification or regression dataset with optional real feature costs.

    Attributes
    ----------
    name : str
    X : ndarray (n_examples, n_features)
    y : ndarray (n_examples,)
    feature_names : list of str
    costs : FeatureCosts or None
        Real acquisition costs where published (thyroid, heart, pima).
    X_test, y_test : ndarray or None
        Official test split where the source has one (thyroid).
    description : str
    task : {"classification", "regression"}
        What ``y`` holds: class labels or real targets.
    encoding : dict or None
        How a table's text became ``X`` (see :func:`load_csv`): ``target``,
        ``columns`` (the feature names in order) and ``categories`` (for each
        text column, the sorted values coded 0, 1, 2, ...).  Kept in a model
        saved by the command line so that prediction reads a new table alike.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list
    costs: FeatureCosts | None = None
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    description: str = ""
    extra: dict = field(default_factory=dict)
    task: str = "classification"
    encoding: dict | None = None

    def costs_or_uniform(self):
        """The real costs, or uniform 1.0 per feature where none are published."""
        return self.costs or FeatureCosts.uniform(len(self.feature_names),
                                                  feature_names=self.feature_names)


def shared_data_dir():
    """Folder holding the shared real datasets, or None when absent."""
    cands = []
    if os.environ.get("PRUNE_OPT_DATA"):
        cands.append(Path(os.environ["PRUNE_OPT_DATA"]))
    cands.append(Path.cwd() / ".." / "shared" / "data")
    cands.append(Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
    for c in cands:
        if (c / "README.md").exists() or any(c.glob("*.gz")) if c.is_dir() else False:
            return c.resolve()
    return None


def list_datasets():
    """Names :func:`load_dataset` can load on this machine without downloading."""
    names = list(BUNDLED)
    d = shared_data_dir()
    if d is not None:
        names += [n for n, (f, _) in SHARED.items() if (d / f).exists()]
    return names


def dataset_catalog():
    """Every named dataset with its source, cost model and local availability.

    Returns
    -------
    list of dict
        Keys ``name``, ``task``, ``source``, ``costs``, ``local`` (bool:
        loadable without a download).

    Examples
    --------
    >>> from prune_opt.datasets import dataset_catalog
    >>> [row["name"] for row in dataset_catalog()][:4]
    ['digits', 'thyroid', 'heart', 'pima']
    """
    local = set(list_datasets())
    rows = []
    for name in list(BUNDLED) + list(SHARED):
        source, costs = DESCRIPTIONS.get(
            name, (f"local data folder, else OpenML data_id={OPENML.get(name)}", "uniform"))
        rows.append({"name": name, "task": "regression" if name in REGRESSION
                     else "classification", "source": source, "costs": costs,
                     "local": name in local})
    return rows


def _data_path(name):
    return resources.files("prune_opt") / "data" / name


def _read_text(name):
    p = _data_path(name)
    raw = p.read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return raw.decode()


def _read_cost_file(text):
    costs = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            costs[k.strip()] = float(v.strip())
    return costs


def _load_thyroid():
    def parse(text):
        arr = np.array([[float(v) for v in line.split()] for line in text.splitlines()
                        if line.strip()])
        return arr[:, :-1], arr[:, -1].astype(int)

    X, y = parse(_read_text("ann-train.data.gz"))
    Xt, yt = parse(_read_text("ann-test.data.gz"))
    own = _read_cost_file(_read_text("ann-thyroid.cost"))
    names = list(own) + ["FTI"]
    costs = FeatureCosts(own, requires={"FTI": ["TT4", "T4U"]}, feature_names=names)
    return Dataset("thyroid", X, y, names, costs, Xt, yt,
                   "UCI ann-thyroid (3 classes); Turney's costs; FTI requires TT4 and T4U")


def _read_cleveland():
    """Cleveland features (NaN for the 6 missing values), ``num`` and Turney's costs."""
    rows = [line.split(",") for line in _read_text("processed.cleveland.data").splitlines()
            if line.strip()]
    arr = np.array([[np.nan if v.strip() == "?" else float(v) for v in r] for r in rows])
    own = _read_cost_file(_read_text("heart-disease.cost"))
    names = list(own)
    return arr[:, :-1], arr[:, -1], names, FeatureCosts(own, feature_names=names)


def _load_heart():
    X, num, names, costs = _read_cleveland()
    return Dataset("heart", X, (num > 0).astype(int), names, costs,
                   description="UCI Cleveland heart disease, binarised (0 vs >0); "
                   "Turney's costs; 6 missing values as NaN")


def _load_heart_severity():
    X, num, names, costs = _read_cleveland()
    return Dataset("heart-severity", X, num.astype(float), names, costs,
                   description="UCI Cleveland heart disease, regression on the severity "
                   "num (0 = none ... 4); Turney's costs; 6 missing values as NaN",
                   task="regression")


def _load_diabetes():
    from sklearn.datasets import load_diabetes

    d = load_diabetes()
    names = list(d.feature_names)
    own = {n: 1.0 for n in DIABETES_EXAM} | {n: 5.0 for n in DIABETES_SERUM}
    costs = FeatureCosts(own, groups={"blood_draw": (10.0, list(DIABETES_SERUM))},
                         feature_names=names)
    return Dataset("diabetes", d.data, d.target.astype(float), names, costs,
                   description="sklearn's bundled diabetes progression (442 patients, "
                   "regression); ILLUSTRATIVE costs: 1 per exam value (age, sex, bmi, bp), "
                   "5 per serum test s1-s6 plus one shared 10 blood draw",
                   task="regression")


PIMA_NAMES = ["timespreg", "glucose", "diastolic", "triceps", "insulin", "massindex",
              "pedigree", "age"]


def _load_pima():
    X, y, _, _ = _parse_table(_read_text("pima.tsv.gz"), "\t", "target")
    own = {"timespreg": 1.0, "glucose": 15.51, "diastolic": 1.0, "triceps": 1.0,
           "insulin": 20.68, "massindex": 1.0, "pedigree": 1.0, "age": 1.0}
    costs = FeatureCosts(own, groups={"blood_draw": (2.10, ["glucose", "insulin"])},
                         feature_names=PIMA_NAMES)
    return Dataset("pima", X, y, PIMA_NAMES, costs,
                   description="Pima Indians diabetes; Turney's costs with the 2.10 blood "
                   "draw shared by glucose and insulin (diastolic, triceps: 1.00)")


def _load_digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    names = [f"pixel_{i // 8}_{i % 8}" for i in range(64)]
    return Dataset("digits", d.data, d.target, names, None,
                   description="sklearn's bundled UCI optical digits (8x8, 10 classes)")


MISSING_TOKENS = ("", "?", "NA", "N/A", "nan", "NaN", "null")
#: a column where at least this share of the filled values are numbers is numeric: its
#: other values are typos to fix, not categories
NUMERIC_SHARE = 0.9


#: separators the header is searched for, in this order, when none is given
SEPARATORS = ("\t", ",", ";")
#: characters of the file's start searched for the header record's separator
HEADER_SCAN = 1 << 16


def _records(text, sep):
    """The table's records as RFC 4180 defines them, with any one-character separator:
    a quoted field may hold the separator, quotes (doubled) and line breaks of any kind;
    records end at CR, LF or CRLF only (not at U+2028 and the other breaks
    ``str.splitlines`` knows).  Blank lines are skipped.  A malformed quote is an
    error naming the line where its record starts."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    rows, start = [], 1
    try:
        for row in reader:
            if row and not (len(row) == 1 and not row[0].strip()):
                rows.append(row)
            start = reader.line_num + 1
    except csv.Error as exc:
        if "end of data" in str(exc) or "field limit" in str(exc):
            raise ValueError(f"line {start}: a quoted field opened in this record is never "
                             "closed (an unbalanced '\"'); close the quote, or double a "
                             "quote that is part of the text (\"\")") from None
        raise ValueError(f"line {start}: not a well-formed CSV record ({exc}); a field "
                         "that holds quotes must be quoted, with each inner quote doubled "
                         "(\"\")") from None
    return rows


def _split_rows(text, sep):
    rows = _records(text, sep)
    if len(rows) < 2:
        raise ValueError("the table needs a header row and at least one data row")
    header = [h.strip() for h in rows[0]]
    body = rows[1:]
    if any(len(r) != len(header) for r in body):
        bad = next(i for i, r in enumerate(body) if len(r) != len(header))
        raise ValueError(f"row {bad + 2} has {len(body[bad])} fields, the header has "
                         f"{len(header)}")
    # a column without a name or a value is no column: a separator at the end of every
    # line, or an empty spreadsheet column (it became the target, or a feature of NaN)
    keep = [j for j, h in enumerate(header) if h or any(r[j].strip() for r in body)]
    if len(keep) < len(header):
        header = [header[j] for j in keep]
        body = [[r[j] for j in keep] for r in body]
    if len(set(header)) != len(header):
        dup = sorted({h for h in header if header.count(h) > 1})
        raise ValueError(f"the table header has duplicate column names {dup}; rename them")
    return header, body


def _guess_separator(text):
    """The first of :data:`SEPARATORS` found outside quotes in the header record
    (a comma inside ``"weight, kg"`` separates nothing); a comma when none is."""
    outside = re.sub(r'"[^"]*("|$)', "", text[:HEADER_SCAN])  # drop the quoted parts
    first = re.split(r"[\r\n]", outside, maxsplit=1)[0]
    return next((c for c in SEPARATORS if c in first), ",")


def _check_separator(sep):
    if not (isinstance(sep, str) and len(sep) == 1 and sep not in '"\r\n'):
        raise ValueError(f"sep must be one character other than a quote or a line break, "
                         f"got {sep!r}")
    return sep


def _column_values(body, j):
    """Column ``j`` as stripped strings and its missing-value mask."""
    vals = np.array([r[j].strip() for r in body], dtype=object)
    return vals, np.isin(vals, MISSING_TOKENS)


def _bad_numbers(vals):
    """Positions of the values that are not numbers."""
    bad = []
    for i, v in enumerate(vals):
        try:
            float(v)
        except ValueError:
            bad.append(i)
    return bad


def _parse_numbers(vals, missing):
    """Float column (NaN where missing); None when the column holds text."""
    out = np.full(vals.size, np.nan)
    filled = np.flatnonzero(~missing)
    try:
        out[filled] = np.asarray(vals[filled].astype(str), dtype=float)
    except ValueError:
        return None
    return out


def _check_finite(name, col):
    inf = np.flatnonzero(np.isinf(col))
    if inf.size:
        raise ValueError(f"column {name!r} row {inf[0] + 2}: value is infinite; replace it "
                         "with a finite number or leave it empty (missing)")


#: numbers written with a decimal comma, digit grouping, a percent or a currency sign
#: (matched only against values float() cannot read): read as text they would become
#: categories in the order of their characters
FORMATTED_NUMBER = re.compile(r"[+-]?([$€£¥]\s?)?(\d+,\d+|\d{1,3}([,. '\u00a0\u202f]\d{3})+([.,]\d+)?"
                              r"|\d+(\.\d+)?)(\s?%)?")


def _numeric_or_text(name, vals, missing):
    """``("numeric", floats)`` or ``("text", None)``; a mostly numeric column with a few
    words is an error naming the first unreadable value (column and row), and so is a
    column of numbers written with a decimal comma, digit grouping, ``%`` or a
    currency sign."""
    col = _parse_numbers(vals, missing)
    if col is not None:
        _check_finite(name, col)
        return "numeric", col
    filled = np.flatnonzero(~missing)
    bad = _bad_numbers(vals[filled])
    if all(FORMATTED_NUMBER.fullmatch(vals[filled[k]]) for k in bad):
        i = filled[bad[0]]
        raise ValueError(
            f"column {name!r} row {i + 2}: {vals[i]!r} looks like a number written with a "
            "decimal comma, digit grouping, '%' or a currency sign, which would be read as "
            "text (categories ordered by their characters); write plain numbers (1.5, "
            "1234, 0.12) in that column")
    if len(bad) <= (1 - NUMERIC_SHARE) * filled.size:
        i = filled[bad[0]]
        raise ValueError(
            f"column {name!r} row {i + 2}: cannot read {vals[i]!r} as a number ({len(bad)} "
            f"such value(s) in a column of numbers); fix it or leave it empty (missing: "
            f"{', '.join(repr(t) for t in MISSING_TOKENS if t)})")
    return "text", None


def encode_categories(name, vals, missing, categories):
    """Ordinal codes (float, NaN where missing) of a text column, given its categories.

    A value outside ``categories`` is an error naming the column, row and value.
    """
    index = {c: k for k, c in enumerate(categories)}
    codes = np.full(vals.size, np.nan)
    for i in np.flatnonzero(~missing):
        k = index.get(vals[i])
        if k is None:
            shown = ", ".join(map(repr, categories[:10])) + (" ..." if len(categories) > 10
                                                              else "")
            raise ValueError(f"column {name!r} row {i + 2}: category {vals[i]!r} was not seen "
                             f"when the model was trained (known: {shown})")
        codes[i] = k
    return codes


def _parse_target(name, vals, missing):
    """Class labels (int where every value is an exactly representable integer, else
    strings) or real targets (float)."""
    if missing.any():
        rows = (np.flatnonzero(missing)[:5] + 2).tolist()
        raise ValueError(f"target column {name!r} has missing values (rows {rows}"
                         f"{' ...' if missing.sum() > 5 else ''}); drop those rows")
    y = _parse_numbers(vals, missing)
    if y is None:  # text labels: classes by name
        return vals.astype(str)
    _check_finite(name, y)
    # integral values become int64 only where float64 holds them exactly (|y| <= 2**53):
    # 1e19 and 3e19 stay two distinct (float) classes instead of overflowing into one
    if np.all(y == np.round(y)) and np.abs(y).max() <= 2.0 ** 53:
        return y.astype(np.int64)
    return y


def _parse_table(text, sep, target, encoding=None):
    """``X, y, names, encoding`` of a table's text.

    Numeric columns are read as floats (missing values as NaN).  A text column
    is encoded ordinally: its sorted distinct values become 0, 1, 2, ... (see
    :func:`load_csv`).  ``encoding`` (from an earlier call) reuses the
    categories learnt then.
    """
    header, body = _split_rows(text, sep)
    if len(header) < 2:
        raise ValueError("the table needs at least one feature column and a target column")
    if target is None:
        target = header[-1]
    if target not in header:
        raise ValueError(f"target column {target!r} not in the file's header {header}")
    j = header.index(target)
    names = header[:j] + header[j + 1:]
    cols, categories = [], {}
    for name in names:
        vals, missing = _column_values(body, header.index(name))
        kind, col = _numeric_or_text(name, vals, missing)
        if kind == "text":
            categories[name] = sorted(set(vals[~missing].tolist()))
            col = encode_categories(name, vals, missing, categories[name])
        cols.append(col)
    X = np.column_stack(cols) if cols else np.empty((len(body), 0))
    vals, missing = _column_values(body, j)
    y = _parse_target(target, vals, missing)
    enc = {"kind": "ordinal", "target": target, "columns": names, "categories": categories}
    return X, y, names, enc


def match_columns(header, columns):
    """Where each of a model's ``columns`` is in a table's ``header``: matched by name,
    in any order; the table's other columns are ignored, and a column it lacks is an
    error naming it.  Every reader of a table for a trained model matches its columns
    this way (``prune-opt predict``, ``prune-opt prune --model`` and the other commands
    that take a model file).

    Examples
    --------
    >>> from prune_opt.datasets import match_columns
    >>> match_columns(["id", "age", "smoker", "sick"], ["smoker", "age"])
    [2, 1]
    >>> match_columns(["age", "sick"], ["age", "smoker"])
    Traceback (most recent call last):
    ...
    ValueError: the table lacks the column(s) ['smoker'] the model was trained on; its header is ['age', 'sick']
    """
    header = list(header)
    missing = [c for c in columns if c not in header]
    if missing:
        raise ValueError(f"the table lacks the column(s) {missing} the model was trained "
                         f"on; its header is {header}")
    return [header.index(c) for c in columns]


def encode_table(text, sep, encoding):
    """``X, y, labelled`` of a new table read with the ``encoding`` a training table
    produced.

    The columns are matched by name (in any order; extra columns are ignored); a
    text column is coded with the training categories.  New rows are often not
    labelled yet: ``labelled`` marks the rows whose target cell is filled (none
    when the table has no target column), and ``y`` holds their targets (None
    when no row is labelled).
    """
    header, body = _split_rows(text, sep)
    positions = match_columns(header, encoding["columns"])
    cats = encoding.get("categories") or {}
    cols = []
    for name, at in zip(encoding["columns"], positions):
        vals, missing = _column_values(body, at)
        if name in cats:
            cols.append(encode_categories(name, vals, missing, cats[name]))
            continue
        col = _parse_numbers(vals, missing)
        if col is None:
            bad = np.flatnonzero(~missing)[_bad_numbers(vals[~missing])[0]]
            raise ValueError(f"column {name!r} row {bad + 2}: cannot read {vals[bad]!r} as a "
                             "number (the column was numeric when the model was trained)")
        _check_finite(name, col)
        cols.append(col)
    X = np.column_stack(cols) if cols else np.empty((len(body), 0))
    y, labelled = None, np.zeros(len(body), dtype=bool)
    if encoding.get("target") in header:
        vals, missing = _column_values(body, header.index(encoding["target"]))
        labelled = ~missing
        if labelled.any():
            y = _parse_target(encoding["target"], vals[labelled], missing[labelled])
    return X, y, labelled


def _read_table_text(path):
    """Text of a (gzipped) table file; a corrupt, truncated or non-UTF-8 file is a
    ValueError naming it, and a UTF-8 byte-order mark is dropped."""
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8-sig")
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise ValueError(f"dataset file {str(path)!r} is not readable text ({exc}); replace it "
                         "with an intact copy") from None


def read_table(path, sep=None):
    """``(text, sep)`` of a CSV/TSV file (optionally .gz); unless given, the separator
    is the first of tab, comma and semicolon that the header record holds outside
    quotes."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"dataset file {str(path)!r} does not exist")
    if not path.is_file():
        raise ValueError(f"dataset path {str(path)!r} is not a file; pass a CSV/TSV file")
    text = _read_table_text(path)
    if not text.strip():
        raise ValueError(f"dataset file {path.name!r} is empty")
    return text, (_guess_separator(text) if sep is None else _check_separator(sep))


def load_csv(path, target=None, sep=None):
    """Load a CSV/TSV (optionally .gz) with a header row.

    Parameters
    ----------
    path : str or path
    target : str, optional
        The label column (default: the last column).  Text labels are class
        names; integers stay integers where float64 holds them exactly, other
        numbers stay floats (real targets, or huge integer classes).
    sep : str, optional
        Field separator, one character (default: the first of tab, comma and
        semicolon that the header holds outside quotes).  Records follow RFC
        4180 with this separator: a field in double quotes may hold the
        separator, line breaks and doubled quotes; a record ends at CR, LF or
        CRLF only.  An unbalanced quote is an error naming its line.

    Returns
    -------
    Dataset
        Missing values (empty, ``?``, ``NA``, ``N/A``, ``nan``, ``null``) are
        NaN.  A text feature column is encoded ordinally: its sorted distinct
        values become 0, 1, 2, ... in one column, so a tree reaches any category
        in at most two splits and the column's cost is charged once, whichever
        category a test looks at; ``Dataset.encoding`` records the categories.
        A value that cannot be read is an error naming its column and row.

    Examples
    --------
    >>> import os, tempfile
    >>> from prune_opt.datasets import load_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("age,smoker,sick\\n50,yes,no\\n61,no,yes\\n47,no,no\\n")
    >>> ds = load_csv(path)
    >>> ds.X.tolist(), ds.y.tolist(), ds.encoding["categories"]
    ([[50.0, 1.0], [61.0, 0.0], [47.0, 0.0]], ['no', 'yes', 'no'], {'smoker': ['no', 'yes']})
    """
    text, sep = read_table(path, sep)
    X, y, names, enc = _parse_table(text, sep, target)
    name = Path(path).name
    return Dataset(name, X, y, names, None, description=f"table {name}", encoding=enc)


def load_dataset(name, *, target=None, download=True, data_home=None):
    """Load a dataset by name (see :func:`dataset_catalog`) or from a CSV/TSV path.

    Parameters
    ----------
    name : str
        ``digits``, ``thyroid``, ``heart``, ``pima``, ``heart-severity``,
        ``diabetes`` (bundled; the last two are regression sets), a UCI set
        (``elec``, ``weather``, ``magic``, ``letter``, ``spambase``,
        ``adult``), or a path to a CSV/TSV file.
    target : str, optional
        Label column of a CSV file (default: last column).
    download : bool, default True
        When a UCI set is not in the local data folder, fetch it from OpenML
        into scikit-learn's data home (once; later calls read the cache).
    data_home : str, optional
        scikit-learn data home for the download (default: its own).

    Returns
    -------
    Dataset

    Examples
    --------
    >>> from prune_opt.datasets import load_dataset
    >>> d = load_dataset("thyroid")
    >>> d.X.shape, d.costs.n_features
    ((3772, 21), 21)
    """
    loaders = {"digits": _load_digits, "thyroid": _load_thyroid, "heart": _load_heart,
               "pima": _load_pima, "heart-severity": _load_heart_severity,
               "diabetes": _load_diabetes}
    key = str(name).lower()
    if target is not None and (key in loaders or key in SHARED):
        raise ValueError(f"target={target!r} applies to CSV/TSV files; the named dataset "
                         f"{key!r} has a fixed label column")
    if key in loaders:
        return loaders[key]()
    if key in SHARED:
        d = shared_data_dir()
        fname, sep = SHARED[key]
        if d is not None and (d / fname).exists():
            X, y, names, enc = _parse_table(_read_table_text(d / fname), sep, None)
            return Dataset(key, X, y, names, None, description=f"UCI {key} (local data)",
                           encoding=enc)
        return _load_openml(key, fname, download=download, data_home=data_home)
    if str(name).strip() and Path(str(name)).exists():  # "" is not the current folder
        return load_csv(name, target=target)
    raise ValueError(f"dataset {name!r} is neither a known name "
                     f"{[r['name'] for r in dataset_catalog()]} nor an existing CSV/TSV file")


def _load_openml(key, fname, *, download, data_home):
    """Fetch a UCI set from OpenML (scikit-learn's cache), or say both ways to get it."""
    ways = (f"set PRUNE_OPT_DATA to a folder holding {fname}"
            + (f", or let prune-opt fetch it from OpenML (data_id={OPENML[key]}) into "
               "scikit-learn's data home: that needs network access"
               if key in OPENML else " (it has no OpenML copy)"))
    if key not in OPENML or not download:
        raise ValueError(f"dataset {key!r} is not in a local data folder; {ways}")
    from sklearn.datasets import fetch_openml

    try:
        bunch = fetch_openml(data_id=OPENML[key], as_frame=True, data_home=data_home,
                             parser="auto")
    except (OSError, ValueError) as exc:  # URLError and HTTPError are OSErrors
        raise ValueError(f"dataset {key!r} is not in a local data folder and could not be "
                         f"fetched from OpenML ({type(exc).__name__}: {exc}); {ways}") from None
    X, names = _numeric_frame(bunch.data)
    classes, y = np.unique(np.asarray(bunch.target).astype(str), return_inverse=True)
    return Dataset(key, X, y.astype(int), names, None,
                   description=f"UCI {key} (OpenML data_id={OPENML[key]})",
                   extra={"classes": classes.tolist()})


def _numeric_frame(frame):
    """Numeric matrix of a DataFrame: categorical and string columns become their codes
    (missing stays NaN)."""
    cols = []
    for c in frame.columns:
        col = frame[c]
        if str(col.dtype) in ("category", "object", "string", "bool"):
            codes = col.astype("category").cat.codes.to_numpy().astype(float)
            codes[codes < 0] = np.nan
            cols.append(codes)
        else:
            cols.append(col.to_numpy(dtype=float, na_value=np.nan))
    return np.column_stack(cols), [str(c) for c in frame.columns]
