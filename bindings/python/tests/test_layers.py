"""The package's modules form layers: no import circle between them (issue 46), counting
every relative import, lazy ones and those only for type checking too (a reader follows
them all). The Rust crates' counterpart: ``cargo xtask layers``."""

from __future__ import annotations

import ast
import pathlib
from typing import Dict, List, Set

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "python" / "roomchat"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: pathlib.Path, modules: Set[str]) -> Set[str]:
    """The package's modules `path` imports (relative imports; a parent package's
    ``__init__`` re-exporting its children is not an arrow back)."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
        names = [f"{target}.{alias.name}" for alias in node.names]
        hits = [n for n in names if n in modules] or ([target] if target in modules else [])
        found.update(h for h in hits if h != here and not h.startswith(here + "."))
    return found


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def graph_of(package: pathlib.Path) -> Dict[str, Set[str]]:
    paths = sorted(package.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def test_the_package_has_no_import_circle() -> None:
    graph = graph_of(PACKAGE)
    assert len(graph) > 10, sorted(graph)
    assert circles(graph) == []


def test_the_check_finds_a_circle_through_lazy_and_type_checking_imports(tmp_path: pathlib.Path) -> None:
    global PACKAGE
    package = tmp_path / "roomchat"
    package.mkdir()
    (package / "__init__.py").write_text("from ._a import A\nfrom ._b import B\n")
    (package / "_a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._b import B\nclass A: ...\n")
    (package / "_b.py").write_text("class B:\n    def a(self):\n        from ._a import A\n        return A\n")
    saved, PACKAGE = PACKAGE, package
    try:
        assert circles(graph_of(package)) == [["roomchat._a", "roomchat._b"]]
        (package / "_a.py").write_text("class A: ...\n")
        assert circles(graph_of(package)) == []
    finally:
        PACKAGE = saved


def test_a_class_moved_to_break_a_circle_is_still_where_0_1_0_had_it() -> None:
    # AsyncClientWithRawResponse moved from _raw to _async (the circle between them):
    # 0.1.0's import path, its class's repr and a pickle of the class still work.
    import pickle

    import roomchat
    from roomchat._raw import AsyncClientWithRawResponse

    assert AsyncClientWithRawResponse is roomchat.AsyncClientWithRawResponse
    assert repr(AsyncClientWithRawResponse) == "<class 'roomchat._raw.AsyncClientWithRawResponse'>"
    # As 0.1.0 pickled the class: by reference to roomchat._raw.
    assert b"roomchat._raw" in pickle.dumps(AsyncClientWithRawResponse, protocol=0)
    assert pickle.loads(pickle.dumps(AsyncClientWithRawResponse)) is AsyncClientWithRawResponse
    with __import__("pytest").raises(AttributeError, match="no attribute 'Nothing'"):
        roomchat._raw.Nothing  # type: ignore[attr-defined]
