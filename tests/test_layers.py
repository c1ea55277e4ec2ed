"""The import graph of prune_opt and forest_builders points only down.

The layers are read from the layers block of docs/architecture.md, so the
document and this test cannot drift apart.  The graph is built from the
sources with ``ast`` and holds every static import, also those inside
functions (a function-level import can hide a cycle, but not from this test).
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prune_opt", "forest_builders")


def project_modules():
    """{dotted name: (path, is_package)} of every module of the two packages."""
    mods = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_pkg else parts)
            mods[name] = (path, is_pkg)
    return mods


def _absolute(node, module, is_pkg):
    if node.level == 0:
        return node.module
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner(name, mods):
    """The project module an imported dotted name lives in (None if external)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(mods):
    """{module: {imported project module: first line}} over every static import."""
    graph = {m: {} for m in mods}
    for mod, (path, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, mod, is_pkg)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            else:
                continue
            for target in targets:
                dep = _owner(target, mods)
                if dep is not None and dep != mod:
                    graph[mod].setdefault(dep, node.lineno)
    return graph


def documented_layers():
    """[(level, name, folders)] from the layers block of docs/architecture.md.

    A folder entry ends in ``/`` (every module below it, subfolders included), or
    names one file (``prune_opt/__init__.py``) or a glob of a folder's flat files
    (``prune_opt/_*.py``: the base helpers)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"<!-- layers: read by tests/test_layers.py -->\n```text\n(.*?)```",
                      text, re.S)
    assert block, "docs/architecture.md lost its layers block"
    layers = []
    for line in block.group(1).splitlines():
        fields = line.split()
        if fields and fields[0].isdigit():
            layers.append((int(fields[0]), fields[1], fields[2:]))
    return layers


def _path_of(module):
    path, is_pkg = MODS[module]
    return path.relative_to(ROOT).as_posix()


def layer_of(module, layers):
    """Level of a module: the most specific entry naming its file wins (a file over a
    glob over a folder; the deeper folder over the shallower)."""
    rel = _path_of(module)
    best = None
    for level, _, entries in layers:
        for entry in entries:
            if entry.endswith("/"):
                rank = (0, len(entry)) if rel.startswith(entry) else None
            elif any(c in entry for c in "*?["):
                rank = (1, len(entry)) if fnmatch.fnmatchcase(rel, entry) and \
                    "/" not in rel[len(entry.rpartition("/")[0]) + 1:] else None
            else:
                rank = (2, len(entry)) if rel == entry else None
            if rank is not None and (best is None or rank > best[0]):
                best = (rank, level)
    return None if best is None else best[1]


def find_cycles(graph):
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


MODS = project_modules()
GRAPH = import_graph(MODS)
LAYERS = documented_layers()


def test_every_module_has_a_documented_layer():
    missing = [m for m in MODS if layer_of(m, LAYERS) is None]
    assert not missing, (f"modules without a layer: {missing}; add them to the layers block "
                         "of docs/architecture.md")


def test_no_import_cycle():
    assert find_cycles(GRAPH) == []


def test_imports_point_down():
    up = [f"{m} (layer {layer_of(m, LAYERS)}) imports {d} (layer {layer_of(d, LAYERS)}) "
          f"at line {line}"
          for m, deps in GRAPH.items() for d, line in deps.items()
          if layer_of(d, LAYERS) > layer_of(m, LAYERS)]
    assert not up, "imports that point up:\n" + "\n".join(up)


def test_prune_opt_never_imports_forest_builders():
    # the CLI reaches the growers' estimators through entry points (cli/_plugins.py)
    bad = [(m, d) for m, deps in GRAPH.items() if m.split(".")[0] == "prune_opt"
           for d in deps if d.split(".")[0] == "forest_builders"]
    assert not bad


def test_forest_builders_uses_public_api_only():
    private = [(m, d, line) for m, deps in GRAPH.items() if m.startswith("forest_builders")
               for d, line in deps.items() if d.startswith("prune_opt")
               and any(part.startswith("_") for part in d.split("."))]
    assert not private, f"forest_builders reaches private prune_opt modules: {private}"


def test_graph_builder_sees_lazy_imports_and_cycles():
    # the checks above are only as good as the graph: a function-level import counts
    src = "def f():\n    from ._b import x\n"
    tree = ast.parse(src)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert _absolute(node, "prune_opt._a", False) == "prune_opt._b"
    assert find_cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {}}) == [
        ["a", "b", "c"]]
    assert find_cycles({"a": {"b": 1}, "b": {}}) == []


_IMPORT_ALL = """
import importlib, json, sys
failures = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in ("prune_opt", "forest_builders"):
            failures[name] = repr(exc)
    except Exception as exc:
        failures[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failures))
"""


def test_every_module_imports_in_a_fresh_interpreter():
    # importing any submodule runs the package __init__ first, so one fresh interpreter
    # walks every real import order; a cycle shows up as "partially initialized module".
    # A missing optional third-party package is fine (the module degrades, not the test).
    names = [m for m in MODS if not m.endswith("__main__")]
    proc = subprocess.run([sys.executable, "-c", _IMPORT_ALL, *names], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {}


@pytest.mark.parametrize("module, level", [("prune_opt._validation", 0),
                                           ("prune_opt.forest._forest", 1),
                                           ("prune_opt.importers._sklearn", 2),
                                           ("prune_opt.routing._routed", 3),
                                           ("prune_opt.model._pruned", 5),
                                           ("prune_opt.solvers.mincut", 7),
                                           ("prune_opt.budget", 9), ("prune_opt", 10),
                                           ("prune_opt._prune", 10),
                                           ("forest_builders.cegb", 11),
                                           ("forest_builders.estimator._pruning", 11)])
def test_layer_lookup(module, level):
    assert layer_of(module, LAYERS) == level


def test_folders_are_the_stages():
    """Every folder of the two packages is a listed stage, and a flat private module of
    prune_opt is a base helper (few of them: a concept lives in its folder)."""
    listed = {e for _, _, entries in LAYERS for e in entries if e.endswith("/")}
    folders = {p.relative_to(ROOT).as_posix() + "/" for pkg in PACKAGES
               for p in (ROOT / pkg).rglob("*") if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= listed | {f"{pkg}/" for pkg in PACKAGES} | {
        f for f in folders if any(f.startswith(e) for e in listed)}, (
        f"folders without a stage in docs/architecture.md: {sorted(folders - listed)}")
    flat = sorted(p.name for p in (ROOT / "prune_opt").glob("_*.py") if p.name != "__init__.py")
    assert len(flat) <= 6, f"prune_opt holds {len(flat)} flat private modules: {flat}"
    for pkg in {e for e in listed if e.startswith("prune_opt/")}:
        init = ROOT / pkg / "__init__.py"
        assert init.exists() and ast.get_docstring(ast.parse(init.read_text())), (
            f"{pkg}__init__.py must state its stage in a docstring")
