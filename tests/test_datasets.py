"""Dataset loaders: bundled real data with real costs, CSV reader refuses bad files."""

import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_opt.datasets import list_datasets, load_csv, load_dataset


def test_thyroid_real_costs_and_fti():
    d = load_dataset("thyroid")
    assert d.X.shape == (3772, 21) and d.X_test.shape == (3428, 21)
    fc = d.costs
    names = d.feature_names
    fti, tt4, t4u = names.index("FTI"), names.index("TT4"), names.index("T4U")
    assert fc.cost_of([t4u]) == pytest.approx(11.41)
    assert fc.cost_of([fti]) == pytest.approx(14.51 + 11.41)
    assert fc.cost_of([tt4, fti]) == pytest.approx(14.51 + 11.41)
    assert fc.cost_of([names.index("TSH")]) == pytest.approx(22.78)


def test_pima_blood_draw_is_shared():
    d = load_dataset("pima")
    g, i = d.feature_names.index("glucose"), d.feature_names.index("insulin")
    assert d.costs.cost_of([g]) == pytest.approx(17.61)
    assert d.costs.cost_of([i]) == pytest.approx(22.78)
    assert d.costs.cost_of([g, i]) == pytest.approx(15.51 + 20.68 + 2.10)


def test_heart_has_missing_values_and_costs():
    d = load_dataset("heart")
    assert d.X.shape == (303, 13) and np.isnan(d.X).sum() == 6
    assert set(np.unique(d.y)) == {0, 1}
    assert d.costs.feature_cost()[d.feature_names.index("thal")] == pytest.approx(102.90)


def test_digits_and_listing():
    assert {"digits", "thyroid", "heart", "pima"} <= set(list_datasets())
    assert load_dataset("digits").X.shape == (1797, 64)


def test_csv_round_trip(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b,label\n1,2,0\n3,?,1\n5,6,1\n")
    d = load_csv(p, target="label")
    assert d.X.shape == (3, 2) and np.isnan(d.X[1, 1]) and d.y.tolist() == [0, 1, 1]
    gz = tmp_path / "t.tsv.gz"
    gz.write_bytes(gzip.compress(b"x\ty\n1\t0\n2\t1\n"))
    assert load_csv(gz).X.shape == (2, 1)


@pytest.mark.parametrize("content, match", [
    ("", "empty"),
    ("a,b\n", "header row and at least one"),
    ("a,a,c\n1,2,3\n", "duplicate"),
    ("a,b\n1,2\n3\n", "row 3 has 1 fields"),
    ("a,b,label\n" + "1,2,0\n" * 19 + "1,2x,0\n", r"column 'b' row 21: cannot read '2x'"),
    ("a,b\n1,\n", "missing values"),
    ("a,b,label\n1,2,0\n3,-inf,1\n", r"column 'b' row 3: value is infinite"),
    ("a,b,label\n1,2\n", "row 2 has 2 fields"),
    ("a,a,label\n1,2,0\n", "duplicate"),
    ("a,b,label\n1,2,0\n3,4,\n", r"target column 'label' has missing values \(rows \[3\]"),
    ("a,b,label\n1,inf,0\n", "inf"),
    ("label\n1\n", "feature column"),
    ("a,b,label\n", "data row"),
    ("\n\n", "empty"),
])
def test_csv_bad_files(tmp_path, content, match):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    with pytest.raises(ValueError, match=match):
        load_csv(p)


def test_unknown_target(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="target column 'zz'"):
        load_csv(p, target="zz")


@given(raw=st.binary(max_size=200), gz=st.booleans())
@settings(max_examples=100)
def test_csv_reader_fuzz(tmp_path_factory, raw, gz):
    p = tmp_path_factory.mktemp("csv") / ("f.csv.gz" if gz else "f.csv")
    p.write_bytes(gzip.compress(raw) if gz and raw[:1] != b"!" else raw)
    try:
        d = load_csv(p)
    except ValueError:
        return
    assert d.X.ndim == 2 and d.X.shape[0] == d.y.shape[0]


# ---------------------------------------------------------------- OpenML fallback
class _FakeBunch:
    def __init__(self):
        pd = pytest.importorskip("pandas")
        self.data = pd.DataFrame({"num": [1.0, 2.0, np.nan, 4.0],
                                  "cat": pd.Categorical(["a", "b", "a", None])})
        self.target = pd.Series(["spam", "ham", "spam", "ham"])


def _no_local_data(monkeypatch):
    import prune_opt.datasets as dsm

    monkeypatch.setattr(dsm, "shared_data_dir", lambda: None)
    return dsm


def test_missing_local_set_is_fetched_from_openml(monkeypatch):
    dsm = _no_local_data(monkeypatch)
    seen = {}

    def fake_fetch(**kwargs):
        seen.update(kwargs)
        return _FakeBunch()

    import sklearn.datasets

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake_fetch)
    d = dsm.load_dataset("spambase", data_home="somewhere")
    assert seen["data_id"] == dsm.OPENML["spambase"] and seen["data_home"] == "somewhere"
    assert d.feature_names == ["num", "cat"]
    np.testing.assert_array_equal(d.X[:, 1][[0, 1, 2]], [0.0, 1.0, 0.0])
    assert np.isnan(d.X[3, 1]) and np.isnan(d.X[2, 0])
    assert d.y.tolist() == [1, 0, 1, 0] and d.extra["classes"] == ["ham", "spam"]


def test_offline_message_names_both_ways(monkeypatch):
    from urllib.error import URLError

    dsm = _no_local_data(monkeypatch)

    def offline(**kwargs):
        raise URLError("no network")

    import sklearn.datasets

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", offline)
    with pytest.raises(ValueError, match="PRUNE_OPT_DATA.*OpenML"):
        dsm.load_dataset("magic")
    with pytest.raises(ValueError, match="PRUNE_OPT_DATA"):
        dsm.load_dataset("magic", download=False)
    with pytest.raises(ValueError, match="no OpenML copy"):
        dsm.load_dataset("weather")


def test_catalog_lists_every_named_dataset():
    from prune_opt.datasets import BUNDLED, SHARED, dataset_catalog

    rows = dataset_catalog()
    assert [r["name"] for r in rows] == list(BUNDLED) + list(SHARED)
    assert all(r["local"] for r in rows if r["name"] in BUNDLED)
    assert "Turney" in next(r for r in rows if r["name"] == "thyroid")["costs"]


def test_csv_text_columns_are_ordinal_codes_and_text_targets_class_names(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("age,smoker,city,sick\n50,yes,Oslo,no\n61,no,?,yes\n47,no,Bergen,no\n"
                 "33,yes,Oslo,yes\n")
    ds = load_csv(p, target="sick")
    assert ds.feature_names == ["age", "smoker", "city"]
    assert ds.y.tolist() == ["no", "yes", "no", "yes"]
    assert ds.encoding["categories"] == {"smoker": ["no", "yes"], "city": ["Bergen", "Oslo"]}
    np.testing.assert_array_equal(ds.X[:, 1], [1, 0, 0, 1])
    np.testing.assert_array_equal(ds.X[:, 2], [1, np.nan, 0, 1])
    # a new table is read with the training categories, matched by column name
    from prune_opt.datasets import encode_table

    X, y, labelled = encode_table("city,age,smoker\nBergen,20,yes\n", ",", ds.encoding)
    np.testing.assert_array_equal(X, [[20, 1, 0]])
    assert y is None and not labelled.any()
    with pytest.raises(ValueError, match=r"column 'city' row 2: category 'Rome' was not seen"):
        encode_table("city,age,smoker\nRome,20,yes\n", ",", ds.encoding)
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['smoker'\]"):
        encode_table("city,age\nOslo,20\n", ",", ds.encoding)


def test_csv_huge_integer_targets_stay_distinct_classes(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,y\n1,1e19\n2,3e19\n3,1e19\n")
    ds = load_csv(p)
    assert np.unique(ds.y).size == 2
    assert set(ds.y.tolist()) == {1e19, 3e19}
    p.write_text("a,y\n1,7\n2,-3\n")
    assert load_csv(p).y.dtype == np.int64


# ------------------------------------------------------------- RFC 4180 tables
#: characters a cell may hold: separators, quotes, and every line break str.splitlines
#: knows (only CR and LF end a CSV record)
_CELL_CHARS = "ab ,;\t\"\r\n\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"
_cell = st.builds(lambda a, mid, b: a + mid + b, st.sampled_from("xyz"),
                  st.text(alphabet=_CELL_CHARS, max_size=6), st.sampled_from("xyz"))


@settings(max_examples=60, deadline=None)
@given(sep=st.sampled_from(["\t", ",", ";", "|"]),
       header=st.lists(_cell, min_size=2, max_size=3, unique_by=str.strip),
       rows=st.lists(st.lists(_cell, min_size=3, max_size=3), min_size=1, max_size=4),
       quote_all=st.booleans(), crlf=st.booleans())
def test_csv_cells_read_back_as_written(tmp_path_factory, sep, header, rows, quote_all, crlf):
    """A table written by Python's csv writer (any separator, quotes, line breaks
    inside cells) is read back cell for cell: header names, categories and codes."""
    import csv
    import io

    header = [*header[:2], "target"]
    buf = io.StringIO()
    # (with QUOTE_MINIMAL, Python's writer quotes a cell's CR only when the line
    # terminator holds one: a bare CR outside quotes would end the record)
    csv.writer(buf, delimiter=sep, lineterminator="\r\n" if crlf or not quote_all else "\n",
               quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL).writerows(
        [header, *rows])
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_bytes(buf.getvalue().encode("utf-8"))
    # a guessable separator is guessed from the header when every header cell is quoted
    ds = load_csv(path, sep=None if quote_all and sep != "|" else sep)
    assert ds.feature_names == [h.strip() for h in header[:2]]
    assert ds.y.tolist() == [r[2] for r in rows]
    for j in range(2):
        column = [r[j] for r in rows]
        cats = sorted(set(column))
        assert ds.encoding["categories"][ds.feature_names[j]] == cats
        np.testing.assert_array_equal(ds.X[:, j], [cats.index(v) for v in column])


def test_csv_separator_is_guessed_outside_quotes(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text('"weight, kg";"height";y\n70;1.80;0\n80;1.9;1\n', encoding="utf-8")
    ds = load_csv(p)
    assert ds.feature_names == ["weight, kg", "height"]
    assert ds.X[:, 0].tolist() == [70.0, 80.0]


def test_csv_unicode_line_break_in_a_quoted_cell_stays_in_the_cell(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes('a,note,y\n1,"one\u2028two",0\n2,"three",1\n'.encode("utf-8"))
    ds = load_csv(p)
    assert ds.encoding["categories"]["note"] == ["one\u2028two", "three"]
    assert ds.y.tolist() == [0, 1]


@pytest.mark.parametrize("tail", ["3,4,1\n", "3,4,1\n" * 60_000])
def test_csv_unbalanced_quote_is_a_value_error_naming_its_line(tmp_path, tail):
    """A stray opening quote swallows the rest of the file: a ValueError naming the
    line the record starts on, also past the csv module's 128 KB field limit."""
    p = tmp_path / "t.csv"
    p.write_text("a,b,y\n1,2,0\n1,\"oops,2,0\n" + tail)
    with pytest.raises(ValueError, match=r"line 3: a quoted field .* never closed"):
        load_csv(p)


@pytest.mark.parametrize("sep", ["", ";;", '"', "\n"])
def test_csv_separator_must_be_one_plain_character(tmp_path, sep):
    p = tmp_path / "t.csv"
    p.write_text("a,y\n1,0\n")
    with pytest.raises(ValueError, match="sep must be one character"):
        load_csv(p, sep=sep)


@pytest.mark.parametrize("cells, shown", [
    (["1,5", "2,25", "10,5"], "'1,5'"),          # decimal comma (a ';' table from Excel)
    (["1,234", "12,000", "950"], "'1,234'"),     # digit grouping
    (["12%", "7.5%", "100%"], "'12%'"),
    (["$12.50", "$7", "$1,200"], "'$12.50'"),
])
def test_csv_numbers_written_with_formatting_are_refused_not_coded_as_text(tmp_path, cells,
                                                                          shown):
    """Read as text, '10,5' < '2,25' < '1,5' would become categories ordered by their
    characters (a silently wrong order); the column is refused, naming the value."""
    import csv

    p = tmp_path / "t.csv"
    with open(p, "w", newline="") as fh:
        w = csv.writer(fh, delimiter=";")
        w.writerow(["amount", "b", "y"])
        w.writerows([[c, i, i % 2] for i, c in enumerate(cells * 4)])
    import re

    with pytest.raises(ValueError, match=re.escape(f"column 'amount' row 2: {shown} looks "
                                                   "like a number")):
        load_csv(p)


def test_csv_text_that_only_contains_digits_stays_text(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("version,code,y\n1.2.3,A-12,0\n1.10.0,B-7,1\n2.0.1,C-1,0\n")
    ds = load_csv(p)
    assert ds.encoding["categories"] == {"version": ["1.10.0", "1.2.3", "2.0.1"],
                                         "code": ["A-12", "B-7", "C-1"]}


@pytest.mark.parametrize("text", ["a,b,y,\n1,2,0,\n3,4,1,\n5,6,0,\n",      # trailing separator
                                  "a,,b,y\n1,,2,0\n3,,4,1\n5,,6,0\n",     # empty column
                                  "a,b,,y,\n1,2,,0,\n3,4,,1,\n5,6,,0,\n"])
def test_csv_columns_without_a_name_or_a_value_are_dropped(tmp_path, text):
    """A separator at the end of every line made an empty target column ('target
    column '' has missing values'); an empty spreadsheet column became a feature of
    NaN named ''."""
    p = tmp_path / "t.csv"
    p.write_text(text)
    ds = load_csv(p)
    assert ds.feature_names == ["a", "b"] and ds.y.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4], [5, 6]])
