"""The import graph of the installed packages: no cycle, and the data flow's direction kept
(sources -> builders -> validators -> evaluation; the core reaches datasets only through the registry)."""

from __future__ import annotations

import ast
from pathlib import Path

from paths import REPO

FOLDERS = {
    "ctxrobust": "ctxrobust",
    "builders": "ctxrobust.builders",
    "sources": "ctxrobust.sources",
    "schemas": "ctxrobust.schemas",
    "validators": "ctxrobust.validators",
    "evaluation": "ctxrobust.evaluation",
}
DATASETS = ("gsm_ic", "misleadqa", "pseudowords")


def modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Every ctxrobust module `path` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in known:
                    out.add(full)
                elif base in known:
                    out.add(base)
    out.discard(name)
    return out


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(path, name, set(found)) for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read():
    edges = graph()
    assert "ctxrobust.evaluation.misleadqa.scorer" in edges["ctxrobust.evaluation.misleadqa.render"]
    assert "ctxrobust.registry" in edges["ctxrobust.commands.common"]


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ("builders", "sources", "schemas", "validators", "evaluation", "publish") else "core"


def is_dataset_module(module: str) -> bool:
    parts = module.split(".")
    return len(parts) > 2 and parts[1] in ("builders", "validators", "evaluation") and parts[2] in DATASETS


# what each stage may import: the data flow runs one way
ALLOWED = {
    "core": {"core", "schemas"},
    "sources": {"core", "sources"},
    "schemas": {"core", "schemas"},
    "builders": {"core", "sources", "schemas", "builders"},
    "validators": {"core", "sources", "schemas", "builders", "validators"},
    "evaluation": {"core", "schemas", "builders", "evaluation"},
    "publish": {"core", "schemas", "sources", "validators", "publish"},  # the card names the checks; downloads share the cache
}
# the core's top floor: the command line (its commands), the Python API and the build pipeline drive the stages through their generic modules
ORCHESTRATION = {"ctxrobust.cli", "ctxrobust.build", "ctxrobust.api"}


def is_orchestration(module: str) -> bool:
    return module in ORCHESTRATION or module.startswith("ctxrobust.commands.")


def test_the_data_flow_runs_one_way_and_the_core_reaches_datasets_through_the_registry():
    wrong = []
    for module, targets in graph().items():
        for target in targets:
            if is_dataset_module(target) and stage(module) in ("core", "publish", "sources", "schemas"):
                wrong.append(f"{module} -> {target}: the core reaches a dataset only through the registry")
            elif stage(target) not in ALLOWED[stage(module)] and not is_orchestration(module):
                wrong.append(f"{module} -> {target}: {stage(module)} must not import {stage(target)}")
    assert wrong == []
