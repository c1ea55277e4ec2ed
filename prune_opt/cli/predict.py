"""``prune-opt predict``: apply a saved pruned forest to a new table."""

from __future__ import annotations

from ._common import add_output_argument, write_csv


def add_parser(sub):
    p = sub.add_parser(
        "predict", help="predict a new CSV/TSV with a saved pruned forest",
        description="Read a model saved by `prune-opt prune` (or prune_opt's save()) and a "
        "table, code the table's columns the way the training table was coded (matched by "
        "column name; text columns with the training categories), and write one prediction "
        "per row; print the average acquisition cost. A target column that is absent or "
        "empty is ignored; on the rows where it is filled, print the accuracy (regression: "
        "R^2).")
    p.add_argument("--model", required=True, help="model JSON written by prune-opt prune")
    p.add_argument("--dataset", required=True, help="CSV/TSV file to predict")
    add_output_argument(p, "--out", default="predictions.csv",
                        help="output CSV: one row per input row, column 'prediction' "
                             "(default predictions.csv)")
    p.set_defaults(func=run)


def _encoding(pruned, path):
    """The model's feature_encoding, or a plain numeric one for a file without it."""
    if pruned.feature_encoding is not None:
        return pruned.feature_encoding
    names = pruned.forest.feature_names or pruned.costs.feature_names
    if names is None:
        raise ValueError(f"--model {path!r} names no feature columns, so the table's columns "
                         "cannot be matched; save the model from a table with a header "
                         "(prune-opt prune --dataset FILE.csv)")
    return {"kind": "ordinal", "columns": list(names), "categories": {}, "target": None}


def _score_line(pruned, pred, y, target, labelled):
    """Accuracy (regression: R^2 and MSE) on the rows whose target cell is filled."""
    import numpy as np

    rows = (f"the {labelled.size} rows" if labelled.all() else
            f"the {int(labelled.sum())} of {labelled.size} rows whose target is filled")
    if pruned.forest.task == "regression":
        resid = np.asarray(y, dtype=float) - pred
        r2 = 1 - np.sum(resid ** 2) / max(np.sum((y - np.mean(y)) ** 2), 1e-300)
        return f"target column {target!r} on {rows}: R^2 {r2:.4f}, MSE {np.mean(resid ** 2):.4g}"
    y = np.asarray(y)
    classes = pruned.forest.classes_
    if classes.dtype.kind in "biuf" and y.dtype.kind in "biuf":  # 1 and 1.0 are one label
        same, known = pred.astype(float) == y.astype(float), np.isin(y.astype(float), classes)
    else:
        same = pred.astype(str) == y.astype(str)
        known = np.isin(y.astype(str), classes.astype(str))
    if not known.any():  # e.g. labels no/yes against a model saved with classes 0/1
        return (f"target column {target!r} on {rows}: none of its labels "
                f"({_labels(np.unique(y))}) is a class of the model ({_labels(classes)}): "
                "no accuracy (the model was saved with other labels, or the column is not "
                "its target)")
    line = f"target column {target!r} on {rows}: accuracy {float(np.mean(same)):.4f}"
    if not known.all():
        line += (f" ({int((~known).sum())} of them have a label that is no class of the "
                 f"model: {_labels(np.unique(y[~known]))})")
    return line


def _labels(values, most=8):
    text = [repr(v) if isinstance(v, str) else str(v) for v in values[:most].tolist()]
    return ", ".join(text) + (", ..." if len(values) > most else "")


def run(args):
    import numpy as np

    from .. import load
    from ..datasets import encode_table, read_table

    pruned = load(args.model)
    enc = _encoding(pruned, args.model)
    text, sep = read_table(args.dataset)
    X, y, labelled = encode_table(text, sep, enc)
    if np.isnan(X).any() and not pruned.forest.allow_nan:
        col = int(np.flatnonzero(np.isnan(X).any(axis=0))[0])
        row = int(np.flatnonzero(np.isnan(X[:, col]))[0])
        raise ValueError(f"column {enc['columns'][col]!r} row {row + 2}: missing value, but "
                         "the model was trained on a table without missing values")
    pred = pruned.predict(X)
    cost = pruned.acquisition_cost(X)
    rows = [{"prediction": p, "acquisition_cost": float(c)} for p, c in zip(pred.tolist(), cost)]
    print(f"{len(rows)} rows of {args.dataset}; average acquisition cost {cost.mean():.4g}")
    if y is not None:
        print(_score_line(pruned, pred[labelled], y, enc["target"], labelled))
    write_csv(args.out, rows)
    print(f"wrote {args.out}")
    return 0
