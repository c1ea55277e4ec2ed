"""The command registry and the size of the CLI's functions."""

import ast
import io
import pkgutil
import tokenize
from pathlib import Path

import pytest

import prune_opt.cli as cli
from prune_opt.cli import COMMANDS, build_parser, command_module

MAX_CODE_LINES = 60


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


def code_lines(source, func):
    """Lines of ``func`` holding code (not blank, comment or docstring)."""
    body = func.body
    doc = None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = range(body[0].lineno, body[0].end_lineno + 1)
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENDMARKER}
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in skip:
            continue
        for ln in range(tok.start[0], tok.end[0] + 1):
            if func.lineno <= ln <= func.end_lineno and (doc is None or ln not in doc):
                lines.add(ln)
    return len(lines)


def long_functions(package_dir):
    out = []
    for path in sorted(Path(package_dir).glob("*.py")):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = code_lines(source, node)
                if n > MAX_CODE_LINES:
                    out.append(f"{path.name}:{node.lineno} {node.name} ({n} code lines)")
    return out


def test_code_line_counter_counts_code_only():
    src = 'def f():\n    """doc\n    more"""\n    # comment\n\n    x = (1,\n         2)\n'
    assert code_lines(src, ast.parse(src).body[0]) == 3


def test_no_cli_function_over_60_code_lines():
    assert long_functions(Path(cli.__file__).parent) == []
