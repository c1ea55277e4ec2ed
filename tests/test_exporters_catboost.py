"""CatBoost exporter: a pruned CatBoost model exported with ``to_catboost()`` predicts
like the pruned model (raw scores bit for bit, probabilities and predictions), with and
without NaN, for every grow policy and loss; the features the pruned model does not ask
a row for cannot change the export's prediction of that row; the numbers of the JSON
model are written so that CatBoost's reader reads back the same doubles.

Tests that load a model into CatBoost skip when it is not installed
(``pip install prune-opt[catboost]``); every CatBoost model trained here writes no
files.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from prune_opt.exporters._catboost_numbers import (
    catboost_json_text,
    catboost_number,
    read_like_catboost,
)


@pytest.fixture(scope="module")
def cb():
    return pytest.importorskip("catboost")


# ------------------------------------------------------------------ numbers
def catboost_reads(cb, texts, tmp_path):
    """The doubles CatBoost reads from the number texts: the leaf values of one
    symmetric tree (depth d, 2^d leaves), predicted on the rows reaching each leaf."""
    d = max(1, math.ceil(math.log2(len(texts))))
    leaves = list(texts) + ["0"] * ((1 << d) - len(texts))
    features = [{"borders": [0.5], "feature_id": "", "feature_index": k,
                 "flat_feature_index": k, "has_nans": False, "nan_value_treatment": "AsIs"}
                for k in range(d)]
    splits = [{"border": 0.5, "float_feature_index": j, "split_index": j,
               "split_type": "FloatFeature"} for j in range(d)]
    doc = json.dumps({"features_info": {"float_features": features},
                      "model_info": {"params": {"loss_function": {"type": "RMSE"},
                                                "flat_params": {"loss_function": "RMSE"}}},
                      "oblivious_trees": [{"leaf_values": "LEAVES", "splits": splits}],
                      "scale_and_bias": [1.0, [0.0]]})  # CatBoost reads the trees first
    path = tmp_path / "numbers.json"
    path.write_text(doc.replace('"LEAVES"', "[" + ",".join(leaves) + "]"))
    model = cb.CatBoostRegressor()
    model.load_model(str(path), format="json")
    X = np.array([[(i >> j) & 1 for j in range(d)] for i in range(len(texts))], dtype=float)
    return model.predict(X, prediction_type="RawFormulaVal")


def test_the_reader_is_read_like_catboost_reads_it(cb, tmp_path):
    """The emulated reader against CatBoost's on shortest, 17-digit, 25-digit and long
    integer-significand decimals: the same double every time, including the ones it
    reads one unit in the last place off."""
    rng = np.random.default_rng(0)
    values = (rng.normal(size=250) * 10.0 ** rng.integers(-12, 12, 250)).tolist()
    texts = [repr(v) for v in values] + [f"{v:.17g}" for v in values]
    texts += [f"{v:.25g}" for v in values[:100]] + [f"{int(abs(v) * 1e18)}e-18"
                                                    for v in values[:100]]
    texts += ["-0.0", "0.0", "12345678901234567890123.5e-3", "4294967296.25",
              "-9223372036854775809.5", "1e-320", "123456789012345678901234567890e-320"]
    got = catboost_reads(cb, texts, tmp_path)
    ours = np.array([read_like_catboost(t) for t in texts])
    assert np.array_equal(ours, got)
    assert (ours != np.array([float(t) for t in texts])).sum() > 50  # it does misread


def test_numbers_are_written_so_that_catboost_reads_them_back(cb, tmp_path):
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(size=600) * 10.0 ** rng.integers(-8, 8, 600),
                             rng.uniform(-1, 1, 600), [0.1 + 0.02, -0.0, 5e-324, 1e300]])
    texts = [catboost_number(v) for v in values.tolist()]
    got = catboost_reads(cb, texts, tmp_path)
    assert np.array_equal(got, values)
    assert sum(t != repr(v) for t, v in zip(texts, values.tolist())) > 50  # repr would not


@given(st.floats(allow_nan=False, allow_infinity=False))
@example(-62.496570120477436)  # a double the reader cannot reach: written as repr
@example(0.12000000000000001)
@settings(max_examples=300)
def test_any_double_is_written_as_itself(v):
    text = catboost_number(v)
    assert float(text) == v  # a correctly rounding reader reads v as well
    assert read_like_catboost(text) == v or text == repr(v)


def test_doubles_no_decimal_reaches_are_rare():
    rng = np.random.default_rng(2)
    values = rng.uniform(-1, 1, 5000) * 10.0 ** rng.integers(-6, 6, 5000)
    misses = sum(read_like_catboost(catboost_number(v)) != v for v in values.tolist())
    assert misses <= 5  # about 1 in 40,000 measured
    assert read_like_catboost(catboost_number(-62.496570120477436)) != -62.496570120477436


def test_json_text_counts_what_is_read_otherwise():
    text, inexact = catboost_json_text({"v": [0.1 + 0.02, -62.496570120477436, 1, True],
                                        "name": 'a "b"', "none": None})
    assert "120000000000000009e-18" in text
    assert json.loads(text) == {"v": [0.1 + 0.02, -62.496570120477436, 1, True],
                                "name": 'a "b"', "none": None}
    assert inexact == 1
    with pytest.raises(ValueError, match="finite"):
        catboost_number(float("nan"))
