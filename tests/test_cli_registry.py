"""The command registry and the size of the CLI's functions."""

import pkgutil
from pathlib import Path

import pytest
from test_structure import long_functions

import prune_opt.cli as cli
from prune_opt.cli import COMMANDS, build_parser, command_module


def test_every_command_module_is_registered():
    modules = {m.name for m in pkgutil.iter_modules(cli.__path__)
               if not m.name.startswith("_")}
    assert modules == set(COMMANDS.values()), (
        "a module of prune_opt.cli is not in COMMANDS (or COMMANDS names a missing one)")


def test_every_registered_command_is_in_the_parser():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


def test_a_missing_command_module_is_an_error_not_a_skip(monkeypatch):
    monkeypatch.setitem(COMMANDS, "ghost", "no_such_command_module")
    with pytest.raises(ModuleNotFoundError, match="no_such_command_module"):
        build_parser()


def test_a_module_without_run_is_refused(monkeypatch):
    monkeypatch.setitem(COMMANDS, "half", "_memory")  # a helper module, not a command
    with pytest.raises(TypeError, match="add_parser"):
        command_module("half")
    with pytest.raises(ValueError, match="unknown command"):
        command_module("nope")


def test_no_cli_function_over_60_code_lines():
    assert long_functions(Path(cli.__file__).parent) == []  # the counter: test_structure.py
