"""Every function of the library stays short (issue: "short functions").

Functions are measured in code lines: no blank, comment or docstring lines.
"""

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_CODE_LINES = 60


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


def long_functions(directory):
    """Functions over ``MAX_CODE_LINES`` in every module below ``directory``."""
    out = []
    directory = Path(directory)
    for path in sorted(directory.rglob("*.py")):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = code_lines(source, node)
                if n > MAX_CODE_LINES:
                    out.append(f"{path.relative_to(directory)}:{node.lineno} {node.name} ({n})")
    return out


def test_code_line_counter_counts_code_only():
    src = 'def f():\n    """doc\n    more"""\n    # comment\n\n    x = (1,\n         2)\n'
    assert code_lines(src, ast.parse(src).body[0]) == 3


def test_no_library_function_over_60_code_lines():
    assert long_functions(ROOT / "prune_opt") + long_functions(ROOT / "forest_builders") == []
