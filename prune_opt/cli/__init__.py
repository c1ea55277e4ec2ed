"""The ``prune-opt`` command line.

Each command lives in its own module exposing ``add_parser(subparsers)`` (which
registers the sub-command and sets ``func``) and ``run(args) -> int``.  User
errors exit with status 2 and one line on stderr (``--debug`` shows the
traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..solvers import SolverError

COMMAND_MODULES = ("demo", "prune_cmd", "compare", "curve", "export", "tu_check",
                   "datasets_cmd")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="prune-opt",
        description="Exact cost-aware pruning of tree ensembles (BudgetPrune).",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a command module not present in this build
            if exc.name == f"{__name__}.{name}":
                continue
            raise
        mod.add_parser(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, SolverError, FileNotFoundError, KeyError) as exc:
        if args.debug:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"prune-opt {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
