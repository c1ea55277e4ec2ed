"""``prune-opt datasets``: every named dataset with its source and cost model."""

from __future__ import annotations


def add_parser(sub):
    p = sub.add_parser(
        "datasets", help="list the named datasets, their source and cost model",
        description="List every dataset --dataset accepts: bundled ones with real test "
        "costs, and the UCI sets read from a local data folder ($PRUNE_OPT_DATA) or fetched "
        "once from OpenML into scikit-learn's data home. Any CSV/TSV file works too "
        "(--dataset FILE --target COLUMN).")
    p.set_defaults(func=run)


def run(args):
    from ..datasets import dataset_catalog

    rows = dataset_catalog()
    w = max(len(r["name"]) for r in rows) + 2
    ws = max(len(r["source"]) for r in rows) + 2
    print(f"{'name':<{w}}{'task':<16}{'local':<7}{'source':<{ws}}costs")
    for r in rows:
        print(f"{r['name']:<{w}}{r['task']:<16}{'yes' if r['local'] else 'no':<7}"
              f"{r['source']:<{ws}}{r['costs']}")
    return 0
