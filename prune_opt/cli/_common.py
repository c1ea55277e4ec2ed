"""Helpers shared by CLI commands: dataset + forest set-up, checked and atomic
outputs, plain-text tables.

Command modules import from here at their top level, so this module imports only
the standard library there: NumPy and the rest are imported inside the helpers
that use them (``prune-opt --help`` must not load them)."""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import json
import os
from pathlib import Path

from .._io import atomic_write, check_output_path, unique_keys


def _cost_lines(path, text):
    """``{name: cost}`` from 'name:cost' lines; anything else is an error naming the line."""
    spec = {}
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        k, sep, v = line.partition(":")
        if k.strip() in spec:
            raise ValueError(f"--costs {str(path)!r} line {i} names {k.strip()!r} again; give "
                             "each feature one cost")
        try:
            spec[k.strip()] = float(v) if sep else None
        except ValueError:
            spec[k.strip()] = None
        if spec[k.strip()] is None:
            raise ValueError(f"--costs {str(path)!r} line {i} is not 'name:cost' ({line.strip()!r})"
                             "; the file must be JSON or one 'name:cost' line per feature")
    return spec


#: attribute of the parsed arguments that holds the options given on the command line
GIVEN = "given_options"
#: options that apply to one source of the forest only: dest -> (flag, source, why).
#: "grown": the forest the command grows (no --model); "model": a --model file. Every
#: command that takes such an option is checked against this table alone
#: (:func:`check_options_apply`), before anything is read.
SOURCE_OPTIONS = {
    "trees": ("--trees", "grown", "it is the size of the forest the command grows, and a "
              "model file's trees are taken as they are"),
    "max_depth": ("--max-depth", "grown", "it limits the depth of the forest the command "
                  "grows, and a model file's trees are taken as they are"),
    "classes": ("--classes", "model", "it names the classes of a model trained elsewhere (a "
                "forest the command grows takes the table's labels)"),
    "model_out": ("--model-out", "model", "it names the pruned model's file in its "
                  "library's format (a LightGBM, XGBoost or CatBoost model to prune)"),
}


class _Store(argparse.Action):
    """argparse's plain store action, which also records that the option was given
    (a default equal to the value given, ``--trees 40``, is still an option given)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, GIVEN, getattr(namespace, GIVEN, frozenset()) | {self.dest})


class CommandParser(argparse.ArgumentParser):
    """The parser of one command: records which options the command line gave
    (``args.given_options``), so that an option that does not apply is refused
    rather than ignored."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _Store)
        self.register("action", "store", _Store)


def check_options_apply(args):
    """Refuse an option given for the other source of the forest (:data:`SOURCE_OPTIONS`):
    ``--trees`` or ``--max-depth`` with ``--model``, ``--classes`` or ``--model-out``
    without it.

    Examples
    --------
    >>> from prune_opt.cli import build_parser
    >>> from prune_opt.cli._common import check_options_apply
    >>> args = build_parser().parse_args(["export", "--model", "m.txt", "--trees", "40",
    ...                                   "--lam", "0", "--out", "p.mps"])
    >>> check_options_apply(args)
    Traceback (most recent call last):
    ...
    ValueError: --trees does not apply to --model: it is the size of the forest the command grows, and a model file's trees are taken as they are; drop --trees
    """
    if not hasattr(args, "model"):  # a command that always grows its forest
        return
    source = "model" if args.model else "grown"
    given = getattr(args, GIVEN, frozenset())
    for dest, (flag, applies, why) in SOURCE_OPTIONS.items():
        if dest not in given or applies == source:
            continue
        if applies == "model":
            raise ValueError(f"{flag} needs --model: {why}")
        raise ValueError(f"{flag} does not apply to --model: {why}; drop {flag}")


def add_data_options(p, *, task=True, dataset_default="digits"):
    """The data options every command that reads a dataset shares.

    ``--dataset``, ``--target``, ``--costs`` and (``task=True``) ``--task``;
    :func:`load_data` reads them.
    """
    p.add_argument("--dataset", default=dataset_default,
                   help="bundled/shared dataset name or a CSV/TSV path"
                        + (f" (default: {dataset_default})" if dataset_default else "")
                        + "; a CSV's text columns are coded as categories and a text target "
                          "as class names")
    p.add_argument("--target", default=None, help="label column of a CSV (default: last)")
    p.add_argument("--costs", default=None,
                   help="cost file: JSON {feature: cost}, FeatureCosts.to_dict() JSON "
                        "(matched by feature name) or 'name:cost' lines (default: the "
                        "dataset's real costs, else uniform)")
    if task:
        p.add_argument("--task", choices=TASKS, default="auto",
                       help="classification (random forest classifier) or regression (random "
                            "forest regressor, squared-error node loss, R^2/MSE reported); auto "
                            "(default): the dataset's own task, else regression for a float "
                            f"target with more than {MAX_CLASSES_AUTO} distinct values")


def add_forest_options(p, *, trees=40):
    """Forest size, depth, split and seed of the commands that fit a forest."""
    p.add_argument("--trees", type=int, default=trees, help=f"forest size (default {trees})")
    p.add_argument("--max-depth", type=int, default=None, help="tree depth limit")
    p.add_argument("--train-frac", type=float, default=0.5,
                   help="share of rows used to grow the forest (default 0.5); the rest is "
                        "split evenly into validation (pruning) and test")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def add_data_arguments(p, *, trees=40, task=True, model=False):
    """:func:`add_data_options` and :func:`add_forest_options` together (``model``: and
    :func:`add_model_option`)."""
    add_data_options(p, task=task)
    add_forest_options(p, trees=trees)
    if model:
        add_model_option(p)


def add_model_option(p):
    """``--model FILE``: a trained LightGBM, XGBoost or CatBoost model to prune instead of
    a random forest fitted by the command (:func:`model_experiment` reads it)."""
    p.add_argument("--model", default=None, metavar="FILE",
                   help="prune this trained model instead of fitting a random forest: a "
                        "LightGBM model text (booster.save_model('model.txt')), an XGBoost "
                        "JSON model (model.save_model('model.json')) or a CatBoost JSON model "
                        "(model.save_model('model.json', format='json')), read by "
                        "prune-opt's own parsers, never executed (pickles are refused). The "
                        "rows of "
                        "--dataset are split as usual and the model is not refitted (train "
                        "it on rows that are not the validation or test split, or pass "
                        "--train-frac 0: none of the rows trained it); its columns are "
                        "matched by name (other columns of the table are left out). A "
                        "classifier's classes are those the model file "
                        "gives: the labels a CatBoost model names, the numbers 0..K-1 of a "
                        "LightGBM or XGBoost model. Target labels among them are those "
                        "classes; for classes 0..K-1, exactly K other labels are coded in "
                        "sorted order as LGBMClassifier and XGBClassifier code them (the "
                        "mapping is printed); anything else needs --classes")
    p.add_argument("--classes", default=None, metavar="A,B,...",
                   help="with --model: the label of each of the model's classes, in the "
                        "model's order (class 0 first), comma-separated; needed when the "
                        "table's labels are not the model's own (the labels a CatBoost "
                        "model names, or the class numbers 0..K-1) nor exactly K labels to "
                        "code in sorted order for classes 0..K-1 (e.g. a table that lacks "
                        "a class)")


def load_data(args):
    """The dataset, its costs and the task the data options of ``args`` ask for.

    Returns
    -------
    dict
        ``dataset`` (a :class:`~prune_opt.datasets.Dataset`), ``costs`` (the
        ``--costs`` file matched by feature name, else the dataset's own,
        else uniform), ``task`` and ``task_reason``.
    """
    from ..datasets import load_dataset

    ds = load_dataset(args.dataset, target=getattr(args, "target", None))
    task, why = detect_task(getattr(args, "task", None), ds)
    costs = (read_cost_file(args.costs, ds.feature_names) if getattr(args, "costs", None)
             else ds.costs_or_uniform())
    return {"dataset": ds, "costs": costs, "task": task, "task_reason": why}


def check_solver_name(name):
    """Refuse an unknown or uninstalled backend name before any work.

    Examples
    --------
    >>> from prune_opt.cli._common import check_solver_name
    >>> check_solver_name("MinCut")
    'mincut'
    """
    from ..solvers import list_solvers

    known = list_solvers()
    key = str(name).strip().lower()
    if key == "auto":
        return key
    installed = [n for n, v in known.items() if v["installed"]]
    if key not in known:
        raise ValueError(f"--solver {name!r} is not a backend of prune-opt; choose auto or one of "
                         f"{', '.join(installed)}")
    if not known[key]["installed"]:
        raise ValueError(f"--solver {name!r} is not installed ({known[key]['install_hint']}); "
                         f"installed: {', '.join(installed)}")
    return key


TASKS = ("auto", "classification", "regression")
#: --task auto: a float target with more distinct values than this is a regression target
MAX_CLASSES_AUTO = 20


def detect_task(requested, ds):
    """``(task, reason)`` for ``--task``: the requested one, or detected from the data.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from prune_opt.cli._common import detect_task
    >>> detect_task("auto", SimpleNamespace(task="classification", y=np.linspace(0, 1, 50)))
    ('regression', 'detected: float target with 50 distinct values')
    """
    import numpy as np

    y = np.asarray(ds.y)
    if requested == "regression" and y.dtype.kind not in "biuf":
        raise ValueError("--task regression needs a numeric target; this target holds "
                         f"{y.dtype} values (use --task classification)")
    continuous = np.issubdtype(y.dtype, np.floating) and not np.all(y == np.round(y))
    if requested is None and continuous:  # a command without --task
        raise ValueError("this command fits a classifier and needs class labels, but the "
                         "target holds non-integer real values; prune, compare, curve and "
                         "export take --task regression")
    if requested == "classification" and continuous:
        raise ValueError("--task classification needs class labels, but this target holds "
                         "non-integer real values; use --task regression (or auto)")
    if requested is None:
        return "classification", "this command prunes classifiers"
    if requested != "auto":
        return requested, "as requested"
    if getattr(ds, "task", "classification") == "regression":
        return "regression", "the dataset's task"
    n_distinct = np.unique(y).size
    if np.issubdtype(y.dtype, np.floating) and n_distinct > MAX_CLASSES_AUTO:
        return "regression", f"detected: float target with {n_distinct} distinct values"
    return "classification", f"detected: target with {n_distinct} distinct labels"


def read_cost_file(path, feature_names):
    """FeatureCosts of a ``--costs`` file for a dataset with ``feature_names``.

    A JSON mapping ``{feature: cost}`` and 'name:cost' lines are matched by
    name; a :meth:`FeatureCosts.to_dict` document is matched by its own
    ``feature_names`` (in any order; different names are refused), and by
    position only when it names no features; a JSON list is positional.
    """
    from .. import FeatureCosts

    try:  # UTF-8, with the byte-order mark some editors write dropped
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"--costs {str(path)!r} is not UTF-8 text ({exc}); save it as "
                         "UTF-8") from None
    try:
        spec = json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError:
        spec = _cost_lines(path, text)
    except ValueError as exc:  # a feature named twice would keep its last cost unseen
        raise ValueError(f"--costs {str(path)!r}: {exc}") from None
    if isinstance(spec, dict) and "costs" in spec:
        return _costs_by_name(path, spec, feature_names)
    return FeatureCosts(spec, feature_names=feature_names)


def _costs_by_name(path, spec, feature_names):
    """A FeatureCosts.to_dict() document re-keyed by feature name onto ``feature_names``."""
    from .. import FeatureCosts

    own_names = spec.get("feature_names")
    if own_names is None:  # the file names no features: positional, as written
        return FeatureCosts.from_dict({**spec, "feature_names": feature_names})
    fc = FeatureCosts.from_dict(spec)  # checks the document on its own terms
    names = list(feature_names)
    if fc.feature_names == names:
        return fc
    if set(fc.feature_names) != set(names):
        extra = sorted(set(fc.feature_names) - set(names))
        lacking = sorted(set(names) - set(fc.feature_names))
        raise ValueError(f"--costs {str(path)!r} names other features than the dataset: "
                         f"only in the file {extra}, only in the dataset {lacking}; write the "
                         "cost file for this dataset's columns")
    own = fc.feature_names
    d = fc.to_dict()
    return FeatureCosts(
        dict(zip(own, d["costs"])),
        groups={g: (c, [own[m] for m in members]) for g, (c, members) in d["groups"].items()},
        requires={own[int(k)]: [own[m] for m in v] for k, v in d["requires"].items()} or None,
        feature_names=names)


def setup_experiment(args, *, fit=True):
    """Load data, split train/validation/test, fit a random forest.

    Returns a dict with the dataset, splits, costs, task (``--task``; a
    command without the option fits a classifier) and fitted forest.
    """
    import numpy as np
    from sklearn.model_selection import train_test_split

    check_train_frac(args)
    if args.trees < 1:
        raise ValueError(f"--trees must be at least 1, got {args.trees}")
    data = load_data(args)
    ds, costs, task, why = data["dataset"], data["costs"], data["task"], data["task_reason"]
    X, y = ds.X, ds.y
    strat = y if task == "classification" and np.unique(y).size < 50 and np.min(
        np.unique(y, return_counts=True)[1]) > 3 else None
    if args.train_frac == 0:  # --model: no row here trained the model
        X_tr, X_rest, y_tr, y_rest = X[:0], X, y[:0], y
    else:
        X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=args.train_frac,
                                                      random_state=args.seed, stratify=strat)
    if ds.X_test is not None:
        X_val, y_val, X_te, y_te = X_rest, y_rest, ds.X_test, ds.y_test
    else:
        X_val, X_te, y_val, y_te = train_test_split(X_rest, y_rest, test_size=0.5,
                                                    random_state=args.seed)
    out = dict(dataset=ds, costs=costs, X_train=X_tr, y_train=y_tr, X_val=X_val, y_val=y_val,
               X_test=X_te, y_test=y_te, task=task, task_reason=why)
    if getattr(args, "model", None):
        return model_experiment(args, out)
    if fit:
        with phase(f"growing {args.trees} trees on {len(y_tr):,} rows",
                   enabled=not getattr(args, "no_progress", True)):
            out["forest"] = forest_for(task, args).fit(X_tr, y_tr)
    return out


def check_train_frac(args):
    """``--train-frac`` in (0, 1), or 0 with ``--model`` (a model trained elsewhere: no
    row of the table trained it, so all of them are split between validation and
    test).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from prune_opt.cli._common import check_train_frac
    >>> check_train_frac(SimpleNamespace(train_frac=0.0, model="model.txt"))
    >>> check_train_frac(SimpleNamespace(train_frac=0.0, model=None))
    Traceback (most recent call last):
    ...
    ValueError: --train-frac 0 needs --model FILE (a model trained elsewhere, so no row here trains it); without it the command grows its forest on the train split: give a share in (0, 1)
    """
    frac = args.train_frac
    if getattr(args, "model", None) and frac == 0:
        return
    if frac == 0 and hasattr(args, "model"):
        raise ValueError("--train-frac 0 needs --model FILE (a model trained elsewhere, so no "
                         "row here trains it); without it the command grows its forest on "
                         "the train split: give a share in (0, 1)")
    if not 0.0 < frac < 1.0:
        where = "[0, 1) with --model" if getattr(args, "model", None) else "(0, 1)"
        raise ValueError(f"--train-frac must be in {where}, got {frac}")


def model_classes(labels, classes, given=None):
    """The table's label of each of a model file's classes, and the line that says so.

    The model's classes are its importer's answer, the Forest's ``classes_``:
    the labels a CatBoost model file names (``class_names``), or the class
    numbers 0..K-1 of a LightGBM or XGBoost model file, which stores no labels.
    The rule, one a user can check: labels of the table that are all among the
    model's classes are those classes (also when the table lacks some); when the
    classes are the numbers 0..K-1, exactly K other distinct labels are coded in
    sorted order, as ``LGBMClassifier`` and ``XGBClassifier`` code them; anything
    else (labels a model naming its classes does not have, fewer or more distinct
    labels, integers outside 0..K-1) needs ``given``, the ``--classes`` text: the
    label of each class in the model's order.

    Parameters
    ----------
    labels : array-like
        The target column's labels (all rows).
    classes : array-like or int
        The model's classes (``Forest.classes_``); an int K stands for 0..K-1.
    given : str, optional
        ``--classes``: comma-separated labels, class 0 first.

    Returns
    -------
    classes : ndarray
        One label per class, in the dtype of ``labels``: class ``k`` is ``classes[k]``.
    note : str
        One line naming the rule used and the mapping.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt.cli._common import model_classes
    >>> model_classes(np.array([0, 2, 2]), 3)
    (array([0, 1, 2]), 'classes: the labels are the class numbers of the model, 0..2 (the table has 0, 2)')
    >>> model_classes(np.array(["yes", "no"]), 2)[0]
    array(['no', 'yes'], dtype='<U3')
    >>> model_classes(np.array(["no", "yes"]), np.array(["yes", "no"]))
    (array(['yes', 'no'], dtype='<U3'), "classes: the model's own labels: 'yes' -> 0, 'no' -> 1")
    >>> model_classes(np.array([1, 2]), np.array([1, 2, 3]))[0]
    array([1, 2, 3])
    >>> model_classes(np.array([1, 3]), 3, given="1,2,3")[0]
    array([1, 2, 3])
    >>> model_classes(np.array([1, 3]), 3)
    Traceback (most recent call last):
    ...
    ValueError: --model: the model predicts 3 classes (0..2), and the table's 2 labels 1, 3 are neither class numbers in 0..2 nor 3 labels to code in sorted order; pass --classes with the label of each of the model's classes, class 0 first (e.g. --classes a,b,c)
    """
    import numpy as np

    labels = np.unique(np.asarray(labels))
    own = np.arange(classes) if np.ndim(classes) == 0 else np.asarray(classes)
    k = own.size
    if given is not None:
        values = _parse_classes(given, labels, k)
        return values, f"classes (--classes): {_mapping_text(values)}"
    numbers = own.dtype.kind in "biuf" and np.array_equal(own, np.arange(k))
    numeric = labels.dtype.kind in "biuf"
    if numeric and labels.size > k and not np.all(labels == np.round(labels)):
        raise ValueError(f"--model: the model is a classifier of {k} classes, but the target "
                         f"holds {labels.size} distinct non-integer values, a regression "
                         "target; pass the label column with --target")
    mine = _in_dtype_of(own, labels)
    if mine is not None and labels.size and np.isin(labels, mine).all():
        lacks = f" (the table has {_labels_text(labels)})" if labels.size < k else ""
        if numbers:
            return mine, f"classes: the labels are the class numbers of the model, 0..{k - 1}{lacks}"
        return mine, f"classes: the model's own labels: {_mapping_text(mine)}{lacks}"
    if numbers and labels.size == k:
        return labels, ("classes: the table's labels coded in sorted order, as LGBMClassifier "
                        f"and XGBClassifier code them: {_mapping_text(labels)}")
    raise ValueError(_classes_mismatch(labels, own, numbers))


def _in_dtype_of(classes, labels):
    """The model's classes as labels of the table's dtype (``'1'`` and ``1.0`` are the
    label 1 of an integer column), or None when they are not of its kind (text
    classes of a numeric column)."""
    import numpy as np

    if labels.dtype.kind not in "biuf":
        return np.array([str(c) for c in classes.tolist()])
    try:
        values = np.array([float(c) for c in classes.tolist()])
    except (TypeError, ValueError):
        return None
    if labels.dtype.kind in "biu" and np.all(values == np.round(values)):
        return values.astype(labels.dtype)
    return values


def _classes_mismatch(labels, classes, numbers):
    """The one-line refusal of a table whose labels the model's classes do not name."""
    k = classes.size
    example = ",".join("abcdefgh"[:min(k, 8)]) + (",..." if k > 8 else "")
    how = ("pass --classes with the label of each of the model's classes, class 0 first "
           f"(e.g. --classes {example})")
    if numbers:
        return (f"--model: the model predicts {k} classes (0..{k - 1}), and the table's "
                f"{labels.size} labels {_labels_text(labels)} are neither class numbers in "
                f"0..{k - 1} nor {k} labels to code in sorted order; {how}")
    return (f"--model: the model names its {k} classes {_labels_text(classes)}, and the "
            f"table's labels {_labels_text(labels)} are not among them; pass the model's "
            f"label column with --target, or {how}")


def _labels_text(labels, most=10):
    """``0, 2`` / ``'no', 'yes'``: labels as a user reads them, at most ``most``."""
    text = [repr(v) if isinstance(v, str) else str(v) for v in labels[:most].tolist()]
    return ", ".join(text) + (f", ... ({labels.size} in all)" if labels.size > most else "")


def _mapping_text(classes, most=10):
    pairs = [f"{v!r} -> {k}" if isinstance(v, str) else f"{v} -> {k}"
             for k, v in enumerate(classes[:most].tolist())]
    return ", ".join(pairs) + (f", ... ({classes.size} classes)" if classes.size > most else "")


def _parse_classes(text, labels, k):
    """``--classes`` as labels of the table's dtype: ``k`` distinct ones that name every
    label of the table."""
    import numpy as np

    parts = [part.strip() for part in str(text).split(",")]
    if len(parts) != k or not all(parts):
        raise ValueError(f"--classes {text!r}: the model predicts {k} classes; name each "
                         f"one's label, class 0 first, comma-separated ({k} labels)")
    if labels.dtype.kind in "biuf":
        try:
            values = np.array([float(part) for part in parts])
        except ValueError:
            raise ValueError(f"--classes {text!r}: the table's labels are numbers "
                             f"({_labels_text(labels)}); name each class by its number") \
                from None
        if labels.dtype.kind in "biu" and np.all(values == np.round(values)):
            values = values.astype(labels.dtype)
    else:
        values = np.array(parts)
    if np.unique(values).size != k:
        raise ValueError(f"--classes {text!r} names a label twice; name each of the model's "
                         f"{k} classes once")
    unknown = labels[~np.isin(labels, values)]
    if unknown.size:
        raise ValueError(f"--classes {text!r} does not name the table's labels "
                         f"{_labels_text(unknown)}; name the label of each of the model's "
                         f"{k} classes (rows of other labels cannot be scored by the model)")
    return values


def model_experiment(args, exp):
    """``exp`` with the ``--model`` file's forest in place of a fitted one: the data's
    columns the model reads, in its order (by name when the model has names, else by
    position), the costs with them, a classifier's labels matched to the model's
    classes; anything that does not fit says what and how to fix it."""
    import numpy as np

    from ..importers import read_model_file

    forest = read_model_file(args.model)
    ds = exp["dataset"]
    if getattr(args, "task", "auto") not in ("auto", None) and args.task != forest.task:
        raise ValueError(f"--task {args.task}: the model in {args.model!r} is a "
                         f"{forest.task} model")
    order = _model_columns(args, forest, ds, exp["X_train"].shape[1])
    for key in ("X_train", "X_val", "X_test"):
        exp[key] = np.asarray(exp[key])[:, order]
    exp["costs"] = costs_of_columns(exp["costs"], order, forest.feature_names)
    exp["task"], exp["task_reason"] = forest.task, f"the model in {args.model}"
    # every label of the table (a command that uses a sample of its rows passes them all)
    labels = exp.get("labels", np.concatenate([exp["y_train"], exp["y_val"], exp["y_test"]]))
    if forest.task == "classification":
        # the labels follow the model's classes, never their rank in this table (a table
        # that lacks a class would shift every class after it)
        forest = copy.copy(forest)
        forest.classes_, exp["class_note"] = model_classes(labels, forest.classes_,
                                                           getattr(args, "classes", None))
    else:
        if getattr(args, "classes", None) is not None:
            raise ValueError(f"--classes: the model in {args.model!r} is a regression model, "
                             "it has no classes; drop --classes")
        if labels.dtype.kind not in "biuf":
            raise ValueError(f"--model: the model in {args.model!r} is a regression model, but "
                             f"the target holds text ({_labels_text(np.unique(labels), 3)}); "
                             "pass the numeric target column with --target")
    exp["forest"] = forest
    return exp


def _model_columns(args, forest, ds, width):
    """Where each column the ``--model`` forest reads is in the dataset: by name, as
    ``prune-opt predict`` matches them (other columns of the table are left out), or
    by position when either side has no names."""
    from ..datasets import match_columns

    names = list(ds.feature_names) if ds.feature_names is not None else None
    if forest.feature_names is not None and names is not None:
        try:
            return match_columns(names, forest.feature_names)
        except ValueError as exc:
            raise ValueError(f"--model: {exc}; pass a table with the columns the model "
                             "was trained on") from None
    if width != forest.n_features:
        raise ValueError(f"--model: the model reads {forest.n_features} features, the dataset "
                         f"has {width}; pass the table the model was trained on")
    return list(range(width))


def costs_of_columns(costs, positions, names=None):
    """The costs of the columns ``positions`` of a table, in that order (named
    ``names``), as they cost among all the table's columns: any set of them costs what
    it cost there.  A unit a kept column needs through a column left out (FTI computed
    from TT4 when the model does not read TT4) is paid with that column, and one that
    several kept columns need becomes their shared group.

    Raises
    ------
    ValueError
        When those shared units overlap (a column in two of them), which
        :class:`~prune_opt.FeatureCosts` cannot express; the line says so.

    Examples
    --------
    >>> from prune_opt import FeatureCosts
    >>> from prune_opt.cli._common import costs_of_columns
    >>> fc = FeatureCosts({"TT4": 14.51, "T4U": 11.41, "age": 1.0},
    ...                   requires={"FTI": ["TT4", "T4U"]},
    ...                   feature_names=["age", "TT4", "T4U", "FTI"])
    >>> kept = costs_of_columns(fc, [3, 0], ["FTI", "age"])
    >>> kept.feature_cost().tolist(), kept.cost_of([0, 1])
    ([25.92, 1.0], 26.92)
    """
    import numpy as np

    from .. import FeatureCosts

    positions = [int(k) for k in positions]
    if sorted(positions) == list(range(costs.n_features)):  # every column, maybe reordered
        if costs.feature_names is None or names is None:
            return costs
        return costs.reorder(names)
    units = [set(costs.feature_units[p].indices.tolist()) for p in positions]
    own, requires, shared = np.zeros(len(positions)), {}, {}
    for k, p in enumerate(positions):
        own[k] = costs.unit_costs[p]
        requires[k] = [j for j, q in enumerate(positions) if j != k and q in units[k]]
        # what the kept columns it is computed from do not already pay
        rest = units[k] - {p}.union(*(units[j] for j in requires[k]))
        for u in rest:
            shared.setdefault(u, []).append(k)
    groups = {}
    for u, members in sorted(shared.items()):
        if len(members) == 1:  # needed by one kept column alone: part of its own cost
            own[members[0]] += costs.unit_costs[u]
            continue
        key = tuple(members)
        cost, labels = groups.get(key, (0.0, []))
        label = costs.unit_names[u]
        groups[key] = (cost + costs.unit_costs[u], [*labels, label.removeprefix("group:")
                                                    if u >= costs.n_features else label])
    _check_disjoint(groups, names)
    return FeatureCosts(own, feature_names=None if names is None else list(names),
                        groups={", ".join(labels): (float(cost), list(members))
                                for members, (cost, labels) in groups.items()} or None,
                        requires={k: v for k, v in requires.items() if v} or None)


def _check_disjoint(groups, names):
    """Refuse shared units that overlap: FeatureCosts' groups must not."""
    seen = {}
    for members, (_, labels) in groups.items():
        for k in members:
            if k in seen:
                column = names[k] if names is not None else k
                raise ValueError(f"--costs: column {column!r} of the model shares the costs of "
                                 f"{seen[k]} and of {', '.join(labels)} with other columns, "
                                 "some of which the model does not read, and prune-opt cannot "
                                 "express that for the model's columns alone; give --costs "
                                 "for the columns the model reads")
            seen[k] = ", ".join(labels)


def error_data(exp):
    """``train=`` of the paper's program for the experiment ``exp``: the train split, on
    which each tree of the forest the command grew counts its in-bag errors, or None
    for a ``--model`` booster, whose errors are counted on the pruning rows (its trees
    each fit every training row, and its training rows are not these)."""
    from .. import as_forest

    if not as_forest(exp["forest"]).ensemble.in_bag_errors:
        return None
    return (exp["X_train"], exp["y_train"])


def forest_for(task, args):
    """The unfitted random forest (classifier or regressor) of ``--trees``,
    ``--max-depth`` and ``--seed``."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestRegressor if task == "regression" else RandomForestClassifier
    return cls(n_estimators=args.trees, max_depth=args.max_depth, random_state=args.seed,
               n_jobs=1)


def task_line(exp):
    """One line saying which task runs and why (printed by every command with --task),
    and for a ``--model`` classifier a second one saying which label is which class."""
    line = f"task: {exp['task']} ({exp['task_reason']})"
    return line + (f"\n{exp['class_note']}" if exp.get("class_note") else "")


def score_metrics(model, X, y, task, prefix="test_"):
    """Accuracy, or R^2 and mean squared error for regression, of a fitted model
    (a PrunedForest or a scikit-learn estimator) on ``(X, y)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from prune_opt.cli._common import score_metrics
    >>> X = np.arange(4.0)[:, None]; y = np.array([0.0, 0.0, 1.0, 1.0])
    >>> score_metrics(DecisionTreeRegressor().fit(X, y), X, y, "regression")
    {'test_r2': 1.0, 'test_mse': 0.0}
    """
    import numpy as np

    if task == "regression":
        if not hasattr(model, "score"):  # a Forest read from a --model file
            from .. import PrunedForest

            model = PrunedForest(model, model.full_split_mask())
        pred = np.asarray(model.predict(X), dtype=float)
        return {f"{prefix}r2": float(model.score(X, y)),
                f"{prefix}mse": float(np.mean((pred - np.asarray(y, dtype=float)) ** 2))}
    return {f"{prefix}accuracy": float(np.mean(model.predict(X) == y))}


def add_output_argument(p, flag, *, help, kind="file", **kwargs):
    """Add an output option whose path is checked before the command starts.

    ``kind`` is ``"file"`` (a file to create or replace) or ``"dir"`` (a
    folder to create or fill).  :func:`check_outputs` checks every option
    added this way, so a bad path fails in a second, not after the work.
    """
    if kind not in ("file", "dir", "figure"):
        raise ValueError(f"kind must be 'file', 'dir' or 'figure', got {kind!r}")
    action = p.add_argument(flag, help=help, **kwargs)
    outputs = p.get_default("output_options") or ()
    p.set_defaults(output_options=(*outputs, (flag, action.dest, kind)))
    return action


def check_output_dir(path, name):
    """Validate an output folder: an existing writable folder, or one that can be created."""
    p = Path(os.fspath(path))
    if p.exists() and not p.is_dir():
        raise ValueError(f"{name}={str(p)!r} is a file, not a folder; give a folder name")
    if p.is_dir():
        if not os.access(p, os.W_OK | os.X_OK):
            raise ValueError(f"{name}={str(p)!r}: the folder is not writable; "
                             "choose another location")
        return p
    check_output_path(p, name)
    return p


def check_outputs(args):
    """Check every output option of ``args`` (see :func:`add_output_argument`).

    Raises
    ------
    ValueError
        A path names a folder where a file is expected (or the reverse), its
        parent folder is missing or not writable, or two options name the
        same file.

    Examples
    --------
    >>> import argparse
    >>> from prune_opt.cli._common import check_outputs
    >>> args = argparse.Namespace(out="no-such-dir/x.json",
    ...                           output_options=(("--out", "out", "file"),))
    >>> check_outputs(args)
    Traceback (most recent call last):
    ...
    ValueError: --out='no-such-dir/x.json': the directory 'no-such-dir' does not exist; \
create it first
    """
    seen = {}
    for flag, dest, kind in getattr(args, "output_options", ()):
        value = getattr(args, dest, None)
        if value is None:
            continue
        if kind == "dir":
            check_output_dir(value, flag)
            continue
        check_output_path(value, flag)
        if kind == "figure":
            check_figure_suffix(value, flag)
        key = os.path.abspath(os.fspath(value))
        if key in seen:
            raise ValueError(f"{seen[key]} and {flag} both name {value!r}; give each its own "
                             "file")
        seen[key] = flag


def check_figure_suffix(path, name):
    """A picture's suffix must be a format matplotlib writes (checked before the work)."""
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = Path(os.fspath(path)).suffix.lstrip(".").lower() or "png"
    supported = sorted(FigureCanvasBase.get_supported_filetypes())
    if fmt not in supported:
        raise ValueError(f"{name}={str(path)!r}: matplotlib cannot write {fmt!r} files; use one "
                         f"of {', '.join(supported)}")


@contextlib.contextmanager
def naming_errors(path):
    """Give an OSError raised while writing ``path`` the file name it lacks.

    A full disk surfaces from ``write``/``fsync`` as a bare "No space left on
    device"; the one-line CLI error should say which output it was.
    """
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.strerror:
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from exc
        raise


def write_json(path, obj):
    """Write ``obj`` as indented JSON, atomically (whole file or none)."""
    from ..model._codec import _jsonable

    text = json.dumps(_jsonable(obj), indent=2)
    with naming_errors(path), atomic_write(path, "w") as fh:
        fh.write(text)


def write_csv(path, rows):
    """Write dict rows as CSV (columns: every key, first-seen order), atomically."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with naming_errors(path), atomic_write(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def format_table(rows, columns, *, align="right"):
    """Plain-text table of dict rows (floats to 6 significant digits, None blank).

    Examples
    --------
    >>> from prune_opt.cli._common import format_table
    >>> print(format_table([{"a": 1, "b": 0.5}, {"a": 10, "b": None}], ["a", "b"]))
     a    b
    --  ---
     1  0.5
    10
    """
    if align not in ("left", "right"):
        raise ValueError(f"align must be 'left' or 'right', got {align!r}")

    def fmt(v):
        if v is None:
            return ""
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    def line(cells, widths):
        just = [c.rjust(w) if align == "right" else c.ljust(w) for c, w in zip(cells, widths)]
        return "  ".join(just).rstrip()

    cells = [[fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
              for i, c in enumerate(columns)]
    lines = [line(columns, widths), line(["-" * w for w in widths], widths)]
    lines += [line(row, widths) for row in cells]
    return "\n".join(lines)


def save_model(pruned, path, dataset=None):
    """Save a pruned forest as JSON (atomically), named by the dataset's feature names
    (a DataFrame given to the loaded model is then read by column name), with the
    table encoding of ``dataset`` (``feature_encoding``: column names, categories and
    target) when it came from a CSV, so that ``prune-opt predict`` reads a new table
    the same way."""
    names = getattr(dataset, "feature_names", None)
    enc = getattr(dataset, "encoding", None)
    pruned = copy.copy(pruned)
    if pruned.forest.feature_names is None and names is not None:
        pruned.forest = copy.copy(pruned.forest)
        pruned.forest.feature_names = [str(n) for n in names]
    if enc is not None:
        own = pruned.forest.feature_names
        columns = list(enc.get("columns", []))
        if own is not None and columns != own and set(own) <= set(columns):
            # a --model reads its own columns, in its own order, of the table's
            enc = dict(enc, columns=list(own), categories={
                c: v for c, v in (enc.get("categories") or {}).items() if c in own})
        pruned.feature_encoding = enc  # checked against the names
    with naming_errors(path):
        pruned.save(path)


#: the libraries whose models ``prune --model`` reads but writes no file of (none: LightGBM,
#: XGBoost and CatBoost models are all written back)
NO_LIBRARY_WRITER = ()
#: the name ``prune --model`` gives the pruned model in its library's format, beside --out
LIBRARY_SUFFIXES = {"lightgbm": ".txt", "xgboost": ".xgboost.json", "catboost": ".catboost.json"}


def library_model_path(out, forest):
    """Where ``prune --model`` writes the pruned model in its source library's format:
    beside ``out``, ``<stem>.txt`` (LightGBM), ``<stem>.xgboost.json`` (XGBoost) or
    ``<stem>.catboost.json`` (CatBoost); None for a library prune-opt writes no file of."""
    stem = Path(out).with_suffix("")
    kind = library_of(forest)
    if kind in NO_LIBRARY_WRITER or kind not in LIBRARY_SUFFIXES:
        return None
    return f"{stem}{LIBRARY_SUFFIXES[kind]}"


def library_of(forest):
    """``"lightgbm"``, ``"xgboost"``, ``"catboost"`` or None: the library a forest was
    read from."""
    source = str(forest.source or "")
    if source.startswith(("lightgbm", "LGBM")):
        return "lightgbm"
    if source.startswith(("xgboost", "XGB")):
        return "xgboost"
    if source.startswith(("catboost", "CatBoost")):
        return "catboost"
    return None


def write_library_model(pruned, path):
    """The pruned model in its source library's own format (LightGBM model text, XGBoost
    or CatBoost JSON), written atomically without the library (see prune_opt.exporters)."""
    from ..exporters import catboost_model_text, lightgbm_model_text, xgboost_model_json

    kind = library_of(pruned.forest)
    writers = {"lightgbm": lightgbm_model_text, "xgboost": xgboost_model_json,
               "catboost": catboost_model_text}
    if kind in NO_LIBRARY_WRITER or kind not in writers:
        raise ValueError(f"{path}: prune-opt writes no {kind or 'library'} model file for this "
                         "model; the pruned model is saved as prune-opt JSON (prune_opt.load "
                         "reads it)")
    text = writers[kind](pruned)
    if not isinstance(text, str):
        text = json.dumps(text)
    with naming_errors(path), atomic_write(path, "w") as fh:
        fh.write(text)


@contextlib.contextmanager
def ticking(bar):
    """Redraw the tqdm ``bar`` every half second while the block runs, so that
    its elapsed time moves during one long step (a single LP solve can take a minute).

    Examples
    --------
    >>> from tqdm import tqdm
    >>> from prune_opt.cli._common import ticking
    >>> bar = tqdm(total=1, disable=True)
    >>> with ticking(bar):
    ...     bar.update()
    """
    import threading

    if getattr(bar, "disable", False):
        yield bar
        return
    done = threading.Event()

    def tick():
        while not done.wait(0.5):
            bar.refresh()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield bar
    finally:
        done.set()
        thread.join()


@contextlib.contextmanager
def phase(desc, *, enabled=True):
    """Show ``desc`` and the seconds it has taken on stderr (a terminal) while a step
    without a progress bar of its own runs (refreshed twice a second from a background
    thread).

    Examples
    --------
    >>> from prune_opt.cli._common import phase
    >>> with phase("scoring", enabled=False):
    ...     pass
    """
    import sys

    from tqdm import tqdm

    # a terminal only: in a log or a pipe, carriage-return refreshes are noise, and an
    # error must stay the one line on stderr
    if not enabled or not sys.stderr.isatty():
        yield
        return
    bar = tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed}", leave=False,
               file=sys.stderr)
    try:
        with ticking(bar):
            yield
    finally:
        bar.close()
