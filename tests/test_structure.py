"""Every function of the library stays short (issue: "short functions").

The code-line counter (code only: no blank, comment or docstring lines) is the
one the CLI registry test uses.
"""

import ast
from pathlib import Path

from test_cli_registry import MAX_CODE_LINES, code_lines

ROOT = Path(__file__).resolve().parents[1]


def long_functions(package):
    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = code_lines(source, node)
                if n > MAX_CODE_LINES:
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n})")
    return out


def test_no_library_function_over_60_code_lines():
    assert long_functions("prune_opt") + long_functions("forest_builders") == []
