"""``prune-opt predict``: a saved model applied to a new table, scored against its labels."""

import numpy as np
import pandas as pd
import pytest

from prune_opt.cli import main
from prune_opt.datasets import load_dataset


@pytest.fixture(scope="module")
def pima_model(tmp_path_factory):
    """A model pruned from a CSV of pima whose target holds the numbers 0 and 1."""
    folder = tmp_path_factory.mktemp("predict")
    ds = load_dataset("pima")
    frame = pd.DataFrame(ds.X, columns=ds.feature_names)
    frame["class"] = ds.y
    frame.to_csv(folder / "train.csv", index=False)
    assert main(["prune", "--dataset", str(folder / "train.csv"), "--target", "class",
                 "--trees", "5", "--lam", "0.01", "--out", str(folder / "m.json")]) == 0
    return folder / "m.json", frame


def test_labels_that_are_none_of_the_classes_are_not_scored_as_wrong(capsys, tmp_path,
                                                                     pima_model):
    # the same rows labelled no/yes: every label is unknown to a model of classes 0 and 1,
    # which printed "accuracy 0.0000" as if every prediction were wrong
    model, frame = pima_model
    frame = frame.assign(**{"class": np.where(frame["class"] == 1, "yes", "no")})
    frame.to_csv(tmp_path / "new.csv", index=False)
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--dataset", str(tmp_path / "new.csv"),
                 "--out", str(tmp_path / "p.csv")]) == 0
    out = capsys.readouterr().out
    assert "accuracy 0" not in out
    assert ("none of its labels ('no', 'yes') is a class of the model (0, 1): no accuracy"
            in out)
    assert len(pd.read_csv(tmp_path / "p.csv")) == len(frame)  # the predictions are written


def test_rows_whose_label_is_no_class_are_counted_and_named(capsys, tmp_path, pima_model):
    model, frame = pima_model
    frame = frame.copy()
    frame.loc[:6, "class"] = 7
    frame.to_csv(tmp_path / "new.csv", index=False)
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--dataset", str(tmp_path / "new.csv"),
                 "--out", str(tmp_path / "p.csv")]) == 0
    out = capsys.readouterr().out
    pred = pd.read_csv(tmp_path / "p.csv")["prediction"].to_numpy()
    accuracy = np.mean(pred == frame["class"].to_numpy())
    assert f"accuracy {accuracy:.4f}" in out
    assert "7 of them have a label that is no class of the model: 7" in out
