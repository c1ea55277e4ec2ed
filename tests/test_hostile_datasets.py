"""Hostile inputs to prune_opt.datasets: unknown names, no network, broken files, odd CSVs.

A name that is not a dataset, a folder, a corrupt or truncated file each give
one ValueError that names the file or the name and what to do; a table is
read as CSV defines it, so header quotes or a byte-order mark never become
part of a feature name.
"""

import gzip

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prune_opt import datasets
from prune_opt.datasets import load_csv, load_dataset


@pytest.fixture
def shared(tmp_path, monkeypatch):
    """An empty shared data folder that load_dataset reads."""
    folder = tmp_path / "shared"
    folder.mkdir()
    (folder / "README.md").write_text("# test data\n")
    monkeypatch.setenv("PRUNE_OPT_DATA", str(folder))
    return folder


CORRUPTIONS = {
    "not gzip": lambda: b"this is not gzip",
    "truncated gzip": lambda: gzip.compress(b"a\tb\ttarget\n1\t2\t0\n" * 50)[:40],
    "not UTF-8": lambda: gzip.compress(b"\xff\xfe\x00 broken"),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupt_shared_file_is_one_clear_error(shared, corruption):
    """A corrupt cache file gave BadGzipFile, EOFError or UnicodeDecodeError."""
    (shared / "magic.tsv.gz").write_bytes(CORRUPTIONS[corruption]())
    with pytest.raises(ValueError, match="magic.tsv.gz.*intact copy"):
        load_dataset("magic")


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupt_csv_file_is_one_clear_error(tmp_path, corruption):
    path = tmp_path / "mine.csv.gz"
    path.write_bytes(CORRUPTIONS[corruption]())
    with pytest.raises(ValueError, match="mine.csv.gz"):
        load_dataset(str(path))


def test_offline_and_without_download_the_message_gives_both_ways(shared, monkeypatch):
    import sklearn.datasets

    def offline(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", offline)
    with pytest.raises(ValueError, match="could not be fetched.*PRUNE_OPT_DATA"):
        load_dataset("elec", data_home=str(shared / "home"))
    with pytest.raises(ValueError, match="PRUNE_OPT_DATA.*OpenML"):
        load_dataset("elec", download=False)
    with pytest.raises(ValueError, match="no OpenML copy"):
        load_dataset("weather")


@pytest.mark.parametrize("name", ["irisx", "", None, 3, "digits.csv"])
def test_unknown_names_list_the_known_ones(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="neither a known name.*thyroid"):
        load_dataset(name)


def test_a_folder_is_not_a_dataset(tmp_path):
    """A folder path gave IsADirectoryError."""
    with pytest.raises(ValueError, match="not a file"):
        load_dataset(str(tmp_path))
    with pytest.raises(ValueError, match="not a file"):
        load_csv(tmp_path)


def test_names_are_case_insensitive():
    assert load_dataset("THYROID").X.shape == load_dataset("thyroid").X.shape


# ------------------------------------------------------------ CSV dialects
_HEADER_FORMS = {
    "plain": lambda names: names,
    "quoted": lambda names: [f'"{n}"' for n in names],
    "padded": lambda names: [f" {n} " for n in names],
}


@given(form=st.sampled_from(sorted(_HEADER_FORMS)), sep=st.sampled_from([",", "\t", ";"]),
       bom=st.booleans(), crlf=st.booleans(), gz=st.booleans(),
       values=st.lists(st.tuples(st.integers(-50, 50), st.integers(-50, 50),
                                 st.integers(0, 2)), min_size=1, max_size=8))
def test_any_csv_dialect_gives_the_same_table(tmp_path_factory, form, sep, bom, crlf, gz,
                                              values):
    """Quoted headers, a UTF-8 byte-order mark, CRLF, ';' or tabs, gzip: the feature
    names and values are the file's, never '\\ufeffa' or '"a"'."""
    names = ["age", "dose", "label"]
    eol = "\r\n" if crlf else "\n"
    text = sep.join(_HEADER_FORMS[form](names)) + eol
    text += eol.join(sep.join(str(v) for v in row) for row in values) + eol
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    path = tmp_path_factory.mktemp("csv") / ("t.csv.gz" if gz else "t.csv")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    ds = load_csv(path)
    assert ds.feature_names == ["age", "dose"]
    np.testing.assert_array_equal(ds.X, np.array(values, dtype=float)[:, :2])
    np.testing.assert_array_equal(ds.y, [v[2] for v in values])


def test_shared_tables_still_load(monkeypatch):
    """The CSV reader change keeps the shared sets' shapes (when the folder is there)."""
    if datasets.shared_data_dir() is None:
        pytest.skip("no shared data folder on this machine")
    ds = load_dataset("spambase")
    assert ds.X.shape == (4601, 57) and set(np.unique(ds.y)) == {0, 1}


@pytest.mark.parametrize("name", ["pima", "magic"])
def test_target_for_a_named_dataset_is_refused_not_ignored(name):
    with pytest.raises(ValueError, match="target='age' applies to CSV"):
        load_dataset(name, target="age")
