"""The ``prune-opt`` command line.

Every command is one module of this package, named in :data:`COMMANDS`, that
exposes ``add_parser(subparsers)`` (registers the sub-command and sets
``func``) and ``run(args) -> int``.  :data:`COMMANDS` is the single registry:
a module it names that cannot be imported, or a command module it does not
name, is an error (checked by the test suite), never a silent skip.

The contract of every command:

* user errors (bad arguments, unusable output paths, a full disk) exit with
  status 2 and one line on stderr (``--debug`` shows the traceback);
* output paths are checked before any long work starts, and every file is
  written atomically (whole or not at all);
* Ctrl-C (SIGINT) prints one line ``interrupted`` on stderr, stops child
  processes, leaves no partial file and exits with status 130.

Start-up is cheap, so that ``prune-opt --help`` answers at once and Ctrl-C is
handled from the first moment: :func:`main` installs its SIGINT handling
before it imports anything, this package and the parsers (``add_parser``)
import only the standard library at module level, and a command imports
what it needs (NumPy, scikit-learn, the solvers) when it runs.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

__all__ = ["COMMANDS", "EXIT_INTERRUPTED", "EXIT_USAGE", "build_parser", "main"]

#: command name -> module of this package that implements it
COMMANDS = {
    "demo": "demo",
    "prune": "prune_cmd",
    "compare": "compare",
    "curve": "curve",
    "predict": "predict",
    "export": "export",
    "tu-check": "tu_check",
    "datasets": "datasets_cmd",
    "fit": "fit_cmd",
}

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def command_module(name):
    """The module implementing command ``name`` (ValueError for an unknown name).

    Examples
    --------
    >>> from prune_opt.cli import command_module
    >>> command_module("prune").__name__
    'prune_opt.cli.prune_cmd'
    """
    if name not in COMMANDS:
        raise ValueError(f"unknown command {name!r}; commands: {', '.join(COMMANDS)}")
    module = importlib.import_module(f"{__name__}.{COMMANDS[name]}")
    for attr in ("add_parser", "run"):
        if not callable(getattr(module, attr, None)):
            raise TypeError(f"command module {module.__name__} has no {attr}()")
    return module


def build_parser():
    """The argument parser with every registered command.

    Examples
    --------
    >>> from prune_opt.cli import build_parser
    >>> build_parser().parse_args(["tu-check", "--matrix", "A.npz"]).command
    'tu-check'
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="prune-opt",
        description="Exact cost-aware pruning of tree ensembles (BudgetPrune).",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    from ._common import CommandParser

    # each command's parser records the options given (an option that does not apply
    # to the forest's source is refused, see _common.SOURCE_OPTIONS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    for name in COMMANDS:
        command_module(name).add_parser(sub)
    missing = set(COMMANDS) - set(sub.choices)
    if missing:
        raise RuntimeError(f"command module(s) did not register {sorted(missing)}")
    return parser


def _user_error(exc):
    """One-line text of a user-facing error."""
    from ..solvers import SolverError

    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    if isinstance(exc, OSError) and exc.strerror and not isinstance(exc, SolverError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}"
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return text or type(exc).__name__


def _run_command(args):
    from ..solvers import SolverError
    from ._common import check_options_apply, check_outputs

    try:
        check_options_apply(args)
        check_outputs(args)
        return int(args.func(args) or 0)
    except BrokenPipeError:
        raise  # handled quietly by main()
    except (ValueError, TypeError, SolverError, OSError, KeyError) as exc:
        if args.debug:
            raise
        print(f"prune-opt {args.command}: error: {_user_error(exc)}", file=sys.stderr)
        return EXIT_USAGE


class _CtrlC:
    """The SIGINT handler of one :func:`main` call.

    While the command runs, Ctrl-C raises KeyboardInterrupt: ``finally``
    clauses remove temporary files and stop child processes, and :func:`main`
    prints the one line. Once :func:`main` has its answer (``done``), a late
    Ctrl-C is ignored, so that no second line or traceback can follow.
    """

    def __init__(self):
        self.done = False

    def __call__(self, signum, frame):
        if not self.done:
            raise KeyboardInterrupt


def _set_sigint(handler):
    """Install ``handler`` for SIGINT; the previous one, or None where Python allows
    no handler (a thread other than the main one)."""
    try:
        return signal.signal(signal.SIGINT, handler)
    except ValueError:
        return None


def main(argv=None):
    """Run the ``prune-opt`` command line; returns the exit status.

    Ctrl-C at any moment of the call prints ``interrupted`` on stderr and returns
    130: the handler is installed first, before anything is imported.  Without
    ``argv`` (the process's own command line: the ``prune-opt`` script,
    ``python -m prune_opt.cli``) Ctrl-C is ignored once the status is known, while
    the process exits; with ``argv`` (a call from Python) the caller's handler is
    restored.

    Examples
    --------
    >>> from prune_opt.cli import main
    >>> main(["tu-check", "--matrix", "no-such-file.npz"])
    2
    """
    ctrl_c, previous = _CtrlC(), None
    try:  # from the first instruction on: an interrupt raised anywhere below is caught
        previous = _set_sigint(ctrl_c)
        return _dispatch(argv)
    except KeyboardInterrupt:
        ctrl_c.done = True
        _forget_interrupt()
        # atomic writers have removed their temporary files and child processes
        # have been stopped by the code that started them (finally clauses)
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        ctrl_c.done = True
        if argv is None:  # the process exits with this status: nothing left to stop
            _set_sigint(signal.SIG_IGN)
        elif previous is not None:
            _set_sigint(previous)


def _forget_interrupt():
    """Clear CPython's mark of an interrupt that escaped code run by ``exec()`` of a
    string (SciPy imports NumPy's names through one).  The mark outlives the
    ``except`` that handled the interrupt, and ``python -m prune_opt.cli`` would end
    by killing itself with SIGINT after the one line, instead of exiting with 130;
    every ``exec()`` of a string starts by clearing it (``run_eval_code_obj`` in
    CPython's pythonrun.c)."""
    exec("None")


def _dispatch(argv):
    """Parse ``argv`` and run its command (the part of :func:`main` Ctrl-C interrupts)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
        return _run_command(args)
    except BrokenPipeError:
        # the reader of stdout went away (e.g. `prune-opt datasets | head`): stop quietly,
        # and point stdout at devnull so the interpreter's final flush cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
